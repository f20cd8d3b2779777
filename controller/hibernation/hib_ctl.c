/*
 * hib_ctl - hib_reconcile: hib_step on the running controller (controller/core/ctl.h),
 * with the immutability task and the restore's suspension reached through the
 * services of those capabilities (ctl_call: "immutability-task-ensure",
 * "immutability-task-delete", "restore-lift-suspension") and the Etcd checks of
 * controller/core/etcdspec.h.
 */
#include <stdio.h>

#include "common/kjson.h"
#include "common/store.h"
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

/* The controller's caches (controller/core/ctl.h): components keyed "<kind>/<ns>/<name>". */
static cJSON *cached(void *arg, enum hib_cached what, const char *ns, const char *name)
{
    static const char *const kinds[] = { "Service", "StatefulSet", NULL };
    struct store *s =
        ctl_store(arg, what == HIB_CACHED_IMMTASK ? "extendfullsnapshotimmutabilitytasks"
                                                  : CTL_CACHE_COMPONENTS);
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
    struct store *s = ctl_store(arg, "etcdopstasks");
    char v[STORE_KEY_MAX];
    cJSON *out = NULL;

    if (!s || !ctl_index_etcd_value(ns, etcd, v) ||
        store_index_list(s, CTL_INDEX_ETCD_NAME, v, &out, NULL) != KERR_OK)
        return NULL;
    return out;
}

enum kerr hib_reconcile(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                        struct kerr_info *err)
{
    struct ctl_result lifted = { 0 };
    enum kerr rc;
    long left;
    struct hib_env env = {
        .client = ctl_client(c),
        .events = ctl_events(c),
        .plan = { .retries = (int)ctl_cfg(c)->snapshot_retries, .verify = true },
        .bucket = etcdspec_bucket_state,
        .imt_ensure = imt_ensure,
        .imt_delete = imt_delete,
        .imt_arg = c,
        .cached = cached,
        .cached_tasks = cached_tasks,
        .cache_arg = c,
        .cancel = ctl_stopping_flag(c),
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
    /* what the steps before left of the reconcile's budget (none left: the next one goes on) */
    left = CTL_ETCD_REQUESTS - (long)ctl_reconcile_requests();
    env.max_requests = left > 0 ? (int)left : -1;
    rc = hib_step(&env, etcd, &res->requeue_ms, err);
    /* a failed call of a hibernation underway comes back with its retry (hib.h) */
    res->own_retry = rc != KERR_OK && res->requeue_ms > 0;
    return rc;
}
