/*
 * fakeclock - a fake time source for the rate limiter's struct rl_clock
 * (common/ratelimit) and everything that takes one (the work queue, leader
 * election): now() reads the fake time, sleep() advances it at once and
 * counts what was slept, so a test of timing runs without waiting.
 *
 * Thread safety: the fields are atomic; any thread may read or advance the
 * clock. The struct fakeclock must outlive every rl_clock made from it.
 */
#ifndef TESTS_SUPPORT_FAKECLOCK_H
#define TESTS_SUPPORT_FAKECLOCK_H

#include <stdatomic.h>
#include <stdint.h>

#include "common/ratelimit.h"

struct fakeclock {
    atomic_llong now;   /* nanoseconds */
    atomic_llong slept; /* nanoseconds slept through sleep() */
};

/* Set f to start_ns with nothing slept; returns the rl_clock on f (f BORROWED). */
struct rl_clock fakeclock_init(struct fakeclock *f, int64_t start_ns);

/* Advance f by ns nanoseconds (time passing outside any sleep). */
void fakeclock_advance(struct fakeclock *f, int64_t ns);

#endif
