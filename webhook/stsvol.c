/* stsvol - the Local backup directory an Etcd's StatefulSet mounts; see stsvol.h. */
#include "webhook/stsvol.h"

#include <stdio.h>
#include <string.h>

#include "common/blocal.h"
#include "common/bstore.h"
#include "common/kjson.h"
#include "common/log.h"
#include "webhook/lookup.h"
#include "webhook/plocal.h"
#include "webhook/prefix.h"

#define DIR_MAX (BLOCAL_HOSTPATH_MAX + 2 * BSTORE_PREFIX_MAX)

enum stsvol_found stsvol_hostpath(const cJSON *sts, const char **path)
{
    const cJSON *vols = kjson_get(sts, "spec.template.spec.volumes"), *v, *hp = NULL;
    int n = 0;

    if (!vols || cJSON_IsNull(vols))
        return STSVOL_NONE;
    if (!cJSON_IsArray(vols))
        return STSVOL_BAD;
    cJSON_ArrayForEach (v, vols) {
        const char *name = kjson_get_str(v, "name");

        if (!name || strcmp(name, STSVOL_VOLUME) != 0)
            continue;
        n++;
        hp = kjson_get(v, "hostPath");
    }
    if (n > 1)
        return STSVOL_BAD;
    if (!hp || cJSON_IsNull(hp))
        return STSVOL_NONE;
    if (!kjson_get_str(hp, "path"))
        return STSVOL_BAD;
    *path = kjson_get_str(hp, "path");
    return STSVOL_PATH;
}

int stsvol_applies(const struct review_req *req)
{
    const char *path = NULL, *was = NULL;
    enum stsvol_found f;

    if ((req->op != REVIEW_OP_CREATE && req->op != REVIEW_OP_UPDATE) || !req->object ||
        strcmp(req->kind_group, "apps") != 0 || strcmp(req->kind_kind, "StatefulSet") != 0)
        return 0;
    f = stsvol_hostpath(req->object, &path);
    if (f != STSVOL_PATH)
        return f == STSVOL_BAD;
    /* an UPDATE keeping the path it mounted: nothing new on the node */
    return req->op == REVIEW_OP_CREATE || !req->old_object ||
           stsvol_hostpath(req->old_object, &was) != STSVOL_PATH || strcmp(was, path) != 0;
}

/* What one check looks for and found. */
struct probe {
    struct k8s_client *k;
    struct store *buckets;
    const char *ns, *etcd; /* the Etcd whose StatefulSet it is */
    const char *dir;       /* the directory mounted, canonical */
    int routed;            /* stsvol_check's */
    char other[512];       /* the claim in the way, described ("" when none) */
    char other_ns[256];
};

static int own(const struct probe *p, const cJSON *c)
{
    return strcmp(kjson_get_str(c, "namespace"), p->ns) == 0 &&
           strcmp(kjson_get_str(c, "name"), p->etcd) == 0;
}

/* 1 when claim c is in the way of p->dir (webhook/plocal; a store not understood: anywhere in
 * its container). */
static int in_the_way(const struct probe *p, const cJSON *c)
{
    if (kjson_has(c, "invalid"))
        return bstore_unkeyed_overlap(BLOCAL_KEY, kjson_get_str(c, "container"));
    return plocal_in_the_way(p->k, p->buckets, p->routed ? p->ns : NULL, p->dir, c);
}

/* store_view_fn over the projected claims: KERR_EXISTS at the first one in the way. Its kind's
 * word is ctx's what. */
static enum kerr view(struct probe *p, const cJSON *obj, const char *what, int skip_own)
{
    const cJSON *c = kjson_get(obj, "claim");

    if (!c || !kjson_get_str(c, "store") || !kjson_get_str(c, "namespace") ||
        !kjson_get_str(c, "name") || (skip_own && own(p, c)) || !in_the_way(p, c))
        return KERR_OK;
    /* its container and prefix as written (the cached prefix is placed at the default hostPath) */
    snprintf(p->other, sizeof(p->other), "%s %s/%s (container \"%s\", prefix \"%s\")", what,
             kjson_get_str(c, "namespace"), kjson_get_str(c, "name"),
             kjson_get_str(c, "local.container") ? kjson_get_str(c, "local.container") : "?",
             kjson_get_str(c, "local.prefix") ? kjson_get_str(c, "local.prefix")
                                              : "not understood");
    snprintf(p->other_ns, sizeof(p->other_ns), "%s", kjson_get_str(c, "namespace"));
    return KERR_EXISTS;
}

static enum kerr view_etcd(void *ctx, const char *key, const cJSON *obj)
{
    (void)key;
    return view(ctx, obj, "the directory of Etcd", 1);
}

static enum kerr view_entry(void *ctx, const char *key, const cJSON *obj)
{
    const cJSON *c = kjson_get(obj, "claim");

    (void)key;
    /* the Etcd's own entries are its own backups, unless being deleted */
    return view(ctx, obj, "the directory of a BackupEntry of Etcd",
                !c || !kjson_has(c, "deleting"));
}

static enum kerr view_backup(void *ctx, const char *key, const cJSON *obj)
{
    (void)key;
    return view(ctx, obj, "the directory of the copies of EtcdBackup", 0);
}

/* The claims of the caches in the way of p->dir into p->other. */
static enum kerr scan(struct probe *p, struct store *etcds, struct store *entries,
                      struct store *backups, struct kerr_info *err)
{
    static const char *const keys[] = { BLOCAL_KEY, PREFIX_STORE_UNKEYED };
    enum kerr rc = KERR_OK;

    for (int i = 0; i < 2 && rc == KERR_OK && !*p->other; i++) {
        if (etcds)
            rc = store_index_view(etcds, PREFIX_INDEX_STORE, keys[i], view_etcd, p, err);
        if (rc == KERR_OK && !*p->other && entries)
            rc = store_index_view(entries, PREFIX_INDEX_STORE, keys[i], view_entry, p, err);
        if (rc == KERR_OK && !*p->other && backups)
            rc = store_index_view(backups, PREFIX_INDEX_STORE, keys[i], view_backup, p, err);
    }
    if (rc == KERR_EXISTS) {
        kerr_clear(err);
        rc = KERR_OK;
    }
    return rc;
}

/* The Etcd the StatefulSet of req is (its part-of label when etcd-druid's, else its name) into
 * name; *labelled 1 when its labels say so. */
static void etcd_of(const struct review_req *req, char *name, size_t n, int *labelled)
{
    const char *by = kjson_get_str(req->object, "metadata.labels[" LOOKUP_LABEL_MANAGED_BY "]");
    const char *part = kjson_get_str(req->object, "metadata.labels[" LOOKUP_LABEL_PART_OF "]");

    *labelled = by && strcmp(by, LOOKUP_MANAGED_BY_DRUID) == 0 && part;
    snprintf(name, n, "%s", *labelled ? part : (req->name ? req->name : ""));
}

static enum kerr answer(enum kerr rc, struct kerr_info *err)
{
    return rc == KERR_OK ? rc : kerr_set(err, rc, "building the answer");
}

/* resp denied for the directory p->dir (mounted from path) that p->ns may not have: why. */
static enum kerr deny(const struct probe *p, const struct review_req *req, const char *path,
                      const char *why, struct review_resp *resp)
{
    log_info("Local backup volume refused", "namespace", p->ns, "statefulset",
             req->name ? req->name : "", "etcd", p->etcd, "directory", p->dir, "because", why);
    return review_deny(resp,
                       "StatefulSet %s/%s of Etcd %s mounts volume " STSVOL_VOLUME
                       " (hostPath \"%.300s\"), so its backup sidecar would write and "
                       "garbage-collect the Local directory \"/%.300s\" on the node (the path + "
                       "\"/\" + the Etcd's spec.backup.store.prefix), and %s; fix the hostPath "
                       "of the Etcd's backup Secret (docs/backup-entries.md, Local stores)",
                       p->ns, req->name ? req->name : "", p->etcd, path, p->dir, why);
}

/* The directory (with the cached Etcd e's prefix) mounted from path into dir; why (n) when it
 * cannot be placed. */
static enum kerr place(const cJSON *e, const char *path, char *dir, size_t dn, char *why, size_t n)
{
    const char *prefix = kjson_get_str(e, "claim.local.prefix");
    struct kerr_info e2 = { 0 };
    enum kerr rc;

    why[0] = '\0';
    /* "." as the container: the volume's path is hostPath + "/" + container already */
    rc = blocal_dir(path, ".", prefix ? prefix : "", dir, dn, &e2);
    if (rc == KERR_NOMEM)
        return rc;
    if (rc != KERR_OK)
        snprintf(why, n, "it cannot be placed: %s", e2.msg[0] ? e2.msg : kerr_str(rc));
    return KERR_OK;
}

/* The rule once the Etcd e of the StatefulSet is known (p->ns, p->etcd). */
static enum kerr judge(struct probe *p, struct store *claims[3], const cJSON *e,
                       const struct review_req *req, struct review_resp *resp)
{
    const char *path = NULL;
    char dir[DIR_MAX], why[PLOCAL_WHY_MAX];
    struct kerr_info e2 = { 0 };
    enum kerr rc;

    if (stsvol_hostpath(req->object, &path) != STSVOL_PATH)
        return review_deny(resp,
                           "StatefulSet %s/%s of Etcd %s: its volumes cannot be read as a "
                           "single " STSVOL_VOLUME " hostPath volume, so the Local directory "
                           "its backup sidecar would use cannot be placed",
                           p->ns, req->name ? req->name : "", p->etcd);
    if ((rc = place(e, path, dir, sizeof(dir), why, sizeof(why))) != KERR_OK)
        return rc;
    p->dir = dir;
    if (*why)
        return deny(p, req, path, why, resp);
    if ((rc = plocal_part(p->k, p->buckets, p->ns, dir, why, &e2)) == KERR_NOMEM)
        return rc;
    if (rc != KERR_OK)
        return review_errored(resp, 500,
                              "checking the Local directory against the BackupBuckets: %s",
                              e2.msg[0] ? e2.msg : kerr_str(rc));
    if (*why)
        return deny(p, req, path, why, resp);
    if ((rc = scan(p, claims[0], claims[1], claims[2], &e2)) == KERR_NOMEM)
        return rc;
    if (rc != KERR_OK)
        return review_errored(resp, 500, "checking the Local directory against the caches: %s",
                              e2.msg[0] ? e2.msg : kerr_str(rc));
    if (!*p->other)
        return KERR_OK;
    snprintf(why, sizeof(why), "that directory overlaps %s; one directory, one cluster",
             strcmp(p->other_ns, p->ns) == 0 ? p->other : PREFIX_OTHER_NAMESPACE);
    return deny(p, req, path, why, resp);
}

enum kerr stsvol_check(struct k8s_client *k, struct store *buckets, int routed, struct store *etcds,
                       struct store *entries, struct store *backups, const struct review_req *req,
                       struct review_resp *resp, struct kerr_info *err)
{
    struct store *claims[3] = { etcds, entries, backups };
    char name[LOOKUP_NAME_MAX + 1], key[2 * LOOKUP_NAME_MAX + 2];
    struct probe p = { 0 };
    struct kerr_info e2 = { 0 };
    cJSON *e = NULL;
    int labelled;
    enum kerr rc;

    if (!stsvol_applies(req))
        return KERR_OK;
    etcd_of(req, name, sizeof(name), &labelled);
    p.k = k;
    p.buckets = buckets;
    p.routed = routed;
    p.ns = req->namespace ? req->namespace : "";
    p.etcd = name;
    snprintf(key, sizeof(key), "%s/%s", p.ns, name);
    if (!etcds)
        return answer(review_errored(resp, 500, "the Etcd cache cannot answer"), err);
    rc = store_get(etcds, key, &e, &e2);
    if (rc == KERR_NOTFOUND && !labelled)
        return KERR_OK; /* no Etcd's StatefulSet */
    if (rc == KERR_NOTFOUND)
        rc = review_errored(resp, 500,
                            "StatefulSet %s/%s is labelled as Etcd %s's, which the cache does "
                            "not hold: the Local directory it mounts cannot be judged",
                            p.ns, req->name ? req->name : "", name);
    else if (rc == KERR_OK)
        rc = judge(&p, claims, e, req, resp);
    else if (rc != KERR_NOMEM)
        rc = review_errored(resp, 500, "reading Etcd %s from the cache: %s", key,
                            e2.msg[0] ? e2.msg : kerr_str(rc));
    cJSON_Delete(e);
    return answer(rc, err);
}

enum kerr stsvol_decide(struct prefix_cache *pc, const struct review_req *req,
                        struct review_resp *resp, struct kerr_info *err)
{
    struct store *etcds = NULL, *entries = NULL, *backups = NULL;
    struct k8s_client *k = NULL;
    const char *lease_ns = NULL;

    if (!stsvol_applies(req))
        return KERR_OK;
    if (!prefix_cache_stores(pc, &etcds, &entries, &backups))
        return answer(review_errored(resp, 500, "the claim caches have not synced yet"), err);
    prefix_cache_claims(pc, &k, &lease_ns);
    return stsvol_check(k, prefix_cache_buckets(pc), prefix_cache_routed(pc), etcds, entries,
                        backups, req, resp, err);
}
