/* bkealive: when a BackupEntry's Etcd is known alive (spec.etcdSeenAt refreshed at a bounded
 * rate, its deletionTimestamp when seen) and the end of the deletion's window at release: the
 * deletion time, the release time only when this process watched the Etcd, else the last time
 * seen, else the entry's own times; never "now" on a guess. */
#include "controller/entries/bkealive.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "common/ktime.h"
#include "controller/entries/bkejob.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

static cJSON *parse(const char *s)
{
    cJSON *j = cJSON_Parse(s);

    cr_assert_not_null(j, "bad JSON: %s", s);
    return j;
}

static int64_t at(const char *s)
{
    struct timespec ts;

    cr_assert_eq(ktime_parse(s, &ts, NULL), KERR_OK, "%s", s);
    return (int64_t)ts.tv_sec;
}

static const char ENTRY[] = "{\"metadata\":{\"name\":\"e\",\"creationTimestamp\":"
                            "\"2026-11-01T00:00:00Z\"},\"spec\":{\"prefix\":\"p\","
                            "\"claimedAt\":\"2026-11-02T00:00:00Z\"%s}}";
static const char ETCD[] = "{\"metadata\":{\"name\":\"etcd-main\"}}";

static cJSON *entry(const char *extra)
{
    char s[1024];

    snprintf(s, sizeof(s), ENTRY, extra);
    return parse(s);
}

static const char *last(const cJSON *e, char out[KTIME_LEN + 1])
{
    int64_t t = 0;

    if (!bkealive_last(e, &t))
        return "";
    cr_assert_eq(ktime_format((time_t)t, out), KERR_OK);
    return out;
}

Test(bkealive, refreshed_at_a_bounded_rate)
{
    cJSON *e = entry(""), *etcd = parse(ETCD);
    int64_t now = at("2026-11-10T00:00:00Z");
    struct kerr_info err = { 0 };

    cr_assert(bkealive_due(e, etcd, 0, now), "never seen: written");
    OK(bkealive_mark(e, etcd, now, &err));
    cr_assert_str_eq(kjson_get_str(e, "spec.etcdSeenAt"), "2026-11-10T00:00:00Z");
    cr_assert_not(bkealive_due(e, etcd, 0, now + BKEALIVE_REFRESH_S - 1));
    cr_assert(bkealive_due(e, etcd, 0, now + BKEALIVE_REFRESH_S));
    /* a controller that began reconciling after it was written writes it once */
    cr_assert(bkealive_due(e, etcd, now + 1, now + 2));
    cJSON_Delete(etcd);
    cJSON_Delete(e);
}

Test(bkealive, the_deletion_timestamp_when_seen)
{
    cJSON *e = entry(",\"etcdSeenAt\":\"2026-11-10T00:00:00Z\""),
          *etcd = parse("{\"metadata\":{\"name\":\"etcd-main\",\"deletionTimestamp\":"
                        "\"2026-11-10T00:03:00Z\"}}");
    int64_t now = at("2026-11-10T00:05:00Z");
    struct kerr_info err = { 0 };
    char t[KTIME_LEN + 1];

    cr_assert(bkealive_due(e, etcd, 0, now));
    OK(bkealive_mark(e, etcd, now, &err));
    cr_assert_str_eq(kjson_get_str(e, "spec.etcdDeletionTimestamp"), "2026-11-10T00:03:00Z");
    cr_assert_str_eq(kjson_get_str(e, "spec.etcdSeenAt"), "2026-11-10T00:00:00Z", "not refreshed");
    cr_assert_not(bkealive_due(e, etcd, 0, now + 2 * BKEALIVE_REFRESH_S), "recorded once");
    /* released a day later, by this process or another: the API server's deletion time */
    OK(bkealive_release(e, 0, now + 86400, &err));
    cr_assert_str_eq(last(e, t), "2026-11-10T00:03:00Z");
    cJSON_Delete(etcd);
    cJSON_Delete(e);
}

/* The Etcd gone while the controller was down: the window ends when it was last seen alive, not
 * when the controller came back (attack6_deleted_unseen). */
Test(bkealive, unseen_deletion_ends_at_the_last_sighting)
{
    cJSON *e = entry(",\"etcdSeenAt\":\"2026-11-10T00:00:00Z\"");
    int64_t up = at("2026-11-10T02:00:00Z");
    struct kerr_info err = { 0 };
    char t[KTIME_LEN + 1];

    OK(bkealive_release(e, up, up + 5, &err));
    cr_assert_str_eq(last(e, t), "2026-11-10T00:00:00Z");
    cJSON_Delete(e);
    /* seen by this process, which watched it since: gone when the release saw it gone */
    e = entry(",\"etcdSeenAt\":\"2026-11-10T02:00:10Z\"");
    OK(bkealive_release(e, up, up + 600, &err));
    cr_assert_str_eq(last(e, t), "2026-11-10T02:10:00Z");
    cJSON_Delete(e);
}

Test(bkealive, no_sighting_fails_closed)
{
    cJSON *e = entry("");
    struct kerr_info err = { 0 };
    char t[KTIME_LEN + 1];

    OK(bkealive_release(e, 0, at("2026-11-10T00:00:00Z"), &err));
    cr_assert_str_eq(last(e, t), "2026-11-02T00:00:00Z", "the claim's start, never now");
    cJSON_Delete(e);
    e = parse("{\"metadata\":{\"name\":\"e\"},\"spec\":{}}");
    cr_assert_eq(bkealive_release(e, 0, at("2026-11-10T00:00:00Z"), &err), KERR_INVAL);
    cJSON_Delete(e);
}

/* An Etcd created again (no deletionTimestamp) takes the entry back: the release's end goes. */
Test(bkealive, reattached_clears_the_release)
{
    cJSON *e = entry(",\"etcdDeletionTimestamp\":\"2026-11-10T00:03:00Z\","
                     "\"etcdLastAliveAt\":\"2026-11-10T00:03:00Z\""),
          *etcd = parse(ETCD);
    int64_t now = at("2026-11-11T00:00:00Z");
    struct kerr_info err = { 0 };

    cr_assert(bkealive_due(e, etcd, 0, now));
    OK(bkealive_mark(e, etcd, now, &err));
    cr_assert_null(kjson_get(e, "spec.etcdLastAliveAt"));
    cr_assert_null(kjson_get(e, "spec.etcdDeletionTimestamp"));
    cr_assert_str_eq(kjson_get_str(e, "spec.etcdSeenAt"), "2026-11-11T00:00:00Z");
    cJSON_Delete(etcd);
    cJSON_Delete(e);
}

/* The DELETE admitted by warden-webhook (etcdDeleteAdmittedAt): the Etcd existed then and was
 * deleted after, so the window ends there, however late the controller reads the deletion (a
 * paused replica, a long queue: attack22_paused_write); a deletionTimestamp still wins. */
Test(bkealive, the_admitted_delete_ends_the_window)
{
    cJSON *e = entry(",\"etcdSeenAt\":\"2026-11-10T02:00:10Z\","
                     "\"etcdDeleteAdmittedAt\":\"2026-11-10T02:05:00Z\"");
    int64_t up = at("2026-11-10T02:00:00Z"), t1 = 0;
    struct kerr_info err = { 0 };
    char t[KTIME_LEN + 1];

    cr_assert(bkealive_admitted(e, &t1));
    cr_assert_eq(t1, at("2026-11-10T02:05:00Z"));
    OK(bkealive_release(e, up, up + 600, &err));
    cr_assert_str_eq(last(e, t), "2026-11-10T02:05:00Z", "not the release time");
    cJSON_Delete(e);
    e = entry(",\"etcdDeletionTimestamp\":\"2026-11-10T02:04:00Z\","
              "\"etcdDeleteAdmittedAt\":\"2026-11-10T02:05:00Z\"");
    OK(bkealive_release(e, up, up + 600, &err));
    cr_assert_str_eq(last(e, t), "2026-11-10T02:04:00Z");
    cJSON_Delete(e);
    /* a time from the future (another clock) is not taken */
    e = entry(",\"etcdSeenAt\":\"2026-11-10T00:00:00Z\","
              "\"etcdDeleteAdmittedAt\":\"2026-11-11T00:00:00Z\"");
    OK(bkealive_release(e, up, up + 5, &err));
    cr_assert_str_eq(last(e, t), "2026-11-10T00:00:00Z");
    cJSON_Delete(e);
}

/* overlappedAt keeps the earliest other Etcd; it goes when the entry is reattached to the Etcd it
 * records (created at or before it), and stays for an Etcd created earlier. */
Test(bkealive, overlap_keeps_the_earliest)
{
    cJSON *e = entry(""), *etcd = parse("{\"metadata\":{\"name\":\"etcd-main\","
                                        "\"creationTimestamp\":\"2026-11-10T00:00:30Z\"}}");
    struct kerr_info err = { 0 };
    int64_t t = 0, created = 0;

    cr_assert(!bkealive_overlap_due(e, 0));
    cr_assert(bkealive_overlap_due(e, at("2026-11-10T00:00:30Z")));
    OK(bkealive_overlap(e, at("2026-11-10T00:00:30Z"), NULL, &err));
    cr_assert(bkealive_overlapped(e, &t));
    cr_assert_eq(t, at("2026-11-10T00:00:30Z"));
    cr_assert(!bkealive_overlap_due(e, at("2026-11-10T00:00:40Z")));
    cr_assert(bkealive_overlap_due(e, at("2026-11-10T00:00:20Z")));
    /* an entry of an earlier version (no overlappedBy): reattached to an Etcd created later
     * than the overlap, it stays */
    created = at("2026-11-10T00:00:30Z");
    OK(bkealive_overlap(e, created - 1, NULL, &err));
    OK(bkealive_mark(e, etcd, created + 10, &err));
    cr_assert(bkealive_overlapped(e, &t));
    /* reattached to the Etcd it records: gone */
    OK(bkealive_overlap(e, created, NULL, &err));
    OK(bkealive_mark(e, etcd, created + 10, &err));
    cr_assert(!bkealive_overlapped(e, &t));
    cJSON_Delete(e);
    cJSON_Delete(etcd);
}

/* With overlappedBy, the record goes only when the entry is (re)attached to the Etcd it names:
 * another Etcd seen overlapping while the entry's own, older, Etcd lives stays recorded. */
Test(bkealive, overlap_by_uid)
{
    cJSON *e = entry(""), *etcd = parse("{\"metadata\":{\"name\":\"etcd-main\",\"uid\":\"u1\","
                                        "\"creationTimestamp\":\"2026-11-10T00:00:00Z\"}}");
    struct kerr_info err = { 0 };
    int64_t t = 0, other = at("2026-11-10T00:05:00Z");

    OK(bkealive_overlap(e, other, "u2", &err));
    cr_assert_str_eq(kjson_get_str(e, "spec.overlappedBy"), "u2");
    OK(bkealive_mark(e, etcd, other + 10, &err));
    cr_assert(bkealive_overlapped(e, &t), "the entry's own Etcd, older, does not erase it");
    cr_assert_eq(t, other);
    /* the Etcd it records, created again in the entry's name, reattaches: gone */
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(etcd, "metadata"), "uid",
                              cJSON_CreateString("u2"));
    OK(bkealive_mark(e, etcd, other + 20, &err));
    cr_assert(!bkealive_overlapped(e, &t));
    cr_assert_null(kjson_get(e, "spec.overlappedBy"));
    /* set again without a uid: none recorded */
    OK(bkealive_overlap(e, other, "u3", &err));
    OK(bkealive_overlap(e, other - 1, NULL, &err));
    cr_assert_null(kjson_get(e, "spec.overlappedBy"));
    cJSON_Delete(e);
    cJSON_Delete(etcd);
}

/*
 * etcdStoreChangedAt with the generation changed: only an Etcd read with a later generation shows
 * the change stored; the same generation shows nothing until BKEALIVE_SETTLE_S after (another
 * webhook may hold the UPDATE), then a fresh read may show it refused; a generation that cannot
 * be read shows neither.
 */
Test(bkealive, a_store_change_is_stored_by_a_later_generation_only)
{
    cJSON *e = entry(",\"etcdStoreChangedAt\":\"2026-11-10T02:00:00Z\","
                     "\"etcdStoreChangedGeneration\":4");
    cJSON *g4 = parse("{\"metadata\":{\"generation\":4}}");
    cJSON *g5 = parse("{\"metadata\":{\"generation\":5}}");
    cJSON *none = parse("{\"metadata\":{}}");
    cJSON *plain = entry("");
    cJSON *nogen = entry(",\"etcdStoreChangedAt\":\"2026-11-10T02:00:00Z\"");
    int64_t t = at("2026-11-10T02:00:00Z");

    cr_assert_eq(bkealive_change(plain, g4, t), BKEALIVE_CHANGE_NONE);
    cr_assert_eq(bkealive_change(e, g5, t), BKEALIVE_CHANGE_STORED);
    cr_assert_eq(bkealive_change(e, g4, t + 5), BKEALIVE_CHANGE_PENDING, "held, maybe");
    cr_assert_eq(bkealive_change(e, g4, t + BKEALIVE_SETTLE_S), BKEALIVE_CHANGE_PENDING);
    cr_assert_eq(bkealive_change(e, g4, t + BKEALIVE_SETTLE_S + 1), BKEALIVE_CHANGE_SETTLED);
    cr_assert_eq(bkealive_change(e, none, t + 5000), BKEALIVE_CHANGE_PENDING);
    cr_assert_eq(bkealive_change(nogen, g5, t + 5000), BKEALIVE_CHANGE_PENDING,
                 "no generation recorded: never taken for stored");
    cJSON_Delete(e);
    cJSON_Delete(g4);
    cJSON_Delete(g5);
    cJSON_Delete(none);
    cJSON_Delete(plain);
    cJSON_Delete(nogen);
}
