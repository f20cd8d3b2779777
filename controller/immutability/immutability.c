/* immutability - the immutability capability's table entry; see immutability.h. */
#include "controller/immutability/immutability.h"

#include <string.h>

#include "common/kjson.h"
#include "controller/core/ctl.h"
#include "controller/immutability/imt.h"

/* An immutability task: its own key (not for its status alone) and its Etcd's. */
static void immtask_keys(struct ctl *c, const cJSON *obj, int own)
{
    if (own)
        ctl_enqueue_obj(c, "immtask", obj, kjson_get_str(obj, "metadata.name"));
    ctl_enqueue_obj(c, "etcd", obj, kjson_get_str(obj, "spec.etcdName"));
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

static const struct ctl_watch watches[] = {
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
};
