/* testclock: the offset file's format (strict), the clock moved by it, a bad file keeping the
 * last good offset. */
#include "controller/core/testclock.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int stopped = 7;

static int parse(const char *s, long long *ms)
{
    return testclock_parse(s, strlen(s), ms, &stopped);
}

Test(testclock, parse)
{
    long long ms = 7;

    cr_assert_eq(parse("60000", &ms), 0);
    cr_assert_eq(ms, 60000);
    cr_assert_eq(stopped, 0);
    cr_assert_eq(parse("@1796174400000\n", &ms), 0);
    cr_assert_eq(ms, 1796174400000LL);
    cr_assert_eq(stopped, 1, "'@': the clock stands at that time");
    cr_assert_eq(parse(" -1500\n", &ms), 0);
    cr_assert_eq(ms, -1500);
    cr_assert_eq(stopped, 0);
    cr_assert_eq(parse("999999999999999", &ms), 0);
    cr_assert_eq(ms, 999999999999999LL);
    ms = 7;
    cr_assert_eq(parse("", &ms), -1);
    cr_assert_eq(parse("-", &ms), -1);
    cr_assert_eq(parse("1000000000000000", &ms), -1); /* 16 digits */
    cr_assert_eq(parse("1e3", &ms), -1);
    cr_assert_eq(parse("12 34", &ms), -1);
    cr_assert_eq(parse("+5", &ms), -1);
    cr_assert_eq(parse("@", &ms), -1);
    cr_assert_eq(parse("@-5", &ms), -1);
    cr_assert_eq(parse("-@5", &ms), -1);
    cr_assert_eq(parse("@ 5", &ms), -1);
    cr_assert_eq(testclock_parse("5\0"
                                 "5",
                                 3, &ms, &stopped),
                 -1);
    cr_assert_eq(ms, 7, "a refused input leaves the output alone");
    cr_assert_eq(stopped, 0);
}

static long long real_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void write_file(const char *path, const char *s)
{
    FILE *f = fopen(path, "w");

    cr_assert_not_null(f);
    fputs(s, f);
    fclose(f);
}

Test(testclock, offset_from_file)
{
    char path[] = "/tmp/testclock.XXXXXX";
    int fd = mkstemp(path);
    long long before, got, after;

    cr_assert_geq(fd, 0);
    close(fd);
    setenv(TESTCLOCK_ENV, path, 1);
    cr_assert_str_eq(testclock_file(), path);
    write_file(path, "3600000\n");
    before = real_ms();
    got = testclock_now_ms();
    after = real_ms();
    cr_assert(got >= before + 3600000 && got <= after + 3600000, "an hour ahead: %lld", got);
    write_file(path, "an hour"); /* kept: the last good offset */
    got = testclock_now_ms();
    cr_assert_geq(got, before + 3600000);
    unlink(path); /* gone: kept too */
    got = testclock_now_ms();
    cr_assert_geq(got, before + 3600000);
    write_file(path, "@1796174400000\n"); /* stopped: the same time on every call */
    cr_assert_eq(testclock_now_ms(), 1796174400000LL);
    usleep(20000);
    cr_assert_eq(testclock_now_ms(), 1796174400000LL);
    write_file(path, "stopped"); /* kept: stopped still */
    cr_assert_eq(testclock_now_ms(), 1796174400000LL);
    write_file(path, "0"); /* running again */
    before = real_ms();
    got = testclock_now_ms();
    cr_assert(got >= before && got <= real_ms(), "the real clock: %lld", got);
    unlink(path);
    setenv(TESTCLOCK_ENV, "", 1);
    cr_assert_null(testclock_file(), "an empty variable is off");
    unsetenv(TESTCLOCK_ENV);
    cr_assert_null(testclock_file());
}
