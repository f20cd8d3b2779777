/* immutability - the immutability capability's table entry; see immutability.h. */
#include "controller/immutability/immutability.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/kjson.h"
#include "common/ktime.h"
#include "common/store.h"
#include "common/strlist.h"
#include "controller/core/ctl.h"
#include "controller/core/ctl_metrics.h"
#include "controller/immutability/imt.h"

/* An immutability task: its own key (not for its status alone) and its Etcd's. */
static void immtask_keys(struct ctl *c, const cJSON *obj, int own)
{
    if (own)
        ctl_enqueue_obj(c, "immtask", obj, kjson_get_str(obj, "metadata.name"));
    ctl_enqueue_obj(c, "etcd", obj, kjson_get_str(obj, "spec.etcdName"));
}

/*
 * An Etcd: the keys of the tasks that name it, so that a task whose Etcd goes (or drops its
 * store) stops its CronJob at once rather than at its next event.
 */
static void etcd_tasks(struct ctl *c, const cJSON *obj, int own)
{
    struct store *s = ctl_store(c, "extendfullsnapshotimmutabilitytasks");
    const char *ns = kjson_get_str(obj, "metadata.namespace");
    char v[STORE_KEY_MAX];
    struct strlist keys;
    size_t i;

    (void)own;
    if (!s || !ctl_index_etcd_value(ns, kjson_get_str(obj, "metadata.name"), v))
        return;
    strlist_init(&keys);
    if (store_index_keys(s, CTL_INDEX_ETCD_NAME, v, &keys, NULL) == KERR_OK) {
        for (i = 0; i < keys.n; i++) {
            const char *slash = strchr(keys.v[i], '/'); /* "<ns>/<name>" */

            if (slash)
                ctl_enqueue(c, "immtask", ns, slash + 1, 0);
        }
    }
    strlist_release(&keys);
}

/* The name of obj's owner of kind (an ownerReference), or NULL. */
static const char *owner_named(const cJSON *obj, const char *kind)
{
    const cJSON *ref;

    cJSON_ArrayForEach (ref, kjson_get_arr(obj, "metadata.ownerReferences")) {
        const char *k = kjson_get_str(ref, "kind");

        if (k && strcmp(k, kind) == 0)
            return kjson_get_str(ref, "name");
    }
    return NULL;
}

/* A CronJob: its task's key. */
static void cronjob_keys(struct ctl *c, const cJSON *obj, int own)
{
    (void)own;
    ctl_enqueue_obj(c, "immtask", obj, owner_named(obj, "ExtendFullSnapshotImmutabilityTask"));
}

/* The services of the hibernation (controller/hibernation/hib.h's imt_ensure and imt_delete). */
static enum kerr task_ensure(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                             struct kerr_info *err)
{
    (void)res;
    return imt_task_ensure(c, etcd, err);
}

static enum kerr task_delete(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                             struct kerr_info *err)
{
    (void)res;
    return imt_task_delete(c, etcd, err);
}

struct emit_to {
    ctl_metrics_emit_fn emit;
    void *ctx;
};

/* warden_etcd_snapshot_immutable_until_timestamp_seconds of a task that knows the date. */
static enum kerr until_series(void *arg, const char *key, const cJSON *task)
{
    const struct emit_to *e = arg;
    const char *v[3] = { kjson_get_str(task, "metadata.namespace"),
                         kjson_get_str(task, "spec.etcdName"), NULL };
    struct timespec ts;

    (void)key;
    if (v[0] && v[1] &&
        ktime_parse(kjson_get_str(task, "status.immutableUntil"), &ts, NULL) == KERR_OK)
        e->emit(e->ctx, v, (double)ts.tv_sec);
    return KERR_OK;
}

static void collect_until(void *src, ctl_metrics_emit_fn emit, void *ctx)
{
    struct emit_to e = { emit, ctx };

    (void)store_foreach(ctl_store(src, "extendfullsnapshotimmutabilitytasks"), until_series, &e,
                        NULL);
}

static const char *const by_etcd[] = { "etcd_namespace", "etcd", NULL };

static const struct ctl_metrics_gauge gauges[] = {
    { "warden_etcd_snapshot_immutable_until_timestamp_seconds",
      "For each hibernated Etcd whose ExtendFullSnapshotImmutabilityTask knows it "
      "(status.immutableUntil): until when the copy of its latest full snapshot that the "
      "immutability CronJob last made stays immutable",
      by_etcd, collect_until },
    { .name = NULL },
};

static const struct ctl_watch watches[] = {
    { .res = { "druid.gardener.cloud", "v1alpha1", "etcds", 1 },
      .kind = "Etcd",
      .keys = etcd_tasks },
    { .res = { "etcd-warden.io", "v1alpha1", "extendfullsnapshotimmutabilitytasks", 1 },
      .kind = "ExtendFullSnapshotImmutabilityTask",
      .keys = immtask_keys,
      .indexes = { { CTL_INDEX_ETCD_NAME, ctl_index_etcd_name } } },
    { .res = { "batch", "v1", "cronjobs", 1 },
      .kind = "CronJob",
      .label_selector = "app.kubernetes.io/managed-by=etcd-warden",
      .keys = cronjob_keys },
    { .kind = NULL },
};

static const struct ctl_key keys[] = {
    { "immtask", imt_reconcile, NULL, NULL },
    { .kind = NULL },
};

static const struct ctl_service services[] = {
    { "immutability-task-ensure", task_ensure },
    { "immutability-task-delete", task_delete },
    { .name = NULL },
};

const struct ctl_capability immutability_capability = {
    .name = "immutability",
    .watches = watches,
    .keys = keys,
    .services = services,
    .gauges = gauges,
};
