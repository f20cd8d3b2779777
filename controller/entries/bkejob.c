/* bkejob - the Job deleting a BackupEntry's backups; see bkejob.h. */
#include "controller/entries/bkejob.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/bentry.h"
#include "common/bstore.h"
#include "common/k8s.h"
#include "common/kjson.h"
#include "common/log.h"
#include "controller/core/etcdspec.h"
#include "controller/core/imtjob.h"
#include "controller/core/podjob.h"
#include "controller/entries/bkealive.h"
#include "controller/entries/bkeauth.h"
#include "controller/entries/bkefin.h"
#include "controller/entries/bkeheld.h"
#include "controller/entries/bkeseen.h"
#include "controller/entries/bkewin.h"

static const char *str_or_empty(const cJSON *obj, const char *path)
{
    const char *s = kjson_get_str(obj, path);

    return s ? s : "";
}

enum kerr bkejob_name(const char *entry, char out[KNAME_LABEL_MAX + 1])
{
    return kname_job(entry, BKEJOB_TAG, out);
}

/*
 * The Etcd and task imtjob builds its CronJob from, standing for the entry:
 * the store of the bucket with the entry's prefix and the bucket's Secret, in
 * the Secret's namespace.
 */
static enum kerr stand_ins(const cJSON *entry, const cJSON *bucket, cJSON *etcd, cJSON *task,
                           struct kerr_info *err)
{
    const char *ename = kjson_get_str(entry, "metadata.name");
    const char *sns = kjson_get_str(bucket, "spec.secretRef.namespace");
    const char *sname = kjson_get_str(bucket, "spec.secretRef.name");
    const char *prefix = kjson_get_str(entry, "spec.prefix");
    enum kerr rc;

    if (!ename || !*ename || !prefix || !*prefix || !*str_or_empty(entry, "metadata.uid"))
        return kerr_set(err, KERR_INVAL,
                        "BackupEntry without metadata.name, metadata.uid or spec.prefix");
    if (!sns || !*sns || !sname || !*sname)
        return kerr_set(err, KERR_INVAL,
                        "BackupBucket %s: spec.secretRef {namespace, name} required",
                        str_or_empty(bucket, "metadata.name"));
    rc = kjson_set_str(etcd, "metadata.name", ename, err);
    if (rc == KERR_OK)
        rc = kjson_set_str(etcd, "metadata.namespace", sns, err);
    if (rc == KERR_OK)
        rc = kjson_set_str(etcd, "metadata.uid", str_or_empty(entry, "metadata.uid"), err);
    if (rc == KERR_OK)
        rc = kjson_set_str(etcd, "spec.backup.store.provider",
                           str_or_empty(bucket, "spec.provider"), err);
    if (rc == KERR_OK)
        rc = kjson_set_str(etcd, "spec.backup.store.container",
                           str_or_empty(bucket, "spec.container"), err);
    if (rc == KERR_OK)
        rc = kjson_set_str(etcd, "spec.backup.store.prefix", prefix, err);
    if (rc == KERR_OK)
        rc = kjson_set_str(etcd, "spec.backup.store.secretRef.name", sname, err);
    /* imtjob passes it as --store-endpoint-override, which wins over the Secret's endpoint */
    if (rc == KERR_OK && kjson_get_str(bucket, "spec.endpointOverride"))
        rc = kjson_set_str(etcd, "spec.backup.store.endpointOverride",
                           kjson_get_str(bucket, "spec.endpointOverride"), err);
    if (rc == KERR_OK)
        rc = kjson_set_str(task, "metadata.name", ename, err);
    if (rc == KERR_OK)
        rc = kjson_set_str(task, "metadata.uid", "-", err);
    if (rc == KERR_OK)
        rc = kjson_set_str(task, "metadata.creationTimestamp", "1970-01-01T00:00:00Z", err);
    return rc;
}

/* The CronJob's pod template turned into the deletion's: no --gc-from-timestamp, run once. */
static enum kerr to_job_pod(const cJSON *entry, cJSON *pod, struct kerr_info *err)
{
    cJSON *ctr = (cJSON *)kjson_get(pod, "containers.0");
    cJSON *args = ctr ? cJSON_GetObjectItem(ctr, "args") : NULL;
    const cJSON *first = args ? cJSON_GetArrayItem(args, 0) : NULL;
    enum kerr rc;

    if (!ctr)
        return kerr_set(err, KERR_INTERNAL, "the pod template has no container");
    if (first && cJSON_IsString(first) &&
        strncmp(first->valuestring, "--gc-from-timestamp=", 20) == 0)
        cJSON_DeleteItemFromArray(args, 0);
    rc = args ? bkewin_args(entry, args, err) : kerr_set(err, KERR_INTERNAL, "no args");
    if (rc == KERR_OK)
        rc = kjson_set_str(ctr, "name", "delete-snapshots", err);
    if (rc == KERR_OK)
        rc = kjson_set_str(ctr, "terminationMessagePolicy", "FallbackToLogsOnError", err);
    if (rc == KERR_OK)
        rc = kjson_set_str(pod, "restartPolicy", "Never", err);
    return rc;
}

static enum kerr set_labels(cJSON *obj, const char *path_labels, const char *label,
                            struct kerr_info *err)
{
    cJSON *l = cJSON_CreateObject();

    if (!l || !cJSON_AddStringToObject(l, ETCDSPEC_LABEL_MANAGED_BY, IMTJOB_MANAGED_BY) ||
        !cJSON_AddStringToObject(l, BKEJOB_LABEL_ENTRY, label)) {
        cJSON_Delete(l);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    return kjson_set(obj, path_labels, l, err);
}

const char *bkejob_local_secret(const cJSON *bucket)
{
    const char *p = kjson_get_str(bucket, "spec.provider");

    if (!p || (strcmp(p, "Local") != 0 && strcmp(p, "local") != 0))
        return NULL;
    return kjson_get_str(bucket, "spec.secretRef.name");
}

enum kerr bkejob_build(const cJSON *entry, const cJSON *bucket, const cJSON *secret,
                       const char *image, const char *command, cJSON **out, struct kerr_info *err)
{
    cJSON *etcd = cJSON_CreateObject(), *task = cJSON_CreateObject(), *cj = NULL, *job = NULL,
          *pod = NULL;
    char name[KNAME_LABEL_MAX + 1], label[KNAME_LABEL_MAX + 1];
    const char *ename = kjson_get_str(entry, "metadata.name");
    enum kerr rc = etcd && task ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);

    *out = NULL;
    if (rc == KERR_OK)
        rc = stand_ins(entry, bucket, etcd, task, err);
    if (rc == KERR_OK &&
        (bkejob_name(ename, name) != KERR_OK || kname_label_value(ename, label) != KERR_OK))
        rc = kerr_set(err, KERR_INVAL, "no Job name for BackupEntry %s", ename);
    if (rc == KERR_OK)
        rc = imtjob_cronjob_build_store(task, etcd, secret, image,
                                        command ? command : "warden-snapshot delete-snapshots", &cj,
                                        err);
    if (rc == KERR_OK) {
        pod = cJSON_DetachItemViaPointer(
            (cJSON *)kjson_get(cj, "spec.jobTemplate.spec.template"),
            (cJSON *)kjson_get(cj, "spec.jobTemplate.spec.template.spec"));
        job = cJSON_CreateObject();
        rc = pod && job ? to_job_pod(entry, pod, err) : kerr_set(err, KERR_NOMEM, NULL);
    }
    if (rc == KERR_OK)
        rc = kjson_set_str(job, "apiVersion", "batch/v1", err);
    if (rc == KERR_OK)
        rc = kjson_set_str(job, "kind", "Job", err);
    if (rc == KERR_OK)
        rc = kjson_set_str(job, "metadata.name", name, err);
    if (rc == KERR_OK)
        rc = kjson_set_str(job, "metadata.namespace",
                           kjson_get_str(bucket, "spec.secretRef.namespace"), err);
    if (rc == KERR_OK)
        rc = set_labels(job, "metadata.labels", label, err);
    if (rc == KERR_OK)
        rc = kjson_setv(
            job, (const char *const[]){ "metadata", "annotations", BKEJOB_LABEL_ENTRY, NULL },
            cJSON_CreateString(ename), err);
    if (rc == KERR_OK)
        rc = kjson_setv(
            job, (const char *const[]){ "metadata", "annotations", PODJOB_ANN_OWNER_UID, NULL },
            cJSON_CreateString(str_or_empty(entry, "metadata.uid")), err);
    if (rc == KERR_OK)
        rc = kjson_set_int(job, "spec.backoffLimit", 0, err);
    if (rc == KERR_OK)
        rc = kjson_set_int(job, "spec.activeDeadlineSeconds", PODJOB_DELETE_DEADLINE_S, err);
    if (rc == KERR_OK)
        rc = set_labels(job, "spec.template.metadata.labels", label, err);
    if (rc == KERR_OK) {
        rc = kjson_set(job, "spec.template.spec", pod, err);
        pod = NULL;
    }
    cJSON_Delete(pod);
    cJSON_Delete(cj);
    cJSON_Delete(etcd);
    cJSON_Delete(task);
    if (rc != KERR_OK) {
        cJSON_Delete(job);
        return rc;
    }
    *out = job;
    return KERR_OK;
}

/* What one step writes in the entry's status. */
struct outcome {
    const char *message;
    const char *last_error; /* NULL: removed */
    const char *next;       /* nextDeletionAt, NULL: removed */
    const char *job_uid;    /* deletionJobUID: the finished Job decided on, NULL: kept */
    long failures;          /* deletionFailures */
    long rechecks;          /* lockedRechecks: runs that left locked objects of unknown expiry */
    const struct podjob_summary *sum; /* objects left, immutable, earliest; NULL: kept */
    const char *started;              /* deletionStartedAt, NULL: kept */
};

static void requeue_min(long *requeue, long ms)
{
    if (ms < 1)
        ms = 1;
    if (*requeue <= 0 || ms < *requeue)
        *requeue = ms;
}

static int set_or_drop(cJSON *obj, const char *path, const char *v)
{
    if (!v) {
        (void)kjson_delete(obj, path);
        return 1;
    }
    return kjson_set_str(obj, path, v, NULL) == KERR_OK;
}

/*
 * Write phase Deleting and o into entry's status (when anything differs); stored (NULL: not
 * wanted) gets the entry as stored afterwards.
 */
static enum kerr put_status_stored(const struct bke_ctx *x, const cJSON *entry,
                                   const struct outcome *o, cJSON **stored, struct kerr_info *err)
{
    cJSON *obj = cJSON_Duplicate(entry, 1);
    char *before = NULL, *after = NULL;
    int ok = obj != NULL, same;
    enum kerr rc = KERR_OK;

    ok = ok && !kjson_set_str(obj, "apiVersion", ETCDSPEC_WARDEN_API, NULL) &&
         !kjson_set_str(obj, "kind", "BackupEntry", NULL) &&
         !kjson_set_str(obj, "status.phase", BSTORE_ENTRY_DELETING, NULL) &&
         !kjson_set_str(obj, "status.message", o->message, NULL) &&
         set_or_drop(obj, "status.lastError", o->last_error) &&
         set_or_drop(obj, "status.nextDeletionAt", o->next) &&
         !kjson_set_int(obj, "status.deletionFailures", o->failures, NULL) &&
         !kjson_set_int(obj, "status.lockedRechecks", o->rechecks, NULL);
    if (ok && o->job_uid)
        ok = !kjson_set_str(obj, "status.deletionJobUID", o->job_uid, NULL);
    if (ok && o->started)
        ok = !kjson_set_str(obj, "status.deletionStartedAt", o->started, NULL);
    if (ok && o->sum) {
        ok = !kjson_set_int(obj, "status.objectsLeft", o->sum->remaining, NULL) &&
             !kjson_set_int(obj, "status.objectsImmutable", o->sum->locked, NULL) &&
             set_or_drop(obj, "status.earliestDeletable",
                         *o->sum->earliest ? o->sum->earliest : NULL);
    }
    if (!ok) {
        cJSON_Delete(obj);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    before = cJSON_PrintUnformatted(kjson_get(entry, "status"));
    after = cJSON_PrintUnformatted(kjson_get(obj, "status"));
    same = before && after && strcmp(before, after) == 0;
    if (!same)
        rc = k8s_update(x->client, &BKE_RES_ENTRY, NULL, kjson_get_str(entry, "metadata.name"), obj,
                        &(struct k8s_write_opts){ .subresource = "status" }, stored, err);
    else if (stored)
        *stored = cJSON_Duplicate(entry, 1);
    free(before);
    free(after);
    cJSON_Delete(obj);
    return rc;
}

static enum kerr put_status(const struct bke_ctx *x, const cJSON *entry, const struct outcome *o,
                            struct kerr_info *err)
{
    return put_status_stored(x, entry, o, NULL, err);
}

static long status_count(const cJSON *entry, const char *path)
{
    int64_t n = 0;

    return kjson_get_int64(entry, path, &n) == KERR_OK && n > 0 ? (long)n : 0;
}

static long status_failures(const cJSON *entry)
{
    return status_count(entry, "status.deletionFailures");
}

/*
 * No Job: start one, unless status.nextDeletionAt of entry (the stored one) lies ahead, or
 * another owner of the prefix blocks it (the reason into why, no Job made). The entry is
 * Deleting, with status.deletionStartedAt, before the Job exists: from then on the webhook
 * refuses its Etcd's re-creation, and the Job deletes nothing written after that time. The
 * claims are read again once Deleting is stored, so an Etcd created before that is seen.
 */
static enum kerr start_job(const struct bke_ctx *x, const struct bke_bucket *b, const cJSON *entry,
                           const char *jname, char why[BKECLAIM_WHY_MAX], long *requeue,
                           struct kerr_info *err)
{
    const cJSON *bucket = b->obj;
    const char *ns = kjson_get_str(bucket, "spec.secretRef.namespace");
    const char *ename = kjson_get_str(entry, "metadata.name");
    const char *next = kjson_get_str(entry, "status.nextDeletionAt");
    const char *started = kjson_get_str(entry, "status.deletionStartedAt");
    struct timespec at;
    time_t now = time(NULL);
    const char *sname = bkejob_local_secret(bucket);
    char msg[512], nowstr[KTIME_LEN + 1];
    cJSON *job = NULL, *secret = NULL, *stored = NULL, *fin = NULL;
    enum kerr rc = KERR_OK;

    if (next && ktime_parse(next, &at, NULL) == KERR_OK && at.tv_sec > now) {
        requeue_min(requeue, (long)(at.tv_sec - now) * 1000L);
        return KERR_OK;
    }
    /* the bucket's owner authorises the namespace, or nothing of it is deleted */
    rc = bkeauth_entry(x, b, entry, why, BKECLAIM_WHY_MAX, err);
    if (rc != KERR_OK || *why)
        return rc;
    /* every run, a retry too: what a cluster wrote since the last one is never deleted */
    rc = bkeclaim_deletion_blocked(x, b, entry, why, BKECLAIM_WHY_MAX, err);
    if (rc != KERR_OK || *why)
        return rc;
    if (ktime_format(now, nowstr) != KERR_OK)
        return kerr_set(err, KERR_INTERNAL, "cannot format the time");
    /* a deletion begun earlier keeps its start; one after a reattachment starts anew */
    if (!bkejob_in_progress(entry) || !started)
        started = nowstr;
    snprintf(msg, sizeof(msg), "Job %s/%s deletes the backups under prefix \"%s\"", ns, jname,
             str_or_empty(entry, "spec.prefix"));
    /* the finalizer first: an entry deleted from now on stops its Job (bkefin.h), found in
     * the namespace recorded here whatever the bucket names later */
    rc = bkefin_add(x, entry, &fin, err);
    if (rc == KERR_OK)
        rc = kjson_set_str(fin, "status.deletionJobNamespace", ns, err);
    if (rc == KERR_OK)
        rc = put_status_stored(x, fin,
                               &(struct outcome){ msg, kjson_get_str(entry, "status.lastError"),
                                                  NULL, NULL, status_failures(entry),
                                                  status_count(entry, "status.lockedRechecks"),
                                                  NULL, started },
                               &stored, err);
    cJSON_Delete(fin);
    if (rc != KERR_OK)
        return rc;
    rc = bkeclaim_deletion_blocked(x, b, stored, why, BKECLAIM_WHY_MAX, err);
    /* Local: the Secret's hostPath is where the buckets are on the node */
    if (rc == KERR_OK && !*why && sname)
        rc = k8s_get(x->client, &ETCDSPEC_RES_SECRET, ns, sname, NULL, &secret, err);
    if (rc == KERR_OK && !*why)
        rc = bkejob_build(stored, bucket, secret, x->job_image, x->job_command, &job, err);
    if (rc == KERR_OK && !*why)
        rc = podjob_create_job(x->client, ns, job, err);
    cJSON_Delete(secret);
    cJSON_Delete(job);
    cJSON_Delete(stored);
    if (rc != KERR_OK) {
        bke_event(x, entry, "BackupEntry", EV_WARNING, "DeletionFailed", "DeleteBackups",
                  "cannot start the deletion Job %s/%s: %s", ns ? ns : "", jname,
                  err ? err->msg : kerr_str(rc));
        return rc;
    }
    if (*why)
        return KERR_OK;
    bke_event(x, entry, "BackupEntry", EV_NORMAL, "DeletionStarted", "DeleteBackups", "%s", msg);
    log_info("backup deletion job started", "entry", ename, "job", jname);
    requeue_min(requeue, BKEJOB_POLL_MS);
    return KERR_OK;
}

/*
 * delete-snapshots exits 1 when the final listing returns objects of other
 * prefixes: with nothing else left (no locked, no failed object), the
 * entry's own objects are all gone.
 */
static int only_foreign_left(const struct podjob_summary *s)
{
    return s->terminated && s->exit_code == 1 && s->parsed && s->foreign > 0 && s->locked == 0 &&
           s->failed == 0 && s->remaining == s->foreign;
}

/* A finished Job: decide from its Pod, write the status, delete the Job, maybe the entry. */
static enum kerr finish_job(const struct bke_ctx *x, const cJSON *entry, const cJSON *job,
                            long *requeue, struct kerr_info *err)
{
    const char *ename = kjson_get_str(entry, "metadata.name");
    const char *ns = kjson_get_str(job, "metadata.namespace");
    const char *jname = kjson_get_str(job, "metadata.name");
    const char *juid = str_or_empty(job, "metadata.uid");
    int decided = strcmp(str_or_empty(entry, "status.deletionJobUID"), juid) == 0;
    struct podjob_summary s;
    struct outcome o = { 0 };
    char msg[512], why[512], next[KTIME_LEN + 1];
    struct timespec at;
    time_t now = time(NULL);
    long failures = status_failures(entry), wait_ms,
         rechecks = status_count(entry, "status.lockedRechecks");
    cJSON *stored = NULL;
    int done = 0, shown = bkeseen_start(entry, &(int64_t){ 0 }) != BKESEEN_NONE ||
                          cJSON_GetArraySize(kjson_get(entry, BENTRY_EARLIER)) > 0;
    enum kerr rc = podjob_job_pod(x->client, ns, juid, &s, err);

    if (rc != KERR_OK)
        return rc;
    o.job_uid = juid;
    o.sum = s.parsed ? &s : NULL;
    if (s.terminated && s.exit_code == 0 && s.parsed && s.remaining == 0) {
        done = 1;
        if (!shown)
            snprintf(msg, sizeof(msg),
                     "prefix \"%s\": nothing shown written by its Etcd (no member of it seen "
                     "running, not created by a restore): %ld objects kept, none deleted",
                     str_or_empty(entry, "spec.prefix"), s.kept);
        else if (s.kept > 0)
            snprintf(msg, sizeof(msg),
                     "prefix \"%s\": %ld objects deleted; %ld objects kept, not written by its "
                     "Etcd while it claimed the prefix",
                     str_or_empty(entry, "spec.prefix"), s.deleted, s.kept);
        else
            snprintf(msg, sizeof(msg), "prefix \"%s\" emptied: %ld objects deleted",
                     str_or_empty(entry, "spec.prefix"), s.deleted);
        o = (struct outcome){ msg, NULL, NULL, juid, 0, 0, &s, NULL };
    } else if (only_foreign_left(&s)) { /* its own objects are gone; the others are not its own */
        done = 1;
        snprintf(msg, sizeof(msg),
                 "prefix \"%s\" emptied of its own objects: %ld deleted; %ld objects of other "
                 "prefixes the sidecar lists with it (e.g. \"%.200s\") are not its own and stay",
                 str_or_empty(entry, "spec.prefix"), s.deleted, s.foreign, s.foreign_key);
        o = (struct outcome){ msg, NULL, NULL, juid, 0, 0, &s, NULL };
    } else if (s.terminated && s.exit_code == 0 && s.parsed && s.failed == 0 && s.locked > 0) {
        if (*s.earliest && ktime_parse(s.earliest, &at, NULL) == KERR_OK) {
            wait_ms = at.tv_sec > now ? (long)(at.tv_sec - now) * 1000L : BKEJOB_POLL_MS;
        } else { /* a lock of unknown expiry: looked at again later and later */
            if (!decided)
                rechecks++;
            wait_ms = podjob_backoff_ms(rechecks);
        }
        if (ktime_format(now + wait_ms / 1000, next) != KERR_OK)
            return kerr_set(err, KERR_INTERNAL, "cannot format the time");
        snprintf(msg, sizeof(msg),
                 "%ld objects deleted; %ld still immutable, the earliest deletable at %s; the "
                 "deletion runs again then",
                 s.deleted, s.locked, *s.earliest ? s.earliest : "an unknown time");
        o = (struct outcome){ msg, NULL, next, juid, 0, rechecks, &s, NULL };
        if (!decided)
            bke_event(x, entry, "BackupEntry", EV_NORMAL, "ObjectsLocked", "DeleteBackups", "%s",
                      msg);
        requeue_min(requeue, wait_ms);
    } else {
        if (!decided)
            failures++;
        wait_ms = podjob_backoff_ms(failures);
        if (ktime_format(now + wait_ms / 1000, next) != KERR_OK)
            return kerr_set(err, KERR_INTERNAL, "cannot format the time");
        if (podjob_deadline_exceeded(job) || (!s.terminated && podjob_job_failed(job, NULL, 0))) {
            char f[256];

            (void)podjob_job_failed(job, f, sizeof(f));
            snprintf(why, sizeof(why), "Job %s/%s failed: %s", ns, jname, f);
        } else if (!s.terminated)
            snprintf(why, sizeof(why), "Job %s/%s failed without a terminated Pod", ns, jname);
        else
            snprintf(why, sizeof(why), "Job %s/%s: exit status %d%s%s", ns, jname, s.exit_code,
                     *s.message ? ": " : "", s.message);
        snprintf(msg, sizeof(msg), "deletion failed %ld time(s); retried at %s", failures, next);
        o = (struct outcome){ msg, why, next, juid, failures, rechecks, o.sum, NULL };
        if (!decided)
            bke_event(x, entry, "BackupEntry", EV_WARNING, "DeletionFailed", "DeleteBackups",
                      "%s; retried at %s", why, next);
        requeue_min(requeue, wait_ms);
    }
    rc = put_status(x, entry, &o, err);
    if (rc == KERR_OK) {
        rc = podjob_delete_job(x->client, ns, jname, str_or_empty(entry, "metadata.uid"), err);
    }
    if (rc != KERR_OK || !done)
        return rc;
    /* the Job is gone: the finalizer with it, read again as the status write changed it */
    rc = k8s_get(x->client, &BKE_RES_ENTRY, NULL, ename, NULL, &stored, err);
    if (rc == KERR_OK)
        rc = bkefin_remove(x, stored, err);
    cJSON_Delete(stored);
    if (rc == KERR_OK)
        rc = k8s_delete(x->client, &BKE_RES_ENTRY, NULL, ename, NULL, NULL, err);
    if (rc == KERR_NOTFOUND)
        return KERR_OK;
    if (rc == KERR_OK) {
        bke_event(x, entry, "BackupEntry", EV_NORMAL, shown ? "Deleted" : "NothingWritten",
                  "DeleteBackups", "%s; BackupEntry %s deleted", msg, ename);
        log_info("backup entry deleted", "entry", ename, "deleted",
                 s.deleted > 0 ? "some" : "none");
    }
    return rc;
}

const char *bkejob_namespace(const cJSON *entry, const cJSON *bucket)
{
    const char *ns = kjson_get_str(entry, "status.deletionJobNamespace");

    return ns && *ns ? ns : kjson_get_str(bucket, "spec.secretRef.namespace");
}

enum kerr bkejob_step(const struct bke_ctx *x, const struct bke_bucket *b, const cJSON *cached,
                      char why[BKECLAIM_WHY_MAX], long *requeue, struct kerr_info *err)
{
    const cJSON *bucket = b->obj;
    const char *ename = kjson_get_str(cached, "metadata.name");
    const char *ns = kjson_get_str(bucket, "spec.secretRef.namespace");
    char jname[KNAME_LABEL_MAX + 1];
    cJSON *job = NULL, *entry = NULL;
    enum kerr rc;

    why[0] = '\0';
    if (!ename || bkejob_name(ename, jname) != KERR_OK)
        return kerr_set(err, KERR_INVAL, "no Job name for BackupEntry %s", ename ? ename : "");
    if (!ns || !*ns)
        return kerr_set(err, KERR_INVAL, "BackupBucket %s: spec.secretRef.namespace required",
                        str_or_empty(bucket, "metadata.name"));
    /* The stored entry, never the cached one: a cache behind a finished step (the entry
     * gone, nextDeletionAt or deletionJobUID just written) must not start another Job. */
    rc = k8s_get(x->client, &BKE_RES_ENTRY, NULL, ename, NULL, &entry, err);
    if (rc == KERR_NOTFOUND ||
        (rc == KERR_OK && (!bkejob_due(entry) || kjson_has(entry, "metadata.deletionTimestamp")))) {
        kerr_clear(err);
        cJSON_Delete(entry);
        return KERR_OK; /* deleted (bkestop stops its Job), or reattached meanwhile */
    }
    if (rc == KERR_OK) {
        ns = bkejob_namespace(entry, bucket); /* where its Job was made */
        rc = k8s_get(x->client, &ETCDSPEC_RES_JOB, ns, jname, NULL, &job, err);
    }
    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        rc = start_job(x, b, entry, jname, why, requeue, err);
    } else if (rc == KERR_OK && !podjob_owned(job, str_or_empty(entry, "metadata.uid"))) {
        char other[512];

        podjob_foreign(job, other, sizeof(other));
        bke_event(x, entry, "BackupEntry", EV_WARNING, "DeletionFailed", "DeleteBackups",
                  "%s; the backups are not deleted", other);
        rc = kerr_set(err, KERR_EXISTS, "%s", other);
    } else if (rc == KERR_OK && !bkefin_has(entry)) { /* a Job started by an earlier version */
        cJSON *fin = NULL;

        rc = bkefin_add(x, entry, &fin, err);
        cJSON_Delete(fin);
        requeue_min(requeue, BKEJOB_POLL_MS);
    } else if (rc == KERR_OK && podjob_job_done(job)) {
        rc = finish_job(x, entry, job, requeue, err);
    } else if (rc == KERR_OK) {
        requeue_min(requeue, BKEJOB_POLL_MS);
    }
    cJSON_Delete(job);
    cJSON_Delete(entry);
    return rc;
}

int bkejob_due(const cJSON *entry)
{
    return kjson_has(entry, "spec.etcdDeletedAt");
}

int bkejob_in_progress(const cJSON *entry)
{
    return kjson_has(entry, "spec.etcdDeletedAt") &&
           strcmp(str_or_empty(entry, "status.phase"), BSTORE_ENTRY_DELETING) == 0;
}

enum kerr bkejob_hold(const struct bke_ctx *x, const struct bke_bucket *b, const cJSON *entry,
                      const cJSON *etcd, char why[BKECLAIM_WHY_MAX], long *requeue,
                      struct kerr_info *err)
{
    bke_event(x, entry, "BackupEntry", EV_WARNING, "DeletionInProgress", "KeepEntry",
              "Etcd %s/%s is back, but the grace period is over and its backups under \"%s\" "
              "are being deleted: the running deletion Job ends first, and no other starts "
              "while the Etcd exists",
              str_or_empty(etcd, "metadata.namespace"), str_or_empty(etcd, "metadata.name"),
              str_or_empty(entry, "spec.prefix"));
    return bkejob_step(x, b, entry, why, requeue, err);
}
