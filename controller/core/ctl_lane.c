/* ctl_lane - a queue and workers of their own for long calls; see ctl_lane.h. */
#include "controller/core/ctl_lane.h"

#include <stdlib.h>

#include "common/workqueue.h"

struct ctl_lane {
    struct wq *queue;
    struct wqpool *pool;
    int n;
    atomic_int cancel;
};

enum kerr ctl_lane_new(const char *name, int n, struct ctl_lane **out, struct kerr_info *err)
{
    struct wq_opts qo = { .name = name };
    struct ctl_lane *x;
    enum kerr rc;

    *out = NULL;
    if (n < 1)
        return kerr_set(err, KERR_INVAL, "a lane needs at least one worker");
    x = calloc(1, sizeof(*x));
    if (!x)
        return kerr_set(err, KERR_NOMEM, "out of memory");
    x->n = n;
    atomic_init(&x->cancel, 0);
    if ((rc = wq_new(&qo, &x->queue, err)) != KERR_OK) {
        free(x);
        return rc;
    }
    *out = x;
    return KERR_OK;
}

void ctl_lane_add(struct ctl_lane *x, const char *key, long after_ms)
{
    (void)wq_add_after(x->queue, key, after_ms);
}

enum kerr ctl_lane_start(struct ctl_lane *x, wqpool_process_fn process, void *arg,
                         struct kerr_info *err)
{
    if (x->pool)
        return kerr_set(err, KERR_INVAL, "the ops-task executor is started already");
    return wqpool_new(x->queue, x->n, process, arg, &x->pool, err);
}

void ctl_lane_cancel(struct ctl_lane *x)
{
    atomic_store(&x->cancel, 1);
    wq_shutdown(x->queue);
}

const atomic_int *ctl_lane_cancel_flag(struct ctl_lane *x)
{
    return &x->cancel;
}

void ctl_lane_stop(struct ctl_lane *x, long drain_ms)
{
    if (wq_shutdown_drain(x->queue, drain_ms) == KERR_TIMEOUT)
        ctl_lane_cancel(x);
    wqpool_free(x->pool);
    x->pool = NULL;
}

void ctl_lane_free(struct ctl_lane *x)
{
    if (!x)
        return;
    ctl_lane_stop(x, 0);
    wq_free(x->queue);
    free(x);
}
