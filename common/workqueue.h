/*
 * workqueue - a de-duplicating, delaying, rate-limited queue of string keys
 * with the semantics of client-go's util/workqueue. common/wqpool runs worker
 * threads that drive a process(key) callback from it, as controller-runtime.
 *
 * Keys are strings such as "namespace/name". A key queued twice before it is
 * processed is processed once; a key added while it is being processed is
 * queued again when wq_done() is called for it, so one key is never processed
 * by two threads at the same time. Delayed adds sit in a min-heap ordered by
 * ready time (common/dheap) and move to the queue when they are due (checked
 * by every queue operation, and waited for by blocked getters with a timed
 * wait: no polling).
 * wq_add_rate_limited() delays a key by the larger of a per-key exponential
 * backoff (5 ms doubling to 1000 s by default) and an overall token bucket
 * (10 qps, burst 100 by default); wq_forget() resets the per-key backoff.
 *
 * Shutdown: wq_shutdown() refuses further adds, drops queued and delayed
 * keys, and wakes every getter, which then gets KERR_CLOSED. Keys already
 * handed out stay valid until their wq_done(); wq_shutdown_drain() also
 * waits for them.
 *
 * Thread safety: every wq_ function except wq_new/wq_free may be called from
 * any thread at any time. wq_free() must be called once no thread uses the
 * queue any more (after wqpool_free()).
 */
#ifndef COMMON_WORKQUEUE_H
#define COMMON_WORKQUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "common/kerr.h"

/* Longest accepted key, in bytes (a namespace, '/', and a 253-byte name fit easily). */
#define WQ_KEY_MAX 1024

struct wq;

/* What an observer callback measures, in seconds. */
enum wq_observation {
    WQ_OBS_QUEUE_WAIT, /* from the add that queued a key to the get that handed it out */
    WQ_OBS_WORK,       /* from wq_get() to wq_done() */
};

/*
 * Optional observer for histograms (workqueue_queue_duration_seconds,
 * workqueue_work_duration_seconds). Called without the queue lock held, from
 * the thread that called wq_get() / wq_done(). Must not call back into the queue.
 */
typedef void (*wq_observe_fn)(void *arg, enum wq_observation what, double seconds);

struct wq_opts {
    const char *name;      /* BORROWED, copied; names the queue in logs. NULL = "workqueue" */
    long base_delay_ms;    /* per-key backoff: first delay; 0 = 5 ms */
    long max_delay_ms;     /* per-key backoff: cap; 0 = 1000 s */
    double qps;            /* overall token bucket refill rate; 0 = 10, < 0 disables the bucket */
    int burst;             /* overall token bucket size; 0 = 100 */
    wq_observe_fn observe; /* optional, see above */
    void *observe_arg;     /* BORROWED; passed to observe */
};

/* Counters for metrics, read with wq_get_stats(). */
struct wq_stats {
    uint64_t adds;        /* keys newly queued (workqueue_adds_total); duplicates not counted */
    uint64_t retries;     /* wq_add_after + wq_add_rate_limited calls (workqueue_retries_total) */
    size_t depth;         /* keys ready for a worker (workqueue_depth) */
    size_t delayed;       /* keys waiting for their delay to pass */
    size_t processing;    /* keys handed out and not yet done */
    uint64_t work_count;  /* wq_done() calls for handed-out keys */
    double work_seconds;  /* sum of get-to-done durations */
    double queue_seconds; /* sum of add-to-get waits */
    double longest_running_seconds; /* age of the oldest in-flight key, 0 when none */
    double unfinished_work_seconds; /* sum of the ages of in-flight keys */
};

/*
 * Create a queue. opts may be NULL for all defaults. On KERR_OK *out OWNS the
 * queue: release it with wq_free(). KERR_INVAL for negative delays or burst,
 * KERR_NOMEM.
 */
enum kerr wq_new(const struct wq_opts *opts, struct wq **out, struct kerr_info *err);

/* Free the queue and every key in it. NULL is a no-op. No thread may still use it. */
void wq_free(struct wq *q);

/*
 * Queue key (BORROWED, copied) now. A key already queued is not queued again;
 * a key being processed is queued again at its wq_done(). KERR_INVAL for an
 * empty or too long key, KERR_CLOSED after shutdown, KERR_NOMEM.
 */
enum kerr wq_add(struct wq *q, const char *key);

/*
 * Queue key once delay_ms has passed (delay_ms <= 0 is wq_add). A key already
 * waiting keeps the earlier of its two ready times. Errors as wq_add.
 */
enum kerr wq_add_after(struct wq *q, const char *key, long delay_ms);

/*
 * Queue key after the rate limiter's delay: the larger of the per-key
 * backoff (base * 2^failures, capped; failures is then incremented) and the
 * token bucket's wait. Errors as wq_add.
 */
enum kerr wq_add_rate_limited(struct wq *q, const char *key);

/* Reset the per-key backoff of key (stop tracking its failures). Unknown keys are ignored. */
void wq_forget(struct wq *q, const char *key);

/* How many times key went through wq_add_rate_limited since its last wq_forget. */
unsigned wq_num_requeues(struct wq *q, const char *key);

/*
 * Block until a key is ready or the queue is shut down. On KERR_OK *key OWNS
 * a copy of the key (free() it) and the key is marked as processing until
 * wq_done(). KERR_CLOSED once the queue is shut down (*key is NULL), KERR_NOMEM.
 */
enum kerr wq_get(struct wq *q, char **key);

/*
 * Mark key (BORROWED) as processed. If it was added again meanwhile it is
 * queued now. Keys that are not being processed are ignored.
 */
void wq_done(struct wq *q, const char *key);

/* Number of keys ready for a worker (delayed and in-flight keys are not counted). */
size_t wq_len(struct wq *q);

/* Refuse new adds, drop queued and delayed keys, wake every blocked wq_get(). Idempotent. */
void wq_shutdown(struct wq *q);

/*
 * wq_shutdown(), then wait until every handed-out key is done or timeout_ms
 * has passed (timeout_ms < 0 waits forever). KERR_OK when drained, KERR_TIMEOUT.
 */
enum kerr wq_shutdown_drain(struct wq *q, long timeout_ms);

/* True once wq_shutdown() has been called. */
int wq_is_shutting_down(struct wq *q);

/* Copy the counters into *out. */
void wq_get_stats(struct wq *q, struct wq_stats *out);

#endif
