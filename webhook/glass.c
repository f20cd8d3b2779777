/* glass - break glass used once (see glass.h). */
#include "webhook/glass.h"

#include <stdio.h>
#include <string.h>

#include "common/crypto.h"
#include "common/kjson.h"

static const struct k8s_resource res_lease = { "coordination.k8s.io", "v1", "leases", 1 };

void glass_value_hash(const char *v, char out[GLASS_HASH_LEN + 1])
{
    if (crypto_sha256_hex(v, strlen(v), out, NULL) != KERR_OK)
        out[0] = '\0';
}

void glass_lease_name(const char *uid, char *out, size_t n)
{
    char h[CRYPTO_SHA256_HEX_LEN + 1];

    glass_value_hash(uid, h);
    snprintf(out, n, "%s%.32s", GLASS_LEASE_PREFIX, h);
}

static const char *str_of(const cJSON *o, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

int glass_judge(const cJSON *rec, const struct glass_use *u, struct glass_prior *p)
{
    const char *uid = str_of(rec, "uid"), *value = str_of(rec, "value");
    const char *user = str_of(rec, "user"), *what = str_of(rec, "what");
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(rec, "at");

    memset(p, 0, sizeof(*p));
    if (!cJSON_IsObject(rec) || !uid || !value || !*u->value || strcmp(uid, u->uid) != 0 ||
        strcmp(value, u->value) != 0)
        return 0;
    /* a record of this value counts whatever else it holds: at least 1 s after the epoch */
    p->at = cJSON_IsNumber(at) && at->valuedouble >= 1 && at->valuedouble < 1e12
                ? (time_t)at->valuedouble
                : 1;
    snprintf(p->user, sizeof(p->user), "%s", user ? user : "(unknown)");
    snprintf(p->what, sizeof(p->what), "%s", what ? what : "(unknown)");
    return 1;
}

cJSON *glass_record(const struct glass_use *u, time_t now)
{
    cJSON *r = cJSON_CreateObject();

    if (!r || !cJSON_AddStringToObject(r, "uid", u->uid) ||
        !cJSON_AddStringToObject(r, "namespace", u->ns) ||
        !cJSON_AddStringToObject(r, "name", u->name) ||
        !cJSON_AddStringToObject(r, "value", u->value) ||
        !cJSON_AddNumberToObject(r, "at", (double)now) ||
        !cJSON_AddStringToObject(r, "user", u->user) ||
        !cJSON_AddStringToObject(r, "what", u->what)) {
        cJSON_Delete(r);
        return NULL;
    }
    return r;
}

/* lease's annotation GLASS_ANNOTATION parsed (OWNED), NULL when absent or not JSON. */
static cJSON *record_of(const cJSON *lease)
{
    const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        kjson_get(lease, "metadata.annotations"), GLASS_ANNOTATION));

    return t ? cJSON_Parse(t) : NULL;
}

/* Write u's record at now into lease's annotation. */
static enum kerr with_record(cJSON *lease, const struct glass_use *u, time_t now,
                             struct kerr_info *err)
{
    cJSON *r = glass_record(u, now);
    char *text = r ? cJSON_PrintUnformatted(r) : NULL;
    enum kerr rc = text ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);

    if (rc == KERR_OK && !cJSON_IsObject(kjson_get(lease, "metadata.annotations")))
        rc = kjson_set(lease, "metadata.annotations", cJSON_CreateObject(), err);
    if (rc == KERR_OK)
        rc = kjson_setv(lease,
                        (const char *const[]){ "metadata", "annotations", GLASS_ANNOTATION, NULL },
                        cJSON_CreateString(text), err);
    cJSON_free(text);
    cJSON_Delete(r);
    return rc;
}

/* One attempt: KERR_CONFLICT / KERR_EXISTS when another admission wrote in between. */
static enum kerr attempt(struct k8s_client *k, const char *ns, const char *name,
                         const struct glass_use *u, int dry_run, struct glass_prior *used,
                         struct kerr_info *err)
{
    cJSON *lease = NULL, *rec;
    time_t now = time(NULL);
    enum kerr rc = k8s_get(k, &res_lease, ns, name, NULL, &lease, err);

    memset(used, 0, sizeof(*used));
    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        if (dry_run)
            return KERR_OK;
        lease = cJSON_CreateObject();
        rc = lease ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
        if (rc == KERR_OK)
            rc = kjson_set_str(lease, "apiVersion", "coordination.k8s.io/v1", err);
        if (rc == KERR_OK)
            rc = kjson_set_str(lease, "kind", "Lease", err);
        if (rc == KERR_OK)
            rc = kjson_set_str(lease, "metadata.name", name, err);
        if (rc == KERR_OK)
            rc = kjson_set_str(lease, "metadata.namespace", ns, err);
        if (rc == KERR_OK)
            rc = kjson_set_str(lease, "spec.holderIdentity", "warden-webhook", err);
        if (rc == KERR_OK)
            rc = with_record(lease, u, now, err);
        if (rc == KERR_OK)
            rc = k8s_create(k, &res_lease, ns, lease, NULL, NULL, err);
        cJSON_Delete(lease);
        return rc;
    }
    if (rc != KERR_OK)
        return rc;
    rec = record_of(lease);
    if (!glass_judge(rec, u, used) && !dry_run) {
        rc = with_record(lease, u, now, err);
        if (rc == KERR_OK)
            rc = k8s_update(k, &res_lease, ns, name, lease, NULL, NULL, err);
    }
    cJSON_Delete(rec);
    cJSON_Delete(lease);
    return rc;
}

enum kerr glass_take(struct k8s_client *k, const char *lease_ns, const struct glass_use *u,
                     int dry_run, struct glass_prior *used, struct kerr_info *err)
{
    char name[64];
    enum kerr rc = KERR_CONFLICT;

    memset(used, 0, sizeof(*used));
    if (!k || !lease_ns || !*lease_ns || !u->uid || !*u->uid || !*u->value)
        return kerr_set(err, KERR_INVAL, "no namespace, Etcd uid or value to record the use in");
    glass_lease_name(u->uid, name, sizeof(name));
    for (int i = 0; i < GLASS_TRIES && (rc == KERR_CONFLICT || rc == KERR_EXISTS); i++) {
        if (i)
            kerr_clear(err);
        rc = attempt(k, lease_ns, name, u, dry_run, used, err);
    }
    if (rc != KERR_OK)
        return kerr_wrap(err, "recording the use of break glass in Lease %s/%s", lease_ns, name);
    return KERR_OK;
}
