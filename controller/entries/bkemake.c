/* bkemake - a live Etcd's BackupEntry in a bucket, made or found; see bkemake.h. */
#include "controller/entries/bkemake.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/bentry.h"
#include "common/bstore.h"
#include "common/events.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/log.h"
#include "controller/core/etcdspec.h"
#include "controller/entries/bkealive.h"
#include "controller/entries/bkeheld.h"
#include "controller/entries/bkeclaim.h"
#include "controller/entries/bkefree.h"
#include "controller/entries/bkeorigin.h"
#include "controller/entries/bkeseen.h"

static const char *str_or_empty(const cJSON *obj, const char *path)
{
    const char *s = kjson_get_str(obj, path);

    return s ? s : "";
}

/* spec.store of an entry: the bucket's store, for the webhook's one-prefix-one-cluster rule. */
enum kerr bkemake_set_store(cJSON *entry, const struct bke_bucket *b, struct kerr_info *err)
{
    enum kerr rc = kjson_set_str(entry, "spec.store.provider", b->kind, err);

    if (rc == KERR_OK)
        rc = kjson_set_str(entry, "spec.store.container", b->container, err);
    if (rc == KERR_OK)
        rc = kjson_set_str(entry, "spec.store.endpointOverride", b->endpoint, err);
    return rc;
}

/* The new entry e of etcd's claim in b, named ename, its claim begun at since. */
static enum kerr entry_build(cJSON *e, const struct bke_bucket *b, const cJSON *etcd,
                             const char *ename, const char *since, enum bkeorigin what,
                             struct kerr_info *err)
{
    enum kerr rc = kjson_set_str(e, "apiVersion", ETCDSPEC_WARDEN_API, err);

    if (rc == KERR_OK)
        rc = kjson_set_str(e, "kind", "BackupEntry", err);
    if (rc == KERR_OK)
        rc = kjson_set_str(e, "metadata.name", ename, err);
    if (rc == KERR_OK)
        rc = kjson_set_str(e, "metadata.labels[" ETCDSPEC_LABEL_MANAGED_BY "]", "etcd-warden", err);
    if (rc == KERR_OK)
        rc = kjson_set_str(e, "spec.bucketName", b->name, err);
    if (rc == KERR_OK)
        rc = kjson_set_str(e, "spec.prefix", str_or_empty(etcd, "spec.backup.store.prefix"), err);
    if (rc == KERR_OK)
        rc = bkemake_set_store(e, b, err);
    if (rc == KERR_OK)
        rc = bkeclaim_set_etcd(e, etcd, since, err);
    if (rc == KERR_OK && what == BKEORIGIN_RESTORE) /* etcd-warden wrote the copy: bkeseen.h */
        rc = kjson_set_str(e, BKESEEN_ORIGIN, BKESEEN_RESTORE, err);
    if (rc == KERR_OK)
        rc = bkealive_mark(e, etcd, (int64_t)time(NULL), err);
    if (rc == KERR_OK) /* the caller compared its credentials (bkeauth_etcd) just now */
        rc = bkeheld_mark(e, etcd, "", (int64_t)time(NULL), err);
    return rc;
}

/* bentry_get_fn: a BackupEntry read from the API server (x, the context). */
static enum kerr get_entry(void *ctx, const char *name, cJSON **out, struct kerr_info *err)
{
    const struct bke_ctx *x = ctx;

    return k8s_get(x->client, &BKE_RES_ENTRY, NULL, name, NULL, out, err);
}

/*
 * The entry of etcd's claim c is there under ename (found, not cached yet or of another
 * Etcd): another Etcd's keeps the prefix (PrefixConflict), etcd's own is adopted.
 */
static enum kerr claim_taken(const struct bke_ctx *x, const struct bke_bucket *b, const cJSON *etcd,
                             const cJSON *found, const char *ename, long *requeue,
                             struct kerr_info *err)
{
    const char *ns = kjson_get_str(etcd, "metadata.namespace");
    const char *name = kjson_get_str(etcd, "metadata.name");
    char msg[768], other[512] = "";

    if (bkeclaim_owner(found, etcd, other, sizeof(other)) == 0) {
        /* two Etcds admitted at once for one prefix: the first keeps it */
        snprintf(msg, sizeof(msg),
                 "prefix \"%s\" of bucket %s is claimed by %s: this Etcd's backups share it; "
                 "give one of the Etcds another prefix",
                 str_or_empty(etcd, "spec.backup.store.prefix"), b->name, other);
        bke_etcd_warning(x, etcd, "PrefixConflict", msg);
        log_warn("prefix claimed twice", "namespace", ns, "name", name, "other", other);
        *requeue = BKE_CONFLICT_MS;
        return KERR_OK;
    }
    *requeue = BKE_RETRY_MS; /* ours: not cached yet, or made before the bucket */
    return bkefree_adopt(x, ename, b->name, err);
}

/*
 * The name of etcd's claim is held by an entry of another claim (a collision, made on purpose
 * under an earlier release's short name): not this claim's entry, and no other tenant is named
 * to etcd's namespace; the operator finds the entry in the log.
 */
static void name_taken(const struct bke_ctx *x, const cJSON *etcd, const char *ename, long *requeue)
{
    char msg[512];

    snprintf(msg, sizeof(msg),
             "the BackupEntry name %s of this Etcd's prefix is held by an entry of another "
             "prefix or store: no entry is made for this Etcd (the operator finds it in "
             "warden-controller's log)",
             ename);
    bke_etcd_warning(x, etcd, "EntryNameTaken", msg);
    log_warn("backup entry name held by another claim", "namespace",
             str_or_empty(etcd, "metadata.namespace"), "name", str_or_empty(etcd, "metadata.name"),
             "entry", ename);
    *requeue = BKE_CONFLICT_MS;
}

/* The BackupEntry of etcd's claim in b, made unless it is there (bentry_find). */
enum kerr bkemake_create(const struct bke_ctx *x, const struct bke_bucket *b, const cJSON *etcd,
                         long *requeue, struct kerr_info *err)
{
    const char *ns = kjson_get_str(etcd, "metadata.namespace");
    const char *name = kjson_get_str(etcd, "metadata.name");
    const char *prefix = kjson_get_str(etcd, "spec.backup.store.prefix");
    char ename[BSTORE_ENTRY_NAME_MAX + 1], msg[768], since[KTIME_LEN + 1];
    struct bstore_claim c = { "", NULL };
    cJSON *e = cJSON_CreateObject(), *created = NULL, *found = NULL;
    enum kerr rc = e ? KERR_OK : KERR_NOMEM;
    enum bkeorigin what = BKEORIGIN_NONE;
    enum bentry_found f = BENTRY_NONE;

    /* when the claim began (an Etcd a restore created: with the copy, bkeorigin.h) */
    if (rc == KERR_OK && (rc = bkeorigin_claimed_at(x, etcd, since, &what, err)) == KERR_OK &&
        what == BKEORIGIN_WAIT) {
        *requeue = BKEORIGIN_WAIT_MS;
        cJSON_Delete(e);
        return KERR_OK;
    }

    /* named after the claim, so that the API server lets one Etcd have it; an entry of either
     * of its names is the claim's only when its spec says so (common/bentry) */
    if (rc == KERR_OK)
        rc = bstore_claim_init(&c, b->kind, b->container, b->endpoint, prefix, err);
    if (rc == KERR_OK &&
        (rc = bentry_find(get_entry, (void *)x, &c, &f, &found, ename, err)) != KERR_OK)
        rc = kerr_wrap(err, "the BackupEntry of Etcd %s/%s", ns, name);
    if (rc == KERR_OK && f == BENTRY_NONE)
        rc = entry_build(e, b, etcd, ename, since, what, err);
    if (rc == KERR_OK && f == BENTRY_NONE) {
        rc = k8s_create(x->client, &BKE_RES_ENTRY, NULL, e, NULL, &created, err);
        if (rc == KERR_EXISTS) { /* made meanwhile: whose is it? */
            kerr_clear(err);
            rc = bentry_find(get_entry, (void *)x, &c, &f, &found, ename, err);
            if (rc == KERR_OK && f == BENTRY_NONE) /* gone again: the next look decides */
                *requeue = BKE_RETRY_MS;
        }
    }
    bstore_claim_release(&c);
    if (rc == KERR_OK && f == BENTRY_CLAIMS) {
        rc = claim_taken(x, b, etcd, found, ename, requeue, err);
    } else if (rc == KERR_OK && f == BENTRY_OTHER) {
        name_taken(x, etcd, ename, requeue);
    } else if (rc == KERR_OK && created) {
        snprintf(msg, sizeof(msg), "backups of Etcd %s/%s under prefix \"%s\"", ns, name, prefix);
        bke_event(x, created, "BackupEntry", EV_NORMAL, "Created", "KeepEntry",
                  "BackupEntry %s created in bucket %s for Etcd %s/%s, prefix \"%s\"", ename,
                  b->name, ns, name, prefix);
        rc = bke_write_status(x, created, &(struct bke_status){ BSTORE_ENTRY_ACTIVE, msg, 1, NULL },
                              err);
    }
    cJSON_Delete(found);
    cJSON_Delete(created);
    cJSON_Delete(e);
    return rc;
}
