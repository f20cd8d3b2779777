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

/* 1 when bucket b's spec.prefixScope is there and neither Bucket nor Namespace. */
static int scope_bad(const cJSON *b)
{
    const cJSON *sc = kjson_get(b, "spec.prefixScope");
    const char *scope = kjson_get_str(b, "spec.prefixScope");

    return (sc && !cJSON_IsNull(sc) && !scope) ||
           (scope && strcmp(scope, BSTORE_SCOPE_NAMESPACE) != 0 && strcmp(scope, "Bucket") != 0);
}

/*
 * What is wrong with bucket b's spec, into bad (n bytes; "" when nothing is): a provider
 * common/bstore does not know, a container it refuses, a prefixScope not understood. Such a
 * bucket still owns the container it names (fail closed).
 */
static void bucket_problem(const cJSON *b, char *bad, size_t n)
{
    const char *provider = kjson_get_str(b, "spec.provider");
    const char *scope = kjson_get_str(b, "spec.prefixScope");
    struct kerr_info why = { 0 };

    bad[0] = '\0';
    if (!bstore_provider_kind(provider))
        snprintf(bad, n, "spec.provider \"%.64s\" is not one etcd-warden knows (accepted: %s)",
                 provider ? provider : "", bstore_provider_list());
    else if (bstore_container_check(provider, kjson_get_str(b, "spec.container"), &why) != KERR_OK)
        snprintf(bad, n, "spec.container: %.400s", why.msg);
    else if (scope_bad(b))
        snprintf(bad, n, "spec.prefixScope \"%.64s\" is neither Bucket nor Namespace",
                 scope ? scope : "(not a string)");
}

static enum kerr owner(void *ctx, const char *skey, const cJSON *b)
{
    struct owners *o = ctx;
    const cJSON *sel = kjson_get(b, "spec.namespaceSelector");
    const char *ep = kjson_get_str(b, "spec.endpointOverride");
    const char *scope = kjson_get_str(b, "spec.prefixScope");
    const char *container = kjson_get_str(b, "spec.container");
    /* a prefixScope not understood partitions the store as tightly as can be: nobody's */
    int by_ns = scope_bad(b) || (scope && strcmp(scope, BSTORE_SCOPE_NAMESPACE) == 0);
    char key[BSTORE_KEY_MAX], bad[BAUTH_WHY_MAX / 2];
    cJSON *one;

    (void)skey;
    if (sel && cJSON_IsNull(sel))
        sel = NULL;
    bucket_problem(b, bad, sizeof(bad));
    /* a bucket not understood owns every store of the container it names, whatever else is
     * wrong with it: skipping it would leave its namespaceSelector unenforced */
    if (!container || !*container ||
        (bstore_key(kjson_get_str(b, "spec.provider"), container, ep, key, sizeof(key)) !=
             KERR_OK &&
         snprintf(key, sizeof(key), BSTORE_OBJECT "|%s|", container) < 0) ||
        strcmp(key, o->key) != 0 || (!sel && !by_ns && !*bad))
        return KERR_OK;
    one = cJSON_CreateObject();
    if (!one || !cJSON_AddStringToObject(one, "name", kjson_get_str(b, "metadata.name")) ||
        (sel && !cJSON_AddItemToObject(one, "selector", cJSON_Duplicate(sel, 1))) ||
        (by_ns && !cJSON_AddTrueToObject(one, "byNamespace")) ||
        (*bad && !cJSON_AddStringToObject(one, "problem", bad)) ||
        !cJSON_AddItemToArray(o->found, one)) {
        cJSON_Delete(one);
        return KERR_NOMEM;
    }
    return KERR_OK;
}

/* What is wrong with a gathered bucket's spec, or NULL. */
static const char *problem_of(const cJSON *b)
{
    return kjson_get_str(b, "problem");
}

/* Why ns may not claim prefix under bucket b's partition (b: {name, byNamespace}), or "". */
static void scope_check(const cJSON *b, const char *ns, const char *key, const char *prefix,
                        char *why, size_t n)
{
    char owner[BAUTH_WHY_MAX / 4];

    if (problem_of(b) && strstr(problem_of(b), "spec.prefixScope") == problem_of(b)) {
        snprintf(why, n,
                 "BackupBucket %s, which owns the store (%s), is not understood: %.300s; no "
                 "namespace may claim prefixes there until its owner fixes it",
                 kjson_get_str(b, "name"), key, problem_of(b));
        return;
    }
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

/* Why nobody may claim in key when bucket b's selector cannot be read, into why (or ""). */
static void unreadable(const cJSON *b, const char *key, char *why, size_t n)
{
    struct kerr_info e = { 0 };
    int match = 0;

    if (lsel_match(cJSON_GetObjectItemCaseSensitive(b, "selector"), NULL, &match, &e) != KERR_INVAL)
        return;
    snprintf(why, n,
             "BackupBucket %s, which owns the store (%s), has a spec.namespaceSelector that "
             "cannot be read (%.200s): no namespace may claim prefixes there until its owner "
             "fixes it%s%.300s",
             kjson_get_str(b, "name"), key, e.msg, problem_of(b) ? "; also " : "",
             problem_of(b) ? problem_of(b) : "");
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
        if (!*why && kjson_has(b, "selector"))
            unreadable(b, key, why, n);
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
        if (rc == KERR_OK && !match) {
            snprintf(why, n,
                     "namespace %s is not selected by spec.namespaceSelector of BackupBucket %s, "
                     "which owns the store (%s): the bucket's owner decides which namespaces may "
                     "claim prefixes there; ask them to select this namespace, or use another "
                     "container%s%.300s",
                     ns, kjson_get_str(b, "name"), key,
                     problem_of(b) ? " (the bucket's spec is not understood, and it owns the "
                                     "container all the same: "
                                   : "",
                     problem_of(b) ? problem_of(b) : "");
            if (problem_of(b) && strlen(why) + 2 < n)
                snprintf(why + strlen(why), n - strlen(why), ")");
        }
    }
    cJSON_Delete(nsobj);
    cJSON_Delete(o.found);
    return rc;
}
