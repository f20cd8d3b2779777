/* bentry - a BackupEntry found by its claim's name; see bentry.h. */
#include "common/bentry.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/blocal.h"
#include "common/k8s.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/log.h"
#include "common/store.h"

/* 1 when entry, a Local directory's, places c's directory. */
static int local_dir_is(const cJSON *entry, const struct bstore_claim *c)
{
    const char *kind = bstore_provider_kind(kjson_get_str(entry, "spec.store.provider"));
    const char *hostpath =
        kjson_get_str(entry, "metadata.annotations[" BLOCAL_HOSTPATH_ANNOTATION "]");
    char *dir;
    int r;

    if (!kind || strcmp(kind, "Local") != 0 || !hostpath)
        return 0;
    dir = malloc(BLOCAL_HOSTPATH_MAX + 2 * BLOCAL_PREFIX_MAX);
    r = dir &&
        blocal_dir(hostpath, kjson_get_str(entry, "spec.store.container"),
                   kjson_get_str(entry, "spec.prefix"), dir,
                   BLOCAL_HOSTPATH_MAX + 2 * BLOCAL_PREFIX_MAX, NULL) == KERR_OK &&
        strcmp(dir, c->prefix) == 0;
    free(dir);
    return r;
}

int bentry_is_claims(const cJSON *entry, const struct bstore_claim *c)
{
    struct bstore_claim e = { "", NULL };
    int r;

    if (!entry || !c || !c->prefix)
        return 0;
    if (strcmp(c->key, BLOCAL_KEY) == 0)
        return local_dir_is(entry, c);
    if (!kjson_get_str(entry, "spec.prefix") ||
        bstore_claim_init(&e, kjson_get_str(entry, "spec.store.provider"),
                          kjson_get_str(entry, "spec.store.container"),
                          kjson_get_str(entry, "spec.store.endpointOverride"),
                          kjson_get_str(entry, "spec.prefix"), NULL) != KERR_OK)
        return 0;
    r = strcmp(e.key, c->key) == 0 && strcmp(e.prefix, c->prefix) == 0;
    bstore_claim_release(&e);
    return r;
}

/* The entry of name via get into *out; KERR_OK with *out NULL when there is none. */
static enum kerr get_one(bentry_get_fn get, void *ctx, const char *name, cJSON **out,
                         struct kerr_info *err)
{
    enum kerr rc = get(ctx, name, out, err);

    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        *out = NULL;
        return KERR_OK;
    }
    if (rc != KERR_OK) {
        cJSON_Delete(*out);
        *out = NULL;
    }
    return rc;
}

enum kerr bentry_named(bentry_get_fn get, void *ctx, const struct bstore_claim *c, int *any,
                       struct kerr_info *err)
{
    char names[2][BSTORE_ENTRY_NAME_MAX + 1];
    cJSON *e = NULL;
    enum kerr rc;
    int i;

    *any = 0;
    if ((rc = bstore_entry_name(c, names[0])) != KERR_OK ||
        (rc = bstore_entry_name_v1(c, names[1])) != KERR_OK)
        return kerr_set(err, rc, "no BackupEntry name");
    for (i = 0; rc == KERR_OK && !*any && i < 2; i++) {
        rc = get_one(get, ctx, names[i], &e, err);
        *any = e != NULL;
        cJSON_Delete(e);
        e = NULL;
    }
    return rc;
}

enum kerr bentry_find(bentry_get_fn get, void *ctx, const struct bstore_claim *c,
                      enum bentry_found *found, cJSON **out, char name[BSTORE_ENTRY_NAME_MAX + 1],
                      struct kerr_info *err)
{
    char v1[BSTORE_ENTRY_NAME_MAX + 1];
    cJSON *cur = NULL, *old = NULL;
    enum kerr rc;

    *found = BENTRY_NONE;
    *out = NULL;
    if ((rc = bstore_entry_name(c, name)) != KERR_OK ||
        (rc = bstore_entry_name_v1(c, v1)) != KERR_OK)
        return kerr_set(err, rc, "no BackupEntry name");
    if ((rc = get_one(get, ctx, name, &cur, err)) != KERR_OK)
        return rc;
    if (cur && bentry_is_claims(cur, c)) {
        *found = BENTRY_CLAIMS;
        *out = cur;
        return KERR_OK;
    }
    if ((rc = get_one(get, ctx, v1, &old, err)) != KERR_OK) {
        cJSON_Delete(cur);
        return rc;
    }
    if (old && bentry_is_claims(old, c)) { /* made by an earlier release: still the claim's */
        cJSON_Delete(cur);
        *found = BENTRY_CLAIMS;
        *out = old;
        memcpy(name, v1, sizeof(v1));
        return KERR_OK;
    }
    if (old) /* of another claim: a collision, nothing of this claim's; the operator is told */
        log_warn("backup entry of an earlier release's name is another claim's", "entry", v1,
                 "store", c->key, "prefix", c->prefix);
    cJSON_Delete(old);
    if (cur) {
        *found = BENTRY_OTHER;
        *out = cur;
    }
    return KERR_OK;
}

const struct k8s_resource BENTRY_RES = { "etcd-warden.io", "v1alpha1", "backupentries", 0 };

enum kerr bentry_get_stored(void *ctx, const char *name, cJSON **out, struct kerr_info *err)
{
    return k8s_get(ctx, &BENTRY_RES, NULL, name, NULL, out, err);
}

enum kerr bentry_get_cached(void *ctx, const char *name, cJSON **out, struct kerr_info *err)
{
    return store_get(ctx, name, out, err);
}

enum kerr bentry_creds_lost(cJSON *entry, struct kerr_info *err)
{
    char s[KTIME_LEN + 1];
    struct timespec t;
    time_t at;

    if (kjson_has(entry, BENTRY_CREDS_LOST))
        return KERR_OK;
    if (ktime_parse(kjson_get_str(entry, BENTRY_CREDS_HELD), &t, NULL) == KERR_OK)
        at = t.tv_sec;
    else if (ktime_parse(kjson_get_str(entry, "spec.claimedAt"), &t, NULL) == KERR_OK ||
             ktime_parse(kjson_get_str(entry, "metadata.creationTimestamp"), &t, NULL) == KERR_OK)
        at = t.tv_sec - 1;
    else
        at = 0;
    if (ktime_format(at, s) != KERR_OK)
        return kerr_set(err, KERR_INTERNAL, "cannot format the time %lld", (long long)at);
    return kjson_set_str(entry, BENTRY_CREDS_LOST, s, err);
}

enum kerr bentry_add_earlier(cJSON *entry, int64_t since, int64_t before, struct kerr_info *err)
{
    char first[KTIME_LEN + 1], last[KTIME_LEN + 1];
    cJSON *list = (cJSON *)kjson_get(entry, BENTRY_EARLIER), *span;
    enum kerr rc;

    if (ktime_format((time_t)since, first) != KERR_OK ||
        ktime_format((time_t)before, last) != KERR_OK)
        return kerr_set(err, KERR_INTERNAL, "cannot format the time");
    if (!cJSON_IsArray(list)) {
        if (!(list = cJSON_CreateArray()))
            return kerr_set(err, KERR_NOMEM, NULL);
        if ((rc = kjson_set(entry, BENTRY_EARLIER, list, err)) != KERR_OK)
            return rc;
    }
    while (cJSON_GetArraySize(list) >= BENTRY_EARLIER_MAX) /* the oldest goes */
        cJSON_DeleteItemFromArray(list, 0);
    span = cJSON_CreateObject();
    if (!span || !cJSON_AddStringToObject(span, "since", first) ||
        !cJSON_AddStringToObject(span, "before", last) || !cJSON_AddItemToArray(list, span)) {
        cJSON_Delete(span);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    return KERR_OK;
}
