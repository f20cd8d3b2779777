/* plocal - the directory of a Local store on the node, at admission; see plocal.h. */
#include "webhook/plocal.h"

#include <stdio.h>
#include <string.h>

#include "common/blocal.h"
#include "common/bstore.h"
#include "common/kjson.h"
#include "common/kobj.h"
#include "common/lowner.h"

enum kerr plocal_dir(struct k8s_client *k, const char *ns, const char *secret,
                     const char *container, const char *prefix, char *dir, size_t n, char *why,
                     size_t wn)
{
    return lowner_dir(k, ns, secret, container, prefix, dir, n, why, wn);
}

/* The Secret {namespace, name} of the cached bucket named name into ns and sname. */
static int bucket_secret(struct store *buckets, const char *name, char *ns, size_t nn, char *sname,
                         size_t sn)
{
    char key[STORE_KEY_MAX];
    cJSON *meta = cJSON_CreateObject(), *b = NULL;
    int ok = 0;

    if (meta && cJSON_AddStringToObject(cJSON_AddObjectToObject(meta, "metadata"), "name", name) &&
        kobj_key_of(meta, key, sizeof(key), NULL) == KERR_OK &&
        store_get(buckets, key, &b, NULL) == KERR_OK && kjson_get_str(b, "spec.secretRef.name") &&
        kjson_get_str(b, "spec.secretRef.namespace")) {
        snprintf(ns, nn, "%s", kjson_get_str(b, "spec.secretRef.namespace"));
        snprintf(sname, sn, "%s", kjson_get_str(b, "spec.secretRef.name"));
        ok = 1;
    }
    cJSON_Delete(meta);
    cJSON_Delete(b);
    return ok;
}

int plocal_other(struct k8s_client *k, struct store *buckets, const cJSON *c, char *dir, size_t n)
{
    const cJSON *l = kjson_get(c, "local");
    const char *bucket = kjson_get_str(l, "bucket");
    char ns[256], sname[256], why[512];

    if (!l || !kjson_get_str(l, "container") || !kjson_get_str(l, "prefix"))
        return 0;
    if (kjson_get_str(l, "hostPath")) /* a copy's (or retained copy's), as its Job mounted it */
        return blocal_dir(kjson_get_str(l, "hostPath"), kjson_get_str(l, "container"),
                          kjson_get_str(l, "prefix"), dir, n, NULL) == KERR_OK;
    if (bucket) { /* an entry: the directory its deletion Job mounts, the bucket's */
        if (!buckets || !*bucket ||
            !bucket_secret(buckets, bucket, ns, sizeof(ns), sname, sizeof(sname)))
            return 0;
    } else {
        snprintf(ns, sizeof(ns), "%s",
                 kjson_get_str(c, "namespace") ? kjson_get_str(c, "namespace") : "");
        snprintf(sname, sizeof(sname), "%s",
                 kjson_get_str(l, "secret") ? kjson_get_str(l, "secret") : "");
    }
    return plocal_dir(k, ns, *sname ? sname : NULL, kjson_get_str(l, "container"),
                      kjson_get_str(l, "prefix"), dir, n, why, sizeof(why)) == KERR_OK &&
           !*why;
}

/* What plocal_in_the_way's search of the buckets looks for and found. */
struct above {
    struct lowner lo;
    const char *other; /* the other claim's directory */
};

/* store_view_fn over BackupBuckets: KERR_EXISTS at one whose partition makes p->other
 * unmountable for p->lo's namespace and directory. */
static enum kerr view_above(void *ctx, const char *key, const cJSON *b)
{
    struct above *p = ctx;
    int yes = 0;
    enum kerr rc = lowner_unmountable(&p->lo, b, p->other, &yes);

    (void)key;
    return rc == KERR_OK && yes ? KERR_EXISTS : rc;
}

int plocal_in_the_way(struct k8s_client *k, struct store *buckets, const char *ns, const char *dir,
                      const cJSON *c)
{
    char other[BLOCAL_HOSTPATH_MAX + 2 * BSTORE_PREFIX_MAX];
    const char *cns = kjson_get_str(c, "namespace");
    struct above p = { .other = other };
    struct kerr_info err = { 0 };
    enum kerr rc;

    if (!plocal_other(k, buckets, c, other, sizeof(other)))
        return 1; /* not placed: anywhere */
    if (!bstore_overlap(BLOCAL_KEY, dir, other))
        return 0;
    /* only what a StatefulSet alone makes real: an Etcd's claim or its entry, never the copies
     * of an EtcdBackup (claim.etcd) or a retained copy's entry, which Jobs write */
    if (!buckets || !ns || !cns || strcmp(cns, ns) == 0 || kjson_has(c, "etcd") ||
        kjson_has(c, "retainedCopy"))
        return 1;
    lowner_init(&p.lo, k, ns, dir);
    rc = store_foreach(buckets, view_above, &p, &err);
    lowner_release(&p.lo);
    return rc != KERR_EXISTS; /* found: nobody's way; not found or not read: in the way */
}

/* What plocal_part's search looks for and found. */
struct part {
    struct lowner lo;
    char *why;
};

/* store_view_fn over BackupBuckets: KERR_EXISTS at one whose partition keeps dir from ns. */
static enum kerr view_part(void *ctx, const char *key, const cJSON *b)
{
    struct part *p = ctx;
    enum kerr rc = lowner_part(&p->lo, b, p->why, PLOCAL_WHY_MAX);

    (void)key;
    return rc == KERR_OK && *p->why ? KERR_EXISTS : rc;
}

enum kerr plocal_part(struct k8s_client *k, struct store *buckets, const char *ns, const char *dir,
                      char *why, struct kerr_info *err)
{
    struct part p = { .why = why };
    enum kerr rc;

    why[0] = '\0';
    if (!buckets)
        return KERR_OK;
    lowner_init(&p.lo, k, ns, dir);
    rc = store_foreach(buckets, view_part, &p, err);
    lowner_release(&p.lo);
    if (rc == KERR_EXISTS) {
        kerr_clear(err);
        rc = KERR_OK;
    }
    return rc;
}
