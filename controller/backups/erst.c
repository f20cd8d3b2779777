/* erst - the EtcdRestore: checks, the copy Job, the new Etcd; see erst.h. */
#include "controller/backups/erst.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/bstore.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/pclaim.h"
#include "common/rtarget.h"
#include "controller/backups/cpjob.h"
#include "controller/core/claims.h"
#include "controller/core/ctl.h"
#include "controller/core/ctl_config.h"
#include "controller/core/etcdspec.h"
#include "controller/core/podjob.h"
#include "controller/core/kname.h"

/* ---- status ---- */

void erst_event(const struct erst_ctx *x, const cJSON *rs, enum ev_type type, const char *reason,
                const char *fmt, ...)
{
    struct ev_ref ref;
    char note[EV_NOTE_MAX];
    va_list ap;

    if (!x->events || ev_ref_from_object(rs, &ref) != KERR_OK)
        return;
    if (!ref.kind)
        ref.kind = "EtcdRestore";
    va_start(ap, fmt);
    vsnprintf(note, sizeof(note), fmt, ap);
    va_end(ap);
    (void)ev_emit(x->events, &ref, type, reason, "Restore", note);
}

enum kerr erst_put_status(const struct erst_ctx *x, cJSON *rs, const char *phase, const char *error,
                          struct kerr_info *err)
{
    struct k8s_write_opts wo = { .subresource = "status" };
    char now[KTIME_LEN + 1];
    cJSON *out = NULL;
    const char *rv;
    int64_t gen = 0;
    enum kerr rc = ktime_format(time(NULL), now);
    int terminal =
        strcmp(phase, ERST_PHASE_COMPLETED) == 0 || strcmp(phase, ERST_PHASE_FAILED) == 0;

    if (!rc && !kjson_has(rs, "status.startTime"))
        rc = kjson_set_str(rs, "status.startTime", now, err);
    if (!rc && terminal)
        rc = kjson_set_str(rs, "status.completionTime", now, err);
    if (!rc)
        rc = kjson_set_str(rs, "status.phase", phase, err);
    if (!rc && error)
        rc = kjson_set_str(rs, "status.error", error, err);
    else if (!rc)
        (void)kjson_delete(rs, "status.error");
    (void)kjson_get_int64(rs, "metadata.generation", &gen);
    if (!rc)
        rc = kjson_set_int(rs, "status.observedGeneration", gen, err);
    if (!rc)
        rc = k8s_update(x->client, &ERST_RES_RESTORE, NULL, NULL, rs, &wo, &out, err);
    rv = kjson_get_str(out, "metadata.resourceVersion");
    if (!rc && rv) /* read back: a write that follows goes with what was just stored */
        rc = kjson_set_str(rs, "metadata.resourceVersion", rv, err);
    cJSON_Delete(out);
    return rc;
}

static enum kerr fail(const struct erst_ctx *x, cJSON *rs, const char *reason, const char *why,
                      struct kerr_info *err)
{
    enum kerr rc = erst_put_status(x, rs, ERST_PHASE_FAILED, why, err);

    if (!rc)
        erst_event(x, rs, EV_WARNING, reason, "%s", why);
    return rc;
}

/* Delete the restore's copy Job, if any (NotFound is fine). */
static enum kerr delete_job(const struct erst_ctx *x, const cJSON *rs, struct kerr_info *err)
{
    const char *job = kjson_get_str(rs, "status.jobName");

    if (!job || !*job)
        return KERR_OK;
    return podjob_delete_job(x->client, kjson_get_str(rs, "metadata.namespace"), job,
                             kjson_get_str(rs, "metadata.uid"), err);
}

/* ---- the phases ---- */

/* The Job, with --require-empty-destination added to its container's arguments. */
static enum kerr build_job(const struct erst_ctx *x, const cJSON *rs, const struct erst_plan *p,
                           const char *name, cJSON **job, struct kerr_info *err)
{
    struct cpjob_spec s;
    cJSON *args;
    enum kerr rc;

    memset(&s, 0, sizeof(s));
    s.name = name;
    s.ns = kjson_get_str(rs, "metadata.namespace");
    s.owner = rs;
    s.from = (struct cpjob_store){ p->from.provider, p->from.container,
                                   p->from.prefix,   p->from.endpoint,
                                   p->from_secret,   *p->from_host ? p->from_host : NULL };
    s.to = (struct cpjob_store){ p->to.provider, p->to.container, p->to.prefix,
                                 p->to.endpoint, p->to_secret,    *p->to_host ? p->to_host : NULL };
    s.snapshot = p->snapshot;
    s.until = p->until;
    s.image = x->job_image;
    s.command = x->job_command;
    if ((rc = cpjob_build(&s, job, err)))
        return rc;
    args = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetArrayItem(kjson_get(*job, "spec.template.spec.containers"), 0), "args");
    if (!cJSON_IsArray(args) ||
        !cJSON_AddItemToArray(args, cJSON_CreateString("--require-empty-destination"))) {
        cJSON_Delete(*job);
        *job = NULL;
        return kerr_set(err, KERR_INTERNAL, "the copy Job has no argument list");
    }
    return KERR_OK;
}

/*
 * A copy Job of rs's (its name, owned by it) while rs is Pending: made by a pass that crashed,
 * or by a controller that created the Job before recording it. Stopped (erst_stop_copy: the
 * copy recorded, then the Job deleted, Foreground) and looked at again until it is gone,
 * before anything else: a restore never fails "before its copy" nor copies anew while a Job of
 * its copy may write. 1 when there is one (*requeue set), -1 on an API error (in err).
 */
static int stray_job(const struct erst_ctx *x, const cJSON *rs, const char *name, long *requeue,
                     struct kerr_info *err)
{
    cJSON *job = NULL;
    enum kerr rc = k8s_get(x->client, &ETCDSPEC_RES_JOB, kjson_get_str(rs, "metadata.namespace"),
                           name, NULL, &job, err);
    int there = rc == KERR_OK && podjob_owned(job, kjson_get_str(rs, "metadata.uid"));

    if (rc == KERR_NOTFOUND)
        kerr_clear(err);
    if (there) {
        rc = erst_stop_copy(x, rs, job, err);
        *requeue = ERST_POLL_MS;
    }
    cJSON_Delete(job);
    return rc != KERR_OK && rc != KERR_NOTFOUND ? -1 : there;
}

/*
 * The target's claim taken again in its store's claim Lease (controller/core/claims.h's
 * claims_take) before the copy Job: atomic with warden-webhook's admissions, as an EtcdBackup's
 * copy. KERR_OK with *why set when another owner's live record overlaps it (refused), *held
 * when the Lease could not be read or written (status.error, a Warning event
 * ClaimNotRecorded, looked at again: no copy meanwhile).
 */
static enum kerr take_claim(const struct erst_ctx *x, cJSON *rs, const struct erst_plan *p,
                            char *why, size_t n, int *held, long *requeue, struct kerr_info *err)
{
    struct bstore_claim c = { "", NULL };
    char other[CLAIMS_WHY_MAX];
    struct kerr_info e = { 0 };
    enum kerr rc;

    *held = 0;
    why[0] = '\0';
    if (erst_target_claim(&p->to, p->to_host, &c, &e) != KERR_OK) {
        snprintf(why, n, "the target store: %s", e.msg);
        return KERR_OK;
    }
    rc = claims_take(x->client,
                     &(struct pclaim){ kjson_get_str(rs, "metadata.namespace"),
                                       kjson_get_str(rs, "metadata.name"), c.key, c.prefix,
                                       PCLAIM_KIND_RESTORE,
                                       kjson_get_str(rs, "spec.target.etcdName"), p->to.provider,
                                       p->to.endpoint, kjson_get_str(rs, "metadata.uid") },
                     kjson_get_str(rs, "metadata.namespace"), other, &e);
    if (rc == KERR_OK && *other)
        snprintf(why, n,
                 "spec.target.store.prefix \"%.200s\" overlaps %.300s in the same store: one "
                 "prefix, one owner",
                 c.prefix, other);
    bstore_claim_release(&c);
    if (rc == KERR_OK)
        return KERR_OK;
    *held = 1;
    *requeue = ERST_WAIT_MS;
    rc = erst_put_status(x, rs, ERST_PHASE_PENDING, e.msg, err);
    if (rc == KERR_OK)
        erst_event(x, rs, EV_WARNING, "ClaimNotRecorded",
                   "no copy: the target's claim could not be recorded (retried): %s", e.msg);
    return rc;
}

static enum kerr pending(const struct erst_ctx *x, cJSON *rs, long *requeue, struct kerr_info *err)
{
    const char *ns = kjson_get_str(rs, "metadata.namespace");
    struct erst_plan p;
    char name[KNAME_LABEL_MAX + 1], now[KTIME_LEN + 1];
    cJSON *job = NULL;
    enum kerr rc;
    int held = 0, stray;

    memset(&p, 0, sizeof(p));
    rc = kname_job(kjson_get_str(rs, "metadata.name"), ERST_JOB_TAG, name);
    if (rc)
        return kerr_set(err, rc, "the restore's name gives no Job name");
    stray = stray_job(x, rs, name, requeue, err);
    if (stray)
        return stray < 0 ? err->code : KERR_OK;
    rc = erst_plan_resolve(x, rs, 1, &p, err);
    if (!rc && p.wait) {
        *requeue = ERST_WAIT_MS;
        if (!kjson_get_str(rs, "status.error") ||
            strcmp(kjson_get_str(rs, "status.error"), p.why) != 0)
            rc = erst_put_status(x, rs, ERST_PHASE_PENDING, p.why, err);
    } else if (!rc && p.refuse) {
        rc = fail(x, rs, "Refused", p.why, err);
    } else if (!rc) {
        rc = build_job(x, rs, &p, name, &job, err);
        if (rc == KERR_INVAL || rc == KERR_UNSUPPORTED) { /* a store the copy cannot open */
            snprintf(p.why, sizeof(p.why), "the copy Job: %s", err->msg);
            rc = fail(x, rs, "Refused", p.why, err);
            goto out;
        }
        /* last before the Job: the claim recorded where admissions record theirs */
        if (!rc)
            rc = take_claim(x, rs, &p, p.why, sizeof(p.why), &held, requeue, err);
        if (!rc && !held && *p.why)
            rc = fail(x, rs, "Refused", p.why, err);
        if (rc || held || *p.why)
            goto out;
        /* never a copy Job without the finalizer that deletes what it wrote (erst_del.h) */
        if (!rc)
            rc = erst_add_finalizer(x, rs, err);
        /* the copy recorded (status.jobName, copyStartedAt) and read back before its Job
         * exists: a failed status write makes no Job; the Job of a pass that wrote the status
         * and stopped is the same name, found by the next (Copying) */
        if (!rc && !kjson_get_str(rs, "status.copyStartedAt"))
            rc = kjson_set_str(rs, "status.copyStartedAt", cpjob_copy_start(rs, now), err);
        if (!rc)
            rc = kjson_set_str(rs, "status.jobName", name, err);
        /* a Local target's hostPath, as the Job mounts it: its cleanup deletes there only */
        if (!rc && *p.to_host)
            rc = kjson_set_str(rs, "status.targetHostPath", p.to_host, err);
        if (!rc)
            rc = erst_put_status(x, rs, ERST_PHASE_COPYING, NULL, err);
        if (!rc)
            rc = podjob_create_job(x->client, ns, job, err); /* also one of an earlier pass */
        if (rc == KERR_EXISTS) { /* not this restore's: left alone, nothing of ours ran */
            snprintf(p.why, sizeof(p.why), "the copy Job: %s", err->msg);
            (void)kjson_delete(rs, "status.jobName");
            (void)kjson_delete(rs, "status.copyStartedAt");
            rc = fail(x, rs, "Failed", p.why, err);
            goto out;
        }
        if (!rc) {
            erst_event(x, rs, EV_NORMAL, "Copying", "Job %s copies %s from %s/%s to %s/%s", name,
                       p.snapshot ? p.snapshot
                       : p.until  ? "up to the point in time"
                                  : "the latest",
                       p.from.container, p.from.prefix, p.to.container, p.to.prefix);
            *requeue = ERST_POLL_MS;
        }
    }
out:
    cJSON_Delete(job);
    erst_plan_release(&p);
    return rc;
}

static enum kerr copying(const struct erst_ctx *x, cJSON *rs, long *requeue, struct kerr_info *err)
{
    struct cpjob_summary *s = calloc(1, sizeof(*s));
    const char *job = kjson_get_str(rs, "status.jobName");
    cJSON *arr, *o;
    char why[300];
    size_t i;
    enum kerr rc;

    if (!s)
        return kerr_set(err, KERR_NOMEM, "the Job summary");
    rc = job ? cpjob_read(x->client, kjson_get_str(rs, "metadata.namespace"), job,
                          kjson_get_str(rs, "metadata.uid"), s, err)
             : KERR_NOTFOUND;
    if (rc == KERR_EXISTS) { /* not this restore's: never read nor deleted */
        char foreign[ERST_PLAN_WHY_MAX];

        snprintf(foreign, sizeof(foreign), "the copy Job: %s", err->msg);
        rc = fail(x, rs, "Failed", foreign, err);
        goto out;
    }
    if (rc == KERR_NOTFOUND) {
        snprintf(why, sizeof(why), "the copy Job %s is gone without a result", job ? job : "");
        rc = fail(x, rs, "Failed", why, err);
        goto out;
    }
    if (rc)
        goto out;
    if (!s->finished) {
        *requeue = ERST_POLL_MS;
        goto out;
    }
    if (!s->succeeded || !s->parsed) {
        snprintf(why, sizeof(why), "the copy Job %s failed (exit %d): %s", job, s->exit_code,
                 s->error[0] ? s->error : "no summary");
        rc = fail(x, rs, "Failed", why, err);
    } else {
        arr = cJSON_CreateArray();
        for (i = 0; arr && i < s->n && i < CPJOB_SNAPS_MAX; i++) {
            o = cJSON_CreateObject();
            if (!o || !cJSON_AddItemToArray(arr, o) ||
                !cJSON_AddStringToObject(o, "name", s->snaps[i].name) ||
                !cJSON_AddStringToObject(o, "kind", s->snaps[i].kind) ||
                !cJSON_AddNumberToObject(o, "startRevision", (double)s->snaps[i].start_rev) ||
                !cJSON_AddNumberToObject(o, "lastRevision", (double)s->snaps[i].last_rev)) {
                cJSON_Delete(arr);
                arr = NULL;
            }
        }
        rc = arr ? kjson_set(rs, "status.snapshots", arr, err)
                 : kerr_set(err, KERR_NOMEM, "the snapshot list");
        if (!rc)
            rc = erst_put_status(x, rs, ERST_PHASE_CREATING, NULL, err);
        if (!rc) {
            erst_event(x, rs, EV_NORMAL, "Copied", "%zu snapshot(s) copied by Job %s", s->total,
                       job);
            *requeue = 1;
        }
    }
    if (!rc) /* the result is in the status: the Job can go */
        rc = delete_job(x, rs, err);
out:
    free(s);
    return rc;
}

static enum kerr creating(const struct erst_ctx *x, cJSON *rs, long *requeue, struct kerr_info *err)
{
    const char *ns = kjson_get_str(rs, "metadata.namespace");
    const char *target = kjson_get_str(rs, "spec.target.etcdName");
    const char *mine;
    cJSON *etcd = NULL, *cur = NULL;
    struct erst_plan p;
    char why[ERST_PLAN_WHY_MAX];
    enum kerr rc;

    memset(&p, 0, sizeof(p));
    rc = delete_job(x, rs, err);
    if (!rc)
        rc = erst_plan_resolve(x, rs, 0, &p, err);
    if (!rc && p.wait) {
        *requeue = ERST_WAIT_MS;
        goto out;
    }
    if (!rc && p.refuse) {
        rc = fail(x, rs, "Failed", p.why, err);
        goto out;
    }
    /* the target prefix had no owner while the copy ran: someone may have claimed it since */
    if (!rc) {
        int used =
            erst_prefix_in_use(x->client, ns, target, &p.to, p.to_host, why, sizeof(why), err);

        if (used < 0)
            rc = err->code;
        if (used > 0) {
            char msg[ERST_PLAN_WHY_MAX + 256];

            snprintf(msg, sizeof(msg),
                     "spec.target.store.prefix \"%s\" was claimed while the copy ran: it "
                     "overlaps %s in the same store: one prefix, one cluster; the copied "
                     "snapshots stay under the target prefix, no Etcd is created",
                     p.to.prefix, why);
            rc = fail(x, rs, "Failed", msg, err);
            goto out;
        }
    }
    if (!rc)
        rc = erst_build_etcd(rs, p.spec, p.meta, &p.to, &etcd, err);
    if (!rc)
        rc = k8s_create(x->client, &ETCDSPEC_RES_ETCD, ns, etcd, NULL, NULL, err);
    if (rc == KERR_EXISTS) {
        rc = k8s_get(x->client, &ETCDSPEC_RES_ETCD, ns, target, NULL, &cur, err);
        mine = rc ? NULL : etcdspec_label(cur, ERST_LABEL_RESTORED_FROM);
        if (!rc && (!mine || strcmp(mine, kjson_get_str(rs, "metadata.name")) != 0)) {
            snprintf(why, sizeof(why), "Etcd %s/%s was created meanwhile by someone else", ns,
                     target);
            rc = fail(x, rs, "Failed", why, err);
            goto out;
        }
    }
    if (!rc)
        rc = kjson_set_str(rs, "status.etcdName", target, err);
    if (!rc)
        rc = erst_put_status(x, rs, ERST_PHASE_COMPLETED, NULL, err);
    if (!rc)
        erst_event(x, rs, EV_NORMAL, "Completed", "Etcd %s created on %s/%s", target,
                   p.to.container, p.to.prefix);
out:
    cJSON_Delete(etcd);
    cJSON_Delete(cur);
    erst_plan_release(&p);
    return rc;
}

enum kerr erst_run(const struct erst_ctx *x, const char *ns, const char *name, long *requeue_ms,
                   struct kerr_info *err)
{
    cJSON *rs = NULL;
    const char *phase;
    enum kerr rc = k8s_get(x->client, &ERST_RES_RESTORE, ns, name, NULL, &rs, err);

    *requeue_ms = 0;
    if (rc == KERR_NOTFOUND)
        return KERR_OK;
    if (rc)
        return rc;
    phase = kjson_get_str(rs, "status.phase");
    if (kjson_has(rs, "metadata.deletionTimestamp")) {
        rc = erst_delete_step(x, rs, requeue_ms, err);
    } else if (rtarget_claims(rs) && kjson_get_str(rs, "status.jobName") &&
               !erst_has_finalizer(rs)) { /* a copy started before restores had the finalizer */
        rc = erst_add_finalizer(x, rs, err);
        *requeue_ms = 1;
    } else if (!phase || !*phase || strcmp(phase, ERST_PHASE_PENDING) == 0) {
        rc = pending(x, rs, requeue_ms, err);
    } else if (strcmp(phase, ERST_PHASE_COPYING) == 0) {
        rc = copying(x, rs, requeue_ms, err);
    } else if (strcmp(phase, ERST_PHASE_CREATING) == 0) {
        rc = creating(x, rs, requeue_ms, err);
    } else { /* Completed, Failed: terminal */
        rc = delete_job(x, rs, err);
    }
    cJSON_Delete(rs);
    return rc;
}

enum kerr erst_reconcile(struct ctl *c, const char *ns, const char *name, struct ctl_result *res,
                         struct kerr_info *err)
{
    const struct ctl_config *cfg = ctl_cfg(c);
    struct erst_ctx x = { 0 };

    x.client = ctl_client(c);
    x.events = ctl_events(c);
    x.job_image = cfg->copy_image;
    x.job_command = cfg->copy_command;
    x.backup_wait_ms = ERST_BACKUP_WAIT_MS;
    return erst_run(&x, ns, name, &res->requeue_ms, err);
}
