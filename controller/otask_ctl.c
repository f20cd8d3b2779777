/*
 * otask_ctl - otask_reconcile: otask_step on the running controller (controller/ctl.h).
 */
#include "controller/ctl.h"
#include "controller/otask.h"

enum kerr otask_reconcile(struct ctl *c, const char *ns, const char *name, struct ctl_result *res,
                          struct kerr_info *err)
{
    (void)c;
    (void)ns;
    (void)name;
    res->requeue_ms = 0;
    kerr_clear(err);
    return KERR_OK;
}
