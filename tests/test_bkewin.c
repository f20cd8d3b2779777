/*
 * bkewin: the spans of a BackupEntry's deletion window. The current one from T1 to the earliest
 * end; at a reattachment the window so far is kept as an earlier span (an Etcd of another uid not
 * seen going: ending when it was last known alive), and the Job deletes what lies in any span,
 * never the gap; every span is cut at overlappedAt and credentialsLostAt.
 */
#include "controller/entries/bkewin.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/bstore.h"
#include "common/kjson.h"
#include "common/ktime.h"

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

/* The args bkewin_args gives entry, joined with spaces into out. */
static const char *args_of(const cJSON *entry, char *out, size_t n)
{
    struct kerr_info err = { 0 };
    cJSON *args = cJSON_CreateArray(), *a;
    size_t len = 0;

    OK(bkewin_args(entry, args, &err));
    out[0] = '\0';
    cJSON_ArrayForEach (a, args)
        len += (size_t)snprintf(out + len, n - len, "%s%s", len ? " " : "", a->valuestring);
    cJSON_Delete(args);
    return out;
}

/* A live entry's members seen at 01:00, claimed at 00:00. */
static const char LIVE[] = "{\"metadata\":{\"name\":\"e\"},\"spec\":{\"claimedAt\":"
                           "\"2026-11-02T00:00:00Z\",\"membersSeenAt\":\"2026-11-02T01:00:00Z\","
                           "\"etcd\":{\"uid\":\"u1\"},\"etcdSeenAt\":\"2026-11-02T05:00:00Z\"%s}}";

static cJSON *live(const char *extra)
{
    char s[2048];

    snprintf(s, sizeof(s), LIVE, extra);
    return parse(s);
}

Test(bkewin, the_current_span_ends_at_the_earliest_end)
{
    cJSON *e = live(",\"etcdLastAliveAt\":\"2026-11-02T06:00:00Z\","
                    "\"etcdStoreChangedAt\":\"2026-11-02T05:30:00Z\"");
    int64_t since = 0, before = 0;

    cr_assert(bkewin_current(e, at("2026-11-03T00:00:00Z"), &since, &before));
    cr_assert_eq(since, at("2026-11-02T01:00:00Z"));
    cr_assert_eq(before, at("2026-11-02T05:29:59Z"),
                 "its store changed then, unseen since: not that second either");
    cJSON_Delete(e);
    e = live(",\"credentialsLostAt\":\"2026-11-02T00:30:00Z\"");
    cr_assert_not(bkewin_current(e, at("2026-11-03T00:00:00Z"), &since, &before),
                  "lost before the members were seen: nothing shown");
    cr_assert_eq(since, before + 1, "an empty span");
    cJSON_Delete(e);
}

Test(bkewin, a_reattachment_keeps_the_window_so_far)
{
    struct kerr_info err = { 0 };
    char out[1024];
    cJSON *old = live(",\"etcdDeletedAt\":\"2026-11-02T06:00:10Z\","
                      "\"etcdLastAliveAt\":\"2026-11-02T06:00:00Z\"");
    cJSON *obj = cJSON_Duplicate(old, 1);

    OK(bkewin_keep_earlier(obj, old, 0, at("2026-11-02T07:00:00Z"), &err));
    /* the reattachment as bke.c writes it: a new window from then on */
    cr_assert_eq(kjson_delete(obj, "spec.membersSeenAt"), KERR_OK);
    cr_assert_eq(kjson_delete(obj, "spec.etcdDeletedAt"), KERR_OK);
    cr_assert_eq(kjson_delete(obj, "spec.etcdLastAliveAt"), KERR_OK);
    OK(kjson_set_str(obj, "spec.reattachedAt", "2026-11-02T07:00:00Z", &err));
    OK(kjson_set_str(obj, "spec.membersSeenAt", "2026-11-02T07:10:00Z", &err));
    OK(kjson_set_str(obj, "status.deletionStartedAt", "2026-11-02T09:00:00Z", &err));
    OK(kjson_set_str(obj, "spec.etcdLastAliveAt", "2026-11-02T08:00:00Z", &err));
    cr_assert_str_eq(args_of(obj, out, sizeof(out)),
                     "--written-since=2026-11-02T01:00:00Z --written-before=2026-11-02T06:00:00Z "
                     "--written-since=2026-11-02T07:10:00Z --written-before=2026-11-02T08:00:00Z",
                     "%s", out);
    /* another Etcd on the prefix from 05:00: every span ends there */
    OK(kjson_set_str(obj, "spec.overlappedAt", "2026-11-02T05:00:00Z", &err));
    cr_assert_str_eq(args_of(obj, out, sizeof(out)),
                     "--written-since=2026-11-02T01:00:00Z --written-before=2026-11-02T05:00:00Z "
                     "--written-since=2026-11-02T05:00:01Z --written-before=2026-11-02T05:00:00Z",
                     "%s", out);
    cJSON_Delete(old);
    cJSON_Delete(obj);
}

Test(bkewin, another_etcd_not_seen_going_ends_at_its_last_sighting)
{
    struct kerr_info err = { 0 };
    cJSON *old = live(""), *obj = cJSON_Duplicate(old, 1);
    const cJSON *w;

    OK(bkewin_keep_earlier(obj, old, 1, at("2026-11-02T07:00:00Z"), &err));
    w = kjson_get(obj, BENTRY_EARLIER ".0");
    cr_assert_str_eq(kjson_get_str(w, "since"), "2026-11-02T01:00:00Z");
    cr_assert_str_eq(kjson_get_str(w, "before"), "2026-11-02T05:00:00Z", "etcdSeenAt, not now");
    cJSON_Delete(obj);
    /* nothing shown written (no member seen): no span kept */
    cJSON_Delete(old);
    old = parse("{\"spec\":{\"claimedAt\":\"2026-11-02T00:00:00Z\"}}");
    obj = cJSON_Duplicate(old, 1);
    OK(bkewin_keep_earlier(obj, old, 1, at("2026-11-02T07:00:00Z"), &err));
    cr_assert_null(kjson_get(obj, BENTRY_EARLIER));
    cJSON_Delete(old);
    cJSON_Delete(obj);
}

Test(bkewin, at_most_so_many_earlier_spans_and_unreadable_ones_delete_nothing)
{
    struct kerr_info err = { 0 };
    char out[4096];
    cJSON *old = live(",\"etcdLastAliveAt\":\"2026-11-02T06:00:00Z\"");
    cJSON *obj = cJSON_Duplicate(old, 1);
    int i;

    for (i = 0; i < BENTRY_EARLIER_MAX + 3; i++)
        OK(bkewin_keep_earlier(obj, old, 0, at("2026-11-02T07:00:00Z"), &err));
    cr_assert_eq(cJSON_GetArraySize(kjson_get(obj, BENTRY_EARLIER)), BENTRY_EARLIER_MAX);
    cJSON_Delete(obj);
    obj = live(",\"earlierWindows\":[{\"since\":\"soon\",\"before\":\"2026-11-02T06:00:00Z\"}],"
               "\"etcdLastAliveAt\":\"2026-11-02T06:00:00Z\"");
    OK(kjson_set_str(obj, "status.deletionStartedAt", "2026-11-02T09:00:00Z", &err));
    cr_assert_str_eq(args_of(obj, out, sizeof(out)),
                     "--written-since=2026-11-02T01:00:00Z --written-before=2026-11-02T06:00:00Z",
                     "%s", out);
    cJSON_Delete(old);
    cJSON_Delete(obj);
}

/* A retained copy's entry never attached to an Etcd: its window ends with the copy (that second
 * the copy's) and its Job deletes only what warden-snapshot wrote; once an Etcd reattached to
 * it, neither. */
Test(bkewin, a_retained_copys_entry_deletes_only_copies)
{
    struct kerr_info err = { 0 };
    char out[1024];
    cJSON *e =
        parse("{\"metadata\":{\"name\":\"e\",\"annotations\":{\"" BSTORE_RETAINED_COPY_ANNOTATION
              "\":\"shoot/b1\"}},\"spec\":{\"claimedAt\":\"2026-11-02T01:00:00Z\","
              "\"etcdDeletedAt\":\"2026-11-02T01:05:00Z\"},\"status\":{"
              "\"deletionStartedAt\":\"2026-11-03T00:00:00Z\"}}");

    cr_assert_str_eq(args_of(e, out, sizeof(out)),
                     "--written-since=2026-11-02T01:00:00Z --written-before=2026-11-02T01:05:00Z "
                     "--only-copies",
                     "%s", out);
    OK(kjson_set_str(e, "spec.reattachedAt", "2026-11-02T02:00:00Z", &err));
    OK(kjson_set_str(e, "spec.etcdDeletedAt", "2026-11-02T03:00:00Z", &err));
    cr_assert_str_eq(args_of(e, out, sizeof(out)),
                     "--written-since=2026-11-02T02:00:01Z --written-before=2026-11-02T03:00:00Z",
                     "an Etcd's since: %s", out);
    cJSON_Delete(e);
}
