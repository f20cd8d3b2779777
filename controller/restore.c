/* restore - the restore capability's table entry; see restore.h. */
#include "controller/restore.h"

#include "common/kjson.h"
#include "controller/oref.h"
#include "controller/rst.h"
#include "controller/sbk.h"

/* An EtcdStatusBackup: the Etcd of its name. */
static void statusbackup_keys(struct ctl *c, const cJSON *obj, int own)
{
    (void)own;
    ctl_enqueue_obj(c, "etcd", obj, kjson_get_str(obj, "metadata.name"));
}

static const struct ctl_watch watches[] = {
    { .res = { "etcd-warden.io", "v1alpha1", "etcdstatusbackups", 1 },
      .kind = "EtcdStatusBackup",
      .keys = statusbackup_keys },
    { .kind = NULL },
};

static const struct ctl_etcd_step steps[] = {
    { "status-backup", sbk_reconcile, 0 },
    { "owner-references", oref_reconcile, 0 },
    { "restore", rst_reconcile, 1 },
    { .name = NULL },
};

const struct ctl_capability restore_capability = {
    .name = "restore",
    .watches = watches,
    .steps = steps,
};
