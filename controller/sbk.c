/* sbk - the status backup of an Etcd and the status-backup-exists annotation. */
#include "controller/sbk.h"

#include "controller/ctl.h"
#include "controller/rctx.h"

enum kerr sbk_desired_spec(const cJSON *etcd, const cJSON *components, cJSON **out,
                           struct kerr_info *err)
{
    (void)etcd;
    (void)components;
    *out = NULL;
    return kerr_set(err, KERR_UNSUPPORTED, "not yet");
}

enum kerr sbk_run(const struct rctx *x, const cJSON *etcd, struct sbk_stats *st,
                  struct kerr_info *err)
{
    (void)x;
    (void)etcd;
    (void)st;
    (void)err;
    return KERR_OK;
}

enum kerr sbk_reconcile(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                        struct kerr_info *err)
{
    struct rctx x;

    res->requeue_ms = 0;
    rctx_from_ctl(c, &x);
    return sbk_run(&x, etcd, NULL, err);
}
