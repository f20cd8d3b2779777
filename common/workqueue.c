/*
 * workqueue - see workqueue.h.
 *
 * Every key known to the queue has one struct wq_item in a chained hash
 * table. Its flags say where it is: dirty (queued, or re-added while
 * processing), processing (handed out) and its delay-heap node (waiting in
 * the dheap.h heap). An item that is none of these is freed. The ready FIFO
 * is a singly linked list through the items that are dirty and not
 * processing. The per-key backoff and the token bucket are the rl_ limiters
 * of ratelimit.h.
 */
#include "common/workqueue.h"

#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/dheap.h"
#include "common/ktime.h"
#include "common/log.h"
#include "common/ratelimit.h"

#define NS_PER_MS   KTIME_NS_PER_MS
#define NS_PER_SEC  KTIME_NS_PER_SEC
#define MIN_BUCKETS 64

struct wq_item {
    struct wq_item *hnext; /* hash chain */
    struct wq_item *qnext; /* ready FIFO link */
    uint64_t hash;
    struct dheap_node hn; /* delay heap: hn.at is when due (monotonic ns) */
    int64_t queued_at;    /* when it became dirty */
    int64_t started_at;   /* when handed out */
    bool dirty;
    bool processing;
    char key[];
};

struct wq {
    pthread_mutex_t mu;
    pthread_cond_t ready; /* getters wait here */
    pthread_cond_t idle;  /* drain waits here for nprocessing == 0 */
    char *name;
    struct wq_item **buckets;
    size_t nbuckets, nitems;
    struct wq_item *head, *tail; /* ready FIFO */
    size_t depth;
    struct dheap delayed;
    size_t nprocessing;
    bool closed;
    struct rl_expo *expo;     /* per-key backoff */
    struct rl_bucket *bucket; /* overall limit; NULL when disabled */
    wq_observe_fn observe;
    void *observe_arg;
    struct wq_stats st;
};

static uint64_t hash_key(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */

    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

static bool key_valid(const char *key)
{
    return key && key[0] && strnlen(key, WQ_KEY_MAX + 1) <= WQ_KEY_MAX;
}

/* The item whose delay-heap node is n. */
static struct wq_item *item_of(struct dheap_node *n)
{
    void *p = (char *)n - offsetof(struct wq_item, hn);

    return p;
}

/* ---- hash table ---- */

static struct wq_item *lookup(struct wq *q, const char *key, uint64_t h)
{
    struct wq_item *it;

    for (it = q->buckets[h % q->nbuckets]; it; it = it->hnext)
        if (it->hash == h && strcmp(it->key, key) == 0)
            return it;
    return NULL;
}

static void grow_table(struct wq *q)
{
    size_t n = q->nbuckets * 2, i;
    struct wq_item **b = calloc(n, sizeof(*b));
    struct wq_item *it, *next;

    if (!b)
        return; /* keep the longer chains; still correct */
    for (i = 0; i < q->nbuckets; i++) {
        for (it = q->buckets[i]; it; it = next) {
            next = it->hnext;
            it->hnext = b[it->hash % n];
            b[it->hash % n] = it;
        }
    }
    free(q->buckets);
    q->buckets = b;
    q->nbuckets = n;
}

/* Find key or create an idle item for it; NULL on allocation failure. */
static struct wq_item *lookup_or_create(struct wq *q, const char *key)
{
    uint64_t h = hash_key(key);
    struct wq_item *it = lookup(q, key, h);
    size_t len;

    if (it)
        return it;
    len = strlen(key);
    it = calloc(1, sizeof(*it) + len + 1);
    if (!it)
        return NULL;
    memcpy(it->key, key, len + 1);
    it->hash = h;
    dheap_node_init(&it->hn);
    if (q->nitems >= q->nbuckets * 2)
        grow_table(q);
    it->hnext = q->buckets[h % q->nbuckets];
    q->buckets[h % q->nbuckets] = it;
    q->nitems++;
    return it;
}

/* Free it when nothing refers to it any more. */
static void maybe_free(struct wq *q, struct wq_item *it)
{
    struct wq_item **pp;

    if (it->dirty || it->processing || dheap_contains(&it->hn))
        return;
    for (pp = &q->buckets[it->hash % q->nbuckets]; *pp != it; pp = &(*pp)->hnext)
        ;
    *pp = it->hnext;
    q->nitems--;
    free(it);
}

/* ---- ready FIFO ---- */

static void fifo_push(struct wq *q, struct wq_item *it)
{
    it->qnext = NULL;
    if (q->tail)
        q->tail->qnext = it;
    else
        q->head = it;
    q->tail = it;
    q->depth++;
    pthread_cond_signal(&q->ready);
}

static struct wq_item *fifo_pop(struct wq *q)
{
    struct wq_item *it = q->head;

    q->head = it->qnext;
    if (!q->head)
        q->tail = NULL;
    it->qnext = NULL;
    q->depth--;
    return it;
}

/* The client-go Add: mark dirty, and queue unless it is being processed. */
static void add_locked(struct wq *q, struct wq_item *it, int64_t now)
{
    if (it->dirty)
        return;
    it->dirty = true;
    it->queued_at = now;
    q->st.adds++;
    if (!it->processing)
        fifo_push(q, it);
}

/* Move every delayed item that is due to the ready FIFO. */
static void promote(struct wq *q, int64_t now)
{
    struct dheap_node *n;

    while ((n = dheap_peek(&q->delayed)) && n->at <= now)
        add_locked(q, item_of(dheap_pop(&q->delayed)), now);
}

static enum kerr add_after_locked(struct wq *q, struct wq_item *it, int64_t delay, int64_t now)
{
    int64_t at = now + delay;
    enum kerr rc;

    q->st.retries++;
    if (delay <= 0) {
        add_locked(q, it, now);
        return KERR_OK;
    }
    if (dheap_contains(&it->hn)) {
        dheap_advance(&q->delayed, &it->hn, at); /* keeps the earlier time */
    } else {
        rc = dheap_push(&q->delayed, &it->hn, at);
        if (rc != KERR_OK)
            return rc;
    }
    if (dheap_peek(&q->delayed) == &it->hn)
        pthread_cond_broadcast(&q->ready); /* getters must shorten their timed wait */
    return KERR_OK;
}

/* ---- public API ---- */

static enum kerr apply_opts(struct wq *q, const struct wq_opts *o, struct kerr_info *err)
{
    enum kerr rc;

    if (o->base_delay_ms < 0 || o->max_delay_ms < 0 || o->burst < 0)
        return kerr_set(err, KERR_INVAL, "workqueue: negative delay or burst");
    rc = rl_expo_new((int64_t)o->base_delay_ms * NS_PER_MS, (int64_t)o->max_delay_ms * NS_PER_MS,
                     &q->expo, err);
    if (rc == KERR_OK && o->qps >= 0)
        rc = rl_bucket_new(o->qps > 0 ? o->qps : 10.0, o->burst ? o->burst : 100, NULL, &q->bucket,
                           err);
    if (rc != KERR_OK)
        return kerr_wrap(err, "workqueue");
    q->observe = o->observe;
    q->observe_arg = o->observe_arg;
    q->name = strdup(o->name ? o->name : "workqueue");
    if (!q->name)
        return kerr_set(err, KERR_NOMEM, "workqueue: out of memory");
    return KERR_OK;
}

enum kerr wq_new(const struct wq_opts *opts, struct wq **out, struct kerr_info *err)
{
    static const struct wq_opts defaults = { 0 };
    struct wq *q = NULL;
    pthread_condattr_t ca;
    enum kerr rc;

    *out = NULL;
    q = calloc(1, sizeof(*q));
    if (!q)
        return kerr_set(err, KERR_NOMEM, "workqueue: out of memory");
    dheap_init(&q->delayed);
    q->nbuckets = MIN_BUCKETS;
    q->buckets = calloc(q->nbuckets, sizeof(*q->buckets));
    if (!q->buckets) {
        free(q);
        return kerr_set(err, KERR_NOMEM, "workqueue: out of memory");
    }
    pthread_mutex_init(&q->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&q->ready, &ca);
    pthread_cond_init(&q->idle, &ca);
    pthread_condattr_destroy(&ca);
    rc = apply_opts(q, opts ? opts : &defaults, err);
    if (rc != KERR_OK) {
        wq_free(q);
        return rc;
    }
    *out = q;
    return KERR_OK;
}

void wq_free(struct wq *q)
{
    struct wq_item *it, *next;
    size_t i;

    if (!q)
        return;
    for (i = 0; i < q->nbuckets; i++) {
        for (it = q->buckets[i]; it; it = next) {
            next = it->hnext;
            free(it);
        }
    }
    free(q->buckets);
    dheap_release(&q->delayed);
    free(q->name);
    rl_expo_free(q->expo);
    rl_bucket_free(q->bucket);
    pthread_cond_destroy(&q->ready);
    pthread_cond_destroy(&q->idle);
    pthread_mutex_destroy(&q->mu);
    free(q);
}

/* Shared front half of the adds: validate, lock, refuse when closed, find the item. */
static enum kerr lock_item(struct wq *q, const char *key, struct wq_item **it, int64_t *now)
{
    if (!key_valid(key))
        return KERR_INVAL;
    pthread_mutex_lock(&q->mu);
    if (q->closed) {
        pthread_mutex_unlock(&q->mu);
        return KERR_CLOSED;
    }
    *now = ktime_mono_ns();
    promote(q, *now);
    *it = lookup_or_create(q, key);
    if (!*it) {
        pthread_mutex_unlock(&q->mu);
        return KERR_NOMEM;
    }
    return KERR_OK;
}

enum kerr wq_add(struct wq *q, const char *key)
{
    struct wq_item *it;
    int64_t now;
    enum kerr rc = lock_item(q, key, &it, &now);

    if (rc != KERR_OK)
        return rc;
    add_locked(q, it, now);
    pthread_mutex_unlock(&q->mu);
    return KERR_OK;
}

enum kerr wq_add_after(struct wq *q, const char *key, long delay_ms)
{
    struct wq_item *it;
    int64_t now;
    enum kerr rc = lock_item(q, key, &it, &now);

    if (rc != KERR_OK)
        return rc;
    rc = add_after_locked(q, it, delay_ms > 0 ? (int64_t)delay_ms * NS_PER_MS : 0, now);
    maybe_free(q, it);
    pthread_mutex_unlock(&q->mu);
    return rc;
}

enum kerr wq_add_rate_limited(struct wq *q, const char *key)
{
    struct wq_item *it;
    int64_t now, d1, d2 = 0;
    enum kerr rc = lock_item(q, key, &it, &now);

    if (rc != KERR_OK)
        return rc;
    d1 = rl_expo_when(q->expo, key);
    if (q->bucket)
        d2 = rl_reserve(q->bucket);
    rc = add_after_locked(q, it, d1 > d2 ? d1 : d2, now);
    maybe_free(q, it);
    pthread_mutex_unlock(&q->mu);
    return rc;
}

void wq_forget(struct wq *q, const char *key)
{
    if (key_valid(key))
        rl_expo_forget(q->expo, key);
}

unsigned wq_num_requeues(struct wq *q, const char *key)
{
    int n = key_valid(key) ? rl_expo_retries(q->expo, key) : 0;

    return n > 0 ? (unsigned)n : 0;
}

/* Wait for a ready item: until the first delayed one is due, or a signal. */
static void wait_ready(struct wq *q)
{
    struct dheap_node *first = dheap_peek(&q->delayed);
    struct timespec ts;

    if (!first) {
        pthread_cond_wait(&q->ready, &q->mu);
        return;
    }
    ts = ktime_ts_of_ns(first->at);
    pthread_cond_timedwait(&q->ready, &q->mu, &ts);
}

enum kerr wq_get(struct wq *q, char **key)
{
    struct wq_item *it;
    int64_t now;
    double waited;

    *key = NULL;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        if (q->closed) {
            pthread_mutex_unlock(&q->mu);
            return KERR_CLOSED;
        }
        now = ktime_mono_ns();
        promote(q, now);
        if (q->head)
            break;
        wait_ready(q);
    }
    *key = strdup(q->head->key);
    if (!*key) {
        pthread_mutex_unlock(&q->mu);
        return KERR_NOMEM;
    }
    it = fifo_pop(q);
    it->dirty = false;
    it->processing = true;
    it->started_at = now;
    q->nprocessing++;
    waited = (double)(now - it->queued_at) / NS_PER_SEC;
    q->st.queue_seconds += waited;
    if (q->head)
        pthread_cond_signal(&q->ready); /* more work: wake another getter */
    pthread_mutex_unlock(&q->mu);
    if (q->observe)
        q->observe(q->observe_arg, WQ_OBS_QUEUE_WAIT, waited);
    return KERR_OK;
}

void wq_done(struct wq *q, const char *key)
{
    struct wq_item *it;
    double took;

    if (!key_valid(key))
        return;
    pthread_mutex_lock(&q->mu);
    it = lookup(q, key, hash_key(key));
    if (!it || !it->processing) {
        pthread_mutex_unlock(&q->mu);
        return;
    }
    it->processing = false;
    q->nprocessing--;
    took = (double)(ktime_mono_ns() - it->started_at) / NS_PER_SEC;
    q->st.work_count++;
    q->st.work_seconds += took;
    if (it->dirty && !q->closed)
        fifo_push(q, it);
    else
        it->dirty = false;
    maybe_free(q, it);
    if (q->nprocessing == 0)
        pthread_cond_broadcast(&q->idle);
    pthread_mutex_unlock(&q->mu);
    if (q->observe)
        q->observe(q->observe_arg, WQ_OBS_WORK, took);
}

size_t wq_len(struct wq *q)
{
    size_t n;

    pthread_mutex_lock(&q->mu);
    if (!q->closed)
        promote(q, ktime_mono_ns());
    n = q->depth;
    pthread_mutex_unlock(&q->mu);
    return n;
}

void wq_shutdown(struct wq *q)
{
    struct dheap_node *n;
    struct wq_item *it;

    pthread_mutex_lock(&q->mu);
    if (!q->closed) {
        q->closed = true;
        while ((n = dheap_pop(&q->delayed)))
            maybe_free(q, item_of(n));
        while (q->head) {
            it = fifo_pop(q);
            it->dirty = false;
            maybe_free(q, it);
        }
        log_debug("workqueue shut down", "queue", q->name);
    }
    pthread_cond_broadcast(&q->ready);
    pthread_cond_broadcast(&q->idle);
    pthread_mutex_unlock(&q->mu);
}

enum kerr wq_shutdown_drain(struct wq *q, long timeout_ms)
{
    struct timespec ts;
    enum kerr rc = KERR_OK;
    int64_t deadline = ktime_mono_ns() + (int64_t)timeout_ms * NS_PER_MS;

    wq_shutdown(q);
    ts = ktime_ts_of_ns(deadline);
    pthread_mutex_lock(&q->mu);
    while (q->nprocessing > 0) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&q->idle, &q->mu);
        } else if (pthread_cond_timedwait(&q->idle, &q->mu, &ts) == ETIMEDOUT &&
                   q->nprocessing > 0) {
            rc = KERR_TIMEOUT;
            break;
        }
    }
    pthread_mutex_unlock(&q->mu);
    return rc;
}

int wq_is_shutting_down(struct wq *q)
{
    int closed;

    pthread_mutex_lock(&q->mu);
    closed = q->closed;
    pthread_mutex_unlock(&q->mu);
    return closed;
}

void wq_get_stats(struct wq *q, struct wq_stats *out)
{
    struct wq_item *it;
    int64_t now;
    double age;
    size_t i;

    pthread_mutex_lock(&q->mu);
    now = ktime_mono_ns();
    if (!q->closed)
        promote(q, now);
    *out = q->st;
    out->depth = q->depth;
    out->delayed = dheap_len(&q->delayed);
    out->processing = q->nprocessing;
    out->longest_running_seconds = 0;
    out->unfinished_work_seconds = 0;
    for (i = 0; i < q->nbuckets && q->nprocessing > 0; i++) {
        for (it = q->buckets[i]; it; it = it->hnext) {
            if (!it->processing)
                continue;
            age = (double)(now - it->started_at) / NS_PER_SEC;
            out->unfinished_work_seconds += age;
            if (age > out->longest_running_seconds)
                out->longest_running_seconds = age;
        }
    }
    pthread_mutex_unlock(&q->mu);
}
