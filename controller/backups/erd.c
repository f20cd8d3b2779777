/* erd - the EtcdRestoreDrill: drills on a schedule, their Jobs and history; see erd.h. */
#include "controller/backups/erd.h"
#include "controller/backups/erd_int.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "common/kobj.h"
#include "common/log.h"
#include "controller/core/ctl.h"
#include "controller/core/ctl_config.h"
#include "controller/core/etcdspec.h"
#include "controller/core/podjob.h"
#include "controller/core/rctx.h"

const struct k8s_resource ERD_RES_DRILL = { "etcd-warden.io", "v1alpha1", "etcdrestoredrills", 1 };

#define ANN_RUN_PATH   "metadata.annotations[" ERD_ANN_RUN "]"
#define ANN_SCHED_PATH "metadata.annotations[" ERD_ANN_SCHEDULED_AT "]"

/* Check the spec into *sp; KERR_INVAL with *reason and the message otherwise. */
static enum kerr read_spec(const cJSON *d, int64_t now, struct erd_spec *sp, const char **reason,
                           struct kerr_info *err)
{
    const char *mode = kjson_get_str(d, "spec.mode");
    bool suspend = false;
    int64_t next;

    memset(sp, 0, sizeof(*sp));
    *reason = "InvalidSchedule";
    if (cron_parse(kjson_get_str(d, "spec.schedule"), &sp->cron, err) != KERR_OK)
        return kerr_wrap(err, "spec.schedule");
    if (cron_next(&sp->cron, now, &next) != KERR_OK)
        return kerr_set(err, KERR_INVAL, "spec.schedule: no fire time in the next %d years",
                        CRON_SEARCH_YEARS);
    *reason = "InvalidSpec";
    if (mode && strcmp(mode, "Restore") == 0)
        sp->restore = 1;
    else if (mode && strcmp(mode, "Verify") != 0)
        return kerr_set(err, KERR_INVAL, "spec.mode: \"%.64s\" is not Verify or Restore", mode);
    sp->etcd = kjson_get_str(d, "spec.target.etcdName");
    sp->backup = kjson_get_str(d, "spec.target.backupName");
    if (sp->etcd && !*sp->etcd)
        sp->etcd = NULL;
    if (sp->backup && !*sp->backup)
        sp->backup = NULL;
    if (!sp->etcd == !sp->backup)
        return kerr_set(err, KERR_INVAL, "spec.target: exactly one of etcdName and backupName");
    sp->keep_ok = kjson_get_count(d, "spec.successfulJobsHistoryLimit", ERD_DEFAULT_KEEP_OK);
    sp->keep_bad = kjson_get_count(d, "spec.failedJobsHistoryLimit", ERD_DEFAULT_KEEP_BAD);
    sp->deadline_s = kjson_get_count(d, "spec.activeDeadlineSeconds", 0);
    if (sp->keep_ok < 0 || sp->keep_bad < 0)
        return kerr_set(err, KERR_INVAL, "spec.%sJobsHistoryLimit: must be an integer >= 0",
                        sp->keep_ok < 0 ? "successful" : "failed");
    if (sp->deadline_s < 0)
        return kerr_set(err, KERR_INVAL, "spec.activeDeadlineSeconds: must be an integer >= 0");
    (void)kjson_get_bool(d, "spec.suspend", &suspend);
    sp->suspend = suspend;
    return KERR_OK;
}

/* ---- the Jobs ---- */

static int64_t fire_of(const cJSON *j)
{
    int64_t t = erd_time_at(j, ANN_SCHED_PATH);

    return t > 0 ? t : erd_time_at(j, "metadata.creationTimestamp");
}

/* Oldest first: fire time, then creation, then name. */
static int older_first(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    int64_t p = fire_of(x), q = fire_of(y);
    const char *m = kjson_get_str(x, "metadata.name"), *n = kjson_get_str(y, "metadata.name");
    int c;

    if (p != q)
        return p < q ? -1 : 1;
    c = strcmp(kjson_get_str(x, "metadata.creationTimestamp") ?: "",
               kjson_get_str(y, "metadata.creationTimestamp") ?: "");
    return c ? c : strcmp(m ? m : "", n ? n : "");
}

/* The drill's Jobs, sorted oldest first, into *v (OWNED, *n of them, BORROWED from p->jobs). */
static enum kerr sorted_jobs(const struct erd_pass *p, const cJSON ***v, size_t *n,
                             struct kerr_info *err)
{
    const cJSON *j;

    *n = 0;
    *v = calloc((size_t)cJSON_GetArraySize(kjson_get(p->jobs, "items")) + 1, sizeof(**v));
    if (!*v)
        return kerr_set(err, KERR_NOMEM, "out of memory");
    cJSON_ArrayForEach (j, kjson_get_arr(p->jobs, "items"))
        (*v)[(*n)++] = j;
    qsort(*v, *n, sizeof(**v), older_first);
    return KERR_OK;
}

/* List the drill's Jobs (its label, its uid); the active ones; the newest finished unread one. */
static enum kerr survey(const struct rctx *x, struct erd_pass *p, struct kerr_info *err)
{
    char label[KNAME_LABEL_MAX + 1], sel[KNAME_LABEL_MAX + 64];
    const char *uid = kjson_get_str(p->drill, "metadata.uid");
    const char *last = kjson_get_str(p->drill, "status.lastJob");
    const cJSON **v = NULL, *j;
    cJSON *items, *list = NULL;
    size_t n = 0, i;
    enum kerr rc;

    if (cpjob_for_label(p->drill, label) != KERR_OK)
        return kerr_set(err, KERR_INVAL, "no label value can be made of the drill's name");
    snprintf(sel, sizeof(sel), CPJOB_LABEL_FOR "=%s", label);
    rc = k8s_list(x->client, &ETCDSPEC_RES_JOB, p->ns,
                  &(struct k8s_list_opts){ .label_selector = sel }, &list, err);
    if (rc != KERR_OK)
        return kerr_wrap(err, "listing the drill's Jobs");
    /* only the drill's own */
    p->jobs = cJSON_CreateObject();
    items = cJSON_AddArrayToObject(p->jobs, "items");
    p->active = cJSON_CreateArray();
    if (!items || !p->active) {
        cJSON_Delete(list);
        return kerr_set(err, KERR_NOMEM, "out of memory");
    }
    cJSON_ArrayForEach (j, kjson_get_arr(list, "items"))
        if (podjob_owned(j, uid))
            cJSON_AddItemToArray(items, cJSON_Duplicate(j, 1));
    cJSON_Delete(list);
    rc = sorted_jobs(p, &v, &n, err);
    for (i = 0; rc == KERR_OK && i < n; i++) {
        const char *name = kjson_get_str(v[i], "metadata.name");
        cJSON *ref;

        if (podjob_job_finished(v[i])) {
            p->read_job = v[i];
            continue;
        }
        ref = cJSON_CreateObject();
        if (!ref || !cJSON_AddStringToObject(ref, "name", name ? name : "") ||
            !cJSON_AddItemToArray(p->active, ref)) {
            cJSON_Delete(ref);
            rc = kerr_set(err, KERR_NOMEM, "out of memory");
        }
    }
    /* the newest finished Job, unless it was read before */
    if (p->read_job && last && strcmp(last, kjson_get_str(p->read_job, "metadata.name") ?: "") == 0)
        p->read_job = NULL;
    free(v);
    return rc;
}

/* The Pod of Job j (BORROWED), or NULL, into *pod (OWNED). */
static enum kerr job_pod(const struct rctx *x, const struct erd_pass *p, const cJSON *j,
                         cJSON **pod, struct kerr_info *err)
{
    char sel[128];
    cJSON *list = NULL;
    const cJSON *it;
    enum kerr rc;

    *pod = NULL;
    snprintf(sel, sizeof(sel), "controller-uid=%s", kjson_get_str(j, "metadata.uid") ?: "-");
    rc = k8s_list(x->client, &ETCDSPEC_RES_POD, p->ns,
                  &(struct k8s_list_opts){ .label_selector = sel }, &list, err);
    cJSON_ArrayForEach (it, kjson_get_arr(list, "items"))
        if (cJSON_IsObject(kjson_get(it, "status.containerStatuses.0.state.terminated")) || !*pod) {
            cJSON_Delete(*pod);
            *pod = cJSON_Duplicate(it, 1);
        }
    cJSON_Delete(list);
    return rc;
}

/* Read the verdict of p->read_job. */
static enum kerr read_verdict(const struct rctx *x, struct erd_pass *p, struct kerr_info *err)
{
    char failed[512];
    cJSON *pod = NULL;
    enum kerr rc;

    if (!p->read_job)
        return KERR_OK;
    rc = job_pod(x, p, p->read_job, &pod, err);
    if (rc == KERR_OK) {
        podjob_job_failed(p->read_job, failed, sizeof(failed));
        erd_sum_verdict(p->read_job, pod, failed, &p->out);
    }
    cJSON_Delete(pod);
    return rc;
}

/* Delete the drill's finished Jobs of one outcome beyond keep, oldest first (the verdict of the
 * newest was read before). */
static enum kerr prune(const struct rctx *x, struct erd_pass *p, int ok, int64_t keep,
                       struct kerr_info *err)
{
    const char *uid = kjson_get_str(p->drill, "metadata.uid");
    const cJSON **v = NULL;
    size_t n = 0, i, m = 0;
    enum kerr rc = sorted_jobs(p, &v, &n, err);

    for (i = 0; rc == KERR_OK && i < n; i++) {
        int64_t s = 0;
        int succeeded = kjson_get_int64(v[i], "status.succeeded", &s) == KERR_OK && s > 0;

        if (podjob_job_done(v[i]) && succeeded == ok)
            v[m++] = v[i];
    }
    for (i = 0; rc == KERR_OK && (int64_t)(m - i) > keep; i++)
        rc = podjob_delete_job(x->client, p->ns, kjson_get_str(v[i], "metadata.name"), uid, err);
    free(v);
    return rc == KERR_OK ? rc : kerr_wrap(err, "pruning the drill's Jobs");
}

/* ---- starting a drill ---- */

/* The fire time due (*t, 0: none): the latest at or before now, after the last one. */
static void due(const struct erd_pass *p, const struct erd_spec *sp, int64_t *t)
{
    int64_t base =
        p->last_sched ? p->last_sched : erd_time_at(p->drill, "metadata.creationTimestamp");
    int64_t u;

    *t = 0;
    if (!sp->suspend && cron_prev(&sp->cron, p->now, &u) == KERR_OK && u > base)
        *t = u;
}

/* Start the drill's Job name for fire time t (0: a run request). */
static enum kerr start(const struct rctx *x, const struct erd_env *env, struct erd_pass *p,
                       const struct erd_spec *sp, const struct erd_target *tg, const char *name,
                       int64_t t, struct kerr_info *err)
{
    char when[KTIME_LEN + 1];
    cJSON *job = NULL, *ref;
    enum kerr rc;

    if (ktime_format((time_t)(t ? t : p->now), when) != KERR_OK)
        return kerr_set(err, KERR_INTERNAL, "cannot format the fire time");
    rc = erd_job_build(p->drill, sp, tg, env, name, when, &job, err);
    if (rc == KERR_OK)
        rc = podjob_create_job(x->client, p->ns, job, err);
    cJSON_Delete(job);
    if (rc != KERR_OK)
        return kerr_wrap(err, "creating the drill's Job %s", name);
    rctx_event(x, p->drill, EV_NORMAL, "DrillStarted", "Drill", "started Job %s (%s, %s) of %s",
               name, sp->restore ? "Restore" : "Verify", t ? "scheduled" : "run by hand", tg->what);
    ref = cJSON_CreateObject();
    if (!ref || !cJSON_AddStringToObject(ref, "name", name) ||
        !cJSON_AddItemToArray(p->active, ref)) {
        cJSON_Delete(ref);
        return kerr_set(err, KERR_NOMEM, "out of memory");
    }
    return KERR_OK;
}

/* A fire time or a run request: start a Job unless one runs or the target is unusable. */
static enum kerr maybe_start(const struct rctx *x, const struct erd_env *env, struct erd_pass *p,
                             const struct erd_spec *sp, const struct erd_target *tg,
                             const char *why, struct kerr_info *err)
{
    const char *req = kjson_get_str(p->drill, ANN_RUN_PATH);
    const char *done = kjson_get_str(p->drill, "status.lastRunRequest");
    char name[KNAME_LABEL_MAX + 1], when[KTIME_LEN + 1];
    int64_t t;

    if (req && *req && (!done || strcmp(req, done) != 0))
        p->run_req = req;
    due(p, sp, &t);
    if (!t && !p->run_req)
        return KERR_OK;
    if (t)
        p->last_sched = t;
    if (cJSON_GetArraySize(p->active) > 0) {
        if (ktime_format((time_t)(t ? t : p->now), when) != KERR_OK)
            snprintf(when, sizeof(when), "?");
        rctx_event(x, p->drill, EV_NORMAL, "DrillAlreadyActive", "Drill",
                   "skipped the drill of %s: Job %s has not finished", when,
                   kjson_get_str(cJSON_GetArrayItem(p->active, 0), "name"));
        return KERR_OK;
    }
    if (*why) {
        /* the target cannot be drilled: this fire time's drill failed */
        p->out.verdict = ERD_FAILED;
        snprintf(p->out.message, sizeof(p->out.message), "the drill could not run: %.990s", why);
        return KERR_OK;
    }
    if (erd_job_name(kjson_get_str(p->drill, "metadata.name"), t, p->run_req ? p->run_req : NULL,
                     name, sizeof(name)) != KERR_OK)
        return kerr_set(err, KERR_INVAL, "no Job name can be made of the drill's name");
    return start(x, env, p, sp, tg, name, p->run_req ? 0 : t, err);
}

/* A valid drill: the target, the Jobs, a verdict, pruning, a new drill; the status. */
static enum kerr run_valid(const struct rctx *x, const struct erd_env *env, struct erd_pass *p,
                           const struct erd_spec *sp, struct kerr_info *err)
{
    struct erd_target tg;
    const char *reason = NULL;
    char why[1024];
    enum kerr rc = erd_target_read(x, p->drill, sp, &tg, &reason, why, sizeof(why), err);

    if (rc == KERR_OK)
        rc = survey(x, p, err);
    if (rc == KERR_OK)
        rc = read_verdict(x, p, err);
    if (rc == KERR_OK)
        rc = prune(x, p, 1, sp->keep_ok, err);
    if (rc == KERR_OK)
        rc = prune(x, p, 0, sp->keep_bad, err);
    if (rc == KERR_OK && !p->read_job)
        rc = maybe_start(x, env, p, sp, &tg, why, err);
    p->etcd_name = tg.etcd_name;
    if (rc == KERR_OK && (p->read_job || p->out.verdict))
        erd_report(x, p, &tg);
    if (rc == KERR_OK && *why) {
        p->ready_reason = reason;
        snprintf(p->ready_msg, sizeof(p->ready_msg), "%s", why);
        if (strcmp(kjson_get_str(kobj_condition(p->drill, "Ready"), "reason") ?: "", reason))
            rctx_event(x, p->drill, EV_WARNING, reason, "Drill", "%s", why);
    } else if (rc == KERR_OK) {
        p->ready_reason = sp->suspend ? "Suspended" : "Scheduled";
        snprintf(p->ready_msg, sizeof(p->ready_msg), "%s \"%s\" (UTC) of %s",
                 sp->suspend ? "suspended; schedule" : "drills on schedule",
                 kjson_get_str(p->drill, "spec.schedule"), tg.what);
    }
    if (rc == KERR_OK)
        rc = erd_write_status(x, p, sp, err);
    erd_target_release(&tg);
    return rc;
}

enum kerr erd_run(const struct rctx *x, const struct erd_env *env, const char *ns, const char *name,
                  int64_t now_ms, long *requeue_ms, struct kerr_info *err)
{
    struct erd_pass p;
    struct erd_spec sp;
    struct kerr_info why = { 0 };
    cJSON *d = NULL;
    int64_t next;
    enum kerr rc;

    *requeue_ms = 0;
    rc = k8s_get(x->client, &ERD_RES_DRILL, ns, name, NULL, &d, err);
    if (rc == KERR_NOTFOUND)
        return KERR_OK; /* its Jobs go with it (owner references) */
    if (rc != KERR_OK || kjson_has(d, "metadata.deletionTimestamp")) {
        cJSON_Delete(d);
        return rc;
    }
    memset(&p, 0, sizeof(p));
    p.drill = d;
    p.ns = ns;
    p.now = now_ms / 1000;
    p.last_sched = erd_time_at(d, "status.lastScheduleTime");
    if (read_spec(d, p.now, &sp, &p.ready_reason, &why) != KERR_OK) {
        snprintf(p.ready_msg, sizeof(p.ready_msg), "%s", why.msg);
        log_warn("invalid restore drill", "namespace", ns, "name", name, "error", why.msg);
        if (strcmp(kjson_get_str(kobj_condition(d, "Ready"), "message") ?: "", why.msg))
            rctx_event(x, d, EV_WARNING, p.ready_reason, "Drill", "%s; no drills are run", why.msg);
        p.active = cJSON_CreateArray();
        rc = erd_write_status(x, &p, NULL, err);
    } else {
        rc = run_valid(x, env, &p, &sp, err);
        if (rc == KERR_OK && !sp.suspend && cron_next(&sp.cron, p.now, &next) == KERR_OK)
            *requeue_ms = (long)(next * 1000 - now_ms);
        if (rc == KERR_OK && (cJSON_GetArraySize(p.active) > 0 || p.read_job) &&
            (*requeue_ms <= 0 || *requeue_ms > ERD_POLL_MS))
            *requeue_ms = ERD_POLL_MS;
    }
    cJSON_Delete(p.jobs);
    cJSON_Delete(p.active);
    cJSON_Delete(d);
    return rc;
}

enum kerr erd_reconcile(struct ctl *c, const char *ns, const char *name, struct ctl_result *res,
                        struct kerr_info *err)
{
    const struct ctl_config *cfg = ctl_cfg(c);
    struct erd_env env = { cfg->copy_image, NULL, cfg->restore_drill_image };
    struct rctx x;

    res->requeue_ms = 0;
    rctx_from_ctl(c, &x);
    return erd_run(&x, &env, ns, name, ctl_now_ms(c), &res->requeue_ms, err);
}
