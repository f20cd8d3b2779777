/* bkealive - when a BackupEntry's Etcd is known alive; see bkealive.h. */
#include "controller/entries/bkealive.h"

#include <string.h>
#include <time.h>

#include "common/bentry.h"
#include "common/kjson.h"
#include "common/ktime.h"

#define SEEN    "spec.etcdSeenAt"
#define DELETED "spec.etcdDeletionTimestamp"
#define LAST    "spec.etcdLastAliveAt"
#define OVERLAP "spec.overlappedAt"
#define OVER_BY "spec.overlappedBy"

int bkealive_time_at(const cJSON *obj, const char *path, int64_t *t)
{
    struct timespec ts;

    if (ktime_parse(kjson_get_str(obj, path), &ts, NULL) != KERR_OK)
        return 0;
    *t = (int64_t)ts.tv_sec;
    return 1;
}

enum kerr bkealive_set_time(cJSON *obj, const char *path, int64_t t, struct kerr_info *err)
{
    char s[KTIME_LEN + 1];

    if (ktime_format((time_t)t, s) != KERR_OK)
        return kerr_set(err, KERR_INTERNAL, "cannot format the time %lld", (long long)t);
    return kjson_set_str(obj, path, s, err);
}

int bkealive_due(const cJSON *entry, const cJSON *etcd, int64_t since, int64_t now)
{
    const char *dts = kjson_get_str(etcd, "metadata.deletionTimestamp");
    const char *rec = kjson_get_str(entry, DELETED);
    int64_t seen;

    if (kjson_has(entry, LAST) || (dts ? !rec || strcmp(rec, dts) != 0 : rec != NULL))
        return 1;
    if (dts)
        return 0; /* being deleted: the deletion time is what counts */
    return !bkealive_time_at(entry, SEEN, &seen) || seen < since ||
           now - seen >= BKEALIVE_REFRESH_S;
}

enum kerr bkealive_mark(cJSON *obj, const cJSON *etcd, int64_t now, struct kerr_info *err)
{
    const char *dts = kjson_get_str(etcd, "metadata.deletionTimestamp");
    const char *uid = kjson_get_str(etcd, "metadata.uid"), *by;
    int64_t t, created;
    enum kerr rc = KERR_OK;

    (void)kjson_delete(obj, LAST);
    by = kjson_get_str(obj, OVER_BY);
    if (by ? strcmp(by, uid) == 0
           : bkealive_time_at(obj, OVERLAP, &t) &&
                 (!bkealive_time_at(etcd, "metadata.creationTimestamp", &created) ||
                  created <= t)) {
        (void)kjson_delete(obj, OVERLAP);
        (void)kjson_delete(obj, OVER_BY);
    }
    if (dts && bkealive_time_at(etcd, "metadata.deletionTimestamp", &t))
        rc = kjson_set_str(obj, DELETED, dts, err);
    else {
        (void)kjson_delete(obj, DELETED);
        rc = bkealive_set_time(obj, SEEN, now, err);
    }
    return rc;
}

enum kerr bkealive_release(cJSON *obj, int64_t since, int64_t now, struct kerr_info *err)
{
    int64_t t;

    if (bkealive_time_at(obj, DELETED, &t) && t <= now)
        return bkealive_set_time(obj, LAST, t, err);
    if (bkealive_time_at(obj, BENTRY_DELETE_ADMITTED, &t) && t <= now)
        return bkealive_set_time(obj, LAST, t, err);
    if (bkealive_time_at(obj, SEEN, &t) && t <= now)
        return bkealive_set_time(obj, LAST, t >= since ? now : t, err);
    if ((bkealive_time_at(obj, "spec.claimedAt", &t) ||
         bkealive_time_at(obj, "metadata.creationTimestamp", &t)) &&
        t <= now)
        return bkealive_set_time(obj, LAST, t, err);
    return kerr_set(err, KERR_INVAL,
                    "BackupEntry %s: no time its Etcd was known alive (spec.etcdSeenAt, "
                    "spec.claimedAt)",
                    kjson_get_str(obj, "metadata.name") ? kjson_get_str(obj, "metadata.name")
                                                        : "?");
}

int bkealive_last(const cJSON *entry, int64_t *t)
{
    return bkealive_time_at(entry, LAST, t);
}

int bkealive_overlap_due(const cJSON *entry, int64_t at)
{
    int64_t t;

    return at > 0 && (!bkealive_time_at(entry, OVERLAP, &t) || at < t);
}

enum kerr bkealive_overlap(cJSON *obj, int64_t at, const char *by, struct kerr_info *err)
{
    enum kerr rc = bkealive_set_time(obj, OVERLAP, at, err);

    (void)kjson_delete(obj, OVER_BY);
    if (rc == KERR_OK && by && *by)
        rc = kjson_set_str(obj, OVER_BY, by, err);
    return rc;
}

int bkealive_overlapped(const cJSON *entry, int64_t *t)
{
    return bkealive_time_at(entry, OVERLAP, t);
}

int bkealive_admitted(const cJSON *entry, int64_t *t)
{
    return bkealive_time_at(entry, BENTRY_DELETE_ADMITTED, t);
}

enum bkealive_change bkealive_change(const cJSON *entry, const cJSON *etcd, int64_t now)
{
    const cJSON *was = kjson_get(entry, BENTRY_STORE_CHANGED_GEN);
    const cJSON *is = kjson_get(etcd, "metadata.generation");
    int64_t at;

    if (!kjson_has(entry, BENTRY_STORE_CHANGED))
        return BKEALIVE_CHANGE_NONE;
    if (!cJSON_IsNumber(was) || !cJSON_IsNumber(is))
        return BKEALIVE_CHANGE_PENDING;
    if (is->valuedouble > was->valuedouble)
        return BKEALIVE_CHANGE_STORED;
    if (is->valuedouble == was->valuedouble && bkealive_time_at(entry, BENTRY_STORE_CHANGED, &at) &&
        now > at + BKEALIVE_SETTLE_S)
        return BKEALIVE_CHANGE_SETTLED;
    return BKEALIVE_CHANGE_PENDING;
}
