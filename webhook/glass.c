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

void glass_lease_name(const char *ns, const char *name, char *out, size_t n)
{
    char h[CRYPTO_SHA256_HEX_LEN + 1], key[2 * 256 + 2];

    snprintf(key, sizeof(key), "%.256s/%.256s", ns, name);
    glass_value_hash(key, h);
    snprintf(out, n, "%s%.32s", GLASS_LEASE_PREFIX, h);
}

static const char *str_of(const cJSON *o, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

void glass_request_key(const struct glass_use *u, char out[GLASS_REQUEST_MAX + 1])
{
    const struct k8s_resource *t = u->target;

    out[0] = '\0';
    if (!t || (u->target_uid && (!*u->target_uid || !u->target_rv || !*u->target_rv)))
        return; /* an UPDATE or DELETE of no known object is no request to match */
    if (u->target_uid)
        snprintf(out, GLASS_REQUEST_MAX + 1, "%.64s/%.64s %.253s/%.253s %.64s %.32s",
                 t->group ? t->group : "", t->resource, u->target_ns ? u->target_ns : "",
                 u->target_name ? u->target_name : "", u->target_uid,
                 u->target_rv ? u->target_rv : "");
    else if (u->review_uid && *u->review_uid)
        snprintf(out, GLASS_REQUEST_MAX + 1, "%.64s/%.64s %.253s/%.253s create %.64s",
                 t->group ? t->group : "", t->resource, u->target_ns ? u->target_ns : "",
                 u->target_name ? u->target_name : "", u->review_uid);
}

int glass_judge(const cJSON *rec, const struct glass_use *u, struct glass_prior *p)
{
    const char *ns = str_of(rec, "namespace"), *name = str_of(rec, "name");
    const char *value = str_of(rec, "value");
    const char *user = str_of(rec, "user"), *what = str_of(rec, "what");
    const char *request = str_of(rec, "request");
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(rec, "at"), *r;

    memset(p, 0, sizeof(*p));
    if (cJSON_IsArray(rec)) {
        int j;

        cJSON_ArrayForEach (r, rec)
            if (cJSON_IsObject(r) && (j = glass_judge(r, u, p)) != 0)
                return j;
        return 0;
    }
    if (!cJSON_IsObject(rec) || !ns || !name || !value || !*u->value || strcmp(ns, u->ns) != 0 ||
        strcmp(name, u->name) != 0 || strcmp(value, u->value) != 0)
        return 0;
    /* a record of this value counts whatever else it holds: at least 1 s after the epoch */
    p->at = cJSON_IsNumber(at) && at->valuedouble >= 1 && at->valuedouble < 1e12
                ? (time_t)at->valuedouble
                : 1;
    snprintf(p->user, sizeof(p->user), "%s", user ? user : "(unknown)");
    snprintf(p->what, sizeof(p->what), "%s", what ? what : "(unknown)");
    return u->request && *u->request && request && strcmp(request, u->request) == 0 ? 2 : 1;
}

/* r's "target" from u when u has a stored object with a generation (KERR_NOMEM on failure). */
static enum kerr add_target(cJSON *r, const struct glass_use *u)
{
    const struct k8s_resource *res = u->target;
    cJSON *t;

    if (!res || !u->target_uid || !*u->target_uid || !u->target_rv || !*u->target_rv ||
        (u->target_gen < 1 && !u->deletion))
        return KERR_OK;
    t = cJSON_AddObjectToObject(r, "target");
    if (!t || !cJSON_AddStringToObject(t, "group", res->group ? res->group : "") ||
        !cJSON_AddStringToObject(t, "version", res->version ? res->version : "") ||
        !cJSON_AddStringToObject(t, "resource", res->resource ? res->resource : "") ||
        !cJSON_AddStringToObject(t, "namespace", u->target_ns ? u->target_ns : "") ||
        !cJSON_AddStringToObject(t, "name", u->target_name ? u->target_name : "") ||
        !cJSON_AddStringToObject(t, "uid", u->target_uid) ||
        !cJSON_AddStringToObject(t, "resourceVersion", u->target_rv) ||
        (u->target_gen > 0 && !cJSON_AddNumberToObject(t, "generation", (double)u->target_gen)) ||
        (u->deletion && !cJSON_AddStringToObject(t, "operation", "DELETE")))
        return KERR_NOMEM;
    return KERR_OK;
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
        !cJSON_AddStringToObject(r, "what", u->what) ||
        !cJSON_AddStringToObject(r, "request", u->request ? u->request : "") ||
        add_target(r, u) != KERR_OK) {
        cJSON_Delete(r);
        return NULL;
    }
    return r;
}

/* Whether the record's target t is of a DELETE. */
static int is_deletion(const cJSON *t)
{
    const char *op = str_of(t, "operation");

    return op && strcmp(op, "DELETE") == 0;
}

int glass_target(const cJSON *rec, struct k8s_resource *res, const char **ns, const char **name)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(rec, "target");
    const cJSON *gen = cJSON_GetObjectItemCaseSensitive(t, "generation");

    memset(res, 0, sizeof(*res));
    *ns = *name = NULL;
    res->group = str_of(t, "group");
    res->version = str_of(t, "version");
    res->resource = str_of(t, "resource");
    *ns = str_of(t, "namespace");
    *name = str_of(t, "name");
    if (!res->group || !res->version || !*res->version || !res->resource || !*res->resource ||
        !*ns || !*name || !**name ||
        (!is_deletion(t) && (!cJSON_IsNumber(gen) || gen->valuedouble < 1)))
        return 0;
    res->namespaced = **ns != '\0';
    return 1;
}

int glass_void(const cJSON *rec, const cJSON *stored)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(rec, "target");
    const cJSON *gen = cJSON_GetObjectItemCaseSensitive(t, "generation");
    const char *uid = str_of(t, "uid"), *rv = str_of(t, "resourceVersion");
    const char *cuid = kjson_get_str(stored, "metadata.uid");
    const char *crv = kjson_get_str(stored, "metadata.resourceVersion");
    const cJSON *cgen = kjson_get(stored, "metadata.generation");

    if (!cJSON_IsObject(stored) || !uid || !*uid || !rv || !*rv || !cuid || !crv || !*crv)
        return 0;
    if (kjson_has(stored, "metadata.deletionTimestamp"))
        return 0; /* a DELETE (or another) committed: the object is going */
    if (strcmp(uid, cuid) != 0 || strcmp(rv, crv) == 0)
        return 0; /* another object, or the request may still commit */
    if (is_deletion(t))
        return 1; /* a DELETE that committed left the object gone or deleting */
    return cJSON_IsNumber(gen) && gen->valuedouble >= 1 && cJSON_IsNumber(cgen) &&
           gen->valuedouble == cgen->valuedouble;
}

/* lease's annotation GLASS_ANNOTATION parsed (OWNED), NULL when absent or not JSON. */
static cJSON *record_of(const cJSON *lease)
{
    const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        kjson_get(lease, "metadata.annotations"), GLASS_ANNOTATION));

    return t ? cJSON_Parse(t) : NULL;
}

/* The records of recs (the annotation parsed) used within GLASS_KEEP_S of now, and u's. */
static cJSON *records_with(const cJSON *recs, const struct glass_use *u, time_t now)
{
    cJSON *out = cJSON_CreateArray(), *mine = glass_record(u, now);
    const cJSON *one = cJSON_IsObject(recs) ? recs : NULL, *at, *r;
    const cJSON *list = cJSON_IsArray(recs) ? recs : NULL;

    cJSON_ArrayForEach (r, list) {
        at = cJSON_GetObjectItemCaseSensitive(r, "at");
        if (out && cJSON_IsObject(r) && cJSON_IsNumber(at) && at->valuedouble + GLASS_KEEP_S >= now)
            cJSON_AddItemToArray(out, cJSON_Duplicate(r, 1));
    }
    at = cJSON_GetObjectItemCaseSensitive(one, "at");
    if (out && one && cJSON_IsNumber(at) && at->valuedouble + GLASS_KEEP_S >= now)
        cJSON_AddItemToArray(out, cJSON_Duplicate(one, 1));
    if (!out || !mine || !cJSON_AddItemToArray(out, mine)) {
        cJSON_Delete(out);
        cJSON_Delete(mine);
        return NULL;
    }
    return out;
}

/* Write u's record at now into lease's annotation, beside the ones of recs still kept. */
static enum kerr with_record(cJSON *lease, const cJSON *recs, const struct glass_use *u, time_t now,
                             struct kerr_info *err)
{
    cJSON *r = records_with(recs, u, now);
    char *text = r ? cJSON_PrintUnformatted(r) : NULL;
    enum kerr rc = text ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);

    if (rc == KERR_OK && cJSON_GetArraySize(r) > GLASS_RECORDS_MAX)
        rc = kerr_set(err, KERR_TOOBIG,
                      "%d uses of break glass on Etcd %s/%s within %d hours: no more are "
                      "recorded until the oldest expires",
                      GLASS_RECORDS_MAX, u->ns, u->name, GLASS_KEEP_S / 3600);

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

/* recs (OWNED) as a list of records: a lone record in a list, anything else NULL. */
static cJSON *as_list(cJSON *recs)
{
    cJSON *list;

    if (cJSON_IsArray(recs))
        return recs;
    if (!cJSON_IsObject(recs) || !(list = cJSON_CreateArray())) {
        cJSON_Delete(recs);
        return NULL;
    }
    cJSON_AddItemToArray(list, recs);
    return list;
}

/* Whether the use r proved void (glass_void) on its target as the API server stores it now. */
static int void_on_server(struct k8s_client *k, const cJSON *r)
{
    struct k8s_resource res;
    const char *ns, *name;
    cJSON *cur = NULL;
    struct kerr_info e;
    int v;

    if (!glass_target(r, &res, &ns, &name))
        return 0;
    kerr_clear(&e);
    if (k8s_get(k, &res, res.namespaced ? ns : NULL, name, NULL, &cur, &e) != KERR_OK) {
        cJSON_Delete(cur);
        return 0; /* gone, or not read: the use is kept */
    }
    v = glass_void(r, cur);
    cJSON_Delete(cur);
    return v;
}

/*
 * glass_judge over the list recs (OWNED by the caller), the records of u's value that proved
 * void detached and freed: 2 when one is u's request's (used zeroed), 1 when a use that is not
 * void is recorded (used filled), 0 when none is (used zeroed).
 */
static int judge_all(struct k8s_client *k, cJSON *recs, const struct glass_use *u,
                     struct glass_prior *used)
{
    cJSON *r, *next;

    memset(used, 0, sizeof(*used));
    cJSON_ArrayForEach (r, recs)
        if (cJSON_IsObject(r) && glass_judge(r, u, used) == 2) {
            memset(used, 0, sizeof(*used)); /* this request's own record: admitted again */
            return 2;
        }
    for (r = recs ? recs->child : NULL; r; r = next) {
        next = r->next;
        if (!cJSON_IsObject(r) || !glass_judge(r, u, used))
            continue;
        if (!void_on_server(k, r))
            return 1;
        cJSON_Delete(cJSON_DetachItemViaPointer(recs, r));
    }
    memset(used, 0, sizeof(*used));
    return 0;
}

/* One attempt: KERR_CONFLICT / KERR_EXISTS when another admission wrote in between. */
static enum kerr attempt(struct k8s_client *k, const char *ns, const char *name,
                         const struct glass_use *u, int dry_run, struct glass_prior *used,
                         struct kerr_info *err)
{
    cJSON *lease = NULL, *rec;
    int judged;
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
            rc = with_record(lease, NULL, u, now, err);
        if (rc == KERR_OK)
            rc = k8s_create(k, &res_lease, ns, lease, NULL, NULL, err);
        cJSON_Delete(lease);
        return rc;
    }
    if (rc != KERR_OK)
        return rc;
    rec = as_list(record_of(lease));
    judged = judge_all(k, rec, u, used);
    if (!judged && !dry_run) {
        rc = with_record(lease, rec, u, now, err);
        if (rc == KERR_OK)
            rc = k8s_update(k, &res_lease, ns, name, lease, NULL, NULL, err);
    }
    cJSON_Delete(rec);
    cJSON_Delete(lease);
    return rc;
}

/*
 * KERR_OK when u's request acts on what the API server stores: for an UPDATE or DELETE the
 * object of the review's uid and resourceVersion (*gen: its metadata.generation, 0 when it has
 * none); KERR_CONFLICT when another is stored.
 */
static enum kerr stored_as_reviewed(struct k8s_client *k, const struct glass_use *u, int64_t *gen,
                                    struct kerr_info *err)
{
    const char *uid = u->target_uid, *rv = u->target_rv, *cuid, *crv;
    cJSON *cur = NULL;
    enum kerr rc;

    if (!u->target)
        return KERR_OK;
    if (!uid) { /* a CREATE: nothing of its name may be stored */
        rc = k8s_get(k, u->target, u->target_ns, u->target_name, NULL, &cur, err);
        cJSON_Delete(cur);
        if (rc == KERR_NOTFOUND) {
            kerr_clear(err);
            return KERR_OK;
        }
        if (rc == KERR_OK)
            rc = kerr_set(err, KERR_CONFLICT, "%s %s/%s is stored: no CREATE of it can be made",
                          u->target->resource, u->target_ns, u->target_name);
        return rc;
    }
    if (!*uid || !rv || !*rv)
        return kerr_set(err, KERR_CONFLICT, "the review's oldObject has no uid or resourceVersion");
    rc = k8s_get(k, u->target, u->target_ns, u->target_name, NULL, &cur, err);
    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        rc = kerr_set(err, KERR_CONFLICT, "%s %s/%s is not stored", u->target->resource,
                      u->target_ns, u->target_name);
        cJSON_Delete(cur);
        return rc;
    }
    cuid = kjson_get_str(cur, "metadata.uid");
    crv = kjson_get_str(cur, "metadata.resourceVersion");
    if (rc == KERR_OK && (!cuid || !crv || strcmp(uid, cuid) != 0 || strcmp(rv, crv) != 0))
        rc = kerr_set(err, KERR_CONFLICT,
                      "%s %s/%s stored (uid %.64s, resourceVersion %.32s) is not the review's "
                      "oldObject (uid %.64s, resourceVersion %.32s)",
                      u->target->resource, u->target_ns, u->target_name, cuid ? cuid : "",
                      crv ? crv : "", uid, rv);
    if (rc == KERR_OK && (kjson_get_int64(cur, "metadata.generation", gen) != KERR_OK || *gen < 1))
        *gen = 0; /* no generation: a use on it is never found void */
    cJSON_Delete(cur);
    return rc;
}

enum kerr glass_take(struct k8s_client *k, const char *lease_ns, const struct glass_use *u,
                     int dry_run, struct glass_prior *used, struct kerr_info *err)
{
    struct glass_use mine = *u; /* with the stored target's generation */
    char name[64];
    enum kerr rc = KERR_CONFLICT;

    memset(used, 0, sizeof(*used));
    mine.target_gen = 0;
    if (!k || !lease_ns || !*lease_ns || !u->ns || !*u->ns || !u->name || !*u->name || !*u->value)
        return kerr_set(err, KERR_INVAL, "no namespace, Etcd or value to record the use in");
    if (stored_as_reviewed(k, u, &mine.target_gen, err) != KERR_OK)
        return kerr_wrap(err, "not the request the API server is making");
    glass_lease_name(u->ns, u->name, name, sizeof(name));
    for (int i = 0; i < GLASS_TRIES && (rc == KERR_CONFLICT || rc == KERR_EXISTS); i++) {
        if (i)
            kerr_clear(err);
        rc = attempt(k, lease_ns, name, &mine, dry_run, used, err);
    }
    if (rc != KERR_OK)
        return kerr_wrap(err, "recording the use of break glass in Lease %s/%s", lease_ns, name);
    return KERR_OK;
}
