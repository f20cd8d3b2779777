/* backups - the backups capability's table entry; see backups.h. */
#include "controller/backups/backups.h"

#include "common/kjson.h"
#include "controller/core/ctl.h"
#include "controller/core/ctl_config.h"
#include "controller/backups/ebk.h"
#include "controller/backups/ebs.h"
#include "controller/backups/erd.h"
#include "controller/backups/erst.h"
#include "controller/core/ctl_metrics.h"

#include <string.h>

#include "common/ktime.h"
#include "common/store.h"

static void backup_keys(struct ctl *c, const cJSON *obj, int own)
{
    (void)own;
    ctl_enqueue_obj(c, "backup", obj, kjson_get_str(obj, "metadata.name"));
    ctl_enqueue_obj(c, "bschedule", obj, ebs_backup_schedule(obj));
}

static void restore_keys(struct ctl *c, const cJSON *obj, int own)
{
    (void)own;
    ctl_enqueue_obj(c, "restore", obj, kjson_get_str(obj, "metadata.name"));
}

static void schedule_keys(struct ctl *c, const cJSON *obj, int own)
{
    if (own)
        ctl_enqueue_obj(c, "bschedule", obj, kjson_get_str(obj, "metadata.name"));
}

static void drill_keys(struct ctl *c, const cJSON *obj, int own)
{
    if (own)
        ctl_enqueue_obj(c, "rdrill", obj, kjson_get_str(obj, "metadata.name"));
}

/* ---- the per-Etcd gauges of the drills (their cached status) ---- */

struct emit_to {
    ctl_metrics_emit_fn emit;
    void *ctx;
    const char *what; /* which gauge */
};

/* A time at path of the drill as Unix seconds, 0 when absent. */
static double time_at(const cJSON *d, const char *path)
{
    struct timespec ts;

    if (ktime_parse(kjson_get_str(d, path), &ts, NULL) != KERR_OK)
        return 0;
    return (double)ts.tv_sec;
}

static enum kerr drill_series(void *arg, const char *key, const cJSON *d)
{
    const struct emit_to *e = arg;
    const char *v[4] = { kjson_get_str(d, "metadata.namespace"),
                         kjson_get_str(d, "status.etcdName"), kjson_get_str(d, "metadata.name"),
                         NULL };
    const char *result = kjson_get_str(d, "status.lastResult");
    double t;

    (void)key;
    if (!v[0] || !v[1] || !*v[1] || !v[2])
        return KERR_OK;
    if (strcmp(e->what, "restorable") == 0 && result && *result)
        e->emit(e->ctx, v, strcmp(result, "Restorable") == 0 ? 1.0 : 0.0);
    else if (strcmp(e->what, "success") == 0 && (t = time_at(d, "status.lastSuccessfulDrillTime")))
        e->emit(e->ctx, v, t);
    else if (strcmp(e->what, "newest") == 0 &&
             (t = time_at(d, "status.newestRestorableSnapshotTime")))
        e->emit(e->ctx, v, t);
    return KERR_OK;
}

static void collect(void *src, ctl_metrics_emit_fn emit, void *ctx, const char *what)
{
    struct emit_to e = { emit, ctx, what };
    struct store *s = ctl_store(src, "etcdrestoredrills");

    if (s)
        (void)store_foreach(s, drill_series, &e, NULL);
}

static void collect_restorable(void *src, ctl_metrics_emit_fn emit, void *ctx)
{
    collect(src, emit, ctx, "restorable");
}

static void collect_success(void *src, ctl_metrics_emit_fn emit, void *ctx)
{
    collect(src, emit, ctx, "success");
}

static void collect_newest(void *src, ctl_metrics_emit_fn emit, void *ctx)
{
    collect(src, emit, ctx, "newest");
}

static const char *const by_drill[] = { "etcd_namespace", "etcd", "drill", NULL };

static const struct ctl_metrics_gauge gauges[] = {
    { "warden_etcd_restorable",
      "For each EtcdRestoreDrill that has run: 1 when its last drill found the Etcd's backups "
      "restorable, 0 when not or when the drill could not run (status.lastResult)",
      by_drill, collect_restorable },
    { "warden_etcd_last_successful_drill_timestamp_seconds",
      "For each EtcdRestoreDrill: when its last drill that found the backups restorable ended",
      by_drill, collect_success },
    { "warden_etcd_newest_restorable_snapshot_timestamp_seconds",
      "For each EtcdRestoreDrill: when the newest snapshot its last successful drill restored was "
      "taken (what a restore now would bring back: the recovery point)",
      by_drill, collect_newest },
    { .name = NULL },
};

static int enabled(const struct ctl_config *cfg)
{
    return cfg->backups;
}

static const struct ctl_watch watches[] = {
    { .res = { "etcd-warden.io", "v1alpha1", "etcdbackups", 1 },
      .kind = "EtcdBackup",
      .keys = backup_keys,
      .indexes = { { CTL_INDEX_ETCD_NAME, ctl_index_etcd_name } } },
    { .res = { "etcd-warden.io", "v1alpha1", "etcdrestores", 1 },
      .kind = "EtcdRestore",
      .keys = restore_keys },
    { .res = { "etcd-warden.io", "v1alpha1", "etcdbackupschedules", 1 },
      .kind = "EtcdBackupSchedule",
      .keys = schedule_keys },
    { .res = { "etcd-warden.io", "v1alpha1", "etcdrestoredrills", 1 },
      .kind = "EtcdRestoreDrill",
      .keys = drill_keys },
    { .kind = NULL },
};

static const struct ctl_key keys[] = {
    { "backup", ebk_reconcile, NULL, NULL },
    { "restore", erst_reconcile, NULL, NULL },
    { "bschedule", ebs_reconcile, NULL, NULL },
    { "rdrill", erd_reconcile, NULL, NULL },
    { .kind = NULL },
};

const struct ctl_capability backups_capability = {
    .name = "backups",
    .enabled = enabled,
    .watches = watches,
    .keys = keys,
    .gauges = gauges,
};
