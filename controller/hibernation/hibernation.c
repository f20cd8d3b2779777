/* hibernation - the hibernation capability's table entry; see hibernation.h. */
#include "controller/hibernation/hibernation.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/kjson.h"
#include "common/ktime.h"
#include "common/store.h"
#include "common/strlist.h"
#include "controller/core/ctl.h"
#include "controller/core/ctl_config.h"
#include "controller/core/ctl_metrics.h"
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

/* Where store_foreach's callbacks send the series of the per-Etcd gauges. */
struct emit_to {
    ctl_metrics_emit_fn emit;
    void *ctx;
    struct ctl *c;
};

/* warden_etcd_hibernation_phase: 1 for the phase of each Etcd that has one. */
static enum kerr phase_series(void *arg, const char *key, const cJSON *etcd)
{
    const struct emit_to *e = arg;
    const char *v[4] = { kjson_get_str(etcd, "metadata.namespace"),
                         kjson_get_str(etcd, "metadata.name"),
                         kjson_get_str(etcd, "metadata.annotations[" HIB_ANN_PHASE "]"), NULL };

    (void)key;
    if (v[0] && v[1] && v[2] && *v[2])
        e->emit(e->ctx, v, 1.0);
    return KERR_OK;
}

/* warden_etcd_final_snapshot_failing: 1 while the condition FinalSnapshotFailing is True. */
static enum kerr failing_series(void *arg, const char *key, const cJSON *etcd)
{
    const struct emit_to *e = arg;
    const char *cond = kjson_get_str(etcd, "metadata.annotations[" HIB_ANN_CONDITION "]");
    const char *v[3] = { kjson_get_str(etcd, "metadata.namespace"),
                         kjson_get_str(etcd, "metadata.name"), NULL };
    const char *type, *status;
    cJSON *c = NULL;

    (void)key;
    if (!cond || !v[0] || !v[1] || kjson_parse(cond, strlen(cond), NULL, &c, NULL, NULL) != KERR_OK)
        return KERR_OK;
    type = kjson_get_str(c, "type");
    status = kjson_get_str(c, "status");
    if (type && status && strcmp(type, "FinalSnapshotFailing") == 0 && strcmp(status, "True") == 0)
        e->emit(e->ctx, v, 1.0);
    cJSON_Delete(c);
    return KERR_OK;
}

/* The time the sidecar recorded in a snapshot Lease (BORROWED obj): its renewTime, or before
 * the first snapshot the Lease's creation. */
static enum kerr lease_time(void *arg, const char *key, const cJSON *lease)
{
    const char *t = kjson_get_str(lease, "spec.renewTime");
    struct timespec ts;

    (void)key;
    if (!t || !*t)
        t = kjson_get_str(lease, "metadata.creationTimestamp");
    if (ktime_parse(t, &ts, NULL) == KERR_OK)
        *(double *)arg = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    return KERR_OK;
}

/* warden_etcd_last_full_snapshot_timestamp_seconds of an Etcd with a backup store. */
static enum kerr snapshot_series(void *arg, const char *key, const cJSON *etcd)
{
    const struct emit_to *e = arg;
    const char *v[3] = { kjson_get_str(etcd, "metadata.namespace"),
                         kjson_get_str(etcd, "metadata.name"), NULL };
    struct store *comps = ctl_store(e->c, CTL_CACHE_COMPONENTS);
    char lease[600];
    double t = 0;

    (void)key;
    if (!v[0] || !v[1] || !comps || !kjson_get_obj(etcd, "spec.backup.store"))
        return KERR_OK;
    snprintf(lease, sizeof(lease), "Lease/%s/%s-full-snap", v[0], v[1]);
    if (store_view(comps, lease, lease_time, &t, NULL) == KERR_OK && t > 0)
        e->emit(e->ctx, v, t);
    return KERR_OK;
}

static void collect_snapshots(void *src, ctl_metrics_emit_fn emit, void *ctx)
{
    struct emit_to e = { emit, ctx, src };

    (void)store_foreach(ctl_store(src, CTL_CACHE_ETCDS), snapshot_series, &e, NULL);
}

static void collect_phases(void *src, ctl_metrics_emit_fn emit, void *ctx)
{
    struct emit_to e = { emit, ctx, src };

    (void)store_foreach(ctl_store(src, CTL_CACHE_ETCDS), phase_series, &e, NULL);
}

static void collect_failing(void *src, ctl_metrics_emit_fn emit, void *ctx)
{
    struct emit_to e = { emit, ctx, src };

    (void)store_foreach(ctl_store(src, CTL_CACHE_ETCDS), failing_series, &e, NULL);
}

static const char *const by_etcd_phase[] = { "etcd_namespace", "etcd", "phase", NULL };
static const char *const by_etcd[] = { "etcd_namespace", "etcd", NULL };

static const struct ctl_metrics_gauge gauges[] = {
    { "warden_etcd_hibernation_phase",
      "1 for the hibernation phase of each cached Etcd that has one (annotation "
      "etcd-warden.io/hibernation-phase)",
      by_etcd_phase, collect_phases },
    { "warden_etcd_final_snapshot_failing",
      "1 for each cached Etcd whose hibernation condition FinalSnapshotFailing is True: an "
      "attempt at its final snapshot failed and hibernation waits and retries",
      by_etcd, collect_failing },
    { "warden_etcd_last_full_snapshot_timestamp_seconds",
      "For each cached Etcd with a backup store: when its last full snapshot was taken, as the "
      "backup sidecar records it in the Lease <etcd>-full-snap (spec.renewTime; before the "
      "first snapshot, when the Lease was created)",
      by_etcd, collect_snapshots },
    { .name = NULL },
};

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
    .gauges = gauges,
};
