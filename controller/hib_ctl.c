/*
 * hib_ctl - hib_reconcile: hib_step on the running controller (controller/ctl.h).
 */
#include "controller/ctl.h"
#include "controller/hib.h"

enum kerr hib_reconcile(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                        struct kerr_info *err)
{
    (void)c;
    (void)etcd;
    res->requeue_ms = 0;
    kerr_clear(err);
    return KERR_OK;
}
