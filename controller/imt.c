/* imt - the ExtendFullSnapshotImmutabilityTask and its CronJob. */
#include "controller/imt.h"

#include <stdio.h>

#include "controller/ctl.h"
#include "controller/rctx.h"

enum kerr imt_task_name(const char *etcd_name, char *out, size_t n)
{
    int w = snprintf(out, n, "%s" IMT_TASK_SUFFIX, etcd_name ? etcd_name : "");

    return w < 0 || (size_t)w >= n ? KERR_TOOBIG : KERR_OK;
}

enum kerr imt_task_ensure_x(const struct rctx *x, const cJSON *etcd, struct kerr_info *err)
{
    (void)x;
    (void)etcd;
    (void)err;
    return KERR_OK;
}

enum kerr imt_task_delete_x(const struct rctx *x, const cJSON *etcd, struct kerr_info *err)
{
    (void)x;
    (void)etcd;
    (void)err;
    return KERR_OK;
}

enum kerr imt_run(const struct rctx *x, const char *ns, const char *name, long *requeue_ms,
                  struct kerr_info *err)
{
    (void)x;
    (void)ns;
    (void)name;
    (void)err;
    *requeue_ms = 0;
    return KERR_OK;
}

enum kerr imt_reconcile(struct ctl *c, const char *ns, const char *name, struct ctl_result *res,
                        struct kerr_info *err)
{
    struct rctx x;

    res->requeue_ms = 0;
    rctx_from_ctl(c, &x);
    return imt_run(&x, ns, name, &res->requeue_ms, err);
}

enum kerr imt_task_ensure(struct ctl *c, const cJSON *etcd, struct kerr_info *err)
{
    struct rctx x;

    rctx_from_ctl(c, &x);
    return imt_task_ensure_x(&x, etcd, err);
}

enum kerr imt_task_delete(struct ctl *c, const cJSON *etcd, struct kerr_info *err)
{
    struct rctx x;

    rctx_from_ctl(c, &x);
    return imt_task_delete_x(&x, etcd, err);
}
