/* bcred - an Etcd's backup Secret holds its BackupBucket's credentials; see bcred.h. */
#include "common/bcred.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bstore.h"
#include "common/crypto.h"
#include "common/kjson.h"

static const char *str_or_empty(const cJSON *obj, const char *path)
{
    const char *s = kjson_get_str(obj, path);

    return s ? s : "";
}

/* The provider family of provider (bstore_family), or NULL when unknown. */
static const char *family_of(const char *provider)
{
    const char *kind = provider ? bstore_provider_kind(provider) : NULL;

    return kind ? bstore_family(kind) : NULL;
}

/*
 * 1 when the base64 values a and b decode to the same bytes, 0 when they do not, -1 when
 * either is no string or no base64; KERR_NOMEM in *rc.
 */
static int same_bytes(const cJSON *a, const cJSON *b, enum kerr *rc, struct kerr_info *err)
{
    unsigned char *da = NULL, *db = NULL;
    size_t na = 0, nb = 0;
    int same = -1;

    *rc = KERR_OK;
    if (!cJSON_IsString(a) || !cJSON_IsString(b))
        return -1;
    *rc = crypto_b64_decode(a->valuestring, strlen(a->valuestring), &da, &na, err);
    if (*rc == KERR_OK)
        *rc = crypto_b64_decode(b->valuestring, strlen(b->valuestring), &db, &nb, err);
    if (*rc == KERR_OK)
        same = na == nb && memcmp(da, db, na) == 0;
    if (*rc == KERR_PARSE) {
        kerr_clear(err);
        *rc = KERR_OK;
    }
    free(da);
    free(db);
    return same;
}

/* May esecret have key k that the bucket's Secret has not (it names no service, no identity)? */
static int extra_allowed(const char *k, const char *family)
{
    return strcmp(k, "bucketName") == 0 || (strcmp(family, "S3") == 0 && strcmp(k, "region") == 0);
}

/*
 * Does the sidecar of etcd, whose Secret holds bdata (the bucket's Secret's data), write the
 * service the bucket's deletions use? Those use the bucket's spec.endpointOverride, else the
 * Secret's endpoint. For the S3 family the sidecar takes the Etcd's
 * spec.backup.store.endpointOverride before the Secret's endpoint up to v0.40 and after it from
 * v0.41 (docs/backup-entries.md, "One prefix, one cluster"): both must be that endpoint. Other
 * families: the two overrides are one string.
 */
static int same_endpoint(const cJSON *bucket, const cJSON *bdata, const cJSON *etcd,
                         const char *family)
{
    const char *ob = str_or_empty(bucket, "spec.endpointOverride");
    const char *oe = str_or_empty(etcd, "spec.backup.store.endpointOverride");
    const cJSON *ep = cJSON_GetObjectItemCaseSensitive(bdata, "endpoint");
    unsigned char *sec = NULL;
    size_t len = 0;
    struct kerr_info err;
    const char *s, *jobs;
    int same;

    if (strcmp(family, "S3") != 0)
        return strcmp(ob, oe) == 0;
    if (cJSON_IsString(ep) &&
        crypto_b64_decode(ep->valuestring, strlen(ep->valuestring), &sec, &len, &err) != KERR_OK)
        return 0;
    s = sec ? (const char *)sec : "";
    if (strlen(s) != len) {
        free(sec);
        return 0; /* a NUL in the endpoint: not understood */
    }
    jobs = *ob ? ob : s;
    same = strcmp(*oe ? oe : s, jobs) == 0 && strcmp(*s ? s : oe, jobs) == 0;
    free(sec);
    return same;
}

enum kerr bcred_holds(const cJSON *bucket, const cJSON *bsecret, const cJSON *etcd,
                      const cJSON *esecret, char *why, size_t n, struct kerr_info *err)
{
    const char *bname = str_or_empty(bucket, "metadata.name");
    const char *fb = family_of(kjson_get_str(bucket, "spec.provider"));
    const char *fe = family_of(kjson_get_str(etcd, "spec.backup.store.provider"));
    const cJSON *bdata = kjson_get(bsecret, "data"), *edata = kjson_get(esecret, "data"), *kv;
    enum kerr rc = KERR_OK;
    int same;

    why[0] = '\0';
    if (!fb || !fe || strcmp(fb, fe) != 0) {
        snprintf(why, n,
                 "its provider \"%.64s\" is not of BackupBucket %s's provider family: its backup "
                 "sidecar does not write the bucket's store with the bucket's credentials, and it "
                 "gets no BackupEntry there",
                 str_or_empty(etcd, "spec.backup.store.provider"), bname);
        return KERR_OK;
    }
    if (!cJSON_IsObject(bdata) || !bdata->child) {
        snprintf(why, n, "BackupBucket %s's Secret has no data: no Etcd can be shown to hold it",
                 bname);
        return KERR_OK;
    }
    cJSON_ArrayForEach (kv, bdata) {
        same = same_bytes(
            kv, cJSON_IsObject(edata) ? cJSON_GetObjectItemCaseSensitive(edata, kv->string) : NULL,
            &rc, err);
        if (rc != KERR_OK)
            return rc;
        if (same != 1) {
            snprintf(
                why, n,
                "its backup Secret does not hold BackupBucket %s's credentials (key \"%.64s\" "
                "%s): its backup sidecar may write another service or account, or nothing, and it "
                "gets no BackupEntry there",
                bname, kv->string, same < 0 ? "is missing or no base64" : "differs");
            return KERR_OK;
        }
    }
    cJSON_ArrayForEach (kv, edata) {
        if (!cJSON_GetObjectItemCaseSensitive(bdata, kv->string) &&
            !extra_allowed(kv->string, fe)) {
            snprintf(why, n,
                     "its backup Secret has key \"%.64s\", which BackupBucket %s's Secret has "
                     "not: its backup sidecar may write another service or account, and it gets no "
                     "BackupEntry there",
                     kv->string, bname);
            return KERR_OK;
        }
    }
    if (!same_endpoint(bucket, bdata, etcd, fe))
        snprintf(why, n,
                 "its spec.backup.store.endpointOverride is not the endpoint BackupBucket %s's "
                 "deletions use (its spec.endpointOverride, else its Secret's endpoint): its "
                 "backup sidecar may write another service, and it gets no BackupEntry there",
                 bname);
    return KERR_OK;
}
