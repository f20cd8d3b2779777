/* erd_status - a restore drill's status and events; see erd_int.h and erd.h. */
#include "controller/backups/erd_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "common/kobj.h"
#include "controller/core/rctx.h"

#define ADD_STR(o, k, v) (cJSON_AddStringToObject((o), (k), (v)) != NULL)
#define ADD_NUM(o, k, v) (cJSON_AddNumberToObject((o), (k), (double)(v)) != NULL)

static const char *fmt_time(int64_t t, char out[KTIME_LEN + 1])
{
    if (ktime_format((time_t)t, out) != KERR_OK)
        snprintf(out, KTIME_LEN + 1, "?");
    return out;
}

/* The Job's completion time, else its Failed condition's, else now. */
static int64_t done_at(const struct erd_pass *p)
{
    int64_t t = erd_time_at(p->read_job, "status.completionTime");
    const cJSON *c = kobj_condition(p->read_job, "Failed");

    if (!t && c)
        t = erd_time_at(c, "lastTransitionTime");
    return t ? t : p->now;
}

void erd_report(const struct rctx *x, const struct erd_pass *p, const struct erd_target *t)
{
    const char *job = p->read_job ? kjson_get_str(p->read_job, "metadata.name") : NULL;

    if (p->out.verdict == ERD_RESTORABLE)
        rctx_event(x, p->drill, EV_NORMAL, "DrillSucceeded", "Drill",
                   "%s is restorable (Job %s): %s", t->what, job ? job : "-", p->out.message);
    else
        rctx_event(x, p->drill, EV_WARNING, "DrillFailed", "Drill", "%s %s (Job %s): %s", t->what,
                   p->out.verdict == ERD_NOT_RESTORABLE ? "is NOT restorable" : "was not drilled",
                   job ? job : "-", p->out.message);
}

/* The figures of the last drill, from this pass's verdict or the stored status. */
static int add_result(cJSON *st, const struct erd_pass *p)
{
    const cJSON *old = kjson_get(p->drill, "status");
    const struct erd_sum *s = &p->out.sum;
    static const char *const kept[] = { "lastJob",          "lastResult",      "lastDrillTime",
                                        "duration",         "failedObject",    "message",
                                        "restoredRevision", "restoredKeyCount" };
    char a[KTIME_LEN + 1];
    int64_t done, start;
    char dur[32];
    int ok = 1;

    if (!p->out.verdict) {
        for (size_t i = 0; ok && i < sizeof(kept) / sizeof(kept[0]); i++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(old, kept[i]);

            ok = !v || cJSON_AddItemToObject(st, kept[i], cJSON_Duplicate(v, 1));
        }
        return ok;
    }
    done = p->read_job ? done_at(p) : p->now;
    start = p->read_job ? erd_time_at(p->read_job, "status.startTime") : 0;
    snprintf(dur, sizeof(dur), "%" PRId64 "s", start && done >= start ? done - start : 0);
    ok = ADD_STR(st, "lastResult", erd_verdict_str(p->out.verdict)) &&
         ADD_STR(st, "lastDrillTime", fmt_time(done, a)) && ADD_STR(st, "message", p->out.message);
    if (ok && p->read_job)
        ok = ADD_STR(st, "lastJob", kjson_get_str(p->read_job, "metadata.name") ?: "") &&
             (!start || ADD_STR(st, "duration", dur));
    if (ok && s->failed_object[0])
        ok = ADD_STR(st, "failedObject", s->failed_object);
    if (ok && s->has_restored)
        ok = ADD_NUM(st, "restoredRevision", s->restored_revision) &&
             ADD_NUM(st, "restoredKeyCount", s->restored_keys);
    return ok;
}

/* The figures of the last Restorable drill: this pass's or the stored ones. */
static int add_success(cJSON *st, const struct erd_pass *p)
{
    const cJSON *old = kjson_get(p->drill, "status");
    static const char *const kept[] = { "lastSuccessfulDrillTime", "restorableRevision", "keyCount",
                                        "newestRestorableSnapshot",
                                        "newestRestorableSnapshotTime" };
    const struct erd_sum *s = &p->out.sum;
    char a[KTIME_LEN + 1];
    int ok = 1;

    if (p->out.verdict != ERD_RESTORABLE) {
        for (size_t i = 0; ok && i < sizeof(kept) / sizeof(kept[0]); i++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(old, kept[i]);

            ok = !v || cJSON_AddItemToObject(st, kept[i], cJSON_Duplicate(v, 1));
        }
        return ok;
    }
    return ADD_STR(st, "lastSuccessfulDrillTime", fmt_time(p->read_job ? done_at(p) : p->now, a)) &&
           ADD_NUM(st, "restorableRevision", s->revision) && ADD_NUM(st, "keyCount", s->keys) &&
           (!s->newest[0] || ADD_STR(st, "newestRestorableSnapshot", s->newest)) &&
           (!s->newest_time[0] || ADD_STR(st, "newestRestorableSnapshotTime", s->newest_time));
}

/* A condition {type, status, reason, message, lastTransitionTime} keeping the transition time
 * of a stored one of the same status. */
static cJSON *condition(const struct erd_pass *p, const char *type, int status, const char *reason,
                        const char *message)
{
    const cJSON *old = kobj_condition(p->drill, type);
    const char *os = kjson_get_str(old, "status"), *ot = kjson_get_str(old, "lastTransitionTime");
    const char *st = status ? "True" : "False";
    char now[KTIME_LEN + 1];
    cJSON *c = cJSON_CreateObject();

    if (!c || !ADD_STR(c, "type", type) || !ADD_STR(c, "status", st) ||
        !ADD_STR(c, "reason", reason) || !ADD_STR(c, "message", message) ||
        !ADD_STR(c, "lastTransitionTime",
                 os && ot && strcmp(os, st) == 0 ? ot : fmt_time(p->now, now))) {
        cJSON_Delete(c);
        return NULL;
    }
    return c;
}

/* The Restorable condition: of this pass's verdict, else the stored one (none before a drill). */
static int add_restorable(cJSON *conds, const struct erd_pass *p)
{
    const cJSON *old = kobj_condition(p->drill, ERD_COND_RESTORABLE);
    enum erd_verdict v = p->out.verdict;
    cJSON *c;

    if (!v)
        return !old || cJSON_AddItemToArray(conds, cJSON_Duplicate(old, 1));
    c = condition(p, ERD_COND_RESTORABLE, v == ERD_RESTORABLE,
                  v == ERD_RESTORABLE       ? "Restorable"
                  : v == ERD_NOT_RESTORABLE ? "NotRestorable"
                                            : "DrillFailed",
                  p->out.message);
    return c && cJSON_AddItemToArray(conds, c);
}

static int add_schedule(cJSON *st, const struct erd_pass *p, const struct erd_spec *sp)
{
    const char *req = p->run_req ? p->run_req : kjson_get_str(p->drill, "status.lastRunRequest");
    const char *etcd = p->etcd_name ? p->etcd_name : kjson_get_str(p->drill, "status.etcdName");
    char a[KTIME_LEN + 1], b[KTIME_LEN + 1];
    int64_t next = 0, gen = 0;

    (void)kjson_get_int64(p->drill, "metadata.generation", &gen);
    if (sp && !sp->suspend && cron_next(&sp->cron, p->now, &next) != KERR_OK)
        next = 0;
    return (!etcd || ADD_STR(st, "etcdName", etcd)) &&
           (!p->last_sched || ADD_STR(st, "lastScheduleTime", fmt_time(p->last_sched, a))) &&
           (!next || ADD_STR(st, "nextScheduleTime", fmt_time(next, b))) &&
           (!req || ADD_STR(st, "lastRunRequest", req)) &&
           (cJSON_GetArraySize(p->active) == 0 ||
            cJSON_AddItemToObject(st, "active", cJSON_Duplicate(p->active, 1))) &&
           ADD_NUM(st, "observedGeneration", gen);
}

enum kerr erd_write_status(const struct rctx *x, struct erd_pass *p, const struct erd_spec *sp,
                           struct kerr_info *err)
{
    cJSON *st = cJSON_CreateObject(), *conds = cJSON_CreateArray(), *obj = NULL, *ready;
    int ready_ok = sp && strcmp(p->ready_reason ? p->ready_reason : "", "Scheduled") == 0;
    enum kerr rc = KERR_OK;

    ready_ok = ready_ok || (sp && strcmp(p->ready_reason ? p->ready_reason : "", "Suspended") == 0);
    ready = condition(p, "Ready", ready_ok, p->ready_reason ? p->ready_reason : "Unknown",
                      p->ready_msg);
    if (!st || !conds || !ready || !cJSON_AddItemToArray(conds, ready) ||
        !add_restorable(conds, p) || !add_schedule(st, p, sp) || !add_result(st, p) ||
        !add_success(st, p) || !cJSON_AddItemToObject(st, "conditions", conds)) {
        if (!cJSON_GetObjectItemCaseSensitive(st, "conditions"))
            cJSON_Delete(conds);
        cJSON_Delete(st);
        return kerr_set(err, KERR_NOMEM, "out of memory");
    }
    if (!cJSON_Compare(kjson_get(p->drill, "status"), st, 1)) {
        obj = cJSON_Duplicate(p->drill, 1);
        rc = obj ? kjson_set(obj, "status", cJSON_Duplicate(st, 1), err)
                 : kerr_set(err, KERR_NOMEM, "out of memory");
        if (rc == KERR_OK)
            rc = k8s_update(x->client, &ERD_RES_DRILL, p->ns,
                            kjson_get_str(p->drill, "metadata.name"), obj,
                            &(struct k8s_write_opts){ .subresource = "status" }, NULL, err);
    }
    cJSON_Delete(obj);
    cJSON_Delete(st);
    return rc == KERR_OK ? rc : kerr_wrap(err, "writing the drill's status");
}
