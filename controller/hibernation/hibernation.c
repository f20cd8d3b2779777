/* hibernation - the hibernation capability's table entry; see hibernation.h. */
#include "controller/hibernation/hibernation.h"

#include "common/kjson.h"
#include "common/store.h"
#include "common/strlist.h"
#include "controller/core/ctl.h"
#include "controller/core/ctl_config.h"
#include "controller/hibernation/hib.h"
#include "controller/hibernation/otask.h"

/* The hibernation phase of an Etcd, "none" without one. */
static enum kerr index_phase(void *ctx, const cJSON *obj, struct strlist *values)
{
    const char *p = kjson_get_str(obj, "metadata.annotations[" HIB_ANN_PHASE "]");

    (void)ctx;
    return strlist_add(values, p && *p ? p : "none");
}

/* Cached Etcds whose hibernation-phase annotation is phase ("none": without one). */
static size_t phase_count(struct ctl *c, const char *phase)
{
    struct strlist keys;
    size_t n = 0;

    strlist_init(&keys);
    if (!store_index_keys(ctl_store(c, CTL_CACHE_ETCDS), HIBERNATION_INDEX_PHASE, phase, &keys,
                          NULL))
        n = keys.n;
    strlist_release(&keys);
    return n;
}

/* An EtcdOpsTask: its own key (not for its status alone) and its Etcd's. */
static void opstask_keys(struct ctl *c, const cJSON *obj, int own)
{
    if (own)
        ctl_enqueue_obj(c, "opstask", obj, kjson_get_str(obj, "metadata.name"));
    ctl_enqueue_obj(c, "etcd", obj, kjson_get_str(obj, "spec.etcdName"));
}

static int executor_on(const struct ctl_config *cfg)
{
    return cfg->ops_task_executor;
}

static long executor_workers(const struct ctl_config *cfg)
{
    return cfg->ops_task_workers;
}

static const struct ctl_watch watches[] = {
    { .res = { "druid.gardener.cloud", "v1alpha1", "etcds", 1 },
      .kind = "Etcd",
      .keys = NULL,
      .indexes = { { HIBERNATION_INDEX_PHASE, index_phase } } },
    { .res = { "druid.gardener.cloud", "v1alpha1", "etcdopstasks", 1 },
      .kind = "EtcdOpsTask",
      .keys = opstask_keys,
      .indexes = { { CTL_INDEX_ETCD_NAME, ctl_index_etcd_name } } },
    { .kind = NULL },
};

static const struct ctl_etcd_step steps[] = {
    { "hibernation", hib_reconcile, 0 },
    { .name = NULL },
};

static const struct ctl_key keys[] = {
    { "opstask", otask_reconcile, executor_on, executor_workers },
    { .kind = NULL },
};

const struct ctl_capability hibernation_capability = {
    .name = "hibernation",
    .watches = watches,
    .steps = steps,
    .keys = keys,
    .phase_count = phase_count,
};
