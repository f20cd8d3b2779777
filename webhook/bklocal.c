/* bklocal - Local destinations, targets and sources at admission; see bklocal.h. */
#include "webhook/bklocal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/blocal.h"
#include "common/kjson.h"
#include "common/lowner.h"
#include "common/pclaim.h"
#include "common/rtarget.h"
#include "webhook/plocal.h"
#include "webhook/prefix.h"

#define DIR_MAX (BLOCAL_HOSTPATH_MAX + 2 * BSTORE_PREFIX_MAX)

/* A copy of the cached object ns/name of s into *out (NULL when not cached). */
static void cached(struct store *s, const char *ns, const char *name, cJSON **out)
{
    char key[512];

    *out = NULL;
    if (s && ns && name && snprintf(key, sizeof(key), "%s/%s", ns, name) < (int)sizeof(key))
        (void)store_get(s, key, out, NULL);
}

/* The caches rtarget_local_secret looks in, and the name it found. */
struct caches {
    struct store *etcds, *backups;
    char name[256];
};

/* rtarget_find_fn over the caches' projections (webhook/prefix: "secret", "destination.secret"). */
static int find_cached(void *ctx, int backup, const char *ns, const char *name, const char **secret)
{
    struct caches *c = ctx;
    const char *s;
    cJSON *o = NULL;

    cached(backup ? c->backups : c->etcds, ns, name, &o);
    s = kjson_get_str(o, backup ? "destination.secret" : "secret");
    snprintf(c->name, sizeof(c->name), "%s", s ? s : "");
    *secret = c->name[0] ? c->name : NULL;
    cJSON_Delete(o);
    return o != NULL;
}

/* The Secret the controller gives an EtcdRestore's copy for its target (common/rtarget). */
static const char *target_secret(struct store *etcds, struct store *backups, const cJSON *obj,
                                 int *known)
{
    static __thread struct caches c;
    const char *secret = NULL;

    c.etcds = etcds;
    c.backups = backups;
    *known = rtarget_local_secret(obj, find_cached, &c, &secret);
    return secret;
}

const char *bklocal_secret_of(struct store *etcds, struct store *backups, const cJSON *obj,
                              const char *base, int *known)
{
    char path[128];

    *known = 1;
    if (strcmp(base, "spec.target.store") == 0)
        return target_secret(etcds, backups, obj, known);
    snprintf(path, sizeof(path), "%s.secretRef.name", base);
    return kjson_get_str(obj, path);
}

enum kerr bklocal_self(struct k8s_client *k, struct store *etcds, struct store *backups,
                       const cJSON *obj, const char *base, struct bstore_claim *c, char *why)
{
    const cJSON *st = kjson_get(obj, base);
    const char *ns = kjson_get_str(obj, "metadata.namespace");
    char dir[DIR_MAX], *p;
    int known = 1;
    const char *secret = bklocal_secret_of(etcds, backups, obj, base, &known);
    enum kerr rc;

    why[0] = '\0';
    if (!known) {
        snprintf(why, BKLOCAL_WHY_MAX,
                 "the Secret whose hostPath places the Local target on the node cannot be told "
                 "(the restore's source is not known here): set %s.secretRef",
                 base);
        return KERR_OK;
    }
    rc = plocal_dir(k, ns ? ns : "", secret, kjson_get_str(st, "container"),
                    kjson_get_str(st, "prefix") ? kjson_get_str(st, "prefix") : "", dir,
                    sizeof(dir), why, BKLOCAL_WHY_MAX);
    if (rc != KERR_OK || *why)
        return rc;
    if (!(p = strdup(dir)))
        return KERR_NOMEM;
    free(c->prefix);
    c->prefix = p;
    return KERR_OK;
}

int bklocal_in_the_way(struct k8s_client *k, struct store *buckets, const char *ns, const char *dir,
                       const cJSON *c)
{
    return plocal_in_the_way(k, buckets, ns, dir, c);
}

/* What one search for an owner of a source directory looks for and found. */
struct owner {
    struct lowner lo; /* OWNS the namespace's labels once read */
    struct store *buckets;
    struct kerr_info *err;
    enum { OWN_ETCD, OWN_ENTRY, OWN_COPY } kind; /* the claims viewed */
    int others_pass; /* 0: the namespace's own claims; 1: the others' (only for an Etcd) */
    struct lowner_found f;
};

/* store_view_fn over BackupBuckets: o->f.granted at a Local one holding dir and selecting ns,
 * KERR_FORBIDDEN (o->f.forbidden) at one whose partition gives dir to another namespace or to
 * none (common/lowner's rule). */
static enum kerr view_bucket(void *ctx, const char *key, const cJSON *b)
{
    struct owner *o = ctx;
    enum kerr rc;

    (void)key;
    rc = lowner_bucket(&o->lo, b, o->err);
    o->f.granted |= rc == KERR_EXISTS;
    o->f.forbidden |= rc == KERR_FORBIDDEN;
    if (rc == KERR_EXISTS)
        kerr_clear(o->err);
    /* a partition that keeps dir from ns ends the search: no grant outweighs it */
    return rc == KERR_EXISTS ? KERR_OK : rc;
}

/* store_view_fn over projected claims: what a claim overlapping dir says of its owner (struct
 * lowner_found); KERR_EXISTS once one grants the directory to ns. */
static enum kerr view_claim(void *ctx, const char *key, const cJSON *obj)
{
    struct owner *o = ctx;
    const cJSON *c = kjson_get(obj, "claim");
    const char *ns = kjson_get_str(c, "namespace");
    char cdir[DIR_MAX];
    int placed, mine = ns && strcmp(ns, o->lo.ns) == 0;

    /* the first pass views ns's own claims, the second the others' */
    if (!c || !kjson_get_str(c, "store") || strcmp(kjson_get_str(c, "store"), BLOCAL_KEY) != 0 ||
        mine == o->others_pass || (o->others_pass && o->f.others))
        return KERR_OK;
    placed = plocal_other(o->lo.k, o->buckets, c, cdir, sizeof(cdir));
    if (!mine) {
        o->f.others |= !placed || bstore_overlap(BLOCAL_KEY, o->lo.dir, cdir);
        return KERR_OK;
    }
    if (o->kind == OWN_ENTRY) /* common/lowner's rule: an entry of ns as it is now */
        return lowner_entry(&o->lo, ns, kjson_get_str(c, "name"), key,
                            kjson_get_str(c, "createdAt"), placed ? cdir : NULL, &o->f);
    if (!placed || !lowner_inside(o->lo.dir, cdir))
        return KERR_OK;
    /* an Etcd's directory, or a copy's not recorded, comes from a Secret ns edits */
    if (o->kind == OWN_ETCD || !kjson_get_str(c, "local.hostPath"))
        o->f.own_etcd = 1;
    else
        o->f.granted = 1;
    return o->f.granted ? KERR_EXISTS : KERR_OK;
}

/* store_view_fn over claims not understood: one of another namespace is in the way of any
 * Local directory (common/bstore: bstore_unkeyed_overlap). */
static enum kerr view_unkeyed(void *ctx, const char *key, const cJSON *obj)
{
    struct owner *o = ctx;
    const cJSON *c = kjson_get(obj, "claim");
    const char *ns = kjson_get_str(c, "namespace");

    (void)key;
    if (c && (!ns || strcmp(ns, o->lo.ns) != 0) &&
        bstore_unkeyed_overlap(BLOCAL_KEY, kjson_get_str(c, "container")))
        o->f.others = 1;
    return KERR_OK;
}

/* The claims of the caches (etcds, entries, backups) viewed for o: the namespace's own, then,
 * only when one of its Etcds is all it has there, the others'. */
static enum kerr view_claims(struct owner *o, struct store *claims[3], struct kerr_info *err)
{
    enum kerr rc = KERR_OK;

    for (o->others_pass = 0; o->others_pass < 2 && rc == KERR_OK; o->others_pass++) {
        if (o->others_pass && ((!o->f.own_etcd && !o->f.own_entry) || o->f.others))
            break; /* the others matter only to an Etcd's or an entry's claim */
        for (size_t i = 0; i < 3 && rc == KERR_OK; i++) {
            o->kind = i == 0 ? OWN_ETCD : i == 1 ? OWN_ENTRY : OWN_COPY;
            if (claims[i])
                rc =
                    store_index_view(claims[i], PREFIX_INDEX_STORE, BLOCAL_KEY, view_claim, o, err);
            if (claims[i] && rc == KERR_OK && o->others_pass)
                rc = store_index_view(claims[i], PREFIX_INDEX_STORE, PREFIX_STORE_UNKEYED,
                                      view_unkeyed, o, err);
        }
    }
    return rc;
}

/* o->f.others when an EtcdRestore of another namespace recorded its target in the claim Lease
 * of Local stores (common/pclaim) overlapping the directory: its copy may be writing there. */
static enum kerr view_restores(struct owner *o, const char *lease_ns, struct kerr_info *err)
{
    struct pclaim_other other;
    enum kerr rc;

    if (!lease_ns || !*lease_ns || o->f.others || (!o->f.own_etcd && !o->f.own_entry))
        return KERR_OK; /* no claim Leases (a webhook without them), or decided already */
    rc = pclaim_restore_targets(o->lo.k, lease_ns, BLOCAL_KEY, o->lo.dir, o->lo.ns, &other, err);
    o->f.others = o->f.others || *other.what;
    return rc;
}

enum kerr bklocal_source_owned(struct k8s_client *k, struct store *buckets, struct store *etcds,
                               struct store *entries, struct store *backups, const char *lease_ns,
                               const char *ns, const char *dir, char *why, struct kerr_info *err)
{
    struct owner o = { .buckets = buckets, .err = err };
    struct store *claims[3] = { etcds, entries, backups };
    enum kerr rc;

    lowner_init(&o.lo, k, ns, dir);
    rc = buckets ? store_foreach(buckets, view_bucket, &o, err) : KERR_OK;
    if (rc == KERR_FORBIDDEN) {
        kerr_clear(err);
        lowner_release(&o.lo);
        snprintf(why, BKLOCAL_WHY_MAX,
                 "spec.source.store: namespace %s does not own the Local directory \"/%.300s\" "
                 "(hostPath + \"/\" + container + \"/\" + prefix): a BackupBucket of provider "
                 "Local partitions the directory holding it by spec.prefixScope Namespace, and "
                 "this part is not the namespace's; a restore reads only backups its namespace "
                 "owns",
                 ns, dir);
        return KERR_OK;
    }
    if (rc == KERR_OK && !o.f.granted)
        rc = view_claims(&o, claims, err);
    if (rc == KERR_OK)
        rc = view_restores(&o, lease_ns, err);
    lowner_release(&o.lo);
    why[0] = '\0';
    if (rc == KERR_EXISTS || (rc == KERR_OK && lowner_owned(&o.f))) {
        kerr_clear(err);
        return KERR_OK;
    }
    if (rc != KERR_OK)
        return rc;
    snprintf(why, BKLOCAL_WHY_MAX,
             "spec.source.store: namespace %s does not own the Local directory \"/%.300s\" "
             "(hostPath + \"/\" + container + \"/\" + prefix): no BackupBucket of provider Local "
             "selecting the namespace holds it, no EtcdBackup copy of the namespace was written "
             "there, and no Etcd or BackupEntry of the namespace (as it is now) claims it "
             "alone; a restore reads only backups its namespace owns",
             ns, dir);
    return KERR_OK;
}
