/*
 * backoff - client-go's exponential backoff manager, as its reflectors use
 * it: every delay doubles the previous one up to a cap, then gets jitter of
 * factor 1.0 (a delay d becomes a random value in [d, 2d)), and the
 * sequence starts over at the initial delay once the previous delay was
 * handed out more than reset_ms ago (that long without trouble).
 *
 * The random numbers come from an xorshift64* generator seeded by the
 * caller: good enough for jitter, never for secrets. backoff_rand hands out
 * the same stream for other jitter (the informer's watch timeouts).
 *
 * A struct backoff holds no resources: backoff_init, nothing to release.
 * Thread safety: none; a backoff belongs to one thread.
 */
#ifndef COMMON_BACKOFF_H
#define COMMON_BACKOFF_H

#include <stdint.h>

struct backoff {
    long initial_ms;
    long max_ms;       /* cap before jitter */
    long reset_ms;     /* quiet time that resets the sequence */
    long cur_ms;       /* the next delay before jitter */
    long long last_ms; /* when the last delay was handed out; 0 = never */
    uint64_t rng;      /* generator state, never 0 */
};

/* Set up b with the three durations (positive) and a seed (any value). */
void backoff_init(struct backoff *b, long initial_ms, long max_ms, long reset_ms, uint64_t seed);

/* The next delay in ms, jittered, for a failure at now_ms (monotonic milliseconds). */
long backoff_next(struct backoff *b, long long now_ms);

/* The next value of the generator. */
uint64_t backoff_rand(struct backoff *b);

#endif
