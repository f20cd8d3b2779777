/* otask_exec - the EtcdOpsTask executor's own queue and workers; see otask_exec.h. */
#include "controller/otask_exec.h"

#include <stdlib.h>

#include "common/workqueue.h"

struct otask_exec {
    struct wq *queue;
    struct wqpool *pool;
    int n;
    atomic_int cancel;
};

enum kerr otask_exec_new(const char *name, int n, struct otask_exec **out, struct kerr_info *err)
{
    struct wq_opts qo = { .name = name };
    struct otask_exec *x;
    enum kerr rc;

    *out = NULL;
    if (n < 1)
        return kerr_set(err, KERR_INVAL, "the ops-task executor needs at least one worker");
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

void otask_exec_add(struct otask_exec *x, const char *key, long after_ms)
{
    (void)wq_add_after(x->queue, key, after_ms);
}

enum kerr otask_exec_start(struct otask_exec *x, wqpool_process_fn process, void *arg,
                           struct kerr_info *err)
{
    if (x->pool)
        return kerr_set(err, KERR_INVAL, "the ops-task executor is started already");
    return wqpool_new(x->queue, x->n, process, arg, &x->pool, err);
}

void otask_exec_cancel(struct otask_exec *x)
{
    atomic_store(&x->cancel, 1);
    wq_shutdown(x->queue);
}

const atomic_int *otask_exec_cancel_flag(struct otask_exec *x)
{
    return &x->cancel;
}

void otask_exec_stop(struct otask_exec *x, long drain_ms)
{
    if (wq_shutdown_drain(x->queue, drain_ms) == KERR_TIMEOUT)
        otask_exec_cancel(x);
    wqpool_free(x->pool);
    x->pool = NULL;
}

void otask_exec_free(struct otask_exec *x)
{
    if (!x)
        return;
    otask_exec_stop(x, 0);
    wq_free(x->queue);
    free(x);
}
