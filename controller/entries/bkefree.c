/* bkefree - BackupEntries of stores no BackupBucket owns; see bkefree.h. */
#include "controller/entries/bkefree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/blocal.h"
#include "common/bentry.h"
#include "common/bstore.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/log.h"
#include "common/pborn.h"
#include "common/store.h"
#include "common/strlist.h"
#include "controller/core/claims.h"
#include "controller/core/ctl.h"
#include "controller/core/etcdspec.h"
#include "controller/entries/bkealive.h"
#include "controller/entries/bkeauth.h"
#include "controller/entries/bkeclaim.h"
#include "controller/entries/bkeorigin.h"

static const char *str_or_empty(const cJSON *obj, const char *path)
{
    const char *s = kjson_get_str(obj, path);

    return s ? s : "";
}

int bkefree_owned(const cJSON *buckets, const char *container)
{
    const cJSON *b;

    cJSON_ArrayForEach (b, buckets) { /* a bucket owns its container, whatever else it says */
        if (container && *container && strcmp(str_or_empty(b, "spec.container"), container) == 0)
            return 1;
    }
    return 0;
}

/* The claim of etcd's store when it is an object store no bucket of buckets owns: 1. */
static int unowned_claim(const cJSON *buckets, const cJSON *etcd, struct bstore_claim *c)
{
    const char *container = kjson_get_str(etcd, "spec.backup.store.container");
    const char *prefix = kjson_get_str(etcd, "spec.backup.store.prefix");

    *c = (struct bstore_claim){ "", NULL };
    if (!prefix || bstore_no_store(kjson_get_str(etcd, "spec.backup.store.provider")) ||
        bkefree_owned(buckets, container) ||
        bstore_claim_init(c, kjson_get_str(etcd, "spec.backup.store.provider"), container,
                          kjson_get_str(etcd, "spec.backup.store.endpointOverride"), prefix,
                          NULL) != KERR_OK)
        return 0;
    if (strncmp(c->key, "Object|", 7) != 0) { /* Local: a directory of the node */
        bstore_claim_release(c);
        return 0;
    }
    return 1;
}

/* 1 when etcd's store is a Local one (a directory of the node). */
static int local_etcd(const cJSON *etcd)
{
    const char *kind = bstore_provider_kind(kjson_get_str(etcd, "spec.backup.store.provider"));

    return kind && strcmp(kind, "Local") == 0;
}

/*
 * The directory of etcd, a Local Etcd, as its Secret places it now, into dir (n bytes) and its
 * hostPath into hostpath (hn bytes); *known 0 when it has none (its Secret does not exist: its
 * StatefulSet cannot be built, nothing was written; a hostPath or prefix not understood).
 * Errors of the GET returned.
 */
static enum kerr local_dir(const struct bke_ctx *x, const cJSON *etcd, char *hostpath, size_t hn,
                           char *dir, size_t n, int *known, struct kerr_info *err)
{
    const char *secret = kjson_get_str(etcd, "spec.backup.store.secretRef.name");
    cJSON *obj = NULL;
    enum kerr rc = KERR_OK;

    *known = 0;
    if (secret && *secret)
        rc = k8s_get(x->client, &ETCDSPEC_RES_SECRET, kjson_get_str(etcd, "metadata.namespace"),
                     secret, NULL, &obj, err);
    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        return KERR_OK;
    }
    if (rc != KERR_OK)
        return rc;
    *known = blocal_hostpath(obj, hostpath, hn, NULL) == KERR_OK &&
             blocal_dir(hostpath, str_or_empty(etcd, "spec.backup.store.container"),
                        str_or_empty(etcd, "spec.backup.store.prefix"), dir, n, NULL) == KERR_OK;
    cJSON_Delete(obj);
    return KERR_OK;
}

/* bentry_get_fn: an entry of the cache (x, the context). */
static enum kerr cached_entry(void *ctx, const char *name, cJSON **out, struct kerr_info *err)
{
    const struct bke_ctx *x = ctx;

    return store_get(x->entries, name, out, err);
}

/* Write status {phase, message} of entry (as stored, BORROWED) when it differs, its conditions
 * as stored; an entry gone meanwhile needs none. */
static enum kerr set_status(const struct bke_ctx *x, const cJSON *entry, const char *phase,
                            const char *message, struct kerr_info *err)
{
    enum kerr rc = bke_write_status(x, entry, &(struct bke_status){ phase, message, 0, NULL }, err);

    return rc == KERR_NOTFOUND ? KERR_OK : rc;
}

static void active_message(const cJSON *etcd, char *msg, size_t n)
{
    snprintf(msg, n,
             "backups of Etcd %s/%s under prefix \"%.256s\" (no BackupBucket owns the store: "
             "kept until the operator deletes this entry)",
             str_or_empty(etcd, "metadata.namespace"), str_or_empty(etcd, "metadata.name"),
             str_or_empty(etcd, "spec.backup.store.prefix"));
}

/* 1 when etcd's backup Secret exists; errors of the GET returned. */
static enum kerr has_secret(const struct bke_ctx *x, const cJSON *etcd, int *yes,
                            struct kerr_info *err)
{
    const char *secret = kjson_get_str(etcd, "spec.backup.store.secretRef.name");
    cJSON *obj = NULL;
    enum kerr rc = KERR_OK;

    *yes = 0;
    if (!secret || !*secret)
        return KERR_OK;
    rc = k8s_get(x->client, &ETCDSPEC_RES_SECRET, kjson_get_str(etcd, "metadata.namespace"), secret,
                 NULL, &obj, err);
    cJSON_Delete(obj);
    *yes = rc == KERR_OK;
    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        rc = KERR_OK;
    }
    return rc;
}

/* Create the entry ename of etcd, whose claim is in no bucket's store. */
static enum kerr create(const struct bke_ctx *x, const cJSON *etcd, const char *ename,
                        const char *hostpath, long *requeue, struct kerr_info *err)
{
    const char *provider = bstore_provider_kind(kjson_get_str(etcd, "spec.backup.store.provider"));
    char since[KTIME_LEN + 1], msg[768];
    enum bkeorigin what = BKEORIGIN_NONE;
    cJSON *e = cJSON_CreateObject(), *created = NULL;
    enum kerr rc = e ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);

    if (rc == KERR_OK && (rc = bkeorigin_claimed_at(x, etcd, since, &what, err)) == KERR_OK &&
        what == BKEORIGIN_WAIT) {
        *requeue = BKEORIGIN_WAIT_MS;
        cJSON_Delete(e);
        return KERR_OK;
    }
    if (rc == KERR_OK)
        rc = kjson_set_str(e, "apiVersion", ETCDSPEC_WARDEN_API, err);
    if (rc == KERR_OK)
        rc = kjson_set_str(e, "kind", "BackupEntry", err);
    if (rc == KERR_OK)
        rc = kjson_set_str(e, "metadata.name", ename, err);
    if (rc == KERR_OK)
        rc = kjson_set_str(e, "metadata.labels[" ETCDSPEC_LABEL_MANAGED_BY "]", "etcd-warden", err);
    if (rc == KERR_OK && hostpath) /* a Local store: the directory as its sidecar writes it */
        rc =
            kjson_set_str(e, "metadata.annotations[" BLOCAL_HOSTPATH_ANNOTATION "]", hostpath, err);
    if (rc == KERR_OK)
        rc = kjson_set_str(e, "spec.bucketName", "", err);
    if (rc == KERR_OK)
        rc = kjson_set_str(e, "spec.prefix", str_or_empty(etcd, "spec.backup.store.prefix"), err);
    if (rc == KERR_OK)
        rc = kjson_set_str(e, "spec.store.provider", provider ? provider : "", err);
    if (rc == KERR_OK)
        rc = kjson_set_str(e, "spec.store.container",
                           str_or_empty(etcd, "spec.backup.store.container"), err);
    if (rc == KERR_OK)
        rc = kjson_set_str(e, "spec.store.endpointOverride",
                           str_or_empty(etcd, "spec.backup.store.endpointOverride"), err);
    if (rc == KERR_OK)
        rc = bkeclaim_set_etcd(e, etcd, since, err);
    if (rc == KERR_OK)
        rc = bkealive_mark(e, etcd, (int64_t)time(NULL), err);
    if (rc == KERR_OK)
        rc = k8s_create(x->client, &BKE_RES_ENTRY, NULL, e, NULL, &created, err);
    if (rc == KERR_EXISTS) { /* not cached yet, or another's: looked at again */
        kerr_clear(err);
        *requeue = BKE_RETRY_MS;
        rc = KERR_OK;
    } else if (rc == KERR_OK) {
        bke_event(x, created, "BackupEntry", EV_NORMAL, "Created", "KeepEntry",
                  "BackupEntry %s created for Etcd %s/%s, prefix \"%.256s\", in a store no "
                  "BackupBucket owns: kept until the operator deletes it",
                  ename, str_or_empty(etcd, "metadata.namespace"),
                  str_or_empty(etcd, "metadata.name"),
                  str_or_empty(etcd, "spec.backup.store.prefix"));
        active_message(etcd, msg, sizeof(msg));
        rc = set_status(x, created, BSTORE_ENTRY_ACTIVE, msg, err);
    }
    cJSON_Delete(created);
    cJSON_Delete(e);
    return rc;
}

/* entry (cached, BORROWED) is etcd's own claim: the live Etcd's again when it was released. */
static enum kerr attach(const struct bke_ctx *x, const cJSON *entry, const cJSON *etcd,
                        struct kerr_info *err)
{
    const char *ename = kjson_get_str(entry, "metadata.name");
    int pending = kjson_has(entry, "spec.etcdDeletedAt");
    char msg[768];
    cJSON *obj = NULL, *stored = NULL;
    enum kerr rc = KERR_OK;

    if (pending ||
        strcmp(str_or_empty(entry, "spec.etcd.uid"), str_or_empty(etcd, "metadata.uid")) != 0) {
        obj = cJSON_Duplicate(entry, 1);
        if (!obj)
            return kerr_set(err, KERR_NOMEM, NULL);
        (void)kjson_delete(obj, "spec.etcdDeletedAt");
        rc = kjson_set_str(obj, "apiVersion", ETCDSPEC_WARDEN_API, err);
        if (rc == KERR_OK)
            rc = kjson_set_str(obj, "kind", "BackupEntry", err);
        if (rc == KERR_OK)
            rc = kjson_set_str(obj, "spec.etcd.uid", str_or_empty(etcd, "metadata.uid"), err);
        if (rc == KERR_OK)
            rc = bkealive_mark(obj, etcd, (int64_t)time(NULL), err);
        if (rc == KERR_OK)
            rc = k8s_update(x->client, &BKE_RES_ENTRY, NULL, ename, obj, NULL, &stored, err);
        cJSON_Delete(obj);
        if (rc != KERR_OK)
            return rc == KERR_NOTFOUND || rc == KERR_CONFLICT ? KERR_OK : rc;
        bke_event(x, stored, "BackupEntry", EV_NORMAL, "Reattached", "KeepEntry",
                  "Etcd %s/%s reattached to BackupEntry %s",
                  str_or_empty(etcd, "metadata.namespace"), str_or_empty(etcd, "metadata.name"),
                  ename);
        entry = stored;
    }
    active_message(etcd, msg, sizeof(msg));
    rc = set_status(x, entry, BSTORE_ENTRY_ACTIVE, msg, err);
    cJSON_Delete(stored);
    return rc;
}

enum kerr bkefree_adopt(const struct bke_ctx *x, const char *ename, const char *bucket,
                        struct kerr_info *err)
{
    cJSON *cur = NULL;
    enum kerr rc = k8s_get(x->client, &BKE_RES_ENTRY, NULL, ename, NULL, &cur, err);

    /* a Local directory's entry is never a bucket's: a bucket's deletion Job would delete
     * in a directory it never saw written (a moved Etcd's, webhook/pmove) */
    if (rc == KERR_OK && !*str_or_empty(cur, "spec.bucketName") &&
        !kjson_has(cur, "metadata.deletionTimestamp") &&
        !(bstore_provider_kind(str_or_empty(cur, "spec.store.provider")) &&
          strcmp(bstore_provider_kind(str_or_empty(cur, "spec.store.provider")), "Local") == 0) &&
        !kjson_has(cur, "metadata.annotations[" BSTORE_RETAINED_COPY_ANNOTATION "]")) {
        rc = kjson_set_str(cur, "spec.bucketName", bucket, err);
        if (rc == KERR_OK)
            rc = k8s_update(x->client, &BKE_RES_ENTRY, NULL, ename, cur, NULL, NULL, err);
        if (rc == KERR_OK) {
            bke_event(x, cur, "BackupEntry", EV_NORMAL, "Adopted", "KeepEntry",
                      "BackupEntry %s, made while no BackupBucket owned its store, is "
                      "BackupBucket %s's now",
                      ename, bucket);
            log_info("backup entry adopted", "entry", ename, "bucket", bucket);
        }
    }
    cJSON_Delete(cur);
    if (rc == KERR_NOTFOUND || rc == KERR_CONFLICT) { /* gone, or changed: looked at again */
        kerr_clear(err);
        rc = KERR_OK;
    }
    return rc;
}

/* What keep_etcd needs and gathers. */
struct pass {
    const struct bke_ctx *x;
    const cJSON *buckets;
    struct strlist held; /* names of the entries a live Etcd claims */
    long *requeue;
    enum kerr first;
    struct kerr_info *err;
};

static void note(struct pass *p, enum kerr rc, const struct kerr_info *one)
{
    if (rc != KERR_OK && p->first == KERR_OK) {
        p->first = rc;
        if (p->err)
            *p->err = *one;
    }
}

static int own_entry(const cJSON *entry, const cJSON *etcd)
{
    return strcmp(str_or_empty(entry, "spec.etcd.namespace"),
                  str_or_empty(etcd, "metadata.namespace")) == 0 &&
           strcmp(str_or_empty(entry, "spec.etcd.name"), str_or_empty(etcd, "metadata.name")) ==
               0 &&
           bkeclaim_same_prefix(str_or_empty(entry, "spec.prefix"),
                                str_or_empty(etcd, "spec.backup.store.prefix")) == 1;
}

/* store_foreach: a copy of every object, to work on without the cache's lock. */
static enum kerr copy_all(void *ctx, const char *key, const cJSON *obj)
{
    cJSON *copy = cJSON_Duplicate(obj, 1);

    (void)key;
    if (!copy || !cJSON_AddItemToArray(ctx, copy)) {
        cJSON_Delete(copy);
        return KERR_NOMEM;
    }
    return KERR_OK;
}

/* The entry of etcd found (cached, BORROWED, its claim's: bentry_find) under ename: held and
 * attached when it is etcd's own. */
static void keep_found(struct pass *p, const cJSON *entry, const char *ename, const cJSON *etcd)
{
    char why[PBORN_WHY_MAX];
    struct kerr_info one;
    enum kerr rc;

    kerr_clear(&one);
    if (!own_entry(entry, etcd) || kjson_has(entry, "metadata.deletionTimestamp") ||
        kjson_has(entry, "metadata.annotations[" BSTORE_RETAINED_COPY_ANNOTATION "]") ||
        *str_or_empty(entry, "spec.bucketName"))
        return;
    /* held either way (its prefix is live); reattached only by its namespace as it was
     * when the entry was made (common/pborn, warden-webhook's rule) */
    rc = strlist_add(&p->held, ename);
    if (rc == KERR_OK)
        rc = bkeauth_reborn(p->x, entry, etcd, why, sizeof(why));
    if (rc == KERR_OK && *why)
        bke_etcd_warning(p->x, etcd, "NotAuthorised", why);
    else
        note(p, rc == KERR_OK ? attach(p->x, entry, etcd, &one) : rc, &one);
}

/* The entry of etcd when it is in a store no bucket owns. */
static void keep_etcd(struct pass *p, const cJSON *etcd)
{
    const char *ns = str_or_empty(etcd, "metadata.namespace");
    char ename[BSTORE_ENTRY_NAME_MAX + 1];
    char hostpath[BLOCAL_HOSTPATH_MAX + 1], dir[BLOCAL_HOSTPATH_MAX + 2 * BSTORE_PREFIX_MAX];
    struct bstore_claim c = { "", NULL };
    struct kerr_info one;
    cJSON *entry = NULL;
    enum bentry_found f = BENTRY_NONE;
    int creds = 0, local = 0, known = 0;
    enum kerr rc;

    kerr_clear(&one);
    if (p->x->watch_ns && *p->x->watch_ns && strcmp(ns, p->x->watch_ns) != 0)
        return;
    if (local_etcd(etcd) && kjson_get_str(etcd, "spec.backup.store.prefix") &&
        !bkefree_owned(p->buckets,
                       kjson_get_str(etcd, "spec.backup.store.container"))) { /* a directory */
        rc = local_dir(p->x, etcd, hostpath, sizeof(hostpath), dir, sizeof(dir), &known, &one);
        if (rc != KERR_OK || !known) {
            note(p, rc, &one);
            return;
        }
        local = 1;
        snprintf(c.key, sizeof(c.key), "%s", BLOCAL_KEY); /* named after the directory */
        c.prefix = dir;
    } else if (!unowned_claim(p->buckets, etcd, &c)) {
        return;
    }
    /* its current name, then an earlier release's; one of another claim is not its entry */
    rc = bentry_find(cached_entry, (void *)p->x, &c, &f, &entry, ename, &one);
    if (!local)
        bstore_claim_release(&c);
    if (rc != KERR_OK || f != BENTRY_NONE) {
        if (rc == KERR_OK && f == BENTRY_CLAIMS)
            keep_found(p, entry, ename, etcd);
        else if (rc == KERR_OK) /* its name is held by another claim's entry: none made */
            log_warn("backup entry name held by another claim", "namespace", ns, "name",
                     str_or_empty(etcd, "metadata.name"), "entry", ename);
        note(p, rc, &one);
        cJSON_Delete(entry);
        return;
    }
    /* a Local store needs no credentials: its Secret was read, the directory placed; but that
     * Secret is the namespace's to edit, so no entry where another namespace's claim (read now,
     * one not placed counts) overlaps the directory: the entry would keep it for this one */
    if (local) {
        struct claims_skip skip = { .ns = ns, .viewer_ns = ns };
        struct bstore_claim lc = { BLOCAL_KEY, dir };
        char why[CLAIMS_WHY_MAX];

        rc = claims_find(p->x->client, NULL, &lc, &skip, why, &one);
        if (rc != KERR_OK || *why) {
            note(p, rc, &one);
            return;
        }
    }
    rc = local ? KERR_OK : has_secret(p->x, etcd, &creds, &one);
    if (rc == KERR_OK && (creds || local))
        rc = create(p->x, etcd, ename, local ? hostpath : NULL, p->requeue, &one);
    note(p, rc, &one);
}

/* Is the Etcd of entry alive on its prefix? A GET, not the cache. */
static enum kerr still_there(const struct bke_ctx *x, const cJSON *entry, int *there,
                             struct kerr_info *err)
{
    cJSON *etcd = NULL;
    enum kerr rc =
        k8s_get(x->client, &ETCDSPEC_RES_ETCD, kjson_get_str(entry, "spec.etcd.namespace"),
                kjson_get_str(entry, "spec.etcd.name"), NULL, &etcd, err);

    *there = rc == KERR_OK && own_entry(entry, etcd);
    if (*there && local_etcd(etcd) &&
        kjson_get_str(entry, "metadata.annotations[" BLOCAL_HOSTPATH_ANNOTATION "]")) {
        /* a Local directory's entry: the Etcd is there only while its Secret places it there */
        char hostpath[BLOCAL_HOSTPATH_MAX + 1], dir[BLOCAL_HOSTPATH_MAX + 2 * BSTORE_PREFIX_MAX];
        char edir[sizeof(dir)];
        int known = 0;

        rc = local_dir(x, etcd, hostpath, sizeof(hostpath), dir, sizeof(dir), &known, err);
        *there = rc != KERR_OK || !known || /* not known: kept as it is */
                 (blocal_dir(
                      kjson_get_str(entry, "metadata.annotations[" BLOCAL_HOSTPATH_ANNOTATION "]"),
                      str_or_empty(entry, "spec.store.container"),
                      str_or_empty(entry, "spec.prefix"), edir, sizeof(edir), NULL) == KERR_OK &&
                  strcmp(edir, dir) == 0);
    }
    cJSON_Delete(etcd);
    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        rc = KERR_OK;
    }
    return rc;
}

/* Release entry when it is a bucket-less Etcd entry no live Etcd holds. */
static void release_entry(struct pass *p, const cJSON *entry)
{
    const char *ename = str_or_empty(entry, "metadata.name");
    const char *ns = str_or_empty(entry, "spec.etcd.namespace");
    char now[KTIME_LEN + 1], msg[1024];
    struct kerr_info one;
    cJSON *obj, *stored = NULL;
    time_t t = time(NULL);
    int there = 0;
    enum kerr rc;

    kerr_clear(&one);
    if (*str_or_empty(entry, "spec.bucketName") || kjson_has(entry, "spec.etcdDeletedAt") ||
        kjson_has(entry, "metadata.deletionTimestamp") ||
        kjson_has(entry, "metadata.annotations[" BSTORE_RETAINED_COPY_ANNOTATION "]") ||
        strlist_has(&p->held, ename) ||
        (p->x->watch_ns && *p->x->watch_ns && strcmp(ns, p->x->watch_ns) != 0))
        return;
    if ((rc = still_there(p->x, entry, &there, &one)) != KERR_OK || there) {
        if (there) /* the cache is behind */
            *p->requeue = BKE_RETRY_MS;
        note(p, rc, &one);
        return;
    }
    if (ktime_format(t, now) != KERR_OK)
        return;
    obj = cJSON_Duplicate(entry, 1);
    rc = obj ? kjson_set_str(obj, "apiVersion", ETCDSPEC_WARDEN_API, &one) : KERR_NOMEM;
    if (rc == KERR_OK)
        rc = kjson_set_str(obj, "kind", "BackupEntry", &one);
    if (rc == KERR_OK)
        rc = kjson_set_str(obj, "spec.etcdDeletedAt", now, &one);
    if (rc == KERR_OK)
        rc = bkealive_release(obj, p->x->since, (int64_t)t, &one);
    if (rc == KERR_OK)
        rc = k8s_update(p->x->client, &BKE_RES_ENTRY, NULL, ename, obj, NULL, &stored, &one);
    cJSON_Delete(obj);
    if (rc == KERR_OK) {
        snprintf(msg, sizeof(msg),
                 "Etcd %s/%s deleted at %s; no BackupBucket owns the store: its backups under "
                 "\"%.256s\" stay claimed for namespace %s until the operator deletes this "
                 "BackupEntry (kubectl delete backupentry %s), which leaves them in the store",
                 ns, str_or_empty(entry, "spec.etcd.name"), now, str_or_empty(entry, "spec.prefix"),
                 ns, ename);
        bke_event(p->x, stored, "BackupEntry", EV_NORMAL, "PendingDeletion", "KeepEntry", "%s",
                  msg);
        log_info("backup entry kept without a bucket", "entry", ename);
        rc = set_status(p->x, stored, BSTORE_ENTRY_PENDING, msg, &one);
    } else if (rc == KERR_NOTFOUND || rc == KERR_CONFLICT) {
        *p->requeue = BKE_RETRY_MS;
        rc = KERR_OK;
    }
    cJSON_Delete(stored);
    note(p, rc, &one);
}

enum kerr bkefree_run(const struct bke_ctx *x, long *requeue_ms, struct kerr_info *err)
{
    struct pass p = { x, NULL, { 0 }, requeue_ms, KERR_OK, err };
    cJSON *list = NULL, *etcds = cJSON_CreateArray(), *entries = cJSON_CreateArray();
    const cJSON *o;
    enum kerr rc = etcds && entries ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);

    *requeue_ms = BKE_CONFLICT_MS; /* Secrets are not watched */
    strlist_init(&p.held);
    if (rc == KERR_OK)
        rc = k8s_list_all(x->client, &BKE_RES_BUCKET, NULL, NULL, &list, err);
    if (rc == KERR_NOTFOUND) { /* no BackupBucket CRD: no bucket owns any store */
        kerr_clear(err);
        rc = KERR_OK;
    }
    /* fail closed: a bucket list that cannot be read takes no store for unowned */
    p.buckets = cJSON_GetObjectItemCaseSensitive(list, "items");
    if (rc == KERR_OK)
        rc = store_foreach(x->etcds, copy_all, etcds, err);
    if (rc == KERR_OK)
        rc = store_foreach(x->entries, copy_all, entries, err);
    if (rc == KERR_OK) {
        cJSON_ArrayForEach (o, etcds)
            keep_etcd(&p, o);
    }
    if (rc == KERR_OK && p.first == KERR_OK) { /* a failed pass releases nothing */
        cJSON_ArrayForEach (o, entries)
            release_entry(&p, o);
    }
    strlist_release(&p.held);
    cJSON_Delete(list);
    cJSON_Delete(etcds);
    cJSON_Delete(entries);
    return rc != KERR_OK ? rc : p.first;
}

enum kerr bkefree_reconcile(struct ctl *c, const char *ns, const char *name, struct ctl_result *res,
                            struct kerr_info *err)
{
    struct bke_ctx x;

    (void)ns;
    (void)name;
    bke_ctx_of(c, &x);
    res->requeue_ms = 0;
    if (!x.entries || !x.etcds)
        return KERR_OK; /* --backup-entries=false */
    return bkefree_run(&x, &res->requeue_ms, err);
}
