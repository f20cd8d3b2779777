/*
 * hib - the I/O of the hibernation flow (see hib.h): read the state back
 * from the API, decide with hibplan_decide, act, repeat.
 */
#include "controller/hibernation/hib.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/events.h"
#include "common/hibguard.h"
#include "common/k8s.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/log.h"
#include "controller/core/etcdspec.h"
#include "controller/core/imtjob.h"
#include "controller/core/kname.h"

#define TASK_INFIX       "-final-snapshot-"
#define CONFLICT_WAIT    200L
#define CONFLICT_BACKOFF 1000L

static const struct k8s_resource RES_SVC = { "", "v1", "services", 1 };
static const struct k8s_resource RES_STS = { "apps", "v1", "statefulsets", 1 };

/* What one round read. Every object OWNED by the round. */
struct round {
    const char *ns, *name; /* BORROWED from etcd */
    int *used;             /* API requests of this hib_step call so far */
    cJSON *etcd, *svc, *sts, *tasks;
    const cJSON *latest; /* BORROWED from tasks: the highest attempt */
    struct hibplan_view v;
    long defer_ms; /* set by an action that has to wait: requeue after this long */
};

static void round_release(struct round *r)
{
    int *used = r->used;

    cJSON_Delete(r->etcd);
    cJSON_Delete(r->svc);
    cJSON_Delete(r->sts);
    cJSON_Delete(r->tasks);
    memset(r, 0, sizeof(*r));
    r->used = used;
}

/* ---- reading ---- */

/* GET that maps 404 to *out = NULL. */
static enum kerr get_opt(const struct hib_env *env, struct round *r, const struct k8s_resource *res,
                         const char *ns, const char *name, cJSON **out, struct kerr_info *err)
{
    enum kerr rc = k8s_get(env->client, res, ns, name, NULL, out, err);

    (*r->used)++;
    if (rc == KERR_NOTFOUND) {
        *out = NULL;
        kerr_clear(err);
        return KERR_OK;
    }
    return rc;
}

/* "<etcd>-final-snapshot-", cut with a hash (kname) to leave room for the attempt number. */
static enum kerr task_prefix(const char *etcd, char *out, size_t n)
{
    return kname_join(etcd, TASK_INFIX, KNAME_SUBDOMAIN_MAX - 7, out, n);
}

/* The attempt number of a task named "<task_prefix><n>", or 0. */
static int task_attempt(const cJSON *task, const char *etcd)
{
    const char *n = kjson_get_str(task, "metadata.name");
    char pre[KNAME_SUBDOMAIN_MAX + 1];
    char *end = NULL;
    long v;

    if (!n || task_prefix(etcd, pre, sizeof(pre)) != KERR_OK || strncmp(n, pre, strlen(pre)))
        return 0;
    n += strlen(pre);
    if (*n < '1' || *n > '9')
        return 0;
    errno = 0;
    v = strtol(n, &end, 10);
    return errno || *end || v > 1000000 ? 0 : (int)v;
}

static long since_ms(const char *stamp)
{
    struct timespec ts;

    if (!stamp || ktime_parse(stamp, &ts, NULL) != KERR_OK)
        return 1000L * 86400;
    return ((long)time(NULL) - (long)ts.tv_sec) * 1000L;
}

static enum hibplan_task task_state(const cJSON *t)
{
    const char *s = kjson_get_str(t, "status.state");

    if (kjson_has(t, "metadata.deletionTimestamp"))
        return HIBPLAN_TASK_DELETING;
    if (s && strcmp(s, "Succeeded") == 0)
        return HIBPLAN_TASK_SUCCEEDED;
    if (s && (strcmp(s, "Failed") == 0 || strcmp(s, "Rejected") == 0))
        return HIBPLAN_TASK_FAILED;
    return HIBPLAN_TASK_LIVE;
}

/* A task of ours: labelled with the Etcd and named "<etcd>-final-snapshot-<n>". */
static int task_ours(const cJSON *t, const char *etcd)
{
    const char *of = etcdspec_label(t, HIB_LABEL_TASK_OF);
    char want[KNAME_LABEL_MAX + 1];

    if (!of || kname_label_value(etcd, want) != KERR_OK || strcmp(of, want) != 0)
        return 0;
    return task_attempt(t, etcd);
}

/* Not Succeeded, Failed or Rejected: etcd-druid's IsCompleted() is false. */
static int task_unfinished(const cJSON *t)
{
    const char *s = kjson_get_str(t, "status.state");

    return !s || (strcmp(s, "Succeeded") && strcmp(s, "Failed") && strcmp(s, "Rejected"));
}

/* The cut time of the Etcd (etcd-warden.io/traffic-cut-at), or -1. */
static time_t cut_time(const cJSON *etcd)
{
    time_t t;

    return hibguard_cut_at(etcd, &t, NULL) == KERR_OK ? t : (time_t)-1;
}

/*
 * Every EtcdOpsTask of the namespace: ours (final-snapshot attempts) and the
 * others of this Etcd (etcd-druid's pre-sync tasks, a user's), which decide
 * whether we may create one and whether a snapshot of this cycle exists.
 */
static enum kerr read_tasks(const struct hib_env *env, struct round *r, struct kerr_info *err)
{
    time_t cut = cut_time(r->etcd);
    const cJSON *t;
    const char *en;
    enum kerr rc;
    int n;

    rc = k8s_list(env->client, &ETCDSPEC_RES_OPSTASK, r->ns, NULL, &r->tasks, err);
    (*r->used)++;
    if (rc != KERR_OK)
        return rc;
    cJSON_ArrayForEach (t, kjson_get_arr(r->tasks, "items")) {
        /* the webhook's rule for a scale-down to 0 (common/hibguard.h) */
        if (cut >= 0 && hibguard_task_counts(t, r->ns, r->name, cut))
            r->v.counted = true;
        if (!(n = task_ours(t, r->name))) {
            en = kjson_get_str(t, "spec.etcdName");
            if (en && strcmp(en, r->name) == 0 && task_unfinished(t))
                r->v.other_live = true;
            continue;
        }
        if (kjson_has(t, "metadata.deletionTimestamp"))
            r->v.ndeleting++;
        else
            r->v.ntasks++;
        if (n > r->v.attempt) {
            r->v.attempt = n;
            r->latest = t;
        }
    }
    r->v.task = r->latest ? task_state(r->latest) : HIBPLAN_TASK_NONE;
    r->v.task_errors = r->v.task == HIBPLAN_TASK_LIVE &&
                       cJSON_GetArraySize(kjson_get_arr(r->latest, "status.lastErrors")) > 0;
    if (r->v.task == HIBPLAN_TASK_FAILED)
        r->v.failed_ago_ms = since_ms(kjson_get_str(r->latest, "status.lastTransitionTime"));
    return KERR_OK;
}

static int int_at(const cJSON *o, const char *path)
{
    int64_t v = 0;
    return kjson_get_int64(o, path, &v) == KERR_OK ? (int)v : 0;
}

/* The annotation etcd-warden.io/hibernate is "true". */
static int hib_wanted(const cJSON *etcd)
{
    const char *want = etcdspec_annotation(etcd, HIB_ANN_HIBERNATE);
    return want && strcmp(want, "true") == 0;
}

/* spec.replicas is set to 0 (Gardener's signal, when the StatefulSet is above 0). */
static int spec_zero(const cJSON *etcd)
{
    int64_t v = -1;
    return kjson_get_int64(etcd, "spec.replicas", &v) == KERR_OK && v == 0;
}

/* A phase of the way down or asleep: the spec path's intent holds while spec.replicas is 0. */
static int phase_asleep(enum hibplan_phase p)
{
    return p == HIBPLAN_CUTTING || p == HIBPLAN_SNAPSHOT || p == HIBPLAN_SCALING ||
           p == HIBPLAN_FAILED || p == HIBPLAN_HIBERNATED;
}

/* Fill r->v from the API (the Service, StatefulSet and tasks not when Hibernated stays). */
static enum kerr read_state(const struct hib_env *env, struct round *r, struct kerr_info *err)
{
    char svc_name[ETCDSPEC_NAME_MAX + 8], imm_name[ETCDSPEC_NAME_MAX + 24];
    cJSON *imm = NULL;
    int rem = 0, light;
    enum kerr rc;

    r->ns = kjson_get_str(r->etcd, "metadata.namespace");
    r->name = kjson_get_str(r->etcd, "metadata.name");
    if (!r->ns || !r->name || strlen(r->name) > ETCDSPEC_NAME_MAX)
        return kerr_set(err, KERR_INVAL, "Etcd without namespace or name");
    r->v.phase = hibplan_phase_parse(etcdspec_annotation(r->etcd, HIB_ANN_PHASE));
    r->v.spec_signal = !hib_wanted(r->etcd) && spec_zero(r->etcd);
    r->v.want = hib_wanted(r->etcd) || (r->v.spec_signal && phase_asleep(r->v.phase));
    r->v.deleting = kjson_has(r->etcd, "metadata.deletionTimestamp");
    r->v.suspended = etcdspec_annotation(r->etcd, HIB_ANN_SUSPEND) != NULL;
    r->v.suspend_ours = etcdspec_annotation(r->etcd, HIB_ANN_SUSPEND_ADDED) != NULL;
    r->v.cut_at = etcdspec_annotation(r->etcd, HIB_ANN_CUT_AT) != NULL;
    r->v.failing_noted = etcdspec_annotation(r->etcd, HIB_ANN_CONDITION) != NULL;
    r->v.break_glass = etcdspec_annotation(r->etcd, HIB_ANN_BREAK_GLASS) != NULL;
    r->v.store = kjson_get_obj(r->etcd, "spec.backup.store") != NULL;
    r->v.spec_replicas = int_at(r->etcd, "spec.replicas");
    r->v.imm = env->bucket(r->etcd, NULL);
    snprintf(svc_name, sizeof(svc_name), "%s-client", r->name);
    if (imtjob_task_name(r->name, imm_name, sizeof(imm_name)) != KERR_OK)
        return kerr_set(err, KERR_INVAL, "Etcd name too long");
    if (!r->v.want && r->v.phase == HIBPLAN_NONE) {
        /* only spec.replicas: 0 brought us here: the StatefulSet says whether it is new */
        if ((rc = get_opt(env, r, &RES_STS, r->ns, r->name, &r->sts, err)) != KERR_OK)
            return rc;
        r->v.sts_present = r->sts != NULL;
        r->v.sts_spec = int_at(r->sts, "spec.replicas");
        r->v.sts_status = int_at(r->sts, "status.replicas");
        r->v.want = r->v.spec_signal && r->v.sts_spec > 0;
        if (!r->v.want)
            return KERR_OK;
        cJSON_Delete(r->sts);
        r->sts = NULL;
    }
    /* Hibernated and staying so: only the immutability task can need work. */
    light = r->v.want && r->v.phase == HIBPLAN_HIBERNATED;
    if ((!light && ((rc = get_opt(env, r, &RES_SVC, r->ns, svc_name, &r->svc, err)) ||
                    (rc = get_opt(env, r, &RES_STS, r->ns, r->name, &r->sts, err)) ||
                    (rc = read_tasks(env, r, err)))) ||
        (rc = get_opt(env, r, &ETCDSPEC_RES_IMMTASK, r->ns, imm_name, &imm, err)))
        return rc;
    r->v.svc = hib_svc_state(r->svc, &rem);
    r->v.svc_remembered = rem;
    r->v.sts_present = r->sts != NULL;
    r->v.sts_spec = int_at(r->sts, "spec.replicas");
    r->v.sts_status = int_at(r->sts, "status.replicas");
    r->v.imm_task = imm != NULL && !kjson_has(imm, "metadata.deletionTimestamp");
    r->v.imm_deleting = imm != NULL && !r->v.imm_task;
    cJSON_Delete(imm);
    return KERR_OK;
}

/* ---- acting ---- */

static void event(const struct hib_env *env, const cJSON *obj, enum ev_type type,
                  const char *reason, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void event(const struct hib_env *env, const cJSON *obj, enum ev_type type,
                  const char *reason, const char *fmt, ...)
{
    struct ev_ref ref;
    char note[EV_NOTE_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(note, sizeof(note), fmt, ap);
    va_end(ap);
    log_msg(type == EV_WARNING ? LOG_WARN : LOG_INFO, note, "namespace",
            kjson_get_str(obj, "metadata.namespace"), "name", kjson_get_str(obj, "metadata.name"),
            "reason", reason, (char *)NULL);
    if (env->events && ev_ref_from_object(obj, &ref) == KERR_OK)
        ev_emit(env->events, &ref, type, reason, "Hibernation", note);
}

/*
 * Merge-patch annotations of the Etcd, resourceVersion checked: n pairs of
 * key and value (NULL: remove), in one write.
 */
static enum kerr patch_etcd(const struct hib_env *env, struct round *r, int n,
                            const char *const kv[], struct kerr_info *err)
{
    cJSON *patch = cJSON_CreateObject();
    const char *rv = kjson_get_str(r->etcd, "metadata.resourceVersion");
    enum kerr rc = kerr_set(err, KERR_NOMEM, "out of memory");

    if (!patch)
        goto out;
    for (int i = 0; i < n; i++) {
        const char *segs[] = { "metadata", "annotations", kv[2 * i], NULL };
        const char *value = kv[2 * i + 1];

        if (kjson_setv(patch, segs, value ? cJSON_CreateString(value) : cJSON_CreateNull(), err) !=
            KERR_OK)
            goto out;
    }
    if (rv && kjson_set_str(patch, "metadata.resourceVersion", rv, err) != KERR_OK)
        goto out;
    rc = k8s_patch(env->client, &ETCDSPEC_RES_ETCD, r->ns, r->name, K8S_PATCH_MERGE, patch, NULL,
                   NULL, err);
    (*r->used)++;
out:
    cJSON_Delete(patch);
    return rc;
}

static enum kerr patch_one(const struct hib_env *env, struct round *r, const char *key,
                           const char *value, struct kerr_info *err)
{
    const char *kv[] = { key, value };
    return patch_etcd(env, r, 1, kv, err);
}

static enum kerr put_svc(const struct hib_env *env, struct round *r, int cut, struct kerr_info *err)
{
    cJSON *next = NULL;
    enum kerr rc = cut ? hib_ports_cut(r->svc, &next, err) : hib_ports_restore(r->svc, &next, err);

    if (rc == KERR_OK) {
        rc = k8s_update(env->client, &RES_SVC, r->ns, NULL, next, NULL, NULL, err);
        (*r->used)++;
    }
    cJSON_Delete(next);
    return rc;
}

/*
 * A final-snapshot task of attempt n for the Etcd of r (n 0: no name, the
 * server generates one from the prefix): *out OWNS it.
 */
static enum kerr build_task(struct round *r, int attempt, cJSON **out, struct kerr_info *err)
{
    cJSON *t = NULL, *owners = NULL, *owner = NULL;
    char name[ETCDSPEC_NAME_MAX + 32], of[KNAME_LABEL_MAX + 1];
    const char *lsegs[] = { "metadata", "labels", HIB_LABEL_TASK_OF, NULL };
    enum kerr rc;

    *out = NULL;
    if (task_prefix(r->name, name, sizeof(name)) != KERR_OK ||
        kname_label_value(r->name, of) != KERR_OK)
        return kerr_set(err, KERR_INVAL, "Etcd name too long");
    if (attempt > 0)
        snprintf(name + strlen(name), sizeof(name) - strlen(name), "%d", attempt);
    if ((rc = etcdspec_owner_ref(r->etcd, &owner, err)) != KERR_OK)
        return rc;
    rc = kerr_set(err, KERR_NOMEM, "out of memory");
    if (!(t = cJSON_CreateObject()) || !(owners = cJSON_CreateArray()) ||
        !cJSON_AddItemToArray(owners, owner)) {
        cJSON_Delete(owner);
        cJSON_Delete(owners);
        goto fail;
    }
    if (kjson_set_str(t, "apiVersion", ETCDSPEC_API_VERSION, err) ||
        kjson_set_str(t, "kind", "EtcdOpsTask", err) ||
        kjson_set_str(t, attempt > 0 ? "metadata.name" : "metadata.generateName", name, err) ||
        kjson_set_str(t, "metadata.namespace", r->ns, err) ||
        kjson_setv(t, lsegs, cJSON_CreateString(of), err) ||
        kjson_set(t, "metadata.ownerReferences", owners, err) ||
        kjson_set_str(t, "spec.etcdName", r->name, err) ||
        kjson_set_str(t, "spec.config.onDemandSnapshot.type", "full", err) ||
        kjson_set_bool(t, "spec.config.onDemandSnapshot.isFinal", true, err))
        goto fail;
    *out = t;
    return KERR_OK;
fail:
    cJSON_Delete(t);
    return rc;
}

/*
 * The API server's clock, the one clock of the scale-down guard: the
 * creationTimestamp the server stamps on a task created with dryRun=All
 * (nothing is stored, nothing is watched). *now is its second; text, when
 * not NULL, receives it as RFC 3339 (KTIME_LEN + 1 bytes).
 */
static enum kerr server_now(const struct hib_env *env, struct round *r, time_t *now, char *text,
                            struct kerr_info *err)
{
    struct k8s_write_opts wo = { .dry_run = 1 };
    struct timespec ts;
    cJSON *t = NULL, *made = NULL;
    const char *stamp;
    enum kerr rc;

    if ((rc = build_task(r, 0, &t, err)) != KERR_OK)
        return rc;
    rc = k8s_create(env->client, &ETCDSPEC_RES_OPSTASK, r->ns, t, &wo, &made, err);
    (*r->used)++;
    cJSON_Delete(t);
    if (rc != KERR_OK)
        return rc;
    stamp = kjson_get_str(made, "metadata.creationTimestamp");
    if (!stamp || ktime_parse(stamp, &ts, NULL) != KERR_OK)
        rc = kerr_set(err, KERR_PARSE,
                      "the API server's dry-run create of an EtcdOpsTask has no creationTimestamp");
    else if (text && (rc = ktime_format(ts.tv_sec, text)) != KERR_OK)
        kerr_set(err, rc, "formatting the time");
    else
        *now = ts.tv_sec;
    cJSON_Delete(made);
    return rc;
}

/*
 * Create attempt n, once the API server's clock is past the second of the
 * cut: a task created in that second might have been created before the
 * cut, and does not count (common/hibguard.h). Before that *defer_ms says
 * how long to wait.
 */
static enum kerr create_task(const struct hib_env *env, struct round *r, int attempt,
                             long *defer_ms, struct kerr_info *err)
{
    time_t cut = cut_time(r->etcd), now = 0;
    cJSON *t = NULL;
    enum kerr rc;

    if (cut >= 0) {
        if ((rc = server_now(env, r, &now, NULL, err)) != KERR_OK)
            return rc;
        if (now <= cut) {
            *defer_ms = 1000L * (long)(cut - now + 1);
            return KERR_OK;
        }
    }
    if ((rc = build_task(r, attempt, &t, err)) != KERR_OK)
        return rc;
    rc = k8s_create(env->client, &ETCDSPEC_RES_OPSTASK, r->ns, t, NULL, NULL, err);
    (*r->used)++;
    if (rc == KERR_EXISTS)
        rc = KERR_OK;
    cJSON_Delete(t);
    return rc;
}

static enum kerr delete_tasks(const struct hib_env *env, struct round *r, struct kerr_info *err)
{
    const cJSON *t;
    enum kerr rc;

    cJSON_ArrayForEach (t, kjson_get_arr(r->tasks, "items")) {
        if (!task_ours(t, r->name) || kjson_has(t, "metadata.deletionTimestamp"))
            continue;
        rc = k8s_delete(env->client, &ETCDSPEC_RES_OPSTASK, r->ns,
                        kjson_get_str(t, "metadata.name"), NULL, NULL, err);
        (*r->used)++;
        if (rc != KERR_OK && rc != KERR_NOTFOUND)
            return rc;
    }
    kerr_clear(err);
    return KERR_OK;
}

static enum kerr scale(const struct hib_env *env, struct round *r, int replicas,
                       struct kerr_info *err)
{
    struct k8s_write_opts wo = { .subresource = "scale" };
    cJSON *patch = cJSON_CreateObject();
    enum kerr rc = kerr_set(err, KERR_NOMEM, "out of memory");

    if (patch && kjson_set_int(patch, "spec.replicas", replicas, err) == KERR_OK)
        rc = k8s_patch(env->client, &RES_STS, r->ns, r->name, K8S_PATCH_MERGE, patch, &wo, NULL,
                       err);
    (*r->used)++;
    cJSON_Delete(patch);
    return rc;
}

/*
 * The condition of the failing final snapshot (HIB_ANN_CONDITION) from the latest task of
 * ours, written on the Etcd with a Warning event that carries the sidecar's reason.
 */
static enum kerr note_failing(const struct hib_env *env, struct round *r, struct kerr_info *err)
{
    const cJSON *errs = kjson_get_arr(r->latest, "status.lastErrors");
    const cJSON *last = cJSON_GetArrayItem(errs, cJSON_GetArraySize(errs) - 1);
    const char *task = kjson_get_str(r->latest, "metadata.name");
    const char *code = kjson_get_str(last, "code"), *why = kjson_get_str(last, "description");
    int failed = r->v.task == HIBPLAN_TASK_FAILED;
    char now[KTIME_LEN + 1], msg[1024];
    cJSON *cond = cJSON_CreateObject();
    char *text = NULL;
    enum kerr rc;

    if (!why)
        why = kjson_get_str(r->latest, "status.lastOperation.description");
    if (!code)
        code = failed ? "SnapshotFailed" : "SidecarCallFailed";
    snprintf(msg, sizeof(msg),
             "final snapshot attempt %d (EtcdOpsTask %s) %s: %s; hibernation waits and retries "
             "(%s). If the backups of this Etcd are broken, scale down without a snapshot: "
             "kubectl annotate etcd -n %s %s %s=<reason>",
             r->v.attempt, task ? task : "?",
             failed ? "failed" : "could not reach the backup sidecar", why ? why : "no detail",
             failed ? "a new attempt follows"
                    : "the sidecar is called again until the task's timeout",
             r->ns, r->name, HIB_ANN_BREAK_GLASS);
    if (ktime_format(time(NULL), now) != KERR_OK)
        now[0] = '\0';
    if (!cond || !cJSON_AddStringToObject(cond, "type", "FinalSnapshotFailing") ||
        !cJSON_AddStringToObject(cond, "status", "True") ||
        !cJSON_AddStringToObject(cond, "reason", code) ||
        !cJSON_AddStringToObject(cond, "message", msg) ||
        !cJSON_AddStringToObject(cond, "task", task ? task : "") ||
        !cJSON_AddNumberToObject(cond, "attempt", r->v.attempt) ||
        !cJSON_AddStringToObject(cond, "lastTransitionTime", now) ||
        !(text = cJSON_PrintUnformatted(cond))) {
        cJSON_Delete(cond);
        return kerr_set(err, KERR_NOMEM, "out of memory");
    }
    cJSON_Delete(cond);
    rc = patch_one(env, r, HIB_ANN_CONDITION, text, err);
    free(text);
    if (rc == KERR_OK)
        event(env, r->etcd, EV_WARNING, "FinalSnapshotFailing", "%s", msg);
    return rc;
}

/* Events that go with a phase about to be written. */
static void phase_event(const struct hib_env *env, struct round *r, enum hibplan_phase p)
{
    const char *desc =
        r->latest ? kjson_get_str(r->latest, "status.lastOperation.description") : NULL;

    if (p == HIBPLAN_HIBERNATED)
        event(env, r->etcd, EV_NORMAL, "Hibernated", "hibernated: traffic cut, %s, scaled to 0",
              r->v.store ? "final full snapshot taken" : "no backup store (no snapshot)");
    else if (p == HIBPLAN_FAILED)
        event(env, r->etcd, EV_WARNING, "FinalSnapshotFailed",
              "phase Failed: %d final snapshot attempts failed (last: %s); still retrying, "
              "not scaling down",
              r->v.attempt, desc ? desc : "no detail");
    else
        event(env, r->etcd, EV_NORMAL, "HibernationPhase", "hibernation phase %s",
              hibplan_phase_name(p));
}

static enum kerr perform(const struct hib_env *env, struct round *r, const struct hibplan_step *s,
                         struct kerr_info *err)
{
    enum kerr rc;

    char now[KTIME_LEN + 1];

    switch (s->act) {
    case HIBPLAN_SET_PHASE: {
        /* a new cycle starts without the cut time of the last one */
        const char *kv[] = { HIB_ANN_PHASE, hibplan_phase_name(s->phase), HIB_ANN_CUT_AT, NULL };

        rc = patch_etcd(env, r, s->phase == HIBPLAN_CUTTING && r->v.cut_at ? 2 : 1, kv, err);
        if (rc == KERR_OK)
            phase_event(env, r, s->phase);
        return rc;
    }
    case HIBPLAN_SET_SUSPEND: {
        const char *kv[] = { HIB_ANN_SUSPEND, "true", HIB_ANN_SUSPEND_ADDED, "true" };
        return patch_etcd(env, r, 2, kv, err);
    }
    case HIBPLAN_REMOVE_SUSPEND: {
        /* only what the controller added: an operator's suspension stays */
        const char *kv[] = { HIB_ANN_SUSPEND_ADDED, NULL, HIB_ANN_SUSPEND, NULL };
        return patch_etcd(env, r, 2, kv, err);
    }
    case HIBPLAN_SET_CUT_AT: {
        /* the API server's time, which stamps the tasks it is compared with */
        time_t t;

        if ((rc = server_now(env, r, &t, now, err)) != KERR_OK)
            return rc;
        return patch_one(env, r, HIB_ANN_CUT_AT, now, err);
    }
    case HIBPLAN_REMOVE_CUT_AT:
        return patch_one(env, r, HIB_ANN_CUT_AT, NULL, err);
    case HIBPLAN_REMOVE_PHASE:
        rc = patch_one(env, r, HIB_ANN_PHASE, NULL, err);
        if (rc == KERR_OK)
            event(env, r->etcd, EV_NORMAL, "WokeUp",
                  "woke up: replicas, ports and spec "
                  "reconciliation restored");
        return rc;
    case HIBPLAN_NOTE_FAILING:
        return note_failing(env, r, err);
    case HIBPLAN_CLEAR_FAILING:
        return patch_one(env, r, HIB_ANN_CONDITION, NULL, err);
    case HIBPLAN_CUT_PORTS:
        return put_svc(env, r, 1, err);
    case HIBPLAN_RESTORE_PORTS:
        return put_svc(env, r, 0, err);
    case HIBPLAN_DELETE_TASKS:
        return delete_tasks(env, r, err);
    case HIBPLAN_CREATE_TASK:
        if (r->v.task == HIBPLAN_TASK_FAILED)
            event(env, r->etcd, EV_WARNING, "FinalSnapshotFailed",
                  "final snapshot attempt %d failed (%s); attempt %d", r->v.attempt,
                  kjson_get_str(r->latest, "status.lastOperation.description")
                      ? kjson_get_str(r->latest, "status.lastOperation.description")
                      : kjson_get_str(r->latest, "status.state"),
                  s->attempt);
        return create_task(env, r, s->attempt, &r->defer_ms, err);
    case HIBPLAN_SCALE:
        if (s->replicas == 0 && r->v.store && !r->v.counted)
            event(env, r->etcd, EV_WARNING, "ScaleDownWithoutSnapshot",
                  "scaling to 0 without a final snapshot: %s is set (%s)", HIB_ANN_BREAK_GLASS,
                  etcdspec_annotation(r->etcd, HIB_ANN_BREAK_GLASS));
        return scale(env, r, s->replicas, err);
    case HIBPLAN_IMT_ENSURE:
        *r->used += 2; /* a GET and a write */
        return env->imt_ensure(env->imt_arg, r->etcd, err);
    case HIBPLAN_IMT_DELETE:
        (*r->used)++;
        return env->imt_delete(env->imt_arg, r->etcd, err);
    default:
        return KERR_OK;
    }
}

/*
 * Read round i (the Etcd given for the first, a fresh GET after) and decide;
 * warnings about the input go out as events. r->etcd NULL: the Etcd is gone.
 */
static enum kerr read_decide(const struct hib_env *env, const cJSON *etcd, int i, struct round *r,
                             struct hibplan_step *s, int *told, struct kerr_info *err)
{
    const char *ns = kjson_get_str(etcd, "metadata.namespace");
    const char *name = kjson_get_str(etcd, "metadata.name");
    enum kerr rc;

    r->etcd = i == 0 ? cJSON_Duplicate(etcd, 1) : NULL;
    if (i > 0 && (rc = get_opt(env, r, &ETCDSPEC_RES_ETCD, ns, name, &r->etcd, err)) != KERR_OK)
        return rc;
    if (!r->etcd) /* deleted meanwhile: owner references clean up */
        return KERR_OK;
    if ((rc = read_state(env, r, err)) != KERR_OK)
        return rc;
    if (r->v.imm < 0 && !(*told)++ && r->v.phase != HIBPLAN_NONE) {
        struct kerr_info e = { 0 };
        env->bucket(r->etcd, &e);
        event(env, r->etcd, EV_WARNING, "InvalidImmutability",
              "immutability task left as it is: %s", e.msg);
    }
    *s = hibplan_decide(&r->v, &env->plan);
    log_msg(LOG_DEBUG, "hibernation step", "namespace", ns, "name", name, "phase",
            hibplan_phase_name(r->v.phase), "action", hibplan_act_name(s->act), (char *)NULL);
    if (s->act == HIBPLAN_BAD)
        event(env, r->etcd, EV_WARNING, s->reason, "hibernation: %s", s->note);
    return KERR_OK;
}

enum kerr hib_step(const struct hib_env *env, const cJSON *etcd, long *requeue_ms,
                   struct kerr_info *err)
{
    struct round r = { 0 };
    struct hibplan_step s = { .act = HIBPLAN_WAIT, .wait_ms = CONFLICT_WAIT };
    enum kerr rc = KERR_OK;
    int told = 0, acts = 0, conflicts = 0, used = 0;
    long defer;
    int max = env->max_steps > 0 && env->max_steps < HIB_MAX_STEPS ? env->max_steps : HIB_MAX_STEPS;

    *requeue_ms = 0;
    kerr_clear(err);
    r.used = &used;
    if (!kjson_get_str(etcd, "metadata.namespace") || !kjson_get_str(etcd, "metadata.name"))
        return kerr_set(err, KERR_INVAL, "Etcd without namespace or name");
    if (!hib_wanted(etcd) && !spec_zero(etcd) && !etcdspec_annotation(etcd, HIB_ANN_PHASE))
        return KERR_OK; /* never hibernated: nothing to read */
    for (int i = 0; i < HIB_MAX_STEPS; i++) {
        /* the rest waits for the next call rather than exceed the budget of one */
        if (used + HIB_ROUND_REQUESTS > HIB_MAX_REQUESTS)
            break;
        rc = read_decide(env, etcd, i, &r, &s, &told, err);
        if (rc != KERR_OK || !r.etcd)
            break;
        if (s.act == HIBPLAN_DONE || s.act == HIBPLAN_WAIT || s.act == HIBPLAN_BAD)
            break;
        rc = perform(env, &r, &s, err);
        defer = r.defer_ms;
        round_release(&r);
        s.act = HIBPLAN_WAIT;
        s.wait_ms = CONFLICT_WAIT;
        if (rc == KERR_OK && defer > 0) { /* the action waits for the API server's clock */
            s.wait_ms = defer;
            break;
        }
        if (rc == KERR_CONFLICT) { /* someone wrote first: read again, a few times */
            rc = KERR_OK;
            if (++conflicts >= HIB_MAX_CONFLICTS) {
                s.wait_ms = CONFLICT_BACKOFF;
                break;
            }
        }
        if (rc != KERR_OK)
            break;
        if (++acts >= max)
            break;
    }
    if (rc == KERR_OK && (s.act == HIBPLAN_WAIT || s.act == HIBPLAN_BAD))
        *requeue_ms = s.wait_ms;
    round_release(&r);
    return rc;
}
