/* imt - the ExtendFullSnapshotImmutabilityTask: create/delete for hibernation, CronJob, status. */
#include "controller/immutability/imt.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/blocal.h"
#include "common/bstore.h"
#include "common/k8s.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/log.h"
#include "common/lowner.h"
#include "controller/core/ctl.h"
#include "controller/core/etcdspec.h"
#include "controller/core/oref.h"
#include "controller/core/rctx.h"
#include "controller/immutability/imtuntil.h"

enum kerr imt_task_ensure_x(const struct rctx *x, const cJSON *etcd, struct kerr_info *err)
{
    const char *name, *want, *ns = kjson_get_str(etcd, "metadata.namespace");
    cJSON *task = NULL, *cur = NULL, *patch = NULL;
    enum kerr rc;

    rc = imtjob_task_build(etcd, &task, err);
    if (rc != KERR_OK)
        return rc;
    name = kjson_get_str(task, "metadata.name");
    want = kjson_get_str(task, "spec.config.schedule");
    rc = k8s_get(x->client, &ETCDSPEC_RES_IMMTASK, ns, name, NULL, &cur, err);
    if (rc == KERR_NOTFOUND) {
        rc = k8s_create(x->client, &ETCDSPEC_RES_IMMTASK, ns, task, NULL, NULL, err);
        if (rc == KERR_OK)
            rctx_event(x, etcd, EV_NORMAL, "ImmutabilityTaskCreated", "Hibernate",
                       "ExtendFullSnapshotImmutabilityTask %s created, schedule \"%s\"", name,
                       want);
        rc = rc == KERR_EXISTS ? KERR_OK : rc;
    } else if (rc == KERR_OK && kjson_has(cur, "metadata.deletionTimestamp")) {
        rc = kerr_set(err, KERR_CONFLICT,
                      "ExtendFullSnapshotImmutabilityTask %s/%s is being "
                      "deleted; it is created again once gone",
                      ns, name);
    } else if (rc == KERR_OK && strcmp(imtjob_schedule(cur, NULL), want) != 0) {
        patch = cJSON_CreateObject();
        rc = kjson_set_str(patch, "metadata.resourceVersion",
                           kjson_get_str(cur, "metadata.resourceVersion"), err);
        if (rc == KERR_OK)
            rc = kjson_set_str(patch, "spec.config.schedule", want, err);
        if (rc == KERR_OK)
            rc = k8s_patch(x->client, &ETCDSPEC_RES_IMMTASK, ns, name, K8S_PATCH_MERGE, patch, NULL,
                           NULL, err);
    }
    cJSON_Delete(patch);
    cJSON_Delete(cur);
    cJSON_Delete(task);
    return rc;
}

enum kerr imt_task_delete_x(const struct rctx *x, const cJSON *etcd, struct kerr_info *err)
{
    char name[ETCDSPEC_NAME_MAX + 32];
    const char *ns = kjson_get_str(etcd, "metadata.namespace");
    struct k8s_delete_opts o = { .propagation_policy = "Background" };
    enum kerr rc;

    if (imtjob_task_name(kjson_get_str(etcd, "metadata.name"), name, sizeof(name)) != KERR_OK)
        return kerr_set(err, KERR_INVAL, "Etcd name too long");
    rc = k8s_delete(x->client, &ETCDSPEC_RES_IMMTASK, ns, name, &o, NULL, err);
    if (rc == KERR_OK)
        rctx_event(x, etcd, EV_NORMAL, "ImmutabilityTaskDeleted", "WakeUp",
                   "ExtendFullSnapshotImmutabilityTask %s deleted", name);
    return rc == KERR_NOTFOUND ? KERR_OK : rc;
}

/* What one pass decided: the Ready condition and the CronJob seen. */
struct verdict {
    int ready;
    const char *reason;
    char message[1024];
    cJSON *cronjob;            /* OWNS: the CronJob as stored, or NULL */
    char until[KTIME_LEN + 1]; /* its last successful run's immutableUntil, or "" */
};

static void fail(struct verdict *v, const char *reason, const char *msg)
{
    v->ready = 0;
    v->reason = reason;
    snprintf(v->message, sizeof(v->message), "%s", msg);
}

/*
 * Is obj controlled by something other than the task of ref: another kind or
 * another name (a reference to an older task of the same name is ours)?
 */
static int foreign_controller(const cJSON *obj, const cJSON *ref)
{
    const char *kind = kjson_get_str(ref, "kind"), *name = kjson_get_str(ref, "name");
    const cJSON *r;

    cJSON_ArrayForEach (r, kjson_get_arr(obj, "metadata.ownerReferences")) {
        const char *k = kjson_get_str(r, "kind"), *n = kjson_get_str(r, "name");

        if (cJSON_IsTrue(kjson_get(r, "controller")) &&
            (!k || !n || strcmp(k, kind) != 0 || strcmp(n, name) != 0))
            return 1;
    }
    return 0;
}

/* Create or replace the CronJob so that it is want (TAKES). */
static enum kerr sync_cronjob(const struct rctx *x, const char *ns, cJSON *want, struct verdict *v,
                              struct kerr_info *err)
{
    const char *name = kjson_get_str(want, "metadata.name");
    const char *hash = etcdspec_annotation(want, IMTJOB_ANN_SPEC_HASH);
    cJSON *cur = NULL, *refs = NULL;
    int changed = 0;
    enum kerr rc;

    rc = k8s_get(x->client, &ETCDSPEC_RES_CRONJOB, ns, name, NULL, &cur, err);
    if (rc == KERR_NOTFOUND) {
        rc = k8s_create(x->client, &ETCDSPEC_RES_CRONJOB, ns, want, NULL, &v->cronjob, err);
        goto out;
    }
    if (rc == KERR_OK && foreign_controller(cur, kjson_get(want, "metadata.ownerReferences.0")))
        rc = kerr_set(err, KERR_EXISTS, "CronJob %s/%s exists and is controlled by another owner",
                      ns, name);
    if (rc == KERR_OK)
        rc = oref_compute(kjson_get(cur, "metadata.ownerReferences"),
                          kjson_get(want, "metadata.ownerReferences.0"), &refs, &changed, err);
    if (rc != KERR_OK)
        goto out;
    if (!changed && hash && etcdspec_annotation(cur, IMTJOB_ANN_SPEC_HASH) &&
        strcmp(hash, etcdspec_annotation(cur, IMTJOB_ANN_SPEC_HASH)) == 0) {
        v->cronjob = cur;
        cur = NULL;
        goto out;
    }
    rc = kjson_set(want, "metadata.ownerReferences", refs, err);
    refs = NULL;
    if (rc == KERR_OK)
        rc = kjson_set_str(want, "metadata.resourceVersion",
                           kjson_get_str(cur, "metadata.resourceVersion"), err);
    if (rc == KERR_OK)
        rc = k8s_update(x->client, &ETCDSPEC_RES_CRONJOB, ns, name, want, NULL, &v->cronjob, err);
out:
    cJSON_Delete(refs);
    cJSON_Delete(cur);
    cJSON_Delete(want);
    return rc;
}

/*
 * Delete the task's CronJob when the task controls it: its store is no longer a live Etcd's
 * (the Etcd gone or being deleted, its backup off, its store not understood), and a copy made
 * there would write into a prefix nothing may claim any more. Its running Job goes with it
 * (Background). A CronJob of another owner is left alone.
 */
static enum kerr stop_cronjob(const struct rctx *x, const cJSON *task, struct kerr_info *err)
{
    const char *ns = kjson_get_str(task, "metadata.namespace");
    char name[IMTJOB_CRONJOB_MAX + 1];
    cJSON *cur = NULL, *ref = cJSON_CreateObject();
    enum kerr rc;

    if (!ref)
        return kerr_set(err, KERR_NOMEM, NULL);
    imtjob_cronjob_name(kjson_get_str(task, "metadata.name"), name);
    cJSON_AddStringToObject(ref, "kind", IMTJOB_KIND);
    cJSON_AddStringToObject(ref, "name", kjson_get_str(task, "metadata.name"));
    rc = k8s_get(x->client, &ETCDSPEC_RES_CRONJOB, ns, name, NULL, &cur, err);
    if (rc == KERR_OK && !foreign_controller(cur, ref)) {
        struct k8s_delete_opts o = { .propagation_policy = "Background",
                                     .precondition_uid = kjson_get_str(cur, "metadata.uid") };

        rc = k8s_delete(x->client, &ETCDSPEC_RES_CRONJOB, ns, name, &o, NULL, err);
        if (rc == KERR_OK)
            rctx_event(x, task, EV_NORMAL, "CronJobStopped", "ReconcileCronJob",
                       "CronJob %s deleted: its store is no longer a live Etcd's", name);
    }
    cJSON_Delete(cur);
    cJSON_Delete(ref);
    return rc == KERR_NOTFOUND ? KERR_OK : rc;
}

/* The condition of v, keeping the transition time of an equal one in old (BORROWED). */
static cJSON *condition(const struct verdict *v, const cJSON *old)
{
    char now[KTIME_LEN + 1] = "";

    if (ktime_format(time(NULL), now) != KERR_OK)
        now[0] = '\0';
    return rctx_ready_condition(v->ready, v->reason, v->message, old, now);
}

/* The task's status for v; written through /status when it differs. */
static enum kerr write_status(const struct rctx *x, const cJSON *task, const struct verdict *v,
                              struct kerr_info *err)
{
    cJSON *st = cJSON_CreateObject(), *conds = cJSON_CreateArray(), *obj = NULL;
    const char *cj = kjson_get_str(v->cronjob, "metadata.name");
    const char *last = kjson_get_str(v->cronjob, "status.lastScheduleTime");
    /* a run's date kept once its Job is gone (the CronJob keeps one successful Job) */
    const char *until = v->until[0] ? v->until : kjson_get_str(task, "status.immutableUntil");
    int64_t gen = 0;
    enum kerr rc = st && conds ? KERR_OK : KERR_NOMEM;

    (void)kjson_get_int64(task, "metadata.generation", &gen);
    if (rc == KERR_OK && ((cj && !cJSON_AddStringToObject(st, "cronJobName", cj)) ||
                          (last && !cJSON_AddStringToObject(st, "lastScheduleTime", last)) ||
                          (until && !cJSON_AddStringToObject(st, "immutableUntil", until)) ||
                          !cJSON_AddNumberToObject(st, "observedGeneration", (double)gen) ||
                          !cJSON_AddItemToArray(conds, condition(v, task))))
        rc = KERR_NOMEM;
    if (rc == KERR_OK)
        cJSON_AddItemToObject(st, "conditions", conds);
    else
        cJSON_Delete(conds);
    if (rc != KERR_OK || cJSON_Compare(kjson_get(task, "status"), st, 1)) {
        cJSON_Delete(st);
        return rc == KERR_OK ? rc : kerr_set(err, rc, NULL);
    }
    obj = cJSON_Duplicate(task, 1);
    if (!obj) {
        cJSON_Delete(st);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    rc = kjson_set(obj, "status", st, err);
    if (rc == KERR_OK)
        rc = k8s_update(x->client, &ETCDSPEC_RES_IMMTASK, kjson_get_str(task, "metadata.namespace"),
                        kjson_get_str(task, "metadata.name"), obj,
                        &(struct k8s_write_opts){ .subresource = "status" }, NULL, err);
    cJSON_Delete(obj);
    return rc == KERR_OK ? rc : kerr_wrap(err, "writing the task's status");
}

/*
 * Why a Local Etcd's immutability copies may not be written where its CronJob would mount, into
 * why (n bytes; "" when they may, or the store is not Local): the directory the Etcd's Secret
 * (secret, read in this pass, the one the CronJob is built from) places is not its namespace's
 * part of a partitioned Local BackupBucket (common/lowner's lowner_part_now), or cannot be
 * placed. The Secret may have been edited since the Etcd was admitted. An API error is returned.
 */
static enum kerr local_part(const struct rctx *x, const cJSON *etcd, const cJSON *secret, char *why,
                            size_t n, struct kerr_info *err)
{
    const char *kind = bstore_provider_kind(kjson_get_str(etcd, "spec.backup.store.provider"));
    const char *c = kjson_get_str(etcd, "spec.backup.store.container");
    const char *p = kjson_get_str(etcd, "spec.backup.store.prefix");
    char hp[BLOCAL_HOSTPATH_MAX + 1], dir[BLOCAL_HOSTPATH_MAX + 2 * BLOCAL_PREFIX_MAX + 4], w[900];
    struct kerr_info e = { 0 };
    enum kerr rc;

    why[0] = '\0';
    if (!kind || strcmp(kind, "Local") != 0)
        return KERR_OK;
    if (blocal_hostpath(secret, hp, sizeof(hp), &e) != KERR_OK ||
        blocal_dir(hp, c ? c : "", p ? p : "", dir, sizeof(dir), &e) != KERR_OK) {
        snprintf(why, n, "the Etcd's Local store cannot be placed: %.400s", e.msg);
        return KERR_OK;
    }
    rc = lowner_part_now(x->client, kjson_get_str(etcd, "metadata.namespace"), dir,
                         "an immutability task copies", w, sizeof(w), err);
    if (rc == KERR_OK && *w)
        snprintf(why, n,
                 "the CronJob would mount the hostPath \"%.100s\" of the Etcd's Secret "
                 "(read now): %.600s",
                 hp, w);
    return rc;
}

/* Decide and act for a live task: the Etcd, the inputs, the CronJob. */
static enum kerr decide(const struct rctx *x, const cJSON *task, struct verdict *v,
                        struct kerr_info *err)
{
    const char *ns = kjson_get_str(task, "metadata.namespace");
    const char *etcd_name = kjson_get_str(task, "spec.etcdName");
    struct kerr_info why;
    cJSON *etcd = NULL, *want = NULL, *secret = NULL;
    char part[sizeof(v->message)];
    enum kerr rc;

    if (!etcd_name) {
        fail(v, "InvalidTask", "spec.etcdName: required");
        return KERR_OK;
    }
    rc = k8s_get(x->client, &ETCDSPEC_RES_ETCD, ns, etcd_name, NULL, &etcd, err);
    if (rc == KERR_NOTFOUND) {
        snprintf(why.msg, sizeof(why.msg), "Etcd %s/%s not found", ns, etcd_name);
        fail(v, "EtcdNotFound", why.msg);
        return stop_cronjob(x, task, err);
    }
    if (rc != KERR_OK)
        return rc;
    if (kjson_has(etcd, "metadata.deletionTimestamp"))
        fail(v, "EtcdDeleting", "the Etcd is being deleted");
    else if (etcdspec_cron_check(imtjob_schedule(task, etcd), &why) != KERR_OK)
        fail(v, "InvalidSchedule", why.msg);
    else if (!kjson_get_obj(etcd, "spec.backup.store"))
        fail(v, "BackupNotEnabled", "the Etcd has no backup store (spec.backup.store)");
    else if (imtjob_local_secret(etcd) &&
             (rc = k8s_get(x->client, &ETCDSPEC_RES_SECRET, ns, imtjob_local_secret(etcd), NULL,
                           &secret, &why)) != KERR_OK)
        fail(v, "InvalidEtcd", why.msg);
    else if (imtjob_cronjob_build_store(task, etcd, secret, x->imm_image, x->imm_command, &want,
                                        &why) != KERR_OK)
        fail(v, why.code == KERR_UNSUPPORTED ? "UnsupportedProvider" : "InvalidEtcd", why.msg);
    else if ((rc = local_part(x, etcd, secret, part, sizeof(part), &why)) != KERR_OK)
        fail(v, "CronJobFailed", why.msg); /* the buckets not read: the CronJob kept as it is */
    else if (part[0])
        fail(v, IMT_REASON_NOT_OWNED, part);
    else {
        rc = sync_cronjob(x, ns, want, v, &why); /* takes want */
        want = NULL;
        if (rc != KERR_OK)
            fail(v, "CronJobFailed", why.msg);
        else
            v->ready = 1;
    }
    if (v->ready && imtuntil_read(x->client, ns, v->cronjob, v->until, &why) != KERR_OK)
        log_warn("cannot read the immutability CronJob's last run", "namespace", ns, "cronJob",
                 kjson_get_str(v->cronjob, "metadata.name"), "error", why.msg);
    if (v->ready) {
        v->reason = "CronJobReady";
        snprintf(v->message, sizeof(v->message), "CronJob %s runs on schedule \"%s\"",
                 kjson_get_str(v->cronjob, "metadata.name"), imtjob_schedule(task, etcd));
    }
    if (rc != KERR_OK && err)
        *err = why;
    if (rc == KERR_OK && !v->ready && strcmp(v->reason, "InvalidSchedule") != 0 &&
        strcmp(v->reason, "CronJobFailed") != 0)
        rc = stop_cronjob(x, task, err);
    cJSON_Delete(want); /* built but not synced: refused before */
    cJSON_Delete(secret);
    cJSON_Delete(etcd);
    return rc;
}

enum kerr imt_run(const struct rctx *x, const char *ns, const char *name, long *requeue_ms,
                  struct kerr_info *err)
{
    struct verdict v = { 0, "", "", NULL, "" };
    struct kerr_info serr;
    cJSON *task = NULL;
    enum kerr rc, src;

    *requeue_ms = 0;
    rc = k8s_get(x->client, &ETCDSPEC_RES_IMMTASK, ns, name, NULL, &task, err);
    if (rc == KERR_NOTFOUND)
        return KERR_OK; /* its CronJob goes with it (garbage collector) */
    if (rc != KERR_OK || kjson_has(task, "metadata.deletionTimestamp")) {
        cJSON_Delete(task);
        return rc;
    }
    rc = decide(x, task, &v, err);
    if (!v.ready) {
        *requeue_ms = IMT_RETRY_MS;
        log_warn("immutability task not ready", "namespace", ns, "name", name, "reason", v.reason,
                 "message", v.message);
        rctx_event(x, task, EV_WARNING, v.reason, "ReconcileCronJob", "%s", v.message);
    }
    src = write_status(x, task, &v, &serr);
    if (rc == KERR_OK && src != KERR_OK) {
        rc = src;
        if (err)
            *err = serr;
    }
    cJSON_Delete(v.cronjob);
    cJSON_Delete(task);
    return rc;
}

enum kerr imt_reconcile(struct ctl *c, const char *ns, const char *name, struct ctl_result *res,
                        struct kerr_info *err)
{
    struct rctx x;

    res->requeue_ms = 0;
    rctx_from_ctl(c, &x);
    return imt_run(&x, ns, name, &res->requeue_ms, err);
}

enum kerr imt_task_ensure(struct ctl *c, const cJSON *etcd, struct kerr_info *err)
{
    char name[ETCDSPEC_NAME_MAX + 32];
    struct rctx x;
    enum kerr rc;

    rctx_from_ctl(c, &x);
    rc = imt_task_ensure_x(&x, etcd, err);
    /* the CronJob follows the Etcd's store and schedule: look at the task again */
    if (rc == KERR_OK &&
        imtjob_task_name(kjson_get_str(etcd, "metadata.name"), name, sizeof(name)) == KERR_OK)
        ctl_enqueue(c, "immtask", kjson_get_str(etcd, "metadata.namespace"), name, 0);
    return rc;
}

enum kerr imt_task_delete(struct ctl *c, const cJSON *etcd, struct kerr_info *err)
{
    struct rctx x;

    rctx_from_ctl(c, &x);
    return imt_task_delete_x(&x, etcd, err);
}
