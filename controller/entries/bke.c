/* bke - BackupBuckets and the BackupEntries kept in them; see bke.h. */
#include "controller/entries/bke.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/bentry.h"
#include "common/bstore.h"
#include "common/events.h"
#include "common/kjson.h"
#include "common/kobj.h"
#include "common/ktime.h"
#include "common/log.h"
#include "common/store.h"
#include "controller/core/ctl.h"
#include "controller/entries/bkeadm.h"
#include "controller/entries/bkealive.h"
#include "controller/entries/bkeauth.h"
#include "controller/entries/bkeheld.h"
#include "controller/entries/bkeover.h"
#include "controller/entries/bkeorigin.h"
#include "controller/entries/bkeseen.h"
#include "controller/entries/bkewin.h"
#include "controller/entries/bkebucket.h"
#include "controller/entries/bkestop.h"
#include "controller/entries/bkejob.h"
#include "controller/entries/bkeclaim.h"
#include "controller/entries/bkefree.h"
#include "controller/entries/bkemake.h"
#include "controller/core/etcdspec.h"

static const char *str_or_empty(const cJSON *obj, const char *path)
{
    const char *s = kjson_get_str(obj, path);

    return s ? s : "";
}

int bke_store_matches(const cJSON *bucket, const cJSON *etcd)
{
    struct bke_bucket b;

    return bkeclaim_read_bucket(bucket, &b, NULL) == KERR_OK && bkeclaim_same_store(&b, etcd);
}

enum kerr bke_index_bucket(void *ctx, const cJSON *obj, struct strlist *values)
{
    const char *b = kjson_get_str(obj, "spec.bucketName");

    (void)ctx;
    return b && *b ? strlist_add(values, b) : KERR_OK;
}

static enum kerr count_conflict(void *ctx, const char *key, const cJSON *entry)
{
    (void)key;
    if (strcmp(str_or_empty(kobj_condition(entry, "PrefixConflict"), "status"), "True") == 0)
        (*(size_t *)ctx)++;
    return KERR_OK;
}

size_t bke_conflicts(struct store *s)
{
    size_t n = 0;

    if (s)
        (void)store_foreach(s, count_conflict, &n, NULL);
    return n;
}

/* A copy of a cached entry ready for a PUT (lists leave apiVersion and kind out). */
static cJSON *entry_copy(const cJSON *entry)
{
    cJSON *obj = cJSON_Duplicate(entry, 1);

    if (obj && (kjson_set_str(obj, "apiVersion", ETCDSPEC_WARDEN_API, NULL) != KERR_OK ||
                kjson_set_str(obj, "kind", "BackupEntry", NULL) != KERR_OK)) {
        cJSON_Delete(obj);
        return NULL;
    }
    return obj;
}

/* 1 when entry's spec.store is not b's. */
static int store_differs(const cJSON *entry, const struct bke_bucket *b)
{
    return strcmp(str_or_empty(entry, "spec.store.provider"), b->kind) != 0 ||
           strcmp(str_or_empty(entry, "spec.store.container"), b->container) != 0 ||
           strcmp(str_or_empty(entry, "spec.store.endpointOverride"), b->endpoint) != 0;
}

/*
 * Make entry (cached, BORROWED) the live etcd's: uid, no deletion time, phase Active; over:
 * another live Etcd overlapping its prefix, recorded (bkealive_overlap) when it is the first.
 */
static enum kerr attach_entry(const struct bke_ctx *x, const struct bke_bucket *b,
                              const cJSON *entry, const cJSON *etcd, const char *conflict,
                              struct bkeover_hit over, struct kerr_info *err)
{
    const char *ns = kjson_get_str(etcd, "metadata.namespace");
    const char *name = kjson_get_str(etcd, "metadata.name");
    const char *uid = str_or_empty(etcd, "metadata.uid");
    const char *ename = kjson_get_str(entry, "metadata.name");
    const char *old_uid = str_or_empty(entry, "spec.etcd.uid");
    int pending = kjson_has(entry, "spec.etcdDeletedAt");
    char msg[512];
    cJSON *obj = NULL, *stored = NULL;
    enum bkealive_change change = BKEALIVE_CHANGE_NONE;
    int stale = 0, anew;
    enum kerr rc = bkeadm_admitted_stale(x->client, entry, etcd, &stale, err);

    if (rc == KERR_OK && strcmp(old_uid, uid) == 0)
        rc = bkeadm_store_change(x->client, entry, etcd, &change, err);
    if (rc != KERR_OK)
        return rc;
    /* released before, another Etcd's, or its store changed since and the change stored
     * (webhook/pgone: a move away and back, a secretRef edited and reverted, unseen here): the
     * window starts anew */
    anew = pending || (*old_uid && strcmp(old_uid, uid) != 0) || change == BKEALIVE_CHANGE_STORED;
    snprintf(msg, sizeof(msg), "backups of Etcd %s/%s under prefix \"%s\"", ns, name,
             str_or_empty(entry, "spec.prefix"));
    if (anew || stale || change == BKEALIVE_CHANGE_SETTLED || strcmp(old_uid, uid) != 0 ||
        store_differs(entry, b) || bkealive_due(entry, etcd, x->since, (int64_t)time(NULL)) ||
        bkeheld_due(entry, etcd) || bkealive_overlap_due(entry, over.at)) {
        obj = entry_copy(entry);
        if (!obj)
            return kerr_set(err, KERR_NOMEM, NULL);
        (void)kjson_delete(obj, "spec.etcdDeletedAt");
        if (stale)
            (void)kjson_delete(obj, BENTRY_DELETE_ADMITTED);
        if (change == BKEALIVE_CHANGE_SETTLED) { /* refused after the webhook: no change */
            (void)kjson_delete(obj, BENTRY_STORE_CHANGED);
            (void)kjson_delete(obj, BENTRY_STORE_CHANGED_GEN);
        }
        if (anew) /* what it was shown to have written so far stays its (bkewin.h) */
            rc = bkewin_keep_earlier(obj, entry, *old_uid && strcmp(old_uid, uid) != 0,
                                     (int64_t)time(NULL), err);
        if (anew && rc == KERR_OK) { /* bkeseen.h */
            (void)kjson_delete(obj, BKESEEN_AT);
            (void)kjson_delete(obj, BENTRY_STORE_CHANGED);
            (void)kjson_delete(obj, BENTRY_STORE_CHANGED_GEN);
            rc = bkealive_set_time(obj, BKESEEN_REATTACHED, (int64_t)time(NULL), err);
        }
        if (rc == KERR_OK)
            rc = kjson_set_str(obj, "spec.etcd.uid", uid, err);
        if (rc == KERR_OK)
            rc = bkemake_set_store(obj, b, err);
        if (rc == KERR_OK)
            rc = bkealive_mark(obj, etcd, (int64_t)time(NULL), err);
        if (rc == KERR_OK && bkealive_overlap_due(obj, over.at))
            rc = bkealive_overlap(obj, over.at, over.by, err);
        if (rc == KERR_OK) /* the evidence it writes into b's store, again */
            rc = bkeheld_compare(x, b, obj, etcd, (int64_t)time(NULL), err);
        if (rc == KERR_OK)
            rc = k8s_update(x->client, &BKE_RES_ENTRY, NULL, ename, obj, NULL, &stored, err);
        cJSON_Delete(obj);
        if (rc != KERR_OK)
            return rc;
        if (anew) {
            bke_event(x, stored, "BackupEntry", EV_NORMAL, "Reattached", "KeepEntry",
                      "Etcd %s/%s (uid %s) reattached to BackupEntry %s%s", ns, name, uid, ename,
                      pending                ? ": pending deletion cancelled"
                      : strcmp(old_uid, uid) ? ""
                                             : ": its store changed since it was last attached");
            log_info("backup entry reattached", "entry", ename, "namespace", ns, "name", name);
        }
        entry = stored;
    }
    rc = bke_write_status(x, entry, &(struct bke_status){ BSTORE_ENTRY_ACTIVE, msg, 1, conflict },
                          err);
    cJSON_Delete(stored);
    return rc;
}

/* Is the Etcd of entry alive and still backing up into it? A GET, not the cache. */
static enum kerr entry_claimed(const struct bke_ctx *x, const struct bke_bucket *b,
                               const cJSON *entry, int *claimed, struct kerr_info *err)
{
    cJSON *etcd = NULL;
    enum kerr rc =
        k8s_get(x->client, &ETCDSPEC_RES_ETCD, kjson_get_str(entry, "spec.etcd.namespace"),
                kjson_get_str(entry, "spec.etcd.name"), NULL, &etcd, err);

    *claimed = 0;
    if (rc == KERR_NOTFOUND)
        return KERR_OK;
    if (rc == KERR_OK) {
        int m = bkeclaim_same_store(b, etcd);

        *claimed = m == BKECLAIM_MAYBE ||
                   (m && bkeclaim_same_prefix(kjson_get_str(etcd, "spec.backup.store.prefix"),
                                              str_or_empty(entry, "spec.prefix")) == 1);
    }
    cJSON_Delete(etcd);
    return rc;
}

static void requeue_min(long *requeue, long ms)
{
    if (ms < 1)
        ms = 1;
    if (*requeue <= 0 || ms < *requeue)
        *requeue = ms;
}

time_t bke_due(const cJSON *entry, long grace_ms)
{
    const char *paths[] = { "spec.etcdDeletedAt", "spec.retainedAt" };
    struct timespec t;
    time_t from = 0;
    size_t i;

    for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
        if (kjson_get_str(entry, paths[i]) &&
            ktime_parse(kjson_get_str(entry, paths[i]), &t, NULL) == KERR_OK && t.tv_sec > from)
            from = t.tv_sec;
    return from + (time_t)(grace_ms / 1000);
}

/* When a deletion blocked for the seconds since it fell due is looked at again: at half that
 * time, from BKE_BLOCKED_MIN_MS to BKE_CONFLICT_MS. What blocks it at first is often gone in
 * seconds (the Etcd's members, which the garbage collector removes after it; a sidecar
 * rolling out); one that stays costs a look a minute. */
static long blocked_recheck_ms(time_t blocked_s)
{
    long ms = blocked_s > 0 ? (long)blocked_s * 500L : 0;

    return ms < BKE_BLOCKED_MIN_MS ? BKE_BLOCKED_MIN_MS
           : ms > BKE_CONFLICT_MS  ? BKE_CONFLICT_MS
                                   : ms;
}

/* A released entry (deleted: its spec.etcdDeletedAt): wait out the grace period, then its
 * deletion's next step. */
static enum kerr pending_step(const struct bke_ctx *x, const struct bke_bucket *b,
                              const cJSON *entry, const char *deleted, const char *conflict,
                              long *requeue, struct kerr_info *err)
{
    const char *ename = kjson_get_str(entry, "metadata.name");
    const char *ns = str_or_empty(entry, "spec.etcd.namespace");
    const char *name = str_or_empty(entry, "spec.etcd.name");
    char due[KTIME_LEN + 1], msg[1536], why[BKECLAIM_WHY_MAX];
    time_t t = time(NULL), due_t = bke_due(entry, b->grace_ms);
    cJSON *stored = NULL;
    enum kerr rc;

    if (due_t <= t) {
        rc = bkejob_step(x, b, entry, why, requeue, err);
        if (rc != KERR_OK || !*why)
            return rc;
        requeue_min(requeue, blocked_recheck_ms(t - due_t));
        snprintf(msg, sizeof(msg), "Etcd %s/%s deleted at %s; its backups are kept: %s", ns, name,
                 deleted, why);
        if (strcmp(str_or_empty(entry, "status.conditions.0.message"), why) != 0)
            log_warn("backup entry deletion blocked", "entry", ename, "why", why);
        /* the step may have stored phase Deleting before it found the blocker */
        rc = k8s_get(x->client, &BKE_RES_ENTRY, NULL, ename, NULL, &stored, err);
        if (rc == KERR_OK)
            rc = bke_write_status(x, stored,
                                  &(struct bke_status){ BSTORE_ENTRY_PENDING, msg, 1, why }, err);
        cJSON_Delete(stored);
        return rc == KERR_NOTFOUND ? KERR_OK : rc;
    }
    requeue_min(requeue, (long)(due_t - t) * 1000L);
    if (ktime_format(due_t, due) != KERR_OK)
        due[0] = '\0';
    snprintf(msg, sizeof(msg), "Etcd %s/%s deleted at %s; its backups are deletable from %s", ns,
             name, deleted, due);
    return bke_write_status(x, entry,
                            &(struct bke_status){ BSTORE_ENTRY_PENDING, msg, 1, conflict }, err);
}

/* Record on the released entry that another Etcd, created at over, overlaps its prefix
 * (bkealive's overlappedAt); *stored the entry as written (OWNS). */
static enum kerr record_overlap(const struct bke_ctx *x, const cJSON *entry,
                                struct bkeover_hit over, cJSON **stored, struct kerr_info *err)
{
    cJSON *obj = entry_copy(entry);
    enum kerr rc;

    *stored = NULL;
    if (!obj)
        return kerr_set(err, KERR_NOMEM, NULL);
    rc = bkealive_overlap(obj, over.at, over.by, err);
    if (rc == KERR_OK)
        rc = k8s_update(x->client, &BKE_RES_ENTRY, NULL, kjson_get_str(entry, "metadata.name"), obj,
                        NULL, stored, err);
    cJSON_Delete(obj);
    if (rc == KERR_OK)
        log_info("backup entry overlapped", "entry", kjson_get_str(entry, "metadata.name"));
    return rc;
}

/*
 * An entry no live Etcd of the cache claims: PendingDeletion, or wait out the grace period.
 * over: the creation time of the first live Etcd overlapping its prefix (0: none), recorded
 * on the entry (it ends the deletion window).
 */
static enum kerr release_entry(const struct bke_ctx *x, const struct bke_bucket *b,
                               const cJSON *entry, const char *conflict, struct bkeover_hit over,
                               long *requeue, struct kerr_info *err)
{
    const char *ename = kjson_get_str(entry, "metadata.name");
    const char *ns = str_or_empty(entry, "spec.etcd.namespace");
    const char *name = str_or_empty(entry, "spec.etcd.name");
    const char *deleted = kjson_get_str(entry, "spec.etcdDeletedAt");
    char now[KTIME_LEN + 1], due[KTIME_LEN + 1], msg[1536];
    struct timespec at;
    time_t t = time(NULL);
    cJSON *obj, *stored = NULL;
    int claimed;
    enum kerr rc;

    if (x->watch_ns && *x->watch_ns && strcmp(ns, x->watch_ns) != 0)
        return KERR_OK;
    if (deleted && ktime_parse(deleted, &at, NULL) == KERR_OK) {
        if (!bkealive_overlap_due(entry, over.at))
            return pending_step(x, b, entry, deleted, conflict, requeue, err);
        rc = record_overlap(x, entry, over, &stored, err);
        if (rc == KERR_OK)
            rc = pending_step(x, b, stored, deleted, conflict, requeue, err);
        cJSON_Delete(stored);
        return rc == KERR_NOTFOUND ? KERR_OK : rc;
    }
    if ((rc = entry_claimed(x, b, entry, &claimed, err)) != KERR_OK || claimed) {
        if (claimed) /* the cache is behind: look again */
            requeue_min(requeue, BKE_RETRY_MS);
        return rc;
    }
    if (ktime_format(t, now) != KERR_OK || ktime_format(t + b->grace_ms / 1000, due) != KERR_OK)
        return kerr_set(err, KERR_INTERNAL, "cannot format the time");
    obj = entry_copy(entry);
    if (!obj)
        return kerr_set(err, KERR_NOMEM, NULL);
    rc = kjson_set_str(obj, "spec.etcdDeletedAt", now, err);
    if (rc == KERR_OK) /* the window's end: when the Etcd was last known alive */
        rc = bkealive_release(obj, x->since, (int64_t)t, err);
    if (rc == KERR_OK) /* and it held b's credentials until then */
        rc = bkeheld_release(x, b, obj, x->since, (int64_t)t, err);
    if (rc == KERR_OK && over.at > 0)
        rc = bkealive_overlap(obj, over.at, over.by, err);
    if (rc == KERR_OK)
        rc = k8s_update(x->client, &BKE_RES_ENTRY, NULL, ename, obj, NULL, &stored, err);
    cJSON_Delete(obj);
    if (rc != KERR_OK)
        return rc;
    bke_event(x, stored, "BackupEntry", EV_NORMAL, "PendingDeletion", "KeepEntry",
              "Etcd %s/%s is gone from bucket %s; its backups under \"%s\" are kept until %s", ns,
              name, b->name, str_or_empty(entry, "spec.prefix"), due);
    log_info("backup entry pending deletion", "entry", ename, "until", due);
    snprintf(msg, sizeof(msg), "Etcd %s/%s deleted at %s; its backups are deletable from %s", ns,
             name, now, due);
    rc = bke_write_status(x, stored, &(struct bke_status){ BSTORE_ENTRY_PENDING, msg, 1, conflict },
                          err);
    requeue_min(requeue, b->grace_ms);
    cJSON_Delete(stored);
    return rc;
}

/* What collect_etcd gathers. */
struct collect {
    const struct bke_bucket *b;
    cJSON *etcds; /* OWNS copies of the matching Etcds */
};

/* store_foreach: copy every Etcd matching the bucket. */
static enum kerr collect_etcd(void *ctx, const char *key, const cJSON *etcd)
{
    struct collect *c = ctx;
    cJSON *copy;

    (void)key;
    if (!bkeclaim_same_store(c->b, etcd))
        return KERR_OK;
    copy = cJSON_Duplicate(etcd, 1);
    if (!copy || !cJSON_AddItemToArray(c->etcds, copy)) {
        cJSON_Delete(copy);
        return KERR_NOMEM;
    }
    return KERR_OK;
}

/* The entry of entries (not yet claimed) for etcd: same namespace, name and prefix; or -1. */
static int find_entry(const cJSON *entries, const char *claimed, const cJSON *etcd)
{
    const char *ns = kjson_get_str(etcd, "metadata.namespace");
    const char *name = kjson_get_str(etcd, "metadata.name");
    const char *prefix = kjson_get_str(etcd, "spec.backup.store.prefix");
    const cJSON *e;
    int i = 0;

    cJSON_ArrayForEach (e, entries) {
        if (!claimed[i] && strcmp(str_or_empty(e, "spec.etcd.namespace"), ns) == 0 &&
            strcmp(str_or_empty(e, "spec.etcd.name"), name) == 0 &&
            bkeclaim_same_prefix(str_or_empty(e, "spec.prefix"), prefix) == 1)
            return i;
        i++;
    }
    return -1;
}

/*
 * The first other live Etcd of the bucket's store whose prefix overlaps entry's (bkeover: uid own,
 * the one it records or the one attaching to it, excepted). Recorded on the entry
 * (bkealive_overlap), whether its Etcd lives or not, it ends the deletion window: what is
 * written from then on may be that Etcd's.
 */
static struct bkeover_hit overlapped_at(const struct bkeover *over, const cJSON *entry,
                                        const char *own)
{
    return bkeover_first(over, str_or_empty(entry, "spec.prefix"), own);
}

/* Mark every entry of etcd (its namespace and name, any prefix) claimed, as they are. */
static void hold_entries(const cJSON *entries, char *claimed, const cJSON *etcd)
{
    const cJSON *e;
    int i = 0;

    cJSON_ArrayForEach (e, entries) {
        if (strcmp(str_or_empty(e, "spec.etcd.namespace"),
                   str_or_empty(etcd, "metadata.namespace")) == 0 &&
            strcmp(str_or_empty(e, "spec.etcd.name"), str_or_empty(etcd, "metadata.name")) == 0)
            claimed[i] = 1;
        i++;
    }
}

/* Keep (or create) the entry of every matching Etcd, release the others. */
static enum kerr keep_entries(const struct bke_ctx *x, const struct bke_bucket *b, cJSON *entries,
                              int *count, char *names, size_t nn, long *requeue,
                              struct kerr_info *err)
{
    struct collect col = { b, cJSON_CreateArray() };
    struct bkeover *over = NULL;
    int n = cJSON_GetArraySize(entries), i,
        deleting = kjson_has(b->obj, "metadata.deletionTimestamp");
    char *claimed = calloc((size_t)n + 1, 1), why[BKECLAIM_WHY_MAX];
    const cJSON *e;
    struct kerr_info one;
    enum kerr rc = KERR_OK, first = KERR_OK;

    if (!col.etcds || !claimed || (!deleting && store_foreach(x->etcds, collect_etcd, &col, err)) ||
        bkeover_build(b, col.etcds, &over) != KERR_OK) {
        cJSON_Delete(col.etcds);
        free(claimed);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    *count = n;
    i = 0;
    cJSON_ArrayForEach (e, entries) /* being deleted: bkestop's */
        claimed[i++] = kjson_has(e, "metadata.deletionTimestamp") != 0;
    cJSON_ArrayForEach (e, col.etcds) {
        kerr_clear(&one);
        if (bkeclaim_same_store(b, e) == BKECLAIM_MAYBE) {
            hold_entries(entries, claimed, e);
            continue;
        }
        i = find_entry(entries, claimed, e);
        /* a namespace created again is another owner (common/pborn, warden-webhook's rule):
         * its Etcd of the old name does not take over the entry, which stays its
         * predecessor's, pending, its deletion held back while the live prefix overlaps it */
        rc = i >= 0 ? bkeauth_reborn(x, cJSON_GetArrayItem(entries, i), e, why, sizeof(why))
                    : KERR_OK;
        if (rc == KERR_OK && i >= 0 && *why) {
            bke_etcd_warning(x, e, "NotAuthorised", why); /* namespaces: not watched */
            requeue_min(requeue, BKE_CONFLICT_MS);
            continue;
        }
        if (rc != KERR_OK) {
            if (first == KERR_OK)
                first = kerr_set(err, rc, "reading namespace %s",
                                 str_or_empty(e, "metadata.namespace"));
            continue;
        }
        /* an Etcd created again reattaches only with what a new entry needs (its namespace
         * selected, its credentials): else it is treated as a new Etcd (NotAuthorised, no
         * entry), the entry stays its predecessor's, pending, and the live Etcd's prefix
         * holds that entry's deletion back */
        if (i >= 0 && !bkeauth_may_reattach(x, b, cJSON_GetArrayItem(entries, i), e))
            i = -1;
        if (i >= 0 && bkejob_in_progress(cJSON_GetArrayItem(entries, i))) {
            claimed[i] = 1;
            rc = bkejob_hold(x, b, cJSON_GetArrayItem(entries, i), e, why, requeue, &one);
            /* no Job runs and the Etcd blocks the next: the prefix is the Etcd's again */
            if (rc == KERR_OK && *why)
                rc = attach_entry(x, b, cJSON_GetArrayItem(entries, i), e,
                                  bkeclaim_conflict(b, entries, i, why),
                                  overlapped_at(over, cJSON_GetArrayItem(entries, i),
                                                str_or_empty(e, "metadata.uid")),
                                  &one);
        } else if (i >= 0) {
            cJSON *seen = NULL; /* the entry as stored once a running member is recorded */

            claimed[i] = 1;
            requeue_min(requeue, BKEALIVE_REFRESH_S * 1000L); /* spec.etcdSeenAt */
            rc = bkeseen_record(x, cJSON_GetArrayItem(entries, i), e, &seen, requeue, &one);
            if (rc == KERR_OK)
                rc = attach_entry(x, b, seen ? seen : cJSON_GetArrayItem(entries, i), e,
                                  bkeclaim_conflict(b, entries, i, why),
                                  overlapped_at(over, cJSON_GetArrayItem(entries, i),
                                                str_or_empty(e, "metadata.uid")),
                                  &one);
            cJSON_Delete(seen);
        } else if ((rc = bkeauth_etcd(x, b, e, why, sizeof(why), &one)) == KERR_OK && *why) {
            bke_etcd_warning(x, e, "NotAuthorised", why); /* namespaces and Secrets: not watched */
            requeue_min(requeue, BKE_CONFLICT_MS);
        } else if (rc == KERR_OK) {
            rc = bkemake_create(x, b, e, requeue, &one);
            *count += rc == KERR_OK;
        }
        if (rc != KERR_OK && first == KERR_OK) {
            first = rc;
            *err = one;
        }
    }
    i = 0;
    cJSON_ArrayForEach (e, entries) {
        if (strlen(names) + 256 < nn)
            snprintf(names + strlen(names), nn - strlen(names), "%s%s", *names ? ", " : "",
                     str_or_empty(e, "metadata.name"));
        if (!claimed[i++]) {
            kerr_clear(&one);
            rc = release_entry(x, b, e, bkeclaim_conflict(b, entries, i - 1, why),
                               overlapped_at(over, e, str_or_empty(e, "spec.etcd.uid")), requeue,
                               &one);
            if (rc != KERR_OK && first == KERR_OK) {
                first = rc;
                *err = one;
            }
        }
    }
    bkeover_free(over);
    cJSON_Delete(col.etcds);
    free(claimed);
    return first;
}

enum kerr bke_run(const struct bke_ctx *x, const char *name, long *requeue_ms,
                  struct kerr_info *err)
{
    struct bke_bucket b;
    struct kerr_info why, ferr;
    cJSON *obj = NULL, *entries = NULL, *bsecret = NULL;
    char names[1024] = "", other[256];
    int count = 0;
    enum kerr rc, src, frc = KERR_OK;

    *requeue_ms = 0;
    rc = k8s_get(x->client, &BKE_RES_BUCKET, NULL, name, NULL, &obj, err);
    if (rc != KERR_OK)
        return rc == KERR_NOTFOUND ? KERR_OK : rc;
    kerr_clear(&why);
    rc = store_index_list(x->entries, BKE_INDEX_BUCKET, name, &entries, err);
    /* deleted entries stop their Jobs whatever the bucket's state */
    kerr_clear(&ferr);
    if (rc == KERR_OK)
        frc = bkestop_run(x, obj, entries, requeue_ms, &ferr);
    if (rc == KERR_OK && bkeclaim_read_bucket(obj, &b, &why) != KERR_OK) {
        count = cJSON_GetArraySize(entries);
        rc = bkebucket_sync(x, b.obj, count, "", why.msg, err);
    } else if (rc == KERR_OK &&
               (rc = bkeclaim_duplicate_of(x, &b, other, sizeof(other), err)) == KERR_OK &&
               *other) {
        (void)kerr_set(&why, KERR_INVAL,
                       "the store of spec.provider and spec.container (the endpoint is not "
                       "compared) is BackupBucket %s's: one store, one bucket; this one keeps no "
                       "entries",
                       other);
        count = cJSON_GetArraySize(entries);
        rc = bkebucket_sync(x, b.obj, count, "", why.msg, err);
    } else if (rc == KERR_OK &&
               (rc = bkebucket_secret(x, b.obj, names, sizeof(names), &bsecret, err)) == KERR_OK &&
               *names) {
        count = cJSON_GetArraySize(entries);
        rc = bkebucket_sync_secret(x, b.obj, count, names, err);
        if (*requeue_ms <= 0 || *requeue_ms > BKEBUCKET_SECRET_RETRY_MS)
            *requeue_ms = BKEBUCKET_SECRET_RETRY_MS; /* Secrets are not watched */
    } else if (rc == KERR_OK) {
        b.secret = bsecret;
        rc = keep_entries(x, &b, entries, &count, names, sizeof(names), requeue_ms, err);
        src = bkebucket_sync(x, b.obj, count, names, NULL, &why);
        if (rc == KERR_OK && src != KERR_OK) {
            rc = src;
            if (err)
                *err = why;
        }
    }
    if (rc == KERR_OK && frc != KERR_OK) {
        rc = frc;
        if (err)
            *err = ferr;
    }
    cJSON_Delete(bsecret);
    cJSON_Delete(entries);
    cJSON_Delete(obj);
    return rc;
}

enum kerr bke_reconcile(struct ctl *c, const char *ns, const char *name, struct ctl_result *res,
                        struct kerr_info *err)
{
    struct bke_ctx x;

    (void)ns;
    bke_ctx_of(c, &x);
    res->requeue_ms = 0;
    if (!x.entries)
        return KERR_OK; /* --backup-entries=false */
    return bke_run(&x, name, &res->requeue_ms, err);
}
