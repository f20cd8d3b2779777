/* stsvol - the Local backup directory an Etcd's StatefulSet mounts; see stsvol.h. */
#include "webhook/stsvol.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/blocal.h"
#include "common/bstore.h"
#include "common/kjson.h"
#include "common/log.h"
#include "common/ststore.h"
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

/* The backup-restore container of sts's template, or NULL. */
static const cJSON *sidecar(const cJSON *sts)
{
    const cJSON *c;

    cJSON_ArrayForEach (c, kjson_get(sts, "spec.template.spec.containers")) {
        const char *n = kjson_get_str(c, "name");

        if (n && strcmp(n, STSTORE_CONTAINER) == 0)
            return c;
    }
    return NULL;
}

static int is_local(const struct ststore *s)
{
    const char *kind = bstore_provider_kind(s->provider);

    return kind && strcmp(kind, "Local") == 0;
}

/* 1 when sts's template may put a backup sidecar's store on the node: a local-backup volume,
 * a Local store, or a sidecar whose store cannot be read. *s and *src: ststore_read's. */
static int relevant(const cJSON *sts, struct ststore *s, enum kerr *src)
{
    const char *path = NULL;
    char why[STSTORE_WHY_MAX];

    *src = ststore_read(sts, s, why, sizeof(why));
    if (stsvol_hostpath(sts, &path) != STSVOL_NONE)
        return 1;
    if (*src == KERR_OK)
        return is_local(s);
    return *src == KERR_INVAL && sidecar(sts);
}

static int json_same(const cJSON *a, const cJSON *b)
{
    if (!a || !b)
        return !a && !b;
    return cJSON_Compare(a, b, 1);
}

/* 1 when the containers of list (a template path) mount the same volumes in a and b. */
static int mounts_same(const cJSON *a, const cJSON *b, const char *list)
{
    const cJSON *la = kjson_get(a, list), *lb = kjson_get(b, list), *ca, *cb;

    if (!cJSON_IsArray(la) || !cJSON_IsArray(lb))
        return json_same(la, lb);
    if (cJSON_GetArraySize(la) != cJSON_GetArraySize(lb))
        return 0;
    for (ca = la->child, cb = lb->child; ca && cb; ca = ca->next, cb = cb->next)
        if (!json_same(kjson_get(ca, "name"), kjson_get(cb, "name")) ||
            !json_same(kjson_get(ca, "volumeMounts"), kjson_get(cb, "volumeMounts")))
            return 0;
    return 1;
}

int stsvol_applies(const struct review_req *req)
{
    static const struct ststore zero;
    struct ststore *s = NULL, *was = NULL;
    const char *path = NULL, *wpath = NULL;
    enum kerr src, wsrc;
    int r;

    if ((req->op != REVIEW_OP_CREATE && req->op != REVIEW_OP_UPDATE) || !req->object ||
        strcmp(req->kind_group, "apps") != 0 || strcmp(req->kind_kind, "StatefulSet") != 0)
        return 0;
    s = malloc(sizeof(*s));
    was = malloc(sizeof(*was));
    if (!s || !was) { /* judged: stsvol_check reports what it cannot do */
        free(s);
        free(was);
        return 1;
    }
    *s = zero;
    *was = zero;
    r = relevant(req->object, s, &src);
    /* an UPDATE keeping what the sidecar reads and every mount: nothing new on the node */
    if (r && req->op == REVIEW_OP_UPDATE && req->old_object) {
        (void)relevant(req->old_object, was, &wsrc);
        r = !(src == wsrc && memcmp(s, was, sizeof(*s)) == 0 &&
              stsvol_hostpath(req->object, &path) == stsvol_hostpath(req->old_object, &wpath) &&
              (!path || !wpath ? path == wpath : strcmp(path, wpath) == 0) &&
              json_same(kjson_get(req->object, "spec.template.spec.volumes"),
                        kjson_get(req->old_object, "spec.template.spec.volumes")) &&
              mounts_same(req->object, req->old_object, "spec.template.spec.containers") &&
              mounts_same(req->object, req->old_object, "spec.template.spec.initContainers"));
    }
    free(s);
    free(was);
    return r;
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
                       "\"/\" + its backup-restore container's --store-prefix), and %s; fix the "
                       "hostPath of the Etcd's backup Secret or the store of its sidecar "
                       "(docs/backup-entries.md, Local stores)",
                       p->ns, req->name ? req->name : "", p->etcd, path, p->dir, why);
}

/* The directory mounted from path, the sidecar writing prefix below it, into dir; why (n)
 * when it cannot be placed. */
static enum kerr place(const char *path, const char *prefix, char *dir, size_t dn, char *why,
                       size_t n)
{
    struct kerr_info e2 = { 0 };
    enum kerr rc;

    why[0] = '\0';
    /* "." as the container: the volume's path is hostPath + "/" + container already */
    rc = blocal_dir(path, ".", prefix, dir, dn, &e2);
    if (rc == KERR_NOMEM)
        return rc;
    if (rc != KERR_OK)
        snprintf(why, n, "it cannot be placed: %s", e2.msg[0] ? e2.msg : kerr_str(rc));
    return KERR_OK;
}

/* 1 when the volume named name in sts's template is a hostPath (or cannot be read). */
static int hostpath_vol(const cJSON *sts, const char *name)
{
    const cJSON *v;

    if (!name)
        return 1;
    cJSON_ArrayForEach (v, kjson_get(sts, "spec.template.spec.volumes")) {
        const char *n = kjson_get_str(v, "name");

        if (n && strcmp(n, name) == 0 && kjson_has(v, "hostPath"))
            return 1;
    }
    return 0;
}

/* 1 when mount path m is at or below base (both absolute, compared without trailing '/'). */
static int at_or_below(const char *m, const char *base)
{
    size_t bl = strlen(base), ml = strlen(m);

    while (bl > 1 && base[bl - 1] == '/')
        bl--;
    while (ml > 1 && m[ml - 1] == '/')
        ml--;
    return ml >= bl && strncmp(m, base, bl) == 0 && (ml == bl || m[bl] == '/' || bl == 1);
}

/* 1 when path p has no empty, "." or ".." segment (a trailing '/' allowed). */
static int clean(const char *p)
{
    for (const char *q = p; *q; q++)
        if (q[0] == '/' && (q[1] == '/' || (q[1] == '.' && (!q[2] || q[2] == '/')) ||
                            (q[1] == '.' && q[2] == '.' && (!q[3] || q[3] == '/'))))
            return 0;
    return 1;
}

/* The mountPath of the local-backup mount of the sidecar c into *bk and returned, or NULL
 * with why (n) when it mounts another hostPath volume. ststore_read has read the template: the
 * mount is there once, without a subPath, on etcd-druid's <home>/<container>. */
static const char *backup_mount(const cJSON *sts, const cJSON *c, const cJSON **bk, char *why,
                                size_t n)
{
    const cJSON *m;

    *bk = NULL;
    cJSON_ArrayForEach (m, kjson_get(c, "volumeMounts")) {
        const char *name = kjson_get_str(m, "name");

        if (name && strcmp(name, STSVOL_VOLUME) == 0) {
            *bk = m;
        } else if (hostpath_vol(sts, name)) {
            snprintf(why, n, "its backup-restore container mounts another hostPath volume (%.200s)",
                     name ? name : "unnamed");
            return NULL;
        }
    }
    if (!*bk || !kjson_get_str(*bk, "mountPath")) {
        snprintf(why, n, "its backup-restore container does not mount volume " STSVOL_VOLUME);
        return NULL;
    }
    return kjson_get_str(*bk, "mountPath");
}

/* Why a mount of container it (the sidecar: c) puts something over the sidecar's mount bk at
 * mp (into why, n): any other mount of the sidecar, a hostPath volume of another container, at
 * or below mp, or at a path that is not clean; local-backup mounted by another container. 1 when
 * one does. */
static int covered(const cJSON *sts, const cJSON *c, const cJSON *it, const cJSON *bk,
                   const char *mp, char *why, size_t n)
{
    const cJSON *m;

    cJSON_ArrayForEach (m, kjson_get(it, "volumeMounts")) {
        const char *name = kjson_get_str(m, "name"), *p = kjson_get_str(m, "mountPath");

        if (m == bk || (it != c && !hostpath_vol(sts, name)))
            continue;
        /* local-backup in another container: the whole volume, whatever its path */
        if (!p || !clean(p) || at_or_below(p, mp) || (name && strcmp(name, STSVOL_VOLUME) == 0)) {
            snprintf(why, n,
                     "container %.100s mounts volume %.100s over the backup sidecar's directory "
                     "\"%.200s\"",
                     kjson_get_str(it, "name") ? kjson_get_str(it, "name") : "?", name ? name : "?",
                     mp);
            return 1;
        }
    }
    return 0;
}

/* Why the template's mounts move the sidecar's store off "<volume>/<prefix>" (into why, n), or
 * "" when they keep it there (backup_mount, covered). */
static void mounts_ok(const cJSON *sts, const cJSON *c, char *why, size_t n)
{
    static const char *const lists[] = { "spec.template.spec.containers",
                                         "spec.template.spec.initContainers" };
    const cJSON *bk = NULL, *it;
    const char *mp;

    why[0] = '\0';
    if (!(mp = backup_mount(sts, c, &bk, why, n)))
        return;
    for (int i = 0; i < 2; i++)
        cJSON_ArrayForEach (it, kjson_get(sts, lists[i]))
            if (covered(sts, c, it, bk, mp, why, n))
                return;
}

/* Whether the StatefulSet's backup sidecar writes a Local store on the node: 1 with its store
 * in *s and the local-backup path in *path; 0 when it writes none there; -1 refused (why). */
static int sidecar_store(const cJSON *sts, const cJSON *e, struct ststore *s, const char **path,
                         char *why, size_t n)
{
    enum stsvol_found f = stsvol_hostpath(sts, path);
    int local_etcd = kjson_has(e, "claim.local") || kjson_has(e, "claim.invalid");
    char r[STSTORE_WHY_MAX];
    enum kerr src = ststore_read(sts, s, r, sizeof(r));

    if (f == STSVOL_BAD) {
        snprintf(why, n,
                 "its volumes cannot be read as a single " STSVOL_VOLUME " hostPath volume");
        return -1;
    }
    if (src == KERR_INVAL && (f == STSVOL_PATH || local_etcd)) {
        snprintf(why, n, "the store its backup sidecar writes cannot be read (%.300s)", r);
        return -1;
    }
    if (src == KERR_OK && is_local(s))
        return 1;
    if (f == STSVOL_PATH) {
        snprintf(why, n, "it mounts volume " STSVOL_VOLUME " but its backup sidecar names %s",
                 src == KERR_OK ? "a store that is not Local" : "no store");
        return -1;
    }
    return 0;
}

/* The rule once the Etcd e of the StatefulSet is known (p->ns, p->etcd). */
static enum kerr judge(struct probe *p, struct store *claims[3], const cJSON *e,
                       const struct review_req *req, struct review_resp *resp)
{
    const char *path = NULL;
    char dir[DIR_MAX], why[PLOCAL_WHY_MAX];
    struct kerr_info e2 = { 0 };
    struct ststore *s = malloc(sizeof(*s));
    enum kerr rc;
    int r;

    if (!s)
        return KERR_NOMEM;
    r = sidecar_store(req->object, e, s, &path, why, sizeof(why));
    if (r == 1)
        mounts_ok(req->object, sidecar(req->object), why, sizeof(why));
    if (r < 0 || (r == 1 && *why)) {
        free(s);
        return review_deny(resp,
                           "StatefulSet %s/%s of Etcd %s: %s, so the Local directory its backup "
                           "sidecar would write and garbage-collect cannot be judged "
                           "(docs/protection.md)",
                           p->ns, req->name ? req->name : "", p->etcd, why);
    }
    rc = r == 0 ? KERR_OK : place(path, s->prefix, dir, sizeof(dir), why, sizeof(why));
    free(s);
    if (r == 0 || rc != KERR_OK)
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
