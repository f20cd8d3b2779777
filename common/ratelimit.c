#include "common/ratelimit.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/ktime.h"

#define NS_PER_S       KTIME_NS_PER_SEC
#define NS_PER_MS      KTIME_NS_PER_MS
#define SLEEP_SLICE_NS (50LL * NS_PER_MS)
#define EXPO_MIN_SLOTS 64u

struct rl_bucket {
    pthread_mutex_t mu;
    double rate;   /* tokens per second */
    double burst;  /* capacity */
    double tokens; /* may be negative (debt) after rl_reserve / rl_take */
    int64_t last;  /* clock time tokens was computed for */
    struct rl_clock clock;
};

struct expo_entry {
    char *key;
    int failures;
    struct expo_entry *next;
};

struct rl_expo {
    pthread_mutex_t mu;
    int64_t base_ns;
    int64_t max_ns;
    struct expo_entry **slots;
    size_t nslots; /* power of two */
    size_t len;
};

static int64_t real_now(void *arg)
{
    (void)arg;
    return ktime_mono_ns();
}

static void real_sleep(void *arg, int64_t ns)
{
    (void)arg;
    ktime_sleep_ns(ns);
}

const struct rl_clock rl_real_clock = { .now = real_now, .sleep = real_sleep, .arg = NULL };

enum kerr rl_bucket_new(double rate, int burst, const struct rl_clock *clock,
                        struct rl_bucket **out, struct kerr_info *err)
{
    struct rl_bucket *b;

    *out = NULL;
    if (!(rate > 0) || burst < 1)
        return kerr_set(err, KERR_INVAL, "ratelimit: rate must be > 0 and burst >= 1");
    b = calloc(1, sizeof(*b));
    if (!b)
        return kerr_set(err, KERR_NOMEM, "ratelimit: allocating a bucket");
    if (pthread_mutex_init(&b->mu, NULL) != 0) {
        free(b);
        return kerr_set(err, KERR_NOMEM, "ratelimit: mutex");
    }
    b->clock = clock && clock->now && clock->sleep ? *clock : rl_real_clock;
    b->rate = rate;
    b->burst = burst;
    b->tokens = burst;
    b->last = b->clock.now(b->clock.arg);
    *out = b;
    return KERR_OK;
}

void rl_bucket_free(struct rl_bucket *b)
{
    if (!b)
        return;
    pthread_mutex_destroy(&b->mu);
    free(b);
}

/* Refill for the time since the last call. Caller holds the lock. */
static void refill(struct rl_bucket *b, int64_t now)
{
    if (now > b->last) {
        b->tokens += (double)(now - b->last) * b->rate / (double)NS_PER_S;
        if (b->tokens > b->burst)
            b->tokens = b->burst;
        b->last = now;
    }
}

/* Take one token, possibly into debt; returns the wait in ns. Caller holds the lock. */
static int64_t take_locked(struct rl_bucket *b)
{
    refill(b, b->clock.now(b->clock.arg));
    b->tokens -= 1.0;
    if (b->tokens >= 0)
        return 0;
    return (int64_t)(-b->tokens / b->rate * (double)NS_PER_S + 0.5);
}

static void give_back(struct rl_bucket *b)
{
    pthread_mutex_lock(&b->mu);
    refill(b, b->clock.now(b->clock.arg));
    b->tokens += 1.0;
    if (b->tokens > b->burst)
        b->tokens = b->burst;
    pthread_mutex_unlock(&b->mu);
}

int rl_try(struct rl_bucket *b)
{
    int ok = 0;

    pthread_mutex_lock(&b->mu);
    refill(b, b->clock.now(b->clock.arg));
    if (b->tokens >= 1.0) {
        b->tokens -= 1.0;
        ok = 1;
    }
    pthread_mutex_unlock(&b->mu);
    return ok;
}

int64_t rl_reserve(struct rl_bucket *b)
{
    int64_t wait;

    pthread_mutex_lock(&b->mu);
    wait = take_locked(b);
    pthread_mutex_unlock(&b->mu);
    return wait;
}

enum kerr rl_take(struct rl_bucket *b, long timeout_ms, const atomic_int *cancel,
                  struct kerr_info *err)
{
    int64_t wait;
    int64_t until;
    int64_t now;

    pthread_mutex_lock(&b->mu);
    wait = take_locked(b);
    if (timeout_ms >= 0 && wait > (int64_t)timeout_ms * NS_PER_MS) {
        b->tokens += 1.0;
        pthread_mutex_unlock(&b->mu);
        return kerr_set(err, KERR_TIMEOUT, "ratelimit: next token in %lld ms, over %ld ms",
                        (long long)(wait / NS_PER_MS), timeout_ms);
    }
    pthread_mutex_unlock(&b->mu);
    until = b->clock.now(b->clock.arg) + wait;
    for (;;) {
        if (cancel && atomic_load(cancel)) {
            give_back(b);
            return kerr_set(err, KERR_CANCELLED, "ratelimit: wait cancelled");
        }
        now = b->clock.now(b->clock.arg);
        if (now >= until)
            return KERR_OK;
        b->clock.sleep(b->clock.arg, until - now < SLEEP_SLICE_NS ? until - now : SLEEP_SLICE_NS);
    }
}

double rl_tokens(struct rl_bucket *b)
{
    double t;

    pthread_mutex_lock(&b->mu);
    refill(b, b->clock.now(b->clock.arg));
    t = b->tokens;
    pthread_mutex_unlock(&b->mu);
    return t;
}

enum kerr rl_expo_new(int64_t base_ns, int64_t max_ns, struct rl_expo **out, struct kerr_info *err)
{
    struct rl_expo *e;

    *out = NULL;
    if (base_ns <= 0)
        base_ns = RL_EXPO_DEFAULT_BASE_NS;
    if (max_ns <= 0)
        max_ns = RL_EXPO_DEFAULT_MAX_NS;
    if (base_ns > max_ns)
        return kerr_set(err, KERR_INVAL, "ratelimit: base delay above the maximum");
    e = calloc(1, sizeof(*e));
    if (!e)
        return kerr_set(err, KERR_NOMEM, "ratelimit: allocating a limiter");
    e->slots = calloc(EXPO_MIN_SLOTS, sizeof(*e->slots));
    if (!e->slots || pthread_mutex_init(&e->mu, NULL) != 0) {
        free(e->slots);
        free(e);
        return kerr_set(err, KERR_NOMEM, "ratelimit: allocating a limiter");
    }
    e->nslots = EXPO_MIN_SLOTS;
    e->base_ns = base_ns;
    e->max_ns = max_ns;
    *out = e;
    return KERR_OK;
}

void rl_expo_free(struct rl_expo *e)
{
    struct expo_entry *p;
    struct expo_entry *next;
    size_t i;

    if (!e)
        return;
    for (i = 0; i < e->nslots; i++) {
        for (p = e->slots[i]; p; p = next) {
            next = p->next;
            free(p->key);
            free(p);
        }
    }
    free(e->slots);
    pthread_mutex_destroy(&e->mu);
    free(e);
}

/* FNV-1a. */
static size_t hash_key(const char *key)
{
    uint64_t h = 1469598103934665603ULL;

    for (; *key; key++) {
        h ^= (unsigned char)*key;
        h *= 1099511628211ULL;
    }
    return (size_t)h;
}

/* The link pointing at key's entry (at a NULL link when absent). Caller holds the lock. */
static struct expo_entry **find_link(struct rl_expo *e, const char *key)
{
    struct expo_entry **link = &e->slots[hash_key(key) & (e->nslots - 1)];

    while (*link && strcmp((*link)->key, key) != 0)
        link = &(*link)->next;
    return link;
}

/* Double the slot array when the table is full; failure only costs speed. */
static void maybe_grow(struct rl_expo *e)
{
    struct expo_entry **slots;
    struct expo_entry *p;
    struct expo_entry *next;
    size_t n = e->nslots * 2;
    size_t i;
    size_t h;

    if (e->len < e->nslots)
        return;
    slots = calloc(n, sizeof(*slots));
    if (!slots)
        return;
    for (i = 0; i < e->nslots; i++) {
        for (p = e->slots[i]; p; p = next) {
            next = p->next;
            h = hash_key(p->key) & (n - 1);
            p->next = slots[h];
            slots[h] = p;
        }
    }
    free(e->slots);
    e->slots = slots;
    e->nslots = n;
}

/* base * 2^exp capped at max, without overflow. */
static int64_t expo_delay(const struct rl_expo *e, int exp)
{
    int64_t d = e->base_ns;

    while (exp-- > 0) {
        if (d > e->max_ns / 2)
            return e->max_ns;
        d *= 2;
    }
    return d < e->max_ns ? d : e->max_ns;
}

int64_t rl_expo_when(struct rl_expo *e, const char *key)
{
    struct expo_entry **link;
    struct expo_entry *p;
    int64_t d;

    pthread_mutex_lock(&e->mu);
    link = find_link(e, key);
    if (!*link) {
        p = calloc(1, sizeof(*p));
        if (p)
            p->key = strdup(key);
        if (!p || !p->key) {
            free(p);
            pthread_mutex_unlock(&e->mu);
            return e->max_ns;
        }
        *link = p;
        e->len++;
    }
    p = *link;
    d = expo_delay(e, p->failures);
    if (p->failures < 1000000)
        p->failures++;
    maybe_grow(e);
    pthread_mutex_unlock(&e->mu);
    return d;
}

void rl_expo_forget(struct rl_expo *e, const char *key)
{
    struct expo_entry **link;
    struct expo_entry *p;

    pthread_mutex_lock(&e->mu);
    link = find_link(e, key);
    p = *link;
    if (p) {
        *link = p->next;
        e->len--;
        free(p->key);
        free(p);
    }
    pthread_mutex_unlock(&e->mu);
}

int rl_expo_retries(struct rl_expo *e, const char *key)
{
    struct expo_entry **link;
    int n;

    pthread_mutex_lock(&e->mu);
    link = find_link(e, key);
    n = *link ? (*link)->failures : 0;
    pthread_mutex_unlock(&e->mu);
    return n;
}

size_t rl_expo_len(struct rl_expo *e)
{
    size_t n;

    pthread_mutex_lock(&e->mu);
    n = e->len;
    pthread_mutex_unlock(&e->mu);
    return n;
}
