/* ebs_status - the status of an EtcdBackupSchedule pass; see ebs_int.h and ebs.h. */
#include "controller/backups/ebs_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "common/kobj.h"
#include "controller/backups/ebs.h"
#include "controller/core/rctx.h"

/* The Ready condition of p, keeping the transition time of an equal one in old (BORROWED). */
static cJSON *condition(const struct pass *p, int ready, const cJSON *old)
{
    char now[KTIME_LEN + 1];

    return rctx_ready_condition(ready, p->reason, p->message, old, ebs_fmt_time(p->now, now));
}

/* The message of the BackupStuck condition of p into out. */
static void stuck_message(const struct pass *p, const struct spec *sp, char *out, size_t n)
{
    char since[KTIME_LEN + 1];
    const char *phase = kjson_get_str(p->stuck, "status.phase");

    snprintf(out, n,
             "EtcdBackup %s of Etcd %s has not finished since %s (phase %s, over %ld s): it no "
             "longer holds the fire times back",
             kjson_get_str(p->stuck, "metadata.name"), sp->etcd,
             ebs_fmt_time(ebs_since_of(p->stuck), since), phase && *phase ? phase : "none",
             (long)EBS_STUCK_S);
}

/* The lastTransitionTime of the BackupStuck condition of the stored status when it has the
 * message msg, else NULL. BORROWED from p->sched. */
static const char *stuck_since(const struct pass *p, const char *msg)
{
    const cJSON *c = kobj_condition(p->sched, EBS_COND_STUCK);
    const char *m = kjson_get_str(c, "message");

    return m && strcmp(m, msg) == 0 ? kjson_get_str(c, "lastTransitionTime") : NULL;
}

/* A Warning event BackupStuck when p has a stuck backup the stored status does not report. */
void ebs_report_stuck(const struct rctx *x, const struct pass *p, const struct spec *sp)
{
    char msg[512];

    if (!p->stuck)
        return;
    stuck_message(p, sp, msg, sizeof(msg));
    if (!stuck_since(p, msg))
        rctx_event(x, p->sched, EV_WARNING, "BackupStuck", "Schedule", "%s", msg);
}

/* The BackupStuck condition of p (the transition time of an equal stored one kept); NULL
 * when there is none to write (*bad 0) or on NOMEM (*bad 1). */
static cJSON *stuck_condition(const struct pass *p, const struct spec *sp, int *bad)
{
    char msg[512], now[KTIME_LEN + 1];
    const char *ltt;
    cJSON *c;

    *bad = 0;
    if (!p->stuck || !sp)
        return NULL;
    stuck_message(p, sp, msg, sizeof(msg));
    ltt = stuck_since(p, msg);
    c = cJSON_CreateObject();
    if (!c || !cJSON_AddStringToObject(c, "type", EBS_COND_STUCK) ||
        !cJSON_AddStringToObject(c, "status", "True") ||
        !cJSON_AddStringToObject(c, "reason", "BackupNotFinished") ||
        !cJSON_AddStringToObject(c, "message", msg) ||
        !cJSON_AddStringToObject(c, "lastTransitionTime", ltt ? ltt : ebs_fmt_time(p->now, now))) {
        cJSON_Delete(c);
        *bad = 1;
        return NULL;
    }
    return c;
}

/* Build the status of p (ready: the spec is valid) and write it when it changed. */
enum kerr ebs_write_status(const struct rctx *x, struct pass *p, const struct spec *sp, int ready,
                           struct kerr_info *err)
{
    char a[KTIME_LEN + 1], b[KTIME_LEN + 1], c[KTIME_LEN + 1];
    cJSON *st = cJSON_CreateObject(), *conds = cJSON_CreateArray(), *obj = NULL, *stuck;
    int64_t gen = 0, old_ok = ebs_time_at(p->sched, "status.lastSuccessfulTime"), next = 0;
    enum kerr rc = KERR_OK;
    int bad = 0;

    (void)kjson_get_int64(p->sched, "metadata.generation", &gen);
    if (old_ok > p->last_ok)
        p->last_ok = old_ok;
    if (ready && sp && !sp->suspend && cron_next(&sp->cron, p->now, &next) != KERR_OK)
        next = 0;
    if (!st || !conds ||
        (p->last_sched &&
         !cJSON_AddStringToObject(st, "lastScheduleTime", ebs_fmt_time(p->last_sched, a))) ||
        (p->last_ok &&
         !cJSON_AddStringToObject(st, "lastSuccessfulTime", ebs_fmt_time(p->last_ok, b))) ||
        (next > 0 && !cJSON_AddStringToObject(st, "nextScheduleTime", ebs_fmt_time(next, c))) ||
        (cJSON_GetArraySize(p->active) > 0 &&
         !cJSON_AddItemReferenceToObject(st, "active", p->active)) ||
        !cJSON_AddNumberToObject(st, "observedGeneration", (double)gen) ||
        !cJSON_AddItemToArray(conds, condition(p, ready, p->sched)) ||
        ((stuck = stuck_condition(p, sp, &bad)) && !cJSON_AddItemToArray(conds, stuck)) || bad ||
        !cJSON_AddItemToObject(st, "conditions", conds)) {
        if (!cJSON_GetObjectItemCaseSensitive(st, "conditions"))
            cJSON_Delete(conds);
        cJSON_Delete(st);
        return kerr_set(err, KERR_NOMEM, "out of memory");
    }
    if (!cJSON_Compare(kjson_get(p->sched, "status"), st, 1)) {
        obj = cJSON_Duplicate(p->sched, 1);
        rc = obj ? kjson_set(obj, "status", cJSON_Duplicate(st, 1), err)
                 : kerr_set(err, KERR_NOMEM, "out of memory");
        if (rc == KERR_OK)
            rc = k8s_update(x->client, &EBS_RES_SCHEDULE,
                            kjson_get_str(p->sched, "metadata.namespace"),
                            kjson_get_str(p->sched, "metadata.name"), obj,
                            &(struct k8s_write_opts){ .subresource = "status" }, NULL, err);
    }
    cJSON_Delete(obj);
    cJSON_Delete(st);
    return rc == KERR_OK ? rc : kerr_wrap(err, "writing the schedule's status");
}

/* The requeue after a pass over a valid schedule. */
long ebs_requeue_after(const struct pass *p, const struct spec *sp, int64_t now_ms)
{
    int64_t next;
    long ms = 0;

    if (!sp->suspend && cron_next(&sp->cron, p->now, &next) == KERR_OK)
        ms = (long)(next * 1000 - now_ms);
    if (cJSON_GetArraySize(p->active) > 0 && (ms <= 0 || ms > EBS_POLL_MS))
        ms = EBS_POLL_MS;
    return ms;
}
