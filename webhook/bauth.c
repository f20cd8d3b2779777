/* bauth - the bucket owner's authority at admission; see bauth.h. */
#include "webhook/bauth.h"

#include <stdio.h>
#include <string.h>

#include "common/bstore.h"
#include "common/kjson.h"
#include "common/lsel.h"

static const struct k8s_resource res_namespace = { "", "v1", "namespaces", 0 };

/* What owners() gathers: the buckets of one store that have a selector. */
struct owners {
    const char *key;
    cJSON *found; /* OWNS: [{"name", "selector"}] */
};

static enum kerr owner(void *ctx, const char *skey, const cJSON *b)
{
    struct owners *o = ctx;
    const cJSON *sel = kjson_get(b, "spec.namespaceSelector");
    const char *ep = kjson_get_str(b, "spec.endpointOverride");
    char key[BSTORE_KEY_MAX];
    cJSON *one;

    (void)skey;
    if (bstore_key(kjson_get_str(b, "spec.provider"), kjson_get_str(b, "spec.container"), ep, key,
                   sizeof(key)) != KERR_OK ||
        strcmp(key, o->key) != 0 || !sel || cJSON_IsNull(sel))
        return KERR_OK;
    one = cJSON_CreateObject();
    if (!one || !cJSON_AddStringToObject(one, "name", kjson_get_str(b, "metadata.name")) ||
        !cJSON_AddItemToObject(one, "selector", cJSON_Duplicate(sel, 1)) ||
        !cJSON_AddItemToArray(o->found, one)) {
        cJSON_Delete(one);
        return KERR_NOMEM;
    }
    return KERR_OK;
}

enum kerr bauth_check(struct store *buckets, struct k8s_client *k, const char *ns, const char *key,
                      char *why, size_t n, struct kerr_info *err)
{
    struct owners o = { key, cJSON_CreateArray() };
    cJSON *nsobj = NULL;
    const cJSON *b;
    enum kerr rc = o.found ? store_foreach(buckets, owner, &o, err) : KERR_NOMEM;
    int match = 1;

    why[0] = '\0';
    if (rc == KERR_OK && cJSON_GetArraySize(o.found) > 0) {
        rc = k8s_get(k, &res_namespace, NULL, ns, NULL, &nsobj, err);
        if (rc == KERR_NOTFOUND) { /* no labels to select: refused */
            kerr_clear(err);
            rc = KERR_OK;
        }
    }
    cJSON_ArrayForEach (b, o.found) {
        if (rc != KERR_OK)
            break;
        rc = lsel_match(cJSON_GetObjectItemCaseSensitive(b, "selector"),
                        kjson_get(nsobj, "metadata.labels"), &match, err);
        if (rc == KERR_INVAL) { /* a selector the controller refuses too: nobody */
            kerr_clear(err);
            rc = KERR_OK;
            match = 0;
        }
        if (rc == KERR_OK && !match) {
            snprintf(why, n,
                     "namespace %s is not selected by spec.namespaceSelector of BackupBucket %s, "
                     "which owns the store (%s): the bucket's owner decides which namespaces may "
                     "claim prefixes there; ask them to select this namespace, or use another "
                     "container",
                     ns, kjson_get_str(b, "name"), key);
            break;
        }
    }
    cJSON_Delete(nsobj);
    cJSON_Delete(o.found);
    return rc;
}
