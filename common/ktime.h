/*
 * ktime - time for the whole project: metav1.Time and metav1.MicroTime
 * strings of the Kubernetes API (RFC 3339, UTC: formatting with second or
 * microsecond precision, parsing of any RFC 3339 time with an optional
 * fraction and a zone), and the monotonic clock: now in ns or ms, absolute
 * deadlines for pthread_cond_timedwait, elapsed time, and sleeps that a
 * cancel check can cut short.
 *
 * Thread safety: every function is reentrant (gmtime_r, timegm,
 * clock_gettime, nanosleep); the output buffers belong to the caller.
 */
#ifndef COMMON_KTIME_H
#define COMMON_KTIME_H

#include <stdint.h>
#include <time.h>

#include "common/kerr.h"

/* Lengths of metav1.Time ("2006-01-02T15:04:05Z") and MicroTime
 * ("2006-01-02T15:04:05.000000Z") strings, without the NUL. */
#define KTIME_LEN           20
#define KTIME_MICROTIME_LEN 27

#define KTIME_NS_PER_MS     1000000LL
#define KTIME_NS_PER_SEC    1000000000LL

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

/* ---- the monotonic clock ---- */

/* CLOCK_MONOTONIC now, in nanoseconds and in milliseconds. */
int64_t ktime_mono_ns(void);
int64_t ktime_mono_ms(void);

/* ns nanoseconds (>= 0) as a struct timespec, e.g. a monotonic instant for
 * pthread_cond_timedwait on a condition whose clock is CLOCK_MONOTONIC. */
struct timespec ktime_ts_of_ns(int64_t ns);

/*
 * *ts = the time of clock (CLOCK_MONOTONIC for conditions set up with
 * pthread_condattr_setclock, CLOCK_REALTIME for default ones) ms
 * milliseconds from now, for pthread_cond_timedwait. ms < 0 counts as 0.
 */
void ktime_deadline_after(struct timespec *ts, long ms, clockid_t clock);

/* 1 when a is earlier than b (same clock), else 0. */
int ktime_before(const struct timespec *a, const struct timespec *b);

/* Milliseconds from since (a CLOCK_MONOTONIC time) to now, rounded down. */
long ktime_elapsed_ms(const struct timespec *since);

/* Sleep ns nanoseconds, resuming after signals; ns <= 0 returns at once. */
void ktime_sleep_ns(int64_t ns);

/*
 * Sleep ms milliseconds (ms < 0: without end) in slices of at most slice_ms
 * (> 0), calling cancelled(arg) before each slice and once at the end:
 * 0 after the whole sleep, -1 as soon as cancelled returned non-zero.
 * A signal shortens the slice it lands in, not the sleep. arg is BORROWED.
 */
int ktime_sleep_cancellable(long ms, long slice_ms, int (*cancelled)(void *arg), void *arg);

#endif
