/* erst_del - the finalizer of an EtcdRestore; see erst_del.h. */
#include "controller/backups/erst_del.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/bstore.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/log.h"
#include "common/rtarget.h"
#include "controller/backups/cpjob.h"
#include "controller/backups/erst.h"
#include "controller/core/claims.h"
#include "controller/core/cwriter.h"
#include "controller/core/etcdspec.h"
#include "controller/core/kname.h"
#include "controller/core/podjob.h"

#define ERST_DEL_WHY_MAX 700

enum erst_del_act erst_del_decide(const struct erst_del_facts *f)
{
    if (!f->finalizer)
        return ERST_DEL_NOTHING;
    if (f->copy_job) /* it may still be writing */
        return ERST_DEL_STOP_COPY;
    if (f->in_flight)
        return ERST_DEL_END_FLIGHT;
    if (!f->claims) /* Completed (its Etcd's data), or nothing written */
        return ERST_DEL_DROP;
    switch (f->del_job) {
    case ERST_DJ_FOREIGN:
        return ERST_DEL_FOREIGN;
    case ERST_DJ_RUNNING:
        return ERST_DEL_WAIT;
    case ERST_DJ_CLEAN:
        return ERST_DEL_DONE;
    case ERST_DJ_UNFINISHED:
        return ERST_DEL_RETRY;
    case ERST_DJ_NONE:
        break;
    }
    if (f->backoff)
        return ERST_DEL_WAIT;
    if (f->owner < 0)
        return ERST_DEL_READ_CLAIMS;
    return f->owner ? ERST_DEL_KEEP : ERST_DEL_START;
}

static const char *str(const cJSON *obj, const char *path)
{
    const char *s = kjson_get_str(obj, path);

    return s ? s : "";
}

/* *requeue lowered to ms (1 ms to PODJOB_BACKOFF_MAX_MS: a lock of years is looked at again
 * every half hour, a pass that only waits). */
static void requeue_min(long *requeue, long ms)
{
    if (ms < 1)
        ms = 1;
    if (ms > PODJOB_BACKOFF_MAX_MS)
        ms = PODJOB_BACKOFF_MAX_MS;
    if (*requeue <= 0 || ms < *requeue)
        *requeue = ms;
}

int erst_has_finalizer(const cJSON *rs)
{
    const cJSON *f;

    cJSON_ArrayForEach (f, kjson_get_arr(rs, "metadata.finalizers"))
        if (cJSON_IsString(f) && strcmp(f->valuestring, ERST_FINALIZER) == 0)
            return 1;
    return 0;
}

enum kerr erst_add_finalizer(const struct erst_ctx *x, cJSON *rs, struct kerr_info *err)
{
    cJSON *fs = (cJSON *)kjson_get_arr(rs, "metadata.finalizers"), *out = NULL;
    const char *rv;
    enum kerr rc = KERR_OK;

    if (erst_has_finalizer(rs))
        return KERR_OK;
    if (!fs) {
        fs = cJSON_CreateArray();
        rc = fs ? kjson_set(rs, "metadata.finalizers", fs, err) : KERR_NOMEM;
    }
    if (rc == KERR_OK && !cJSON_AddItemToArray(fs, cJSON_CreateString(ERST_FINALIZER)))
        rc = KERR_NOMEM;
    if (rc == KERR_NOMEM)
        return kerr_set(err, rc, "the finalizer");
    if (rc == KERR_OK)
        rc = k8s_update(x->client, &ERST_RES_RESTORE, NULL, NULL, rs, NULL, &out, err);
    rv = kjson_get_str(out, "metadata.resourceVersion");
    if (rc == KERR_OK && rv) /* the status written next goes with what was just written */
        rc = kjson_set_str(rs, "metadata.resourceVersion", rv, err);
    cJSON_Delete(out);
    return rc;
}

/* rs without the finalizer (a PUT with its resourceVersion); gone already is fine. */
static enum kerr drop_finalizer(const struct erst_ctx *x, const cJSON *rs, struct kerr_info *err)
{
    cJSON *nr = cJSON_Duplicate(rs, 1),
          *fs = nr ? (cJSON *)kjson_get_arr(nr, "metadata.finalizers") : NULL;
    enum kerr rc;
    int i;

    if (!nr)
        return kerr_set(err, KERR_NOMEM, NULL);
    for (i = cJSON_GetArraySize(fs) - 1; i >= 0; i--) {
        const cJSON *f = cJSON_GetArrayItem(fs, i);

        if (cJSON_IsString(f) && strcmp(f->valuestring, ERST_FINALIZER) == 0)
            cJSON_DeleteItemFromArray(fs, i);
    }
    rc = k8s_update(x->client, &ERST_RES_RESTORE, NULL, NULL, nr, NULL, NULL, err);
    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        rc = KERR_OK;
    }
    cJSON_Delete(nr);
    return rc;
}

/* The Job ns/name: *job OWNED (NULL when there is none). */
static enum kerr get_job(const struct erst_ctx *x, const char *ns, const char *name, cJSON **job,
                         struct kerr_info *err)
{
    enum kerr rc = k8s_get(x->client, &ETCDSPEC_RES_JOB, ns, name, NULL, job, err);

    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        *job = NULL;
        rc = KERR_OK;
    }
    return rc;
}

enum kerr erst_stop_copy(const struct erst_ctx *x, const cJSON *rs, const cJSON *job,
                         struct kerr_info *err)
{
    struct k8s_delete_opts o = { .propagation_policy = "Foreground" };
    const char *at = kjson_get_str(job, "metadata.creationTimestamp");
    cJSON *nr = NULL;
    enum kerr rc = KERR_OK;

    if (kjson_has(job, "metadata.deletionTimestamp"))
        return KERR_OK;
    if ((!kjson_get_str(rs, "status.jobName") || !kjson_get_str(rs, "status.copyStartedAt")) &&
        at) {
        struct k8s_write_opts wo = { .subresource = "status" };

        nr = cJSON_Duplicate(rs, 1);
        rc = nr ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
        if (rc == KERR_OK && !kjson_get_str(nr, "status.jobName"))
            rc = kjson_set_str(nr, "status.jobName", str(job, "metadata.name"), err);
        if (rc == KERR_OK && !kjson_get_str(nr, "status.copyStartedAt"))
            rc = kjson_set_str(nr, "status.copyStartedAt", at, err);
        if (rc == KERR_OK)
            rc = k8s_update(x->client, &ERST_RES_RESTORE, NULL, NULL, nr, &wo, NULL, err);
        cJSON_Delete(nr);
    }
    o.precondition_uid = kjson_get_str(job, "metadata.uid");
    if (rc == KERR_OK)
        rc = k8s_delete(x->client, &ETCDSPEC_RES_JOB, str(rs, "metadata.namespace"),
                        str(job, "metadata.name"), &o, NULL, err);
    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        rc = KERR_OK;
    }
    if (rc == KERR_OK)
        erst_event(x, rs, EV_NORMAL, "CopyStopped", "the copy Job %s is deleted",
                   str(job, "metadata.name"));
    return rc;
}

/* Deleted in flight, the copy stopped: Failed, completionTime now (the end of its writes). */
static enum kerr end_flight(const struct erst_ctx *x, const cJSON *rs, struct kerr_info *err)
{
    cJSON *nr = cJSON_Duplicate(rs, 1);
    char why[160];
    enum kerr rc;

    if (!nr)
        return kerr_set(err, KERR_NOMEM, NULL);
    snprintf(why, sizeof(why), "deleted while %s",
             *str(rs, "status.phase") ? str(rs, "status.phase") : ERST_PHASE_PENDING);
    rc = erst_put_status(x, nr, ERST_PHASE_FAILED, why, err);
    cJSON_Delete(nr);
    return rc;
}

/* The deletion's error in the status (failures, the Job decided, the retry's time: each when
 * given) and a Warning event when it is new. */
static enum kerr record(const struct erst_ctx *x, const cJSON *rs, const char *reason,
                        const char *why, long failures, const char *juid, const char *next,
                        struct kerr_info *err)
{
    struct k8s_write_opts wo = { .subresource = "status" };
    cJSON *nr;
    enum kerr rc = KERR_OK;

    if (strcmp(str(rs, "status.deletionError"), why) == 0 &&
        (!juid || strcmp(str(rs, "status.deletionJobUID"), juid) == 0))
        return KERR_OK;
    nr = cJSON_Duplicate(rs, 1);
    if (!nr || kjson_set_str(nr, "status.deletionError", why, err) ||
        (failures > 0 && kjson_set_int(nr, "status.deletionFailures", failures, err)) ||
        (juid && kjson_set_str(nr, "status.deletionJobUID", juid, err)) ||
        (next && kjson_set_str(nr, "status.nextDeletionAt", next, err)))
        rc = kerr_set(err, KERR_NOMEM, NULL);
    if (rc == KERR_OK)
        rc = k8s_update(x->client, &ERST_RES_RESTORE, NULL, NULL, nr, &wo, NULL, err);
    cJSON_Delete(nr);
    if (rc == KERR_OK)
        erst_event(x, rs, EV_WARNING, reason, "%s", why);
    return rc;
}

/* The claim of the target, into *c (release it): the store the copy wrote (common/rtarget's
 * rule, erst_plan_resolve) and its Secret (*secret OWNED, NULL when it has none). */
static enum kerr target_of(const struct erst_ctx *x, const cJSON *rs, struct erst_plan *p,
                           cJSON **secret, struct kerr_info *err)
{
    enum kerr rc = erst_plan_resolve(x, rs, 0, p, err);

    *secret = NULL;
    if (rc == KERR_OK && (p->wait || p->refuse))
        return kerr_set(err, KERR_INVAL, "the target store: %s", p->why);
    if (rc == KERR_OK && p->to.secret) {
        rc = k8s_get(x->client, &ETCDSPEC_RES_SECRET, str(rs, "metadata.namespace"), p->to.secret,
                     NULL, secret, err);
        if (rc == KERR_NOTFOUND) { /* Local may go without; the others fail in the Job */
            kerr_clear(err);
            rc = KERR_OK;
        }
    }
    return rc;
}

/* Another owner of an overlapping prefix in the target store, described into why ("" when
 * none; another namespace's claim named only as such): the restore itself skipped, never the
 * Etcd of its target name. A Local target is the directory its copy Job mounted
 * (status.targetHostPath, p->to_host); not recorded: nothing is known to be the restore's, and
 * why says so (provenance before deletion). */
static enum kerr find_owner(const struct erst_ctx *x, const cJSON *rs, const struct erst_plan *p,
                            char why[CLAIMS_WHY_MAX], struct kerr_info *err)
{
    struct claims_skip skip = { .restore_ns = kjson_get_str(rs, "metadata.namespace"),
                                .restore = kjson_get_str(rs, "metadata.name"),
                                .viewer_ns = kjson_get_str(rs, "metadata.namespace") };
    struct bstore_claim c;
    const char *kind = bstore_provider_kind(p->to.provider);
    char held[CWRITER_WHY_MAX] = "";
    enum kerr rc;

    if (kind && strcmp(kind, "Local") == 0 && !*p->to_host) {
        snprintf(why, CLAIMS_WHY_MAX,
                 "the host directory the copy Job mounted, which is not recorded "
                 "(status.targetHostPath): nothing is known to be the restore's there");
        return KERR_OK;
    }
    if ((rc = erst_target_claim(&p->to, p->to_host, &c, err)) != KERR_OK)
        return rc;
    rc = claims_find(x->client, NULL, &c, &skip, why, err);
    /* a backup sidecar anywhere that may write the target (controller/core/cwriter), named to
     * no one: it may be another namespace's */
    if (rc == KERR_OK && !*why &&
        (rc = cwriter_held(x->client, &c, held, sizeof(held), err)) == KERR_OK && *held)
        snprintf(why, CLAIMS_WHY_MAX,
                 "a backup sidecar of a workload or pod of the cluster that may write the target "
                 "prefix (warden-controller's log names it)");
    if (*held)
        log_warn("restore cleanup kept", "restore", str(rs, "metadata.name"), "why", held);
    bstore_claim_release(&c);
    return rc;
}

/* The delete Job jname, of what the restore wrote: from its copy's start to its end. */
static enum kerr start(const struct erst_ctx *x, const cJSON *rs, const struct erst_plan *p,
                       const cJSON *secret, const char *jname, struct kerr_info *err)
{
    const char *ns = str(rs, "metadata.namespace");
    const char *since = kjson_get_str(rs, "status.copyStartedAt");
    const char *before = kjson_get_str(rs, "status.completionTime");
    struct cpjob_delete_spec s = { 0 };
    struct timespec ts;
    cJSON *job = NULL;
    enum kerr rc;

    if (!since) /* a copy started before it was recorded: the restore is older */
        since = kjson_get_str(rs, "metadata.creationTimestamp");
    if (!since || ktime_parse(since, &ts, NULL) != KERR_OK || !before ||
        ktime_parse(before, &ts, NULL) != KERR_OK)
        return kerr_set(err, KERR_INVAL,
                        "no copy start (status.copyStartedAt) or end (status.completionTime): "
                        "what the restore wrote cannot be told apart");
    s.name = jname;
    s.ns = ns;
    s.owner = rs;
    s.store =
        (struct cpjob_store){ p->to.provider, p->to.container, p->to.prefix,
                              p->to.endpoint, secret,          *p->to_host ? p->to_host : NULL };
    s.written_since = since;
    s.written_before = before;
    s.copies_only = 1; /* what a sidecar wrote there meanwhile is not the restore's */
    s.image = x->job_image;
    s.command = x->del_command;
    rc = cpjob_build_delete(&s, &job, err);
    if (rc == KERR_OK)
        rc = podjob_create_job(x->client, ns, job, err);
    if (rc == KERR_OK)
        erst_event(x, rs, EV_NORMAL, "CleanupStarted",
                   "Job %s deletes what the restore wrote into %s/%s from %s to %s", jname,
                   p->to.container, p->to.prefix, since, before);
    cJSON_Delete(job);
    return rc;
}

/* A finished delete Job's Pod read: ERST_DJ_CLEAN or ERST_DJ_UNFINISHED, why (n bytes) and
 * *wait_ms the retry's delay when unfinished. */
static enum kerr read_result(const struct erst_ctx *x, const cJSON *rs, const cJSON *job,
                             enum erst_del_job *dj, char *why, size_t n, long *wait_ms, long *kept,
                             struct kerr_info *err)
{
    const char *jname = str(job, "metadata.name");
    int64_t failures = 0;
    struct podjob_summary s;
    struct timespec at;
    time_t now = time(NULL);
    enum kerr rc =
        podjob_job_pod(x->client, str(rs, "metadata.namespace"), str(job, "metadata.uid"), &s, err);

    if (rc != KERR_OK)
        return rc;
    *dj = ERST_DJ_CLEAN;
    *kept = s.kept;
    if (s.terminated && s.exit_code == 0 && s.parsed && s.remaining == 0)
        return KERR_OK;
    *dj = ERST_DJ_UNFINISHED;
    (void)kjson_get_int64(rs, "status.deletionFailures", &failures);
    *wait_ms = podjob_backoff_ms(failures + 1);
    if (s.terminated && s.exit_code == 0 && s.parsed && s.failed == 0 && s.locked > 0) {
        if (*s.earliest && ktime_parse(s.earliest, &at, NULL) == KERR_OK)
            *wait_ms = at.tv_sec > now ? (long)(at.tv_sec - now) * 1000L : ERST_POLL_MS;
        snprintf(why, n, "what the restore copied into its target is locked in the store until %s",
                 *s.earliest ? s.earliest : "an unknown time");
    } else if (podjob_deadline_exceeded(job) ||
               (!s.terminated && podjob_job_failed(job, NULL, 0))) {
        char f[256];

        (void)podjob_job_failed(job, f, sizeof(f));
        snprintf(why, n, "delete Job %s failed: %s", jname, f);
    } else if (!s.terminated) {
        snprintf(why, n, "delete Job %s failed without a terminated Pod", jname);
    } else {
        snprintf(why, n, "delete Job %s: exit status %d%s%s", jname, s.exit_code,
                 *s.message ? ": " : "", s.message);
    }
    return KERR_OK;
}

/* The delete Job's failure recorded (once per Job), the retry's time set, the Job deleted. */
static enum kerr retry(const struct erst_ctx *x, const cJSON *rs, const cJSON *job, const char *why,
                       long wait_ms, long *requeue, struct kerr_info *err)
{
    const char *juid = str(job, "metadata.uid");
    int decided = strcmp(str(rs, "status.deletionJobUID"), juid) == 0;
    int64_t failures = 0;
    char next[KTIME_LEN + 1], msg[ERST_DEL_WHY_MAX + 64];
    enum kerr rc = KERR_OK;

    (void)kjson_get_int64(rs, "status.deletionFailures", &failures);
    if (!decided) {
        if (ktime_format(time(NULL) + wait_ms / 1000, next) != KERR_OK)
            return kerr_set(err, KERR_INTERNAL, "cannot format the time");
        snprintf(msg, sizeof(msg), "%s; retried at %s", why, next);
        rc = record(x, rs, "CleanupFailed", msg, (long)failures + 1, juid, next, err);
    }
    if (rc == KERR_OK)
        rc = podjob_delete_job(x->client, str(rs, "metadata.namespace"), str(job, "metadata.name"),
                               str(rs, "metadata.uid"), err);
    requeue_min(requeue, wait_ms);
    return rc;
}

/* The ms until status.nextDeletionAt (at least ERST_POLL_MS). */
static long until_next(const cJSON *rs)
{
    struct timespec at;
    time_t now = time(NULL);

    if (ktime_parse(str(rs, "status.nextDeletionAt"), &at, NULL) != KERR_OK || at.tv_sec <= now)
        return ERST_POLL_MS;
    return (long)(at.tv_sec - now) * 1000L;
}

/* What the pass reads about rs into f, the delete Job into *del (OWNED, NULL: none); the
 * copy Job into *copy (OWNED) when it is the restore's. */
static enum kerr read_facts(const struct erst_ctx *x, const cJSON *rs, const char *cname,
                            const char *dname, struct erst_del_facts *f, cJSON **copy, cJSON **del,
                            struct kerr_info *err)
{
    const char *ns = str(rs, "metadata.namespace"), *uid = str(rs, "metadata.uid");
    const char *phase = str(rs, "status.phase"), *next = str(rs, "status.nextDeletionAt");
    struct timespec at;
    enum kerr rc;

    memset(f, 0, sizeof(*f));
    f->owner = -1;
    f->finalizer = erst_has_finalizer(rs);
    f->in_flight =
        strcmp(phase, ERST_PHASE_COMPLETED) != 0 && strcmp(phase, ERST_PHASE_FAILED) != 0;
    f->claims = rtarget_claims(rs);
    f->backoff = *next && ktime_parse(next, &at, NULL) == KERR_OK && at.tv_sec > time(NULL);
    if (!f->finalizer)
        return KERR_OK;
    rc = get_job(x, ns, cname, copy, err);
    if (rc == KERR_OK && *copy && !podjob_owned(*copy, uid)) { /* another's: never ours */
        cJSON_Delete(*copy);
        *copy = NULL;
    }
    f->copy_job = *copy != NULL;
    if (rc == KERR_OK)
        rc = get_job(x, ns, dname, del, err);
    if (rc == KERR_OK && *del)
        f->del_job = !podjob_owned(*del, uid) ? ERST_DJ_FOREIGN
                     : podjob_job_done(*del)  ? ERST_DJ_UNFINISHED /* read_result tells */
                                              : ERST_DJ_RUNNING;
    return rc;
}

enum kerr erst_delete_step(const struct erst_ctx *x, const cJSON *rs, long *requeue,
                           struct kerr_info *err)
{
    const char *name = str(rs, "metadata.name");
    char cname[KNAME_LABEL_MAX + 1], dname[KNAME_LABEL_MAX + 1], why[ERST_DEL_WHY_MAX] = "";
    char owner[CLAIMS_WHY_MAX] = "";
    struct erst_del_facts f;
    struct erst_plan p;
    cJSON *copy = NULL, *del = NULL, *secret = NULL;
    long wait_ms = ERST_POLL_MS, kept = 0;
    enum erst_del_act act;
    enum kerr rc;

    memset(&p, 0, sizeof(p));
    if (kname_job(name, ERST_JOB_TAG, cname) != KERR_OK ||
        kname_job(name, ERST_CLEANUP_TAG, dname) != KERR_OK)
        return kerr_set(err, KERR_INVAL, "no Job names for EtcdRestore %s", name);
    rc = read_facts(x, rs, cname, dname, &f, &copy, &del, err);
    if (rc == KERR_OK && f.del_job == ERST_DJ_UNFINISHED)
        rc = read_result(x, rs, del, &f.del_job, why, sizeof(why), &wait_ms, &kept, err);
    act = rc == KERR_OK ? erst_del_decide(&f) : ERST_DEL_NOTHING;
    if (act == ERST_DEL_READ_CLAIMS) {
        rc = target_of(x, rs, &p, &secret, err);
        if (rc == KERR_INVAL) { /* the store the copy wrote cannot be told now */
            snprintf(why, sizeof(why), "%s", err->msg);
            kerr_clear(err);
            rc = record(x, rs, "CleanupFailed", why, 0, NULL, NULL, err);
            requeue_min(requeue, podjob_backoff_ms(4));
            act = ERST_DEL_NOTHING;
        } else if (rc == KERR_OK) {
            rc = find_owner(x, rs, &p, owner, err);
        }
        f.owner = *owner != '\0';
        if (rc == KERR_OK && act == ERST_DEL_READ_CLAIMS)
            act = erst_del_decide(&f);
        else if (rc != KERR_OK) /* a LIST failed: the reconcile's error, retried */
            act = ERST_DEL_NOTHING;
    }
    switch (act) {
    case ERST_DEL_NOTHING:
    case ERST_DEL_READ_CLAIMS: /* decided above */
        break;
    case ERST_DEL_STOP_COPY:
        rc = erst_stop_copy(x, rs, copy, err);
        requeue_min(requeue, ERST_POLL_MS);
        break;
    case ERST_DEL_END_FLIGHT:
        rc = end_flight(x, rs, err);
        requeue_min(requeue, 1);
        break;
    case ERST_DEL_DROP:
        rc = drop_finalizer(x, rs, err);
        break;
    case ERST_DEL_KEEP:
        rc = drop_finalizer(x, rs, err);
        if (rc == KERR_OK)
            erst_event(x, rs, EV_NORMAL, "CopyKept",
                       "the target prefix %s/%s now overlaps %s: what the restore copied "
                       "there is left to it",
                       p.to.container, p.to.prefix, owner);
        break;
    case ERST_DEL_START:
        rc = start(x, rs, &p, secret, dname, err);
        if (rc == KERR_EXISTS) { /* made meanwhile by another */
            snprintf(why, sizeof(why), "%s", err->msg);
            kerr_clear(err);
            rc = record(x, rs, "CleanupBlocked", why, 0, NULL, NULL, err);
            requeue_min(requeue, podjob_backoff_ms(4));
        } else if (rc == KERR_INVAL || rc == KERR_UNSUPPORTED) {
            snprintf(why, sizeof(why), "the delete Job: %s", err->msg);
            kerr_clear(err);
            rc = record(x, rs, "CleanupFailed", why, 0, NULL, NULL, err);
            requeue_min(requeue, podjob_backoff_ms(4));
        }
        requeue_min(requeue, ERST_POLL_MS);
        break;
    case ERST_DEL_WAIT: /* a Job running; or the backoff: until status.nextDeletionAt */
        requeue_min(requeue, f.del_job == ERST_DJ_NONE ? until_next(rs) : ERST_POLL_MS);
        break;
    case ERST_DEL_DONE:
        rc = drop_finalizer(x, rs, err);
        if (rc == KERR_OK) {
            erst_event(x, rs, EV_NORMAL, "CopyDeleted",
                       "what the restore copied into its target prefix is deleted (Job %s); %ld "
                       "object(s) written there outside its copy's time kept",
                       dname, kept);
            rc = podjob_delete_job(x->client, str(rs, "metadata.namespace"), dname,
                                   str(rs, "metadata.uid"), err);
        }
        break;
    case ERST_DEL_RETRY:
        rc = retry(x, rs, del, why, wait_ms, requeue, err);
        break;
    case ERST_DEL_FOREIGN:
        podjob_foreign(del, why, sizeof(why));
        rc = record(x, rs, "CleanupBlocked", why, 0, NULL, NULL, err);
        requeue_min(requeue, podjob_backoff_ms(4));
        break;
    }
    cJSON_Delete(copy);
    cJSON_Delete(del);
    cJSON_Delete(secret);
    erst_plan_release(&p);
    return rc;
}
