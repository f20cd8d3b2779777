/*
 * hib_ctl - hib_reconcile: hib_step on the running controller (controller/ctl.h),
 * with the immutability task helpers of controller/imt.h and the Etcd
 * checks of controller/etcdspec.h.
 */
#include "common/kjson.h"
#include "controller/ctl.h"
#include "controller/ctl_config.h"
#include "controller/etcdspec.h"
#include "controller/hib.h"
#include "controller/imt.h"
#include "controller/rctx.h"
#include "controller/rst.h"

static enum kerr imt_ensure(void *arg, const cJSON *etcd, struct kerr_info *err)
{
    return imt_task_ensure(arg, etcd, err);
}

static enum kerr imt_delete(void *arg, const cJSON *etcd, struct kerr_info *err)
{
    return imt_task_delete(arg, etcd, err);
}

enum kerr hib_reconcile(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                        struct kerr_info *err)
{
    struct rctx x;
    enum kerr rc;
    struct hib_env env = {
        .client = ctl_client(c),
        .events = ctl_events(c),
        .plan = { .retries = (int)ctl_cfg(c)->snapshot_retries },
        .bucket = etcdspec_bucket_state,
        .imt_ensure = imt_ensure,
        .imt_delete = imt_delete,
        .imt_arg = c,
    };

    /*
     * The suspension is shared with the restore: a restore ended by hand (the restoring label
     * removed) leaves etcd-warden's suspension behind, which is lifted here, where the Etcd is
     * live again (controller/rst.h); the next pass reads the Etcd that results.
     */
    if (rst_ended_by_hand(etcd)) {
        rctx_from_ctl(c, &x);
        rc = rst_run(&x, etcd, &res->requeue_ms, err);
        if (rc == KERR_OK)
            res->requeue_ms = 1;
        return rc;
    }
    return hib_step(&env, etcd, &res->requeue_ms, err);
}
