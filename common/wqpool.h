/*
 * wqpool - a pool of worker threads that drive a process(key) callback from
 * a common/workqueue queue, the way controller-runtime's controller does:
 * each worker takes a key with wq_get(), calls process, then forgets,
 * re-adds or rate-limits the key as the result says, and calls wq_done().
 * The queue guarantees that one key is never processed by two workers at
 * the same time; different keys run concurrently.
 *
 * Ownership: a pool (wqpool_new / wqpool_free) OWNS its threads; the queue
 * and arg are BORROWED and must outlive the pool.
 * Thread safety: wqpool_new and wqpool_free belong to one owner; process is
 * called from the worker threads.
 */
#ifndef COMMON_WQPOOL_H
#define COMMON_WQPOOL_H

#include "common/kerr.h"
#include "common/workqueue.h"

/* What process() asks for, as a controller-runtime Result. */
enum wqpool_result {
    WQPOOL_RESULT_OK,            /* done: the key's backoff is forgotten */
    WQPOOL_RESULT_REQUEUE,       /* run again after the rate limiter's delay */
    WQPOOL_RESULT_REQUEUE_AFTER, /* forget the backoff, run again after *after_ms */
    WQPOOL_RESULT_ERROR,         /* failed: run again after the rate limiter's delay, or
                                    after *after_ms when that is set and comes earlier */
    WQPOOL_RESULT_ERROR_AFTER,   /* failed, and the caller paces its own retry: forget the
                                    backoff, run again after *after_ms (> 0) */
};

/*
 * The work of one key. key is BORROWED for the duration of the call. For
 * WQPOOL_RESULT_REQUEUE_AFTER set *after_ms (it starts at 0). Called by one
 * worker thread at a time per key; different keys run concurrently.
 */
typedef enum wqpool_result (*wqpool_process_fn)(void *arg, const char *key, long *after_ms);

struct wqpool;

/*
 * Start n worker threads that take keys from q, call process(arg, key,
 * &after_ms) and then add / forget / done as the result says. On KERR_OK
 * *out OWNS the pool: stop it with wqpool_free(). If a thread cannot be
 * started the queue is shut down, the started threads are joined and
 * KERR_INTERNAL is returned. KERR_INVAL for n < 1 or no process, KERR_NOMEM.
 */
enum kerr wqpool_new(struct wq *q, int n, wqpool_process_fn process, void *arg, struct wqpool **out,
                     struct kerr_info *err);

/*
 * Shut the queue down (wq_shutdown), wait for every worker to finish its
 * current key and exit, and free the pool. The queue itself is not freed.
 * NULL is a no-op.
 */
void wqpool_free(struct wqpool *p);

#endif
