/*
 * Tests of controller/hibernation/hquiet: the revision check's quiet second, witnessed by the
 * sidecar's own times (the stored snapshot's createdOn or name, the answer's Date) and waited
 * only for what they do not cover; a time that cannot be read means the whole second.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "controller/hibernation/hquiet.h"

/* 2026-11-29T07:45:12Z */
#define T0    1795938312LL
#define T0_MS (T0 * 1000LL)

static cJSON *snap(const char *created, long long unix_s, long long rev)
{
    char text[512], name[96] = "";
    cJSON *o = NULL;

    if (unix_s >= 0)
        snprintf(name, sizeof(name), ",\"snapName\":\"Full-00000000-%08lld-%lld.gz.final\"", rev,
                 unix_s);
    if (created)
        snprintf(text, sizeof(text), "{\"createdOn\":\"%s\",\"lastRevision\":%lld%s}", created, rev,
                 name);
    else
        snprintf(text, sizeof(text), "{\"lastRevision\":%lld%s}", rev, name);
    cr_assert_eq(kjson_parse(text, strlen(text), NULL, &o, NULL, NULL), KERR_OK, "%s", text);
    return o;
}

/* The decision on one answer that is the stored snapshot itself, at the same revision. */
static enum hquiet_verdict same(const char *created, long long unix_s, int64_t date_ms,
                                long *wait_ms)
{
    cJSON *s = snap(created, unix_s, 42);
    struct hquiet_in in = { 42, s, 42, s, date_ms, 0 };
    enum hquiet_verdict v = hquiet_decide(&in, wait_ms);

    cJSON_Delete(s);
    return v;
}

Test(hquiet, a_snapshot_older_than_the_quiet_second_needs_no_wait)
{
    long w = -1;

    /* a real upload: stamped at 07:45:12.181, answered Succeeded seconds later */
    cr_assert_eq(same("2026-11-29T07:45:12.181036Z", T0, T0_MS + 3000, &w), HQUIET_QUIET);
    cr_assert_eq(w, 0);
    /* exactly the second: 12.000000001 (rounded up to 12.001) to a Date of 13: not yet */
    cr_assert_eq(same("2026-11-29T07:45:12.000000001Z", T0, T0_MS + 1000, &w), HQUIET_WAIT);
    cr_assert_eq(w, 1);
    cr_assert_eq(same("2026-11-29T07:45:11.5Z", T0 - 1, T0_MS + 500, &w), HQUIET_QUIET);
}

Test(hquiet, a_fresh_snapshot_waits_for_what_remains)
{
    long w = -1;

    /* stamped 12.300, the Date says 13 (13.000 to 13.999): 700 ms seen, 300 to wait */
    cr_assert_eq(same("2026-11-29T07:45:12.3Z", T0, T0_MS + 1000, &w), HQUIET_WAIT);
    cr_assert_eq(w, 300);
    /* the Date's second is the snapshot's own (cut down): nothing seen, the whole second */
    cr_assert_eq(same("2026-11-29T07:45:12.3Z", T0, T0_MS, &w), HQUIET_WAIT);
    cr_assert_eq(w, HQUIET_MS);
    /* a Date before the snapshot (a clock stepped back): the whole second, never more */
    cr_assert_eq(same("2026-11-29T07:45:12.3Z", T0, T0_MS - 5000, &w), HQUIET_WAIT);
    cr_assert_eq(w, HQUIET_MS);
}

Test(hquiet, a_whole_second_is_taken_at_its_end)
{
    long w = -1;

    /* /snapshot/latest lists createdOn from the name: 12 stands for 12.000 to 12.999 */
    cr_assert_eq(hquiet_snapshot_ms(NULL), -1);
    cr_assert_eq(same("2026-11-29T07:45:12Z", T0, T0_MS + 1000, &w), HQUIET_WAIT);
    cr_assert_eq(w, HQUIET_MS);
    cr_assert_eq(same("2026-11-29T07:45:12Z", T0, T0_MS + 2000, &w), HQUIET_QUIET);
    /* no createdOn: the name's <unix>, one second on */
    cr_assert_eq(same(NULL, T0, T0_MS + 1000, &w), HQUIET_WAIT);
    cr_assert_eq(w, HQUIET_MS);
    cr_assert_eq(same(NULL, T0, T0_MS + 2000, &w), HQUIET_QUIET);
}

Test(hquiet, a_time_that_cannot_be_read_means_the_whole_second)
{
    cJSON *c;
    long w = -1;

    cr_assert_eq(same("2026-11-29T07:45:12.3Z", T0, -1, &w), HQUIET_WAIT, "no Date");
    cr_assert_eq(w, HQUIET_MS);
    cr_assert_eq(same("yesterday", T0, T0_MS + 60000, &w), HQUIET_WAIT, "createdOn");
    cr_assert_eq(w, HQUIET_MS);
    /* neither createdOn nor name: no time; and no name tells the stored snapshot from a new
     * upload either, so the answer is asked again (hib_verify gives up after a few) */
    c = snap(NULL, -1, 42);
    cr_assert_eq(hquiet_snapshot_ms(c), -1);
    cr_assert_eq(same(NULL, -1, T0_MS + 60000, &w), HQUIET_AGAIN);
    cJSON_Delete(c);
    /* the name's <unix> and createdOn disagree: neither is believed */
    cr_assert_eq(same("2026-11-29T07:45:12.3Z", T0 - 3600, T0_MS + 60000, &w), HQUIET_WAIT);
    cr_assert_eq(w, HQUIET_MS);
}

Test(hquiet, the_date_header_is_an_imf_fixdate)
{
    cr_assert_eq(hquiet_date_ms("Sun, 29 Nov 2026 07:45:12 GMT"), T0_MS);
    cr_assert_eq(hquiet_date_ms("Sun, 06 Nov 1994 08:49:37 GMT"), 784111777000LL);
    cr_assert_eq(hquiet_date_ms(NULL), -1);
    cr_assert_eq(hquiet_date_ms(""), -1);
    cr_assert_eq(hquiet_date_ms("Sunday, 06-Nov-94 08:49:37 GMT"), -1, "RFC 850: not sent");
    cr_assert_eq(hquiet_date_ms("Sun Nov  6 08:49:37 1994"), -1, "asctime: no zone");
    cr_assert_eq(hquiet_date_ms("Sun, 29 Nov 2026 07:45:12 CET"), -1);
    cr_assert_eq(hquiet_date_ms("Sun, 29 Nov 2026 07:45:12 GMT "), -1);
    cr_assert_eq(hquiet_date_ms("Sun, xx Nov 2026 07:45:12 GMT"), -1);
}

Test(hquiet, a_moved_revision_starts_a_new_round)
{
    cJSON *s = snap("2026-11-29T07:45:12.3Z", T0, 42);
    cJSON *a = snap("2026-11-29T07:45:20.1Z", T0 + 8, 49);
    struct hquiet_in in = { 42, s, 49, a, T0_MS + 60000, 0 };
    long w = -1;

    cr_assert_eq(hquiet_decide(&in, &w), HQUIET_MOVED);
    cr_assert_eq(w, 0);
    in.waited = 1; /* after a wait as well */
    cr_assert_eq(hquiet_decide(&in, &w), HQUIET_MOVED);
    cJSON_Delete(a);
    cJSON_Delete(s);
}

Test(hquiet, a_new_snapshot_at_the_same_revision_is_asked_again)
{
    /* the stored one was not a final full snapshot: the sidecar uploads a final one at the same
     * revision, and its Date is after that upload, not at the revision read */
    cJSON *s = snap("2026-11-29T07:45:02.3Z", T0 - 10, 42);
    cJSON *a = snap("2026-11-29T07:45:12.3Z", T0, 42);
    struct hquiet_in in = { 42, s, 42, a, T0_MS + 60000, 0 };
    long w = -1;

    cr_assert_eq(hquiet_decide(&in, &w), HQUIET_AGAIN);
    cr_assert_eq(w, 0);
    in.answer = NULL; /* no Snapshot in the answer: not the stored one */
    cr_assert_eq(hquiet_decide(&in, &w), HQUIET_AGAIN);
    cJSON_Delete(a);
    cJSON_Delete(s);
}

Test(hquiet, the_same_answer_after_the_wait_is_quiet)
{
    cJSON *s = snap("2026-11-29T07:45:12.3Z", T0, 42);
    struct hquiet_in in = { 42, s, 42, s, T0_MS, 1 };
    long w = -1;

    cr_assert_eq(hquiet_decide(&in, &w), HQUIET_QUIET);
    cr_assert_eq(w, 0);
    in.date_ms = -1; /* the wait was the whole second: no time of the sidecar's needed */
    cr_assert_eq(hquiet_decide(&in, &w), HQUIET_QUIET);
    cr_assert_str_eq(hquiet_verdict_name(HQUIET_AGAIN), "again");
    cJSON_Delete(s);
}
