/*
 * ratelimit - rate limiters: a token bucket (rate per second, burst), as
 * golang.org/x/time/rate and client-go's flowcontrol, and a per-key
 * exponential failure limiter, as client-go's ItemExponentialFailureRateLimiter
 * (5 ms doubling to 1000 s by default). The work queue combines both (the
 * larger delay wins); the API client uses the bucket for its optional QPS.
 *
 * Time comes from a struct rl_clock: NULL means CLOCK_MONOTONIC and
 * nanosleep; tests inject a fake clock whose sleep advances the fake time.
 *
 * Thread safety: every function on a struct rl_bucket or struct rl_expo may
 * be called from any thread at once (each object has its own mutex), except
 * *_new and *_free. A struct rl_clock must stay valid and thread-safe for the
 * life of the objects that use it.
 */
#ifndef COMMON_RATELIMIT_H
#define COMMON_RATELIMIT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/kerr.h"

#define RL_EXPO_DEFAULT_BASE_NS (5LL * 1000 * 1000)           /* 5 ms */
#define RL_EXPO_DEFAULT_MAX_NS  (1000LL * 1000 * 1000 * 1000) /* 1000 s */

/*
 * A clock: now() returns monotonic nanoseconds; sleep() waits ns nanoseconds
 * (a fake clock advances its time instead). arg is BORROWED.
 */
struct rl_clock {
    int64_t (*now)(void *arg);
    void (*sleep)(void *arg, int64_t ns);
    void *arg;
};

/* The real clock: CLOCK_MONOTONIC and nanosleep (common/ktime). Read-only. */
extern const struct rl_clock rl_real_clock;

struct rl_bucket;

/*
 * Token bucket that refills rate tokens per second up to burst tokens, and
 * starts full. clock BORROWED (NULL: real clock). On KERR_OK *out OWNS the
 * bucket (rl_bucket_free). KERR_INVAL unless rate > 0 and burst >= 1.
 */
enum kerr rl_bucket_new(double rate, int burst, const struct rl_clock *clock,
                        struct rl_bucket **out, struct kerr_info *err);

/* NULL is a no-op. No thread may be waiting in rl_take. */
void rl_bucket_free(struct rl_bucket *b);

/* Take a token if one is available now: 1 taken, 0 not (nothing changes). */
int rl_try(struct rl_bucket *b);

/*
 * Take a token unconditionally (the bucket may go into debt) and return how
 * many nanoseconds the caller must wait before acting on it (0: now).
 */
int64_t rl_reserve(struct rl_bucket *b);

/*
 * Take a token, waiting for it. timeout_ms < 0 waits as long as needed; else
 * KERR_TIMEOUT at once (taking nothing) when the token would come later than
 * timeout_ms from now. cancel (BORROWED, optional) is checked at least every
 * 50 ms while waiting: non-zero gives KERR_CANCELLED and returns the token.
 */
enum kerr rl_take(struct rl_bucket *b, long timeout_ms, const atomic_int *cancel,
                  struct kerr_info *err);

/* Tokens available now (may be negative while in debt); for tests and metrics. */
double rl_tokens(struct rl_bucket *b);

struct rl_expo;

/*
 * Per-key exponential failure limiter: the n-th rl_expo_when(key) since the
 * last rl_expo_forget(key) returns base_ns * 2^(n-1), capped at max_ns.
 * base_ns <= 0 and max_ns <= 0 take the defaults (5 ms, 1000 s). On KERR_OK
 * *out OWNS the limiter (rl_expo_free). KERR_INVAL when base > max.
 */
enum kerr rl_expo_new(int64_t base_ns, int64_t max_ns, struct rl_expo **out, struct kerr_info *err);

/* NULL is a no-op. */
void rl_expo_free(struct rl_expo *e);

/*
 * Count a failure of key (BORROWED, copied) and return the delay before its
 * next try, in nanoseconds. On allocation failure returns max_ns (the safe
 * answer) without counting.
 */
int64_t rl_expo_when(struct rl_expo *e, const char *key);

/* Reset key's failure count (it is no longer tracked). Unknown keys: no-op. */
void rl_expo_forget(struct rl_expo *e, const char *key);

/* Failures counted for key since its last forget (0 when unknown). */
int rl_expo_retries(struct rl_expo *e, const char *key);

/* Number of keys tracked (keys with at least one failure). */
size_t rl_expo_len(struct rl_expo *e);

#endif
