/* restore - the restore capability's table entry; see restore.h. */
#include "controller/restore/restore.h"

#include "common/kjson.h"
#include "controller/core/ctl.h"
#include "controller/core/rctx.h"
#include "controller/restore/orefpass.h"
#include "controller/restore/rst.h"
#include "controller/restore/sbk.h"

/* An EtcdStatusBackup: the Etcd of its name. */
static void statusbackup_keys(struct ctl *c, const cJSON *obj, int own)
{
    (void)own;
    ctl_enqueue_obj(c, "etcd", obj, kjson_get_str(obj, "metadata.name"));
}

/*
 * The service "restore-lift-suspension": a restore ended by hand (the restoring label removed)
 * leaves etcd-warden's suspension behind; rst_run lifts it, and res->requeue_ms is 1 then
 * (0, nothing done, for any other Etcd).
 */
static enum kerr lift_suspension(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                                 struct kerr_info *err)
{
    struct rctx x;
    enum kerr rc;

    if (!rst_ended_by_hand(etcd))
        return KERR_OK;
    rctx_from_ctl(c, &x);
    rc = rst_run(&x, etcd, &res->requeue_ms, err);
    if (rc == KERR_OK)
        res->requeue_ms = 1;
    return rc;
}

static const struct ctl_watch watches[] = {
    { .res = { "etcd-warden.io", "v1alpha1", "etcdstatusbackups", 1 },
      .kind = "EtcdStatusBackup",
      .keys = statusbackup_keys },
    { .kind = NULL },
};

static const struct ctl_etcd_step steps[] = {
    { "status-backup", sbk_reconcile, 0 },
    { "owner-references", orefpass_reconcile, 0 },
    { "restore", rst_reconcile, 1 },
    { .name = NULL },
};

static const struct ctl_service services[] = {
    { "restore-lift-suspension", lift_suspension },
    { .name = NULL },
};

const struct ctl_capability restore_capability = {
    .name = "restore",
    .watches = watches,
    .steps = steps,
    .services = services,
};
