/* bkewin - the provenance window of a BackupEntry's deletion; see bkewin.h. */
#include "controller/entries/bkewin.h"

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "common/bentry.h"
#include "common/bstore.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "controller/entries/bkealive.h"
#include "controller/entries/bkeheld.h"
#include "controller/entries/bkeseen.h"

static const char *str_or_empty(const cJSON *obj, const char *path)
{
    const char *s = kjson_get_str(obj, path);

    return s ? s : "";
}

static void cut(int64_t *end, int64_t t)
{
    if (t < *end)
        *end = t;
}

/* The facts that end every span of entry: another Etcd on the prefix, the credentials lost. */
static void cut_always(const cJSON *entry, int64_t *end)
{
    int64_t t;

    /* another Etcd claimed an overlapping prefix from then on: what follows may be its */
    if (bkealive_overlapped(entry, &t))
        cut(end, t + 1);
    /* the Etcd was not shown holding the bucket's credentials after then: bkeheld.h */
    if (bkeheld_lost(entry, &t))
        cut(end, t + 1);
}

/* 1 for a retained copy's entry never attached to an Etcd: all it holds is the copy's. */
static int copy_only(const cJSON *entry)
{
    return kjson_get_str(entry, "metadata.annotations[" BSTORE_RETAINED_COPY_ANNOTATION "]") &&
           !kjson_has(entry, BKESEEN_REATTACHED);
}

int bkewin_current(const cJSON *entry, int64_t end, int64_t *since, int64_t *before)
{
    int64_t t, t1 = 0;
    enum bkeseen from = bkeseen_start(entry, &t1);

    /* end: the first second not the owner's. The given end, the Etcd seen gone, last known alive
     * (its second included, as the entry's Etcd was there then) */
    end++;
    if (bkealive_time_at(entry, "spec.etcdDeletedAt", &t))
        cut(&end, t + 1);
    if (bkealive_last(entry, &t))
        cut(&end, t + 1);
    /* its store changed then (webhook/pgone), unseen since: what follows may be another's, that
     * second's too (a move away, a write and a move back within one second) */
    if (bkealive_time_at(entry, BENTRY_STORE_CHANGED, &t))
        cut(&end, t);
    cut_always(entry, &end);
    *before = end - 1;
    if (from == BKESEEN_NONE || t1 > *before) {
        *since = end;
        return 0;
    }
    *since = t1;
    return 1;
}

/* Append the flags of the span [since, before] to args. */
static enum kerr add_span(cJSON *args, int64_t since, int64_t before, struct kerr_info *err)
{
    char a[64], b[64], first[KTIME_LEN + 1], last[KTIME_LEN + 1];

    if (ktime_format((time_t)before, last) != KERR_OK ||
        ktime_format((time_t)since, first) != KERR_OK)
        return kerr_set(err, KERR_INTERNAL, "cannot format the time");
    snprintf(a, sizeof(a), "--written-since=%s", first);
    snprintf(b, sizeof(b), "--written-before=%s", last);
    if (!cJSON_AddItemToArray(args, cJSON_CreateString(a)) ||
        !cJSON_AddItemToArray(args, cJSON_CreateString(b)))
        return kerr_set(err, KERR_NOMEM, NULL);
    return KERR_OK;
}

enum kerr bkewin_args(const cJSON *entry, cJSON *args, struct kerr_info *err)
{
    const cJSON *w;
    int64_t started, since, before, end;
    enum kerr rc = KERR_OK;
    int n = 0;

    if (!bkealive_time_at(entry, "status.deletionStartedAt", &started))
        return kerr_set(err, KERR_INVAL,
                        "BackupEntry %s: no deletion start (status.deletionStartedAt): what its "
                        "Etcd wrote cannot be told apart",
                        str_or_empty(entry, "metadata.name"));
    cJSON_ArrayForEach (w, kjson_get(entry, BENTRY_EARLIER)) {
        if (rc != KERR_OK || n == BENTRY_EARLIER_MAX)
            break;
        /* one that cannot be read deletes nothing */
        if (!bkealive_time_at(w, "since", &since) || !bkealive_time_at(w, "before", &before))
            continue;
        end = before + 1; /* as bkewin_current's: the first second not the owner's */
        cut(&end, started + 1);
        cut_always(entry, &end);
        before = end - 1;
        if (since <= before) {
            rc = add_span(args, since, before, err);
            n++;
        }
    }
    (void)bkewin_current(entry, started, &since, &before);
    if (rc == KERR_OK)
        rc = add_span(args, since, before, err);
    /* what warden-snapshot's copy wrote carries its mark: nothing else is the copy's */
    if (rc == KERR_OK && copy_only(entry) &&
        !cJSON_AddItemToArray(args, cJSON_CreateString("--only-copies")))
        rc = kerr_set(err, KERR_NOMEM, NULL);
    return rc;
}

enum kerr bkewin_keep_earlier(cJSON *obj, const cJSON *old, int another_etcd, int64_t now,
                              struct kerr_info *err)
{
    cJSON *as = NULL;
    int64_t since, before;
    int shown;
    enum kerr rc = KERR_OK;

    /* an Etcd of another uid not seen going: no later than it was last known alive */
    if (another_etcd && !kjson_has(old, "spec.etcdDeletedAt")) {
        as = cJSON_Duplicate(old, 1);
        if (!as)
            return kerr_set(err, KERR_NOMEM, NULL);
        rc = bkealive_release(as, INT64_MAX, now, err);
        if (rc == KERR_INVAL) { /* no time of it known: nothing shown */
            cJSON_Delete(as);
            kerr_clear(err);
            return KERR_OK;
        }
    }
    shown = rc == KERR_OK && bkewin_current(as ? as : old, now, &since, &before);
    cJSON_Delete(as);
    if (rc != KERR_OK || !shown)
        return rc;
    return bentry_add_earlier(obj, since, before, err);
}
