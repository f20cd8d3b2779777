/*
 * hib_ctl - hib_reconcile: hib_step on the running controller (controller/core/ctl.h),
 * with the immutability task and the restore's suspension reached through the
 * services of those capabilities (ctl_call: "immutability-task-ensure",
 * "immutability-task-delete", "restore-lift-suspension") and the Etcd checks of
 * controller/core/etcdspec.h.
 */
#include "common/kjson.h"
#include "controller/core/ctl.h"
#include "controller/core/ctl_cap.h"
#include "controller/core/ctl_config.h"
#include "controller/core/etcdspec.h"
#include "controller/hibernation/hib.h"

static enum kerr imt_ensure(void *arg, const cJSON *etcd, struct kerr_info *err)
{
    struct ctl_result r = { 0 };

    return ctl_call(arg, "immutability-task-ensure", 0, etcd, &r, err);
}

static enum kerr imt_delete(void *arg, const cJSON *etcd, struct kerr_info *err)
{
    struct ctl_result r = { 0 };

    return ctl_call(arg, "immutability-task-delete", 0, etcd, &r, err);
}

enum kerr hib_reconcile(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                        struct kerr_info *err)
{
    struct ctl_result lifted = { 0 };
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
     * live again (the restore capability's service); the next pass reads the Etcd that
     * results.
     */
    rc = ctl_call(c, "restore-lift-suspension", 1, etcd, &lifted, err);
    if (rc != KERR_OK || lifted.requeue_ms > 0) {
        res->requeue_ms = lifted.requeue_ms;
        return rc;
    }
    return hib_step(&env, etcd, &res->requeue_ms, err);
}
