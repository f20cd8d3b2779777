/*
 * ktime - metav1.Time and metav1.MicroTime strings of the Kubernetes API
 * (RFC 3339, UTC): formatting with second or microsecond precision, and
 * parsing of any RFC 3339 time with an optional fraction and a zone.
 *
 * Thread safety: every function is reentrant (gmtime_r, timegm); the
 * output buffers belong to the caller.
 */
#ifndef COMMON_KTIME_H
#define COMMON_KTIME_H

#include <time.h>

#include "common/kerr.h"

/* Lengths of metav1.Time ("2006-01-02T15:04:05Z") and MicroTime
 * ("2006-01-02T15:04:05.000000Z") strings, without the NUL. */
#define KTIME_LEN           20
#define KTIME_MICROTIME_LEN 27

/* "2006-01-02T15:04:05Z" into out. KERR_INVAL when t is not representable. */
enum kerr ktime_format(time_t t, char out[KTIME_LEN + 1]);

/* "2006-01-02T15:04:05.000000Z" (microseconds) into out. KERR_INVAL for a
 * tv_nsec outside 0..999999999. */
enum kerr ktime_microtime_format(const struct timespec *ts, char out[KTIME_MICROTIME_LEN + 1]);

/* The current time (CLOCK_REALTIME) as MicroTime. */
enum kerr ktime_microtime_now(char out[KTIME_MICROTIME_LEN + 1]);

/*
 * Parse RFC 3339 "YYYY-MM-DDTHH:MM:SS[.frac](Z|+hh:mm|-hh:mm)" (1 to 9
 * fraction digits) into *out (UTC). s is BORROWED and may be NULL.
 * KERR_PARSE otherwise, and *out is zero.
 */
enum kerr ktime_parse(const char *s, struct timespec *out, struct kerr_info *err);

#endif
