/*
 * otask_ctl - otask_reconcile: otask_step on the running controller (controller/ctl.h).
 */
#include "controller/ctl.h"
#include "controller/ctl_config.h"
#include "controller/otask.h"

enum kerr otask_reconcile(struct ctl *c, const char *ns, const char *name, struct ctl_result *res,
                          struct kerr_info *err)
{
    struct otask_env env = { .client = ctl_client(c),
                             .events = ctl_events(c),
                             .call_timeout_ms = ctl_cfg(c)->ops_task_call_ms,
                             .cancel = ctl_ops_cancel(c) };

    return otask_step(&env, ns, name, &res->requeue_ms, err);
}
