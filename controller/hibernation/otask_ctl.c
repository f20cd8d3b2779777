/*
 * otask_ctl - otask_reconcile: otask_step on the running controller (controller/core/ctl.h).
 */
#include <stdio.h>

#include "common/kjson.h"
#include "common/store.h"
#include "controller/core/ctl.h"
#include "controller/core/ctl_config.h"
#include "controller/core/etcdspec.h"
#include "controller/hibernation/otask.h"

/* The cached task is gone or carries a deletionTimestamp. */
static int task_deleted(void *arg, const char *ns, const char *name)
{
    struct store *s = ctl_store(arg, ETCDSPEC_RES_OPSTASK.resource);
    char key[512];
    cJSON *t = NULL;
    int gone;

    if (!s || snprintf(key, sizeof(key), "%s/%s", ns, name) >= (int)sizeof(key))
        return 0;
    if (store_get(s, key, &t, NULL) != KERR_OK)
        return 1;
    gone = kjson_has(t, "metadata.deletionTimestamp");
    cJSON_Delete(t);
    return gone;
}

enum kerr otask_reconcile(struct ctl *c, const char *ns, const char *name, struct ctl_result *res,
                          struct kerr_info *err)
{
    struct otask_env env = { .client = ctl_client(c),
                             .events = ctl_events(c),
                             .call_timeout_ms = ctl_cfg(c)->ops_task_call_ms,
                             .cancel = ctl_cancel_flag(c),
                             .stopping = ctl_stopping_flag(c),
                             .task_deleted = task_deleted,
                             .task_deleted_arg = c };

    return otask_step(&env, ns, name, &res->requeue_ms, err);
}
