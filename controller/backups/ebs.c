/* ebs - the EtcdBackupSchedule: backups on a cron schedule, history limits; see ebs.h. */
#include "controller/backups/ebs.h"
#include "controller/backups/ebs_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "common/kobj.h"
#include "common/ktime.h"
#include "common/log.h"
#include "controller/core/claims.h"
#include "controller/core/cron.h"
#include "controller/core/ctl.h"
#include "controller/core/kname.h"
#include "controller/core/rctx.h"

const struct k8s_resource EBS_RES_SCHEDULE = { "etcd-warden.io", "v1alpha1", "etcdbackupschedules",
                                               1 };
const struct k8s_resource EBS_RES_BACKUP = { "etcd-warden.io", "v1alpha1", "etcdbackups", 1 };

#define LBL_PATH "metadata.labels[" EBS_LABEL_SCHEDULE "]"
#define UID_PATH "metadata.labels[" EBS_LABEL_UID "]"
#define ANN_PATH "metadata.annotations[" EBS_ANN_SCHEDULED_AT "]"

/* An RFC 3339 time at path of obj as Unix seconds; 0 when absent or bad. */
int64_t ebs_time_at(const cJSON *obj, const char *path)
{
    struct timespec ts;

    if (ktime_parse(kjson_get_str(obj, path), &ts, NULL) != KERR_OK)
        return 0;
    return (int64_t)ts.tv_sec;
}

const char *ebs_fmt_time(int64_t t, char out[KTIME_LEN + 1])
{
    if (ktime_format((time_t)t, out) != KERR_OK)
        snprintf(out, KTIME_LEN + 1, "?");
    return out;
}

/* Since when backup b is there: its fire time (a schedule's), else its creation. */
int64_t ebs_since_of(const cJSON *b)
{
    int64_t t = ebs_time_at(b, ANN_PATH);

    return t > 0 ? t : ebs_time_at(b, "metadata.creationTimestamp");
}

enum kerr ebs_backup_name(const char *schedule, int64_t t, char *out, size_t n)
{
    char suffix[32];

    snprintf(suffix, sizeof(suffix), "-%" PRId64, t / 60);
    return kname_join(schedule, suffix, KNAME_SUBDOMAIN_MAX, out, n);
}

const char *ebs_backup_schedule(const cJSON *backup)
{
    return kjson_get_str(backup, LBL_PATH);
}

/* Check the spec into *sp; KERR_INVAL with the reason (*reason) and message otherwise. */
static enum kerr read_spec(const cJSON *s, int64_t now, struct spec *sp, const char **reason,
                           struct kerr_info *err)
{
    const char *name = kjson_get_str(s, "metadata.name");
    bool suspend = false;
    int64_t next;

    memset(sp, 0, sizeof(*sp));
    *reason = "InvalidSchedule";
    if (cron_parse(kjson_get_str(s, "spec.schedule"), &sp->cron, err) != KERR_OK)
        return kerr_wrap(err, "spec.schedule");
    if (cron_next(&sp->cron, now, &next) != KERR_OK)
        return kerr_set(err, KERR_INVAL, "spec.schedule: no fire time in the next %d years",
                        CRON_SEARCH_YEARS);
    *reason = "InvalidSpec";
    sp->tmpl = kjson_get_obj(s, "spec.backupTemplate");
    sp->etcd = kjson_get_str(s, "spec.backupTemplate.etcdName");
    if (!sp->tmpl || !sp->etcd || !*sp->etcd)
        return kerr_set(err, KERR_INVAL, "spec.backupTemplate.etcdName: required");
    sp->deadline_s = kjson_get_count(s, "spec.startingDeadlineSeconds", -2);
    sp->keep_ok = kjson_get_count(s, "spec.successfulBackupsHistoryLimit", EBS_DEFAULT_KEEP_OK);
    sp->keep_bad = kjson_get_count(s, "spec.failedBackupsHistoryLimit", EBS_DEFAULT_KEEP_BAD);
    if (sp->deadline_s == -1)
        return kerr_set(err, KERR_INVAL, "spec.startingDeadlineSeconds: must be an integer >= 0");
    if (sp->keep_ok < 0 || sp->keep_bad < 0)
        return kerr_set(err, KERR_INVAL, "spec.%sBackupsHistoryLimit: must be an integer >= 0",
                        sp->keep_ok < 0 ? "successful" : "failed");
    (void)kjson_get_bool(s, "spec.suspend", &suspend);
    sp->suspend = suspend;
    sp->uid = kjson_get_str(s, "metadata.uid");
    if (!name || kname_label_value(name, sp->label) != KERR_OK)
        return kerr_set(err, KERR_INVAL, "metadata.name: no label value can be made of it");
    return KERR_OK;
}

/* ---- the backups ---- */

static int is_finished(const cJSON *b)
{
    const char *phase = kjson_get_str(b, "status.phase");

    return phase && (strcmp(phase, "Completed") == 0 || strcmp(phase, "Failed") == 0);
}

/*
 * Whether b was made by this schedule for its Etcd: its name label, its uid label (written when
 * the pass created it: a deleted schedule's backups, and those of a schedule of the same name
 * made since, carry another) and its Etcd. Only those are pruned: never a backup of another
 * Etcd, of another schedule or made by hand, whatever its labels say.
 */
static int is_ours(const cJSON *b, const struct spec *sp)
{
    const char *l = ebs_backup_schedule(b), *uid = kjson_get_str(b, UID_PATH);
    const char *etcd = kjson_get_str(b, "spec.etcdName");

    return l && strcmp(l, sp->label) == 0 && sp->uid && *sp->uid && uid &&
           strcmp(uid, sp->uid) == 0 && etcd && strcmp(etcd, sp->etcd) == 0;
}

/* Sort the schedule's backups for pruning: oldest fire time, then creation, then name. */
static int older_first(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    static const char *const paths[] = { ANN_PATH, "metadata.creationTimestamp", "metadata.name" };
    size_t i;
    int c;

    for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        const char *p = kjson_get_str(x, paths[i]), *q = kjson_get_str(y, paths[i]);

        c = i == 0 ? (int)(ebs_time_at(x, paths[i]) > ebs_time_at(y, paths[i])) -
                         (int)(ebs_time_at(x, paths[i]) < ebs_time_at(y, paths[i]))
                   : strcmp(p ? p : "", q ? q : "");
        if (c)
            return c;
    }
    return 0;
}

/* Delete the oldest of the schedule's backups in phase beyond keep. */
static enum kerr prune_phase(const struct rctx *x, struct pass *p, const struct spec *sp,
                             const char *phase, int64_t keep, struct kerr_info *err)
{
    const cJSON *b, **v;
    size_t n = 0, i;
    enum kerr rc = KERR_OK;

    v = calloc((size_t)cJSON_GetArraySize(kjson_get(p->backups, "items")) + 1, sizeof(*v));
    if (!v)
        return kerr_set(err, KERR_NOMEM, "out of memory");
    cJSON_ArrayForEach (b, kjson_get_arr(p->backups, "items")) {
        const char *ph = kjson_get_str(b, "status.phase");

        if (is_ours(b, sp) && ph && strcmp(ph, phase) == 0 &&
            !kjson_has(b, "metadata.deletionTimestamp"))
            v[n++] = b;
    }
    qsort(v, n, sizeof(*v), older_first);
    for (i = 0; rc == KERR_OK && (int64_t)(n - i) > keep; i++) {
        const char *name = kjson_get_str(v[i], "metadata.name");

        rc = k8s_delete(x->client, &EBS_RES_BACKUP, kjson_get_str(p->sched, "metadata.namespace"),
                        name, &(struct k8s_delete_opts){ .propagation_policy = "Background" }, NULL,
                        err);
        if (rc == KERR_NOTFOUND)
            rc = KERR_OK;
        else if (rc == KERR_OK)
            rctx_event(x, p->sched, EV_NORMAL, "BackupDeleted", "Prune",
                       "deleted EtcdBackup %s (%s; history limit %" PRId64 ")", name, phase, keep);
    }
    free(v);
    return rc == KERR_OK ? rc : kerr_wrap(err, "pruning %s backups", phase);
}

/* An unfinished backup b of the schedule's Etcd: p->busy, or p->stuck when it is there for
 * more than EBS_STUCK_S (it holds nothing back then). */
static void busy_or_stuck(struct pass *p, const cJSON *b)
{
    int64_t since = ebs_since_of(b);

    if (since > 0 && p->now - since > EBS_STUCK_S) {
        if (!p->stuck || since < ebs_since_of(p->stuck))
            p->stuck = b;
    } else if (!p->busy) {
        p->busy = kjson_get_str(b, "metadata.name");
    }
}

/* List the namespace's backups; the schedule's unfinished ones, the Etcd's, the last success. */
static enum kerr survey(const struct rctx *x, struct pass *p, const struct spec *sp,
                        struct kerr_info *err)
{
    const char *ns = kjson_get_str(p->sched, "metadata.namespace");
    const cJSON *b;
    enum kerr rc = k8s_list_all(x->client, &EBS_RES_BACKUP, ns, NULL, &p->backups, err);

    if (rc != KERR_OK)
        return kerr_wrap(err, "listing the EtcdBackups of %s", ns);
    p->active = cJSON_CreateArray();
    if (!p->active)
        return kerr_set(err, KERR_NOMEM, "out of memory");
    cJSON_ArrayForEach (b, kjson_get_arr(p->backups, "items")) {
        const char *name = kjson_get_str(b, "metadata.name");
        const char *etcd = kjson_get_str(b, "spec.etcdName");
        const char *phase = kjson_get_str(b, "status.phase");
        int running = !is_finished(b) && !kjson_has(b, "metadata.deletionTimestamp");
        int64_t done = ebs_time_at(b, "status.completionTime");
        cJSON *ref;

        if (running && etcd && strcmp(etcd, sp->etcd) == 0)
            busy_or_stuck(p, b);
        if (!is_ours(b, sp))
            continue;
        if (phase && strcmp(phase, "Completed") == 0 && done > p->last_ok)
            p->last_ok = done;
        if (!running)
            continue;
        ref = cJSON_CreateObject();
        if (!ref || !cJSON_AddStringToObject(ref, "name", name ? name : "") ||
            !cJSON_AddItemToArray(p->active, ref)) {
            cJSON_Delete(ref);
            return kerr_set(err, KERR_NOMEM, "out of memory");
        }
    }
    return KERR_OK;
}

/* ---- scheduling ---- */

/* Whether the list holds a backup named name. */
static int listed(const struct pass *p, const char *name)
{
    const cJSON *b;

    cJSON_ArrayForEach (b, kjson_get_arr(p->backups, "items")) {
        const char *n = kjson_get_str(b, "metadata.name");

        if (n && strcmp(n, name) == 0)
            return 1;
    }
    return 0;
}

/* Create the backup name for fire time t. */
static enum kerr create_backup(const struct rctx *x, struct pass *p, const struct spec *sp,
                               const char *name, int64_t t, struct kerr_info *err)
{
    const char *ns = kjson_get_str(p->sched, "metadata.namespace");
    char when[KTIME_LEN + 1];
    cJSON *b = cJSON_CreateObject(), *ref = NULL;
    enum kerr rc = b ? KERR_OK : kerr_set(err, KERR_NOMEM, "out of memory");

    ebs_fmt_time(t, when);
    if (!rc && (!cJSON_AddStringToObject(b, "apiVersion", "etcd-warden.io/v1alpha1") ||
                !cJSON_AddStringToObject(b, "kind", "EtcdBackup")))
        rc = kerr_set(err, KERR_NOMEM, "out of memory");
    if (!rc)
        rc = kjson_set_str(b, "metadata.name", name, err);
    if (!rc)
        rc = kjson_set_str(b, "metadata.namespace", ns, err);
    if (!rc)
        rc = kjson_set_str(b, LBL_PATH, sp->label, err);
    if (!rc && sp->uid && *sp->uid)
        rc = kjson_set_str(b, UID_PATH, sp->uid, err);
    if (!rc)
        rc = kjson_set_str(b, ANN_PATH, when, err);
    if (!rc)
        rc = kjson_set(b, "spec", cJSON_Duplicate(sp->tmpl, 1), err);
    if (!rc)
        rc = k8s_create(x->client, &EBS_RES_BACKUP, ns, b, NULL, NULL, err);
    if (rc == KERR_OK) {
        p->created = 1;
        rctx_event(x, p->sched, EV_NORMAL, "BackupCreated", "Schedule",
                   "created EtcdBackup %s of Etcd %s for the fire time %s", name, sp->etcd, when);
    }
    if (rc == KERR_EXISTS)
        rc = KERR_OK; /* created by an earlier pass that did not get to write its status */
    if (rc == KERR_OK && !listed(p, name)) {
        ref = cJSON_CreateObject();
        if (!ref || !cJSON_AddStringToObject(ref, "name", name) ||
            !cJSON_AddItemToArray(p->active, ref)) {
            cJSON_Delete(ref);
            rc = kerr_set(err, KERR_NOMEM, "out of memory");
        }
    }
    cJSON_Delete(b);
    return rc == KERR_OK ? rc : kerr_wrap(err, "creating EtcdBackup %s/%s", ns, name);
}

/*
 * The fire time to act on (*t, 0: none): the latest at or before now and
 * after the earliest time, with the events of CronJob for the missed ones.
 */
static void due(const struct rctx *x, const struct pass *p, const struct spec *sp, int64_t *t)
{
    char a[KTIME_LEN + 1], b[KTIME_LEN + 1];
    int64_t base =
        p->last_sched ? p->last_sched : ebs_time_at(p->sched, "metadata.creationTimestamp");
    int64_t earliest = base, u, v;
    int missed = 0;

    *t = 0;
    if (sp->deadline_s >= 0 && p->now - sp->deadline_s > earliest)
        earliest = p->now - sp->deadline_s;
    if (cron_prev(&sp->cron, p->now, &u) != KERR_OK || u <= base)
        return;
    if (u <= earliest) {
        rctx_event(x, p->sched, EV_WARNING, "MissSchedule", "Schedule",
                   "missed the fire time %s: more than startingDeadlineSeconds (%" PRId64 " s) ago",
                   ebs_fmt_time(u, a), sp->deadline_s);
        return;
    }
    for (v = earliest;
         missed <= EBS_MAX_MISSED && cron_next(&sp->cron, v, &v) == KERR_OK && v <= u;)
        missed++;
    if (missed > EBS_MAX_MISSED)
        rctx_event(x, p->sched, EV_WARNING, "TooManyMissedTimes", "Schedule",
                   "more than %d fire times missed since %s: only the latest, %s, is taken; set "
                   "or lower spec.startingDeadlineSeconds, or check the clock",
                   EBS_MAX_MISSED, ebs_fmt_time(earliest, a), ebs_fmt_time(u, b));
    else if (missed > 1)
        log_info("fire times missed: only the latest is taken", "schedule",
                 kjson_get_str(p->sched, "metadata.name"), "latest", ebs_fmt_time(u, a));
    *t = u;
}

/*
 * Whether the template's destination may be written now, into p->in_use (claims_destination:
 * read from the API server; the copies of the schedule's Etcd may share a prefix).
 */
static enum kerr check_destination(const struct rctx *x, struct pass *p, const struct spec *sp,
                                   struct kerr_info *err)
{
    struct claims_skip skip = { .backup_ns = kjson_get_str(p->sched, "metadata.namespace"),
                                .viewer_ns = kjson_get_str(p->sched, "metadata.namespace"),
                                .backups_of = sp->etcd };

    return claims_destination(x->client, p->sched, "spec.backupTemplate.destination", &skip,
                              p->in_use, sizeof(p->in_use), err);
}

/* Act on the fire time that is due, if any. */
static enum kerr schedule(const struct rctx *x, struct pass *p, const struct spec *sp,
                          struct kerr_info *err)
{
    char name[KNAME_SUBDOMAIN_MAX + 1], when[KTIME_LEN + 1];
    int64_t t;
    enum kerr rc;

    due(x, p, sp, &t);
    if (!t)
        return KERR_OK;
    rc = ebs_backup_name(kjson_get_str(p->sched, "metadata.name"), t, name, sizeof(name));
    if (rc != KERR_OK)
        return kerr_set(err, rc, "no backup name can be made of the schedule's name");
    if (!listed(p, name) && p->busy) {
        rctx_event(x, p->sched, EV_NORMAL, "BackupAlreadyActive", "Schedule",
                   "skipped the fire time %s: EtcdBackup %s of Etcd %s has not finished",
                   ebs_fmt_time(t, when), p->busy, sp->etcd);
    } else if (!listed(p, name)) {
        rc = check_destination(x, p, sp, err);
        if (rc == KERR_OK && *p->in_use)
            rctx_event(x, p->sched, EV_WARNING, EBS_REASON_IN_USE, "Schedule",
                       "skipped the fire time %s: %s", ebs_fmt_time(t, when), p->in_use);
        else if (rc == KERR_OK)
            rc = create_backup(x, p, sp, name, t, err);
        if (rc == KERR_FORBIDDEN || (rc == KERR_API && strcmp(err->reason, "Invalid") == 0)) {
            snprintf(p->refused, sizeof(p->refused), "the fire time %s was skipped: %s",
                     ebs_fmt_time(t, when), err->msg);
            rctx_event(x, p->sched, EV_WARNING, EBS_REASON_REFUSED, "Schedule", "%s", p->refused);
            kerr_clear(err);
            rc = KERR_OK;
        }
        if (rc != KERR_OK)
            return rc;
    }
    p->last_sched = t;
    return KERR_OK;
}

/* A valid schedule: survey, prune, schedule; the status in any case. */
static enum kerr run_valid(const struct rctx *x, struct pass *p, const struct spec *sp,
                           struct kerr_info *err)
{
    enum kerr rc = survey(x, p, sp, err);
    const cJSON *ready = kobj_condition(p->sched, "Ready"); /* as stored before this pass */
    const char *r = kjson_get_str(ready, "reason"), *was = kjson_get_str(ready, "message");

    if (rc == KERR_OK)
        rc = prune_phase(x, p, sp, "Completed", sp->keep_ok, err);
    if (rc == KERR_OK)
        rc = prune_phase(x, p, sp, "Failed", sp->keep_bad, err);
    if (rc == KERR_OK && !sp->suspend)
        rc = schedule(x, p, sp, err);
    /* a destination found in use is looked at again until it is free */
    if (rc == KERR_OK && !sp->suspend && !*p->in_use && r && strcmp(r, EBS_REASON_IN_USE) == 0)
        rc = check_destination(x, p, sp, err);
    if (rc != KERR_OK)
        return rc;
    ebs_report_stuck(x, p, sp);
    if (*p->in_use) {
        p->reason = EBS_REASON_IN_USE;
        snprintf(p->message, sizeof(p->message), "no backups are made: %s", p->in_use);
        return ebs_write_status(x, p, sp, 0, err);
    }
    /* a refused backup stays reported until a later fire time's is created */
    if (!*p->refused && !p->created && r && strcmp(r, EBS_REASON_REFUSED) == 0)
        snprintf(p->refused, sizeof(p->refused), "%s", was ? was : "the last backup was refused");
    if (*p->refused) {
        p->reason = EBS_REASON_REFUSED;
        snprintf(p->message, sizeof(p->message), "%s", p->refused);
        return ebs_write_status(x, p, sp, 0, err);
    }
    p->reason = sp->suspend ? "Suspended" : "Scheduled";
    snprintf(p->message, sizeof(p->message), "%s \"%s\" (UTC)",
             sp->suspend ? "suspended; schedule" : "backups on schedule",
             kjson_get_str(p->sched, "spec.schedule"));
    return ebs_write_status(x, p, sp, 1, err);
}

enum kerr ebs_run(const struct rctx *x, const char *ns, const char *name, int64_t now_ms,
                  long *requeue_ms, struct kerr_info *err)
{
    struct pass p;
    struct spec sp;
    struct kerr_info why;
    cJSON *sched = NULL;
    enum kerr rc;

    *requeue_ms = 0;
    rc = k8s_get(x->client, &EBS_RES_SCHEDULE, ns, name, NULL, &sched, err);
    if (rc == KERR_NOTFOUND)
        return KERR_OK; /* its backups stay: they have no owner reference */
    if (rc != KERR_OK || kjson_has(sched, "metadata.deletionTimestamp")) {
        cJSON_Delete(sched);
        return rc;
    }
    memset(&p, 0, sizeof(p));
    p.sched = sched;
    p.now = now_ms / 1000;
    p.last_sched = ebs_time_at(sched, "status.lastScheduleTime");
    kerr_clear(&why);
    if (read_spec(sched, p.now, &sp, &p.reason, &why) != KERR_OK) {
        snprintf(p.message, sizeof(p.message), "%s", why.msg);
        log_warn("invalid backup schedule", "namespace", ns, "name", name, "error", why.msg);
        rctx_event(x, sched, EV_WARNING, p.reason, "Schedule", "%s; no backups are made", why.msg);
        p.active = cJSON_CreateArray();
        rc = ebs_write_status(x, &p, NULL, 0, err);
    } else {
        rc = run_valid(x, &p, &sp, err);
        if (rc == KERR_OK)
            *requeue_ms = ebs_requeue_after(&p, &sp, now_ms);
        if (rc == KERR_OK && *p.in_use && (*requeue_ms <= 0 || *requeue_ms > EBS_RECHECK_MS))
            *requeue_ms = EBS_RECHECK_MS;
    }
    cJSON_Delete(p.backups);
    cJSON_Delete(p.active);
    cJSON_Delete(sched);
    return rc;
}

enum kerr ebs_reconcile(struct ctl *c, const char *ns, const char *name, struct ctl_result *res,
                        struct kerr_info *err)
{
    struct rctx x;

    res->requeue_ms = 0;
    rctx_from_ctl(c, &x);
    return ebs_run(&x, ns, name, ctl_now_ms(c), &res->requeue_ms, err);
}
