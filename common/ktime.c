#include "common/ktime.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

enum kerr ktime_format(time_t t, char out[KTIME_LEN + 1])
{
    struct tm tm;

    out[0] = '\0';
    if (!gmtime_r(&t, &tm) || strftime(out, KTIME_LEN + 1, "%Y-%m-%dT%H:%M:%SZ", &tm) != KTIME_LEN)
        return KERR_INVAL;
    return KERR_OK;
}

enum kerr ktime_microtime_format(const struct timespec *ts, char out[KTIME_MICROTIME_LEN + 1])
{
    if (ts->tv_nsec < 0 || ts->tv_nsec > 999999999 || ktime_format(ts->tv_sec, out) != KERR_OK)
        return KERR_INVAL;
    snprintf(out + KTIME_LEN - 1, 9, ".%06uZ", (unsigned)(ts->tv_nsec / 1000) % 1000000u);
    return KERR_OK;
}

enum kerr ktime_microtime_now(char out[KTIME_MICROTIME_LEN + 1])
{
    struct timespec ts;

    if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
        return KERR_INTERNAL;
    return ktime_microtime_format(&ts, out);
}

/* s against tmpl, where 'd' stands for a digit: the runs of digits go to f[]. */
static bool match_digits(const char *s, const char *tmpl, int *f)
{
    int k = 0;

    for (f[0] = 0; *tmpl; tmpl++, s++) {
        if (*tmpl != 'd' && *s != *tmpl)
            return false;
        if (*tmpl != 'd')
            f[++k] = 0;
        else if (*s >= '0' && *s <= '9')
            f[k] = f[k] * 10 + (*s - '0');
        else
            return false;
    }
    return true;
}

/* "YYYY-MM-DDTHH:MM:SS" into *tm, checking every field's range. */
static bool parse_civil(const char *s, struct tm *tm)
{
    static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    int f[6], leap;

    if (!match_digits(s, "dddd-dd-ddTdd:dd:dd", f) || f[1] < 1 || f[1] > 12 || f[3] > 23 ||
        f[4] > 59 || f[5] > 59)
        return false;
    leap = (f[0] % 4 == 0 && f[0] % 100 != 0) || f[0] % 400 == 0;
    if (f[2] < 1 || f[2] > mdays[f[1] - 1] + (f[1] == 2 && leap))
        return false;
    memset(tm, 0, sizeof(*tm));
    tm->tm_year = f[0] - 1900;
    tm->tm_mon = f[1] - 1;
    tm->tm_mday = f[2];
    tm->tm_hour = f[3];
    tm->tm_min = f[4];
    tm->tm_sec = f[5];
    return true;
}

/* ".fraction" (1-9 digits) into *nsec; advances *p. No fraction is fine. */
static bool parse_fraction(const char **p, long *nsec)
{
    int digits = 0;

    *nsec = 0;
    if (**p != '.')
        return true;
    for ((*p)++; **p >= '0' && **p <= '9'; (*p)++) {
        if (++digits > 9)
            return false;
        *nsec = *nsec * 10 + (**p - '0');
    }
    for (; digits > 0 && digits < 9; digits++)
        *nsec *= 10;
    return digits > 0;
}

/* "Z" or "+hh:mm" / "-hh:mm" ending the string: the offset east of UTC in seconds. */
static bool parse_zone(const char *p, long *offset)
{
    int f[2];

    *offset = 0;
    if (p[0] == 'Z')
        return p[1] == '\0';
    if ((p[0] != '+' && p[0] != '-') || !match_digits(p + 1, "dd:dd", f) || p[6] != '\0' ||
        f[0] > 23 || f[1] > 59)
        return false;
    *offset = (p[0] == '-' ? -1L : 1L) * (f[0] * 3600L + f[1] * 60L);
    return true;
}

enum kerr ktime_parse(const char *s, struct timespec *out, struct kerr_info *err)
{
    struct tm tm;
    const char *p;
    long nsec, offset;

    out->tv_sec = 0;
    out->tv_nsec = 0;
    if (!s || !parse_civil(s, &tm))
        goto bad;
    p = s + KTIME_LEN - 1;
    if (!parse_fraction(&p, &nsec) || !parse_zone(p, &offset))
        goto bad;
    out->tv_sec = timegm(&tm) - (time_t)offset;
    out->tv_nsec = nsec;
    return KERR_OK;
bad:
    return kerr_set(err, KERR_PARSE, "ktime: \"%s\" is not an RFC 3339 time", s ? s : "(null)");
}

int64_t ktime_mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * KTIME_NS_PER_SEC + ts.tv_nsec;
}

int64_t ktime_mono_ms(void)
{
    return ktime_mono_ns() / KTIME_NS_PER_MS;
}

struct timespec ktime_ts_of_ns(int64_t ns)
{
    struct timespec ts = { .tv_sec = (time_t)(ns / KTIME_NS_PER_SEC),
                           .tv_nsec = (long)(ns % KTIME_NS_PER_SEC) };

    return ts;
}

void ktime_deadline_after(struct timespec *ts, long ms, clockid_t clock)
{
    if (ms < 0)
        ms = 0;
    clock_gettime(clock, ts);
    ts->tv_sec += (time_t)(ms / 1000);
    ts->tv_nsec += (ms % 1000) * 1000000L;
    if (ts->tv_nsec >= KTIME_NS_PER_SEC) {
        ts->tv_sec++;
        ts->tv_nsec -= (long)KTIME_NS_PER_SEC;
    }
}

int ktime_before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

long ktime_elapsed_ms(const struct timespec *since)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long)(now.tv_sec - since->tv_sec) * 1000L + (now.tv_nsec - since->tv_nsec) / 1000000L;
}

void ktime_sleep_ns(int64_t ns)
{
    struct timespec ts;

    if (ns <= 0)
        return;
    ts = ktime_ts_of_ns(ns);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

int ktime_sleep_cancellable(long ms, long slice_ms, int (*cancelled)(void *arg), void *arg)
{
    int64_t until = ms < 0 ? INT64_MAX : ktime_mono_ns() + (int64_t)ms * KTIME_NS_PER_MS;
    int64_t left, slice = (int64_t)(slice_ms > 0 ? slice_ms : 1) * KTIME_NS_PER_MS;
    struct timespec ts;

    for (;;) {
        if (cancelled(arg))
            return -1;
        left = until - ktime_mono_ns();
        if (left <= 0)
            return 0;
        ts = ktime_ts_of_ns(left < slice ? left : slice);
        nanosleep(&ts, NULL);
    }
}
