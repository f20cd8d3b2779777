/* bkeheld - whether a BackupEntry's Etcd held its bucket's credentials; see bkeheld.h. */
#include "controller/entries/bkeheld.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/kjson.h"
#include "common/ktime.h"
#include "controller/entries/bkealive.h"
#include "controller/entries/bkeauth.h"

/* The fields of spec.backup.store the comparison reads (controller/entries/bkeauth.c). */
static const char *const STORE_FIELDS[] = { "provider", "container", "prefix", "endpointOverride" };

static int64_t generation(const cJSON *obj, const char *path)
{
    int64_t g = 0;

    return kjson_get_int64(obj, path, &g) == KERR_OK ? g : 0;
}

int bkeheld_due(const cJSON *entry, const cJSON *etcd)
{
    return !kjson_has(entry, BKEHELD_AS) ||
           generation(entry, BKEHELD_AS ".generation") != generation(etcd, "metadata.generation");
}

/* credentialsHeldAs of etcd into obj. */
static enum kerr held_as(cJSON *obj, const cJSON *etcd, struct kerr_info *err)
{
    const cJSON *store = kjson_get(etcd, "spec.backup.store");
    cJSON *as = cJSON_CreateObject(), *copy = NULL;
    const char *s;
    size_t i;

    if (!as)
        return kerr_set(err, KERR_NOMEM, NULL);
    if (!cJSON_AddNumberToObject(as, "generation",
                                 (double)generation(etcd, "metadata.generation")) ||
        !(copy = cJSON_AddObjectToObject(as, "store")))
        goto nomem;
    for (i = 0; i < sizeof(STORE_FIELDS) / sizeof(STORE_FIELDS[0]); i++)
        if ((s = kjson_get_str(store, STORE_FIELDS[i])) &&
            !cJSON_AddStringToObject(copy, STORE_FIELDS[i], s))
            goto nomem;
    if ((s = kjson_get_str(store, "secretRef.name")) &&
        kjson_set_str(copy, "secretRef.name", s, err) != KERR_OK)
        goto nomem;
    return kjson_set(obj, BKEHELD_AS, as, err);
nomem:
    cJSON_Delete(as);
    return kerr_set(err, KERR_NOMEM, NULL);
}

enum kerr bkeheld_mark(cJSON *obj, const cJSON *etcd, const char *why, int64_t now,
                       struct kerr_info *err)
{
    enum kerr rc;

    if (!*why) {
        rc = bkealive_set_time(obj, BKEHELD_AT, now, err);
        return rc == KERR_OK && etcd ? held_as(obj, etcd, err) : rc;
    }
    return bentry_creds_lost(obj, err);
}

enum kerr bkeheld_etcd(const cJSON *entry, cJSON **out, struct kerr_info *err)
{
    const cJSON *store = kjson_get(entry, BKEHELD_AS ".store");
    const char *ns = kjson_get_str(entry, "spec.etcd.namespace");
    const char *name = kjson_get_str(entry, "spec.etcd.name");
    cJSON *etcd, *copy;
    enum kerr rc;

    *out = NULL;
    if (!cJSON_IsObject(store))
        return KERR_OK;
    if (!(etcd = cJSON_CreateObject()) || !(copy = cJSON_Duplicate(store, 1))) {
        cJSON_Delete(etcd);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    rc = kjson_set(etcd, "spec.backup.store", copy, err);
    if (rc == KERR_OK)
        rc = kjson_set_str(etcd, "metadata.namespace", ns ? ns : "", err);
    if (rc == KERR_OK)
        rc = kjson_set_str(etcd, "metadata.name", name ? name : "", err);
    if (rc != KERR_OK) {
        cJSON_Delete(etcd);
        return rc;
    }
    *out = etcd;
    return KERR_OK;
}

int bkeheld_lost(const cJSON *entry, int64_t *t)
{
    return bkealive_time_at(entry, BKEHELD_LOST, t);
}

enum kerr bkeheld_compare(const struct bke_ctx *x, const struct bke_bucket *b, cJSON *obj,
                          const cJSON *etcd, int64_t now, struct kerr_info *err)
{
    char why[BKECLAIM_WHY_MAX];
    enum kerr rc = bkeauth_etcd(x, b, etcd, why, sizeof(why), err);

    if (rc != KERR_OK)
        return rc;
    if (*why)
        bke_etcd_warning(x, etcd, "NotAuthorised", why);
    return bkeheld_mark(obj, etcd, why, now, err);
}

enum kerr bkeheld_release(const struct bke_ctx *x, const struct bke_bucket *b, cJSON *obj,
                          int64_t since, int64_t now, struct kerr_info *err)
{
    char why[BKECLAIM_WHY_MAX] = "";
    int64_t held, last, seen;
    cJSON *etcd = NULL;
    enum kerr rc = KERR_OK;

    if (bkealive_time_at(obj, BKEHELD_AT, &held) && bkealive_last(obj, &last) && held >= last)
        return KERR_OK; /* the last match covers the whole window */
    if (bkealive_time_at(obj, "spec.etcdSeenAt", &seen) && seen >= since)
        rc = bkeheld_etcd(obj, &etcd, err);
    if (rc != KERR_OK)
        return rc;
    if (etcd)
        rc = bkeauth_etcd(x, b, etcd, why, sizeof(why), err);
    else
        snprintf(why, sizeof(why), "its Etcd's last spec was not seen by this controller");
    cJSON_Delete(etcd);
    return rc == KERR_OK ? bkeheld_mark(obj, NULL, why, now, err) : rc;
}
