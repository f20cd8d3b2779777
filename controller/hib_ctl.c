/*
 * hib_ctl - hib_reconcile: hib_step on the running controller (controller/ctl.h),
 * with the immutability task helpers of controller/imt.h and the Etcd
 * checks of controller/etcdspec.h.
 */
#include <stdio.h>

#include "common/kjson.h"
#include "common/store.h"
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

/* The controller's caches (controller/ctl.h): components keyed "<kind>/<ns>/<name>". */
static cJSON *cached(void *arg, enum hib_cached what, const char *ns, const char *name)
{
    static const char *const kinds[] = { "Service", "StatefulSet", NULL };
    struct store *s =
        ctl_store(arg, what == HIB_CACHED_IMMTASK ? CTL_C_IMMTASKS : CTL_C_COMPONENTS);
    char key[STORE_KEY_MAX];
    cJSON *out = NULL;
    int n = what == HIB_CACHED_IMMTASK
                ? snprintf(key, sizeof(key), "%s/%s", ns, name)
                : snprintf(key, sizeof(key), "%s/%s/%s", kinds[what], ns, name);

    if (!s || n < 0 || (size_t)n >= sizeof(key) || store_get(s, key, &out, NULL) != KERR_OK)
        return NULL;
    return out;
}

static cJSON *cached_tasks(void *arg, const char *ns, const char *etcd)
{
    struct store *s = ctl_store(arg, CTL_C_OPSTASKS);
    char v[STORE_KEY_MAX];
    cJSON *out = NULL;
    int n = snprintf(v, sizeof(v), "%s/%s", ns, etcd);

    if (!s || n < 0 || (size_t)n >= sizeof(v) ||
        store_index_list(s, CTL_INDEX_ETCD_NAME, v, &out, NULL) != KERR_OK)
        return NULL;
    return out;
}

enum kerr hib_reconcile(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                        struct kerr_info *err)
{
    struct rctx x;
    enum kerr rc;
    long left;
    struct hib_env env = {
        .client = ctl_client(c),
        .events = ctl_events(c),
        .plan = { .retries = (int)ctl_cfg(c)->snapshot_retries },
        .bucket = etcdspec_bucket_state,
        .imt_ensure = imt_ensure,
        .imt_delete = imt_delete,
        .imt_arg = c,
        .cached = cached,
        .cached_tasks = cached_tasks,
        .cache_arg = c,
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
    /* what the steps before left of the reconcile's budget (none left: the next one goes on) */
    left = CTL_ETCD_REQUESTS - (long)ctl_reconcile_requests();
    env.max_requests = left > 0 ? (int)left : -1;
    return hib_step(&env, etcd, &res->requeue_ms, err);
}
