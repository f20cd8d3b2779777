#include "common/ktime.h"

#include <criterion/criterion.h>
#include <string.h>

Test(ktime, format_and_parse)
{
    char t[KTIME_LEN + 1], mt[KTIME_MICROTIME_LEN + 1];
    struct timespec ts = { .tv_sec = 1700000000, .tv_nsec = 123456789 }, got;
    struct kerr_info err;

    cr_assert_eq(ktime_format(1700000000, t), KERR_OK);
    cr_assert_str_eq(t, "2023-11-14T22:13:20Z");
    cr_assert_eq(ktime_microtime_format(&ts, mt), KERR_OK);
    cr_assert_str_eq(mt, "2023-11-14T22:13:20.123456Z");
    cr_assert_eq(ktime_parse(mt, &got, &err), KERR_OK);
    cr_assert_eq(got.tv_sec, 1700000000);
    cr_assert_eq(got.tv_nsec, 123456000);
    cr_assert_eq(ktime_parse("2023-11-14T23:13:20.5+01:00", &got, &err), KERR_OK);
    cr_assert_eq(got.tv_sec, 1700000000);
    cr_assert_eq(got.tv_nsec, 500000000);
    cr_assert_eq(ktime_parse("2024-02-29T00:00:00-00:30", &got, &err), KERR_OK);
    cr_assert_eq(got.tv_sec, 1709166600);
    ts.tv_nsec = 1000000000;
    cr_assert_eq(ktime_microtime_format(&ts, mt), KERR_INVAL);
    cr_assert_eq(ktime_microtime_now(mt), KERR_OK);
    cr_assert_eq(ktime_parse(mt, &got, &err), KERR_OK);
    cr_assert_gt(got.tv_sec, 1700000000);
}

Test(ktime, rejects_malformed)
{
    static const char *const bad[] = {
        "2023-11-14 22:13:20Z",     "2023-11-14T22:13:20",
        "2023-02-29T00:00:00Z",     "2023-11-14T24:00:00Z",
        "2023-11-14T22:13:20.Z",    "2023-11-14T22:13:20.1234567890Z",
        "2023-11-14T22:13:20+0100", "2023-11-14T22:13:20Zjunk",
        "23-11-14T22:13:20Z",       ""
    };
    struct timespec got;
    struct kerr_info err;
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(ktime_parse(bad[i], &got, &err), KERR_PARSE, "%s", bad[i]);
    cr_assert_eq(ktime_parse(NULL, &got, &err), KERR_PARSE);
}

Test(ktime, leap_years_epoch_and_cleared_output)
{
    char t[KTIME_LEN + 1];
    struct timespec got = { .tv_sec = 5, .tv_nsec = 5 };
    struct kerr_info err;

    cr_assert_eq(ktime_format(0, t), KERR_OK);
    cr_assert_str_eq(t, "1970-01-01T00:00:00Z");
    cr_assert_eq(ktime_parse("2000-02-29T12:00:00Z", &got, &err), KERR_OK);
    cr_assert_eq(got.tv_sec, 951825600);
    cr_assert_eq(ktime_parse("1900-02-29T00:00:00Z", &got, &err), KERR_PARSE);
    cr_assert_eq(got.tv_sec, 0);
    cr_assert_eq(got.tv_nsec, 0);
    cr_assert_str_eq(err.msg, "ktime: \"1900-02-29T00:00:00Z\" is not an RFC 3339 time");
}
