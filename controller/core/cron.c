/* cron - 5-field cron schedules in UTC (robfig/cron's standard parser); see cron.h. */
#include "controller/core/cron.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* One field's bounds, names and position. */
struct field {
    const char *what;
    unsigned lo, hi;
    const char *const *names; /* names[i] is the value lo + i, or NULL */
};

static const char *const MONTHS[] = { "jan", "feb", "mar", "apr", "may", "jun", "jul",
                                      "aug", "sep", "oct", "nov", "dec", NULL };
static const char *const DAYS[] = { "sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL };

static const struct field FIELDS[5] = {
    { "minute", 0, 59, NULL },  { "hour", 0, 23, NULL },       { "day of month", 1, 31, NULL },
    { "month", 1, 12, MONTHS }, { "day of week", 0, 6, DAYS },
};

/* The macros, as robfig expands them. */
static const struct {
    const char *name, *expr;
} MACROS[] = {
    { "@yearly", "0 0 1 1 *" }, { "@annually", "0 0 1 1 *" }, { "@monthly", "0 0 1 * *" },
    { "@weekly", "0 0 * * 0" }, { "@daily", "0 0 * * *" },    { "@midnight", "0 0 * * *" },
    { "@hourly", "0 * * * *" },
};

#define MAX_TOKEN 64

/* A number or (case-insensitive) name of f in s[0..n); KERR_INVAL with a message otherwise. */
static enum kerr value_of(const struct field *f, const char *s, size_t n, unsigned *out,
                          struct kerr_info *err)
{
    unsigned long v = 0;
    size_t i;

    if (n > 0 && isdigit((unsigned char)s[0])) {
        for (i = 0; i < n; i++) {
            if (!isdigit((unsigned char)s[i]) || v > 1000000)
                return kerr_set(err, KERR_INVAL, "%s: \"%.*s\" is not a number", f->what, (int)n,
                                s);
            v = v * 10 + (unsigned long)(s[i] - '0');
        }
        if (v < f->lo || v > f->hi)
            return kerr_set(err, KERR_INVAL, "%s: %lu is outside %u-%u", f->what, v, f->lo, f->hi);
        *out = (unsigned)v;
        return KERR_OK;
    }
    for (i = 0; f->names && f->names[i]; i++) {
        if (n == strlen(f->names[i]) && strncasecmp(s, f->names[i], n) == 0) {
            *out = f->lo + (unsigned)i;
            return KERR_OK;
        }
    }
    return kerr_set(err, KERR_INVAL, "%s: \"%.*s\" is not a number%s", f->what, (int)n, s,
                    f->names ? " or a name" : "");
}

/* The step after '/' in s (a positive number). */
static enum kerr step_of(const struct field *f, const char *s, unsigned *out, struct kerr_info *err)
{
    unsigned long v = 0;
    const char *p;

    for (p = s; *p; p++) {
        if (!isdigit((unsigned char)*p) || v > 1000000)
            return kerr_set(err, KERR_INVAL, "%s: step \"%s\" is not a number", f->what, s);
        v = v * 10 + (unsigned long)(*p - '0');
    }
    if (p == s || v == 0)
        return kerr_set(err, KERR_INVAL, "%s: step \"%s\" must be a positive number", f->what, s);
    *out = (unsigned)v;
    return KERR_OK;
}

/* One element of a list ("*", "a", "a-b", each with an optional "/step") into *bits. */
static enum kerr range_of(const struct field *f, const char *s, uint64_t *bits, int *star,
                          struct kerr_info *err)
{
    const char *slash = strchr(s, '/'), *dash;
    size_t len = slash ? (size_t)(slash - s) : strlen(s);
    unsigned lo, hi, step = 1, v;
    enum kerr rc;

    if (slash && strchr(slash + 1, '/'))
        return kerr_set(err, KERR_INVAL, "%s: \"%s\" has more than one '/'", f->what, s);
    if (slash && (rc = step_of(f, slash + 1, &step, err)) != KERR_OK)
        return rc;
    dash = memchr(s, '-', len);
    if (len == 1 && (s[0] == '*' || s[0] == '?')) {
        lo = f->lo;
        hi = f->hi;
        *star |= step == 1;
    } else if (dash) {
        if (memchr(dash + 1, '-', len - (size_t)(dash + 1 - s)))
            return kerr_set(err, KERR_INVAL, "%s: \"%s\" has more than one '-'", f->what, s);
        if ((rc = value_of(f, s, (size_t)(dash - s), &lo, err)) != KERR_OK ||
            (rc = value_of(f, dash + 1, len - (size_t)(dash + 1 - s), &hi, err)) != KERR_OK)
            return rc;
        if (lo > hi)
            return kerr_set(err, KERR_INVAL, "%s: range \"%.*s\" begins after it ends", f->what,
                            (int)len, s);
    } else {
        if ((rc = value_of(f, s, len, &lo, err)) != KERR_OK)
            return rc;
        hi = slash ? f->hi : lo; /* "a/step" is "a-max/step" */
    }
    for (v = lo; v <= hi; v += step)
        *bits |= (uint64_t)1 << v;
    return KERR_OK;
}

/* A field's comma-separated list s[0..n) into *bits and *star. */
static enum kerr field_of(const struct field *f, const char *s, size_t n, uint64_t *bits, int *star,
                          struct kerr_info *err)
{
    char tok[MAX_TOKEN];
    size_t i = 0, j;
    enum kerr rc;

    *bits = 0;
    *star = 0;
    for (;;) {
        for (j = i; j < n && s[j] != ','; j++)
            ;
        if (j == i)
            return kerr_set(err, KERR_INVAL, "%s: empty element in \"%.*s\"", f->what, (int)n, s);
        if (j - i >= sizeof(tok))
            return kerr_set(err, KERR_INVAL, "%s: element too long", f->what);
        memcpy(tok, s + i, j - i);
        tok[j - i] = '\0';
        if ((rc = range_of(f, tok, bits, star, err)) != KERR_OK)
            return rc;
        if (j == n)
            return KERR_OK;
        i = j + 1;
    }
}

/* The five fields of expr (no macro). */
static enum kerr fields_of(const char *expr, struct cron *c, struct kerr_info *err)
{
    const char *start[6], *p = expr;
    size_t len[6], n = 0;
    uint64_t bits[5];
    int star[5], i;
    enum kerr rc;

    while (*p) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        if (n == 6)
            break;
        start[n] = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        len[n] = (size_t)(p - start[n]);
        n++;
    }
    if (n != 5)
        return kerr_set(err, KERR_INVAL,
                        "expected exactly 5 fields (minute hour day-of-month month "
                        "day-of-week), found %s%zu",
                        n == 6 ? "at least " : "", n);
    for (i = 0; i < 5; i++) {
        if ((rc = field_of(&FIELDS[i], start[i], len[i], &bits[i], &star[i], err)) != KERR_OK)
            return rc;
    }
    c->minute = bits[0];
    c->hour = (uint32_t)bits[1];
    c->dom = (uint32_t)bits[2];
    c->month = (uint16_t)bits[3];
    c->dow = (uint8_t)bits[4];
    c->dom_star = star[2];
    c->dow_star = star[4];
    return KERR_OK;
}

enum kerr cron_parse(const char *expr, struct cron *out, struct kerr_info *err)
{
    const char *p = expr;
    size_t i;
    enum kerr rc;

    memset(out, 0, sizeof(*out));
    if (!expr)
        return kerr_set(err, KERR_INVAL, "the schedule is missing");
    if (strlen(expr) > CRON_MAX_LEN)
        return kerr_set(err, KERR_INVAL, "the schedule is longer than %d characters", CRON_MAX_LEN);
    while (isspace((unsigned char)*p))
        p++;
    if (strncmp(p, "TZ=", 3) == 0 || strncmp(p, "CRON_TZ=", 8) == 0)
        return kerr_set(err, KERR_INVAL, "time zones are not supported: the schedule is in UTC");
    if (*p == '@') {
        size_t n = strcspn(p, " \t\r\n\v\f");

        for (i = 0; i < sizeof(MACROS) / sizeof(MACROS[0]); i++) {
            if (n == strlen(MACROS[i].name) && strncmp(p, MACROS[i].name, n) == 0 &&
                !p[n + strspn(p + n, " \t\r\n\v\f")])
                return fields_of(MACROS[i].expr, out, err);
        }
        return kerr_set(err, KERR_INVAL,
                        "unknown macro \"%.*s\" (@yearly, @annually, @monthly, @weekly, @daily, "
                        "@midnight or @hourly)",
                        (int)(n > 32 ? 32 : n), p);
    }
    rc = fields_of(p, out, err);
    if (rc != KERR_OK)
        memset(out, 0, sizeof(*out));
    return rc;
}

/* ---- evaluation ---- */

static int day_matches(const struct cron *c, const struct tm *tm)
{
    int dom = (c->dom >> tm->tm_mday) & 1u, dow = (c->dow >> tm->tm_wday) & 1u;

    if (c->dom_star || c->dow_star)
        return dom && dow;
    return dom || dow;
}

/* The broken-down UTC time of t; 0 when t is not representable. */
static int utc(int64_t t, struct tm *tm)
{
    time_t tt = (time_t)t;

    return gmtime_r(&tt, tm) != NULL;
}

/* t rounded down to a whole minute (also below zero). */
static int64_t floor_minute(int64_t t)
{
    return t - ((t % 60) + 60) % 60;
}

enum kerr cron_next(const struct cron *c, int64_t t, int64_t *out)
{
    struct tm tm;
    int limit;

    *out = 0;
    t = floor_minute(t) + 60;
    if (!utc(t, &tm))
        return KERR_NOTFOUND;
    limit = tm.tm_year + CRON_SEARCH_YEARS;
    while (utc(t, &tm) && tm.tm_year <= limit) {
        if (!((c->month >> (tm.tm_mon + 1)) & 1u)) {
            tm.tm_mon++;
            tm.tm_mday = 1;
            tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
            t = (int64_t)timegm(&tm);
        } else if (!day_matches(c, &tm)) {
            tm.tm_mday++;
            tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
            t = (int64_t)timegm(&tm);
        } else if (!((c->hour >> tm.tm_hour) & 1u)) {
            tm.tm_hour++;
            tm.tm_min = tm.tm_sec = 0;
            t = (int64_t)timegm(&tm);
        } else if (!((c->minute >> tm.tm_min) & 1u)) {
            t += 60;
        } else {
            *out = t;
            return KERR_OK;
        }
    }
    return KERR_NOTFOUND;
}

enum kerr cron_prev(const struct cron *c, int64_t t, int64_t *out)
{
    struct tm tm;
    int limit;

    *out = 0;
    t = floor_minute(t);
    if (!utc(t, &tm))
        return KERR_NOTFOUND;
    limit = tm.tm_year - CRON_SEARCH_YEARS;
    while (utc(t, &tm) && tm.tm_year >= limit) {
        if (!((c->month >> (tm.tm_mon + 1)) & 1u)) {
            tm.tm_mday = 1; /* the last minute of the month before */
            tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
            t = (int64_t)timegm(&tm) - 60;
        } else if (!day_matches(c, &tm)) {
            tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
            t = (int64_t)timegm(&tm) - 60;
        } else if (!((c->hour >> tm.tm_hour) & 1u)) {
            tm.tm_min = tm.tm_sec = 0;
            t = (int64_t)timegm(&tm) - 60;
        } else if (!((c->minute >> tm.tm_min) & 1u)) {
            t -= 60;
        } else {
            *out = t;
            return KERR_OK;
        }
    }
    return KERR_NOTFOUND;
}
