/* backoff - see backoff.h. */
#include "common/backoff.h"

void backoff_init(struct backoff *b, long initial_ms, long max_ms, long reset_ms, uint64_t seed)
{
    b->initial_ms = initial_ms;
    b->max_ms = max_ms;
    b->reset_ms = reset_ms;
    b->cur_ms = initial_ms;
    b->last_ms = 0;
    b->rng = seed | 1;
}

/* xorshift64*. */
uint64_t backoff_rand(struct backoff *b)
{
    b->rng ^= b->rng >> 12;
    b->rng ^= b->rng << 25;
    b->rng ^= b->rng >> 27;
    return b->rng * 2685821657736338717ull;
}

long backoff_next(struct backoff *b, long long now_ms)
{
    long d;

    if (!b->last_ms || now_ms - b->last_ms > b->reset_ms)
        b->cur_ms = b->initial_ms;
    b->last_ms = now_ms;
    d = b->cur_ms;
    b->cur_ms = d > b->max_ms / 2 ? b->max_ms : d * 2;
    return d + (long)(backoff_rand(b) % (uint64_t)(d > 0 ? d : 1));
}
