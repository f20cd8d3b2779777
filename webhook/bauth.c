/* bauth - the bucket owner's authority at admission; see bauth.h. */
#include "webhook/bauth.h"

#include <stdio.h>
#include <string.h>

#include "common/bstore.h"
#include "common/kjson.h"
#include "common/lsel.h"

static const struct k8s_resource res_namespace = { "", "v1", "namespaces", 0 };

/* What owners() gathers: the buckets of one store that have a selector or a prefix scope. */
struct owners {
    const char *key;
    cJSON *found; /* OWNS: [{"name", "selector"}] */
};

static enum kerr owner(void *ctx, const char *skey, const cJSON *b)
{
    struct owners *o = ctx;
    const cJSON *sel = kjson_get(b, "spec.namespaceSelector");
    const char *ep = kjson_get_str(b, "spec.endpointOverride");
    const char *scope = kjson_get_str(b, "spec.prefixScope");
    int by_ns = scope && strcmp(scope, BSTORE_SCOPE_NAMESPACE) == 0;
    char key[BSTORE_KEY_MAX];
    cJSON *one;

    (void)skey;
    if (sel && cJSON_IsNull(sel))
        sel = NULL;
    if (bstore_key(kjson_get_str(b, "spec.provider"), kjson_get_str(b, "spec.container"), ep, key,
                   sizeof(key)) != KERR_OK ||
        strcmp(key, o->key) != 0 || (!sel && !by_ns))
        return KERR_OK;
    one = cJSON_CreateObject();
    if (!one || !cJSON_AddStringToObject(one, "name", kjson_get_str(b, "metadata.name")) ||
        (sel && !cJSON_AddItemToObject(one, "selector", cJSON_Duplicate(sel, 1))) ||
        (by_ns && !cJSON_AddTrueToObject(one, "byNamespace")) ||
        !cJSON_AddItemToArray(o->found, one)) {
        cJSON_Delete(one);
        return KERR_NOMEM;
    }
    return KERR_OK;
}

/* Why ns may not claim prefix under bucket b's partition (b: {name, byNamespace}), or "". */
static void scope_check(const cJSON *b, const char *ns, const char *key, const char *prefix,
                        char *why, size_t n)
{
    char owner[BAUTH_WHY_MAX / 4];

    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(b, "byNamespace")) ||
        (bstore_prefix_owner(prefix, owner, sizeof(owner)) && strcmp(owner, ns) == 0))
        return;
    snprintf(why, n,
             "prefix \"%.256s\" is not namespace %s's: BackupBucket %s, which owns the store "
             "(%s), has spec.prefixScope Namespace, under which a namespace claims only prefixes "
             "whose first segment is its own name or its name, \"--\" and a word without "
             "\"--\", followed by \"/\" and more (%s/etcd-main, or %s--<id>/etcd-main as "
             "Gardener names them)",
             prefix, ns, kjson_get_str(b, "name"), key, ns, ns);
}

enum kerr bauth_check(struct store *buckets, struct k8s_client *k, const char *ns, const char *key,
                      const char *prefix, char *why, size_t n, struct kerr_info *err)
{
    struct owners o = { key, cJSON_CreateArray() };
    cJSON *nsobj = NULL;
    const cJSON *b;
    enum kerr rc = o.found ? store_foreach(buckets, owner, &o, err) : KERR_NOMEM;
    int match = 1, selectors = 0;

    why[0] = '\0';
    /* the partition first: it reads nothing but the bucket and the candidate */
    cJSON_ArrayForEach (b, o.found) {
        if (rc != KERR_OK || *why)
            break;
        scope_check(b, ns, key, prefix, why, n);
        selectors += kjson_has(b, "selector");
    }
    if (rc == KERR_OK && !*why && selectors > 0) {
        rc = k8s_get(k, &res_namespace, NULL, ns, NULL, &nsobj, err);
        if (rc == KERR_NOTFOUND) { /* no labels to select: refused */
            kerr_clear(err);
            rc = KERR_OK;
        }
    }
    cJSON_ArrayForEach (b, o.found) {
        if (rc != KERR_OK || *why)
            break;
        if (!kjson_has(b, "selector"))
            continue;
        rc = lsel_match(cJSON_GetObjectItemCaseSensitive(b, "selector"),
                        kjson_get(nsobj, "metadata.labels"), &match, err);
        if (rc == KERR_INVAL) { /* a selector the controller refuses too: nobody */
            kerr_clear(err);
            rc = KERR_OK;
            match = 0;
        }
        if (rc == KERR_OK && !match)
            snprintf(why, n,
                     "namespace %s is not selected by spec.namespaceSelector of BackupBucket %s, "
                     "which owns the store (%s): the bucket's owner decides which namespaces may "
                     "claim prefixes there; ask them to select this namespace, or use another "
                     "container",
                     ns, kjson_get_str(b, "name"), key);
    }
    cJSON_Delete(nsobj);
    cJSON_Delete(o.found);
    return rc;
}
