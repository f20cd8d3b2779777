/*
 * cron - 5-field cron schedules as Kubernetes CronJobs read them (robfig/cron
 * v3's ParseStandard), evaluated in UTC: the next fire time after a time,
 * the latest one not after a time.
 *
 * Syntax: "minute hour day-of-month month day-of-week", fields separated by
 * blanks. Each field is a comma-separated list of: "*" or "?" (every value),
 * a value, a range "a-b", each optionally followed by "/step" ("a/step"
 * means "a-max/step"). Bounds: minute 0-59, hour 0-23, day of month 1-31,
 * month 1-12 or JAN-DEC, day of week 0-6 or SUN-SAT (0 = Sunday; 7 is
 * refused, as robfig refuses it); names in any case. The macros @yearly
 * (= @annually, "0 0 1 1 *"), @monthly, @weekly ("0 0 * * 0"), @daily
 * (= @midnight) and @hourly. Not accepted: @every (the schedule is a
 * calendar), TZ= or CRON_TZ= prefixes (every schedule is UTC), seconds.
 *
 * Day of month and day of week: when both are restricted (neither field
 * holds a "*" or "?" without a step above 1), a day matches if EITHER
 * matches ("0 0 13 * FRI" fires on every 13th and every Friday); otherwise
 * both must (so the unrestricted one lets every day through).
 *
 * A schedule that cannot fire (e.g. "0 0 30 2 *") parses; cron_next and
 * cron_prev then find nothing within CRON_SEARCH_YEARS and say so.
 *
 * Ownership: struct cron is a plain value (no pointers). Thread safety:
 * reentrant.
 */
#ifndef CONTROLLER_CRON_H
#define CONTROLLER_CRON_H

#include <stdint.h>

#include "common/kerr.h"

/* How far cron_next and cron_prev search, as robfig's Next (5 years). */
#define CRON_SEARCH_YEARS 5

/* The longest schedule text accepted. */
#define CRON_MAX_LEN 256

/* A parsed schedule: one bit per allowed value. */
struct cron {
    uint64_t minute; /* bits 0-59 */
    uint32_t hour;   /* bits 0-23 */
    uint32_t dom;    /* bits 1-31 */
    uint16_t month;  /* bits 1-12 */
    uint8_t dow;     /* bits 0-6 */
    int dom_star;    /* day of month unrestricted ("*" or "?" without a step above 1) */
    int dow_star;    /* day of week likewise */
};

/*
 * Parse expr (BORROWED, may be NULL) into *out. KERR_INVAL with a message
 * naming the field and what is wrong ("day of week: 7 is above the maximum
 * 6", "expected exactly 5 fields, found 6") otherwise; *out is then zeroed.
 */
enum kerr cron_parse(const char *expr, struct cron *out, struct kerr_info *err);

/*
 * The first fire time strictly after t (Unix seconds, UTC; a fire time is a
 * whole minute) into *out. KERR_NOTFOUND when none comes within
 * CRON_SEARCH_YEARS of t.
 */
enum kerr cron_next(const struct cron *c, int64_t t, int64_t *out);

/*
 * The latest fire time at or before t into *out. KERR_NOTFOUND when there is
 * none within CRON_SEARCH_YEARS before t.
 */
enum kerr cron_prev(const struct cron *c, int64_t t, int64_t *out);

#endif
