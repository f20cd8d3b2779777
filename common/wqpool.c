/*
 * wqpool - see wqpool.h. The workers share nothing but the queue: each loops
 * on wq_get() until the queue is shut down.
 */
#include "common/wqpool.h"

#include <pthread.h>
#include <stdlib.h>

#include "common/ktime.h"

struct wqpool {
    struct wq *q;
    wqpool_process_fn process;
    void *arg;
    int n;
    pthread_t *threads;
};

static void handle_result(struct wq *q, const char *key, enum wqpool_result r, long after_ms)
{
    switch (r) {
    case WQPOOL_RESULT_OK:
        wq_forget(q, key);
        break;
    case WQPOOL_RESULT_REQUEUE_AFTER:
    case WQPOOL_RESULT_ERROR_AFTER:
        wq_forget(q, key);
        (void)wq_add_after(q, key, after_ms);
        break;
    case WQPOOL_RESULT_ERROR:
        (void)wq_add_rate_limited(q, key);
        if (after_ms > 0) /* the queue keeps the earlier of the two */
            (void)wq_add_after(q, key, after_ms);
        break;
    case WQPOOL_RESULT_REQUEUE:
    default:
        (void)wq_add_rate_limited(q, key);
        break;
    }
}

static void *worker_main(void *arg)
{
    struct wqpool *p = arg;
    char *key = NULL;
    long after_ms;
    enum wqpool_result r;
    enum kerr rc;

    for (;;) {
        rc = wq_get(p->q, &key);
        if (rc == KERR_CLOSED)
            break;
        if (rc != KERR_OK) {
            ktime_sleep_ns(10 * KTIME_NS_PER_MS); /* out of memory: let it pass */
            continue;
        }
        after_ms = 0;
        r = p->process(p->arg, key, &after_ms);
        handle_result(p->q, key, r, after_ms);
        wq_done(p->q, key);
        free(key);
    }
    return NULL;
}

static void join_all(struct wqpool *p, int n)
{
    int i;

    for (i = 0; i < n; i++)
        pthread_join(p->threads[i], NULL);
}

enum kerr wqpool_new(struct wq *q, int n, wqpool_process_fn process, void *arg, struct wqpool **out,
                     struct kerr_info *err)
{
    struct wqpool *p;
    int i, e;

    *out = NULL;
    if (n < 1 || !process)
        return kerr_set(err, KERR_INVAL, "wqpool: need at least one worker and a callback");
    p = calloc(1, sizeof(*p));
    if (!p || !(p->threads = calloc((size_t)n, sizeof(*p->threads)))) {
        free(p);
        return kerr_set(err, KERR_NOMEM, "wqpool: out of memory");
    }
    p->q = q;
    p->process = process;
    p->arg = arg;
    for (i = 0; i < n; i++) {
        e = pthread_create(&p->threads[i], NULL, worker_main, p);
        if (e != 0) {
            wq_shutdown(q);
            join_all(p, i);
            free(p->threads);
            free(p);
            return kerr_set(err, KERR_INTERNAL, "wqpool: starting worker %d failed (%d)", i, e);
        }
    }
    p->n = n;
    *out = p;
    return KERR_OK;
}

void wqpool_free(struct wqpool *p)
{
    if (!p)
        return;
    wq_shutdown(p->q);
    join_all(p, p->n);
    free(p->threads);
    free(p);
}
