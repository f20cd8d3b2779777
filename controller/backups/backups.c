/* backups - the backups capability's table entry; see backups.h. */
#include "controller/backups/backups.h"

#include "common/kjson.h"
#include "controller/core/ctl.h"
#include "controller/core/ctl_config.h"
#include "controller/backups/ebk.h"
#include "controller/backups/ebs.h"
#include "controller/backups/erst.h"

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
    { .kind = NULL },
};

static const struct ctl_key keys[] = {
    { "backup", ebk_reconcile, NULL, NULL },
    { "restore", erst_reconcile, NULL, NULL },
    { "bschedule", ebs_reconcile, NULL, NULL },
    { .kind = NULL },
};

const struct ctl_capability backups_capability = {
    .name = "backups",
    .enabled = enabled,
    .watches = watches,
    .keys = keys,
};
