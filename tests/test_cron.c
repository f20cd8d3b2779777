/* cron: the standard 5-field syntax as robfig/cron v3 (Kubernetes CronJob) documents it: lists,
 * ranges, steps ("a/step" = "a-max/step"), names of months and days in any case, the macros,
 * the day-of-month / day-of-week OR rule when both are restricted, next and previous fire
 * times across month, year and leap-day boundaries, and clear errors for what it refuses. */
#include "controller/core/cron.h"

#include <criterion/criterion.h>
#include <string.h>

#include "common/ktime.h"

static int64_t at(const char *rfc3339)
{
    struct timespec ts;

    cr_assert_eq(ktime_parse(rfc3339, &ts, NULL), KERR_OK, "%s", rfc3339);
    return (int64_t)ts.tv_sec;
}

static struct cron parsed(const char *expr)
{
    struct cron c;
    struct kerr_info err;

    kerr_clear(&err);
    cr_assert_eq(cron_parse(expr, &c, &err), KERR_OK, "\"%s\": %s", expr, err.msg);
    return c;
}

/* The fire times of expr after from, one after the other, must be want[0..n). */
static void expect_next(const char *expr, const char *from, const char *const *want, size_t n)
{
    struct cron c = parsed(expr);
    int64_t t = at(from), next;
    char got[KTIME_LEN + 1];
    size_t i;

    for (i = 0; i < n; i++) {
        cr_assert_eq(cron_next(&c, t, &next), KERR_OK, "\"%s\" after %s", expr, from);
        cr_assert_eq(ktime_format((time_t)next, got), KERR_OK);
        cr_expect_str_eq(got, want[i], "\"%s\" fire %zu after %s", expr, i + 1, from);
        t = next;
    }
}

#define NEXT(expr, from, ...)                                    \
    do {                                                         \
        static const char *const w_[] = { __VA_ARGS__ };         \
        expect_next(expr, from, w_, sizeof(w_) / sizeof(w_[0])); \
    } while (0)

static void expect_error(const char *expr, const char *fragment)
{
    struct cron c;
    struct kerr_info err;

    kerr_clear(&err);
    cr_assert_eq(cron_parse(expr, &c, &err), KERR_INVAL, "\"%s\" parsed", expr);
    cr_expect(strstr(err.msg, fragment) != NULL, "\"%s\": \"%s\" lacks \"%s\"", expr, err.msg,
              fragment);
    cr_expect_eq(c.minute, 0u);
}

Test(cron, every_minute_is_strictly_after)
{
    NEXT("* * * * *", "2026-11-24T10:00:30Z", "2026-11-24T10:01:00Z", "2026-11-24T10:02:00Z");
    NEXT("* * * * *", "2026-11-24T10:00:00Z", "2026-11-24T10:01:00Z");
    NEXT("* * * * *", "2026-12-31T23:59:59Z", "2027-01-01T00:00:00Z");
}

Test(cron, lists_ranges_and_steps)
{
    NEXT("*/15 * * * *", "2026-11-24T10:01:00Z", "2026-11-24T10:15:00Z", "2026-11-24T10:30:00Z",
         "2026-11-24T10:45:00Z", "2026-11-24T11:00:00Z");
    /* "a/step" means "a-max/step" */
    NEXT("5/20 * * * *", "2026-11-24T10:00:00Z", "2026-11-24T10:05:00Z", "2026-11-24T10:25:00Z",
         "2026-11-24T10:45:00Z", "2026-11-24T11:05:00Z");
    NEXT("0 9-17/4 * * *", "2026-11-24T10:00:00Z", "2026-11-24T13:00:00Z", "2026-11-24T17:00:00Z",
         "2026-11-25T09:00:00Z");
    NEXT("30 1,3,22 * * *", "2026-11-24T02:00:00Z", "2026-11-24T03:30:00Z", "2026-11-24T22:30:00Z",
         "2026-11-25T01:30:00Z");
    NEXT("0 0 * * ?", "2026-11-24T10:00:00Z", "2026-11-25T00:00:00Z");
}

Test(cron, names_of_months_and_days_in_any_case)
{
    /* 2026-11-24 is a Tuesday */
    NEXT("0 12 * * mon-WED", "2026-11-24T13:00:00Z", "2026-11-25T12:00:00Z",
         "2026-11-30T12:00:00Z");
    NEXT("0 0 1 Feb,jun *", "2026-11-24T00:00:00Z", "2027-02-01T00:00:00Z", "2027-06-01T00:00:00Z");
    NEXT("0 0 * * SUN", "2026-11-24T00:00:00Z", "2026-11-29T00:00:00Z");
}

Test(cron, day_of_month_or_day_of_week_when_both_restricted)
{
    /* both restricted: the 13th (a Sunday in December) OR every Friday */
    NEXT("0 0 13 * FRI", "2026-11-24T00:00:00Z", "2026-11-27T00:00:00Z", "2026-12-04T00:00:00Z",
         "2026-12-11T00:00:00Z", "2026-12-13T00:00:00Z", "2026-12-18T00:00:00Z");
    /* one of them "*": the other decides alone */
    NEXT("0 0 * * FRI", "2026-12-11T00:00:00Z", "2026-12-18T00:00:00Z");
    NEXT("0 0 13 * *", "2026-11-24T00:00:00Z", "2026-12-13T00:00:00Z");
    NEXT("0 0 13 * ?", "2026-11-24T00:00:00Z", "2026-12-13T00:00:00Z");
    /* a step above 1 restricts (robfig clears its star): "*\/2" OR Friday */
    NEXT("0 0 */10 * FRI", "2026-11-24T00:00:00Z", "2026-11-27T00:00:00Z", "2026-12-01T00:00:00Z",
         "2026-12-04T00:00:00Z");
    /* "1-31" is a restriction too: every day of the month OR Monday = every day */
    NEXT("0 0 1-31 * MON", "2026-11-24T00:00:00Z", "2026-11-25T00:00:00Z");
}

Test(cron, macros)
{
    NEXT("@hourly", "2026-11-24T10:00:00Z", "2026-11-24T11:00:00Z");
    NEXT("@daily", "2026-11-24T10:00:00Z", "2026-11-25T00:00:00Z");
    NEXT("@midnight", "2026-11-24T10:00:00Z", "2026-11-25T00:00:00Z");
    NEXT("@weekly", "2026-11-24T10:00:00Z", "2026-11-29T00:00:00Z");
    NEXT("@monthly", "2026-11-24T10:00:00Z", "2026-12-01T00:00:00Z");
    NEXT("@yearly", "2026-11-24T10:00:00Z", "2027-01-01T00:00:00Z");
    NEXT("  @annually ", "2026-11-24T10:00:00Z", "2027-01-01T00:00:00Z");
}

Test(cron, month_year_and_leap_day_boundaries)
{
    NEXT("59 23 31 12 *", "2026-12-31T23:59:00Z", "2027-12-31T23:59:00Z");
    NEXT("0 0 31 * *", "2026-11-24T00:00:00Z", "2026-12-31T00:00:00Z", "2027-01-31T00:00:00Z",
         "2027-03-31T00:00:00Z");
    NEXT("0 0 29 2 *", "2026-11-24T00:00:00Z", "2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z");
}

Test(cron, a_schedule_that_never_fires_parses_but_has_no_time)
{
    struct cron c = parsed("0 0 30 2 *");
    int64_t t = 1;

    cr_assert_eq(cron_next(&c, at("2026-11-24T00:00:00Z"), &t), KERR_NOTFOUND);
    cr_assert_eq(t, 0);
    cr_assert_eq(cron_prev(&c, at("2026-11-24T00:00:00Z"), &t), KERR_NOTFOUND);
}

Test(cron, previous_fire_time_is_at_or_before)
{
    struct cron c = parsed("0 */6 * * *");
    int64_t t;

    cr_assert_eq(cron_prev(&c, at("2026-11-24T13:59:59Z"), &t), KERR_OK);
    cr_assert_eq(t, at("2026-11-24T12:00:00Z"));
    cr_assert_eq(cron_prev(&c, at("2026-11-24T12:00:00Z"), &t), KERR_OK);
    cr_assert_eq(t, at("2026-11-24T12:00:00Z"));
    cr_assert_eq(cron_prev(&c, at("2026-11-24T05:00:00Z"), &t), KERR_OK);
    cr_assert_eq(t, at("2026-11-24T00:00:00Z"));
    c = parsed("0 0 29 2 *");
    cr_assert_eq(cron_prev(&c, at("2026-11-24T00:00:00Z"), &t), KERR_OK);
    cr_assert_eq(t, at("2024-02-29T00:00:00Z"));
    c = parsed("0 0 13 * FRI");
    cr_assert_eq(cron_prev(&c, at("2026-12-13T10:00:00Z"), &t), KERR_OK);
    cr_assert_eq(t, at("2026-12-13T00:00:00Z"));
    cr_assert_eq(cron_prev(&c, at("2026-12-12T10:00:00Z"), &t), KERR_OK);
    cr_assert_eq(t, at("2026-12-11T00:00:00Z"));
}

Test(cron, next_and_prev_agree)
{
    static const char *const exprs[] = { "* * * * *",    "*/7 3-5 * * *", "0 0 13 * FRI",
                                         "15 2 1 1,7 *", "@weekly",       "0 0 29 2 *" };
    int64_t t0 = at("2026-11-24T10:17:00Z"), t, n, p;
    size_t i;
    int k;

    for (i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++) {
        struct cron c = parsed(exprs[i]);

        for (t = t0, k = 0; k < 15; k++, t = n) { /* 15 leap days: before 2100 */
            cr_assert_eq(cron_next(&c, t, &n), KERR_OK);
            cr_assert_gt(n, t);
            cr_assert_eq(cron_prev(&c, n, &p), KERR_OK);
            cr_assert_eq(p, n, "%s", exprs[i]);
            cr_assert_eq(cron_prev(&c, n - 1, &p), KERR_OK);
            cr_assert_leq(p, t, "%s: nothing fires between %lld and %lld", exprs[i], (long long)t,
                          (long long)n);
        }
    }
}

Test(cron, refused_with_clear_errors)
{
    expect_error(NULL, "missing");
    expect_error("", "expected exactly 5 fields");
    expect_error("* * * *", "expected exactly 5 fields");
    expect_error("0 * * * * *", "found at least 6");
    expect_error("60 * * * *", "minute: 60 is outside 0-59");
    expect_error("* 24 * * *", "hour: 24 is outside 0-23");
    expect_error("* * 0 * *", "day of month: 0 is outside 1-31");
    expect_error("* * * 13 *", "month: 13 is outside 1-12");
    expect_error("* * * * 7", "day of week: 7 is outside 0-6");
    expect_error("5-1 * * * *", "begins after it ends");
    expect_error("*/0 * * * *", "must be a positive number");
    expect_error("*/x * * * *", "step \"x\" is not a number");
    expect_error("1/2/3 * * * *", "more than one '/'");
    expect_error("1-2-3 * * * *", "more than one '-'");
    expect_error("1,,2 * * * *", "empty element");
    expect_error("a * * * *", "minute: \"a\" is not a number");
    expect_error("* * * foo *", "month: \"foo\" is not a number or a name");
    expect_error("* * * * -1", "day of week");
    expect_error("@every 1h", "unknown macro \"@every\"");
    expect_error("@Daily", "unknown macro");
    expect_error("@daily extra", "unknown macro");
    expect_error("TZ=Europe/Berlin 0 0 * * *", "time zones are not supported");
    expect_error("CRON_TZ=UTC 0 0 * * *", "time zones are not supported");
}
