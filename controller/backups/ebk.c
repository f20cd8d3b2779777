/* ebk - the EtcdBackup reconcile: snapshot, copy, status; see ebk.h. */
#include "controller/backups/ebk.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/bstore.h"
#include "common/events.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/log.h"
#include "common/pclaim.h"
#include "controller/core/claims.h"
#include "controller/backups/cpjob.h"
#include "controller/backups/ebk_del.h"
#include "controller/backups/ebk_keep.h"
#include "controller/backups/ebk_pre.h"
#include "controller/core/ctl.h"
#include "controller/core/ctl_config.h"
#include "controller/core/etcdspec.h"
#include "controller/core/podjob.h"

static const char *str(const cJSON *obj, const char *path)
{
    const char *s = kjson_get_str(obj, path);

    return s ? s : "";
}

static int set_now(cJSON *b, const char *path)
{
    char now[KTIME_LEN + 1];

    return ktime_format(time(NULL), now) == KERR_OK && !kjson_set_str(b, path, now, NULL);
}

/* Write phase Failed with msg; a Warning event. */
static enum kerr fail(const struct ebk_env *env, const cJSON *stored, const char *msg,
                      struct kerr_info *err)
{
    cJSON *b = cJSON_Duplicate(stored, 1);
    char line[EBK_WHY_MAX];
    enum kerr rc;
    size_t i;

    snprintf(line, sizeof(line), "%s", msg);
    for (i = 0; line[i]; i++)
        if (line[i] == '\n' || line[i] == '\r')
            line[i] = ' ';
    if (!b || kjson_set_str(b, "status.phase", EBK_PHASE_FAILED, err) ||
        kjson_set_str(b, "status.error", line, err) || !set_now(b, "status.completionTime") ||
        (!kjson_has(b, "status.startTime") && !set_now(b, "status.startTime"))) {
        cJSON_Delete(b);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    rc = ebk_put_status(env, stored, b, err);
    if (rc == KERR_OK) {
        ebk_event(env, stored, 1, "Failed", "%s", line);
        log_warn("backup failed", "namespace", str(stored, "metadata.namespace"), "name",
                 str(stored, "metadata.name"), "error", line);
    }
    cJSON_Delete(b);
    return rc;
}

/* What the copy reads: the Etcd and the two Secrets. */
struct inputs {
    cJSON *etcd, *esecret, *dsecret; /* OWNS */
    struct etcdspec e;
};

static void inputs_release(struct inputs *in)
{
    cJSON_Delete(in->etcd);
    cJSON_Delete(in->esecret);
    cJSON_Delete(in->dsecret);
    memset(in, 0, sizeof(*in));
}

/* status.destination of nb: where its copy is written, the only place ever deleted; a Local
 * one's hostPath (status.destination.hostPath) as its Job mounts it from dsecret. */
static enum kerr record_destination(cJSON *nb, const cJSON *dsecret, struct kerr_info *err)
{
    static const char *const fields[] = { "provider", "container", "prefix", "endpointOverride" };
    char from[64], to[64];
    const char *v;
    enum kerr rc = KERR_OK;

    (void)kjson_delete(nb, "status.destination");
    for (size_t i = 0; rc == KERR_OK && i < sizeof(fields) / sizeof(fields[0]); i++) {
        snprintf(from, sizeof(from), "spec.destination.%s", fields[i]);
        snprintf(to, sizeof(to), "status.destination.%s", fields[i]);
        if ((v = kjson_get_str(nb, from)))
            rc = kjson_set_str(nb, to, v, err);
    }
    v = bstore_provider_kind(kjson_get_str(nb, "spec.destination.provider"));
    if (rc == KERR_OK && v && strcmp(v, "Local") == 0) {
        struct cpjob_store st = { .secret = dsecret };
        char root[1024];

        cpjob_local_root(&st, root, sizeof(root));
        rc = kjson_set_str(nb, "status.destination.hostPath", root, err);
    }
    /* the credentials the copy writes with, as they are now (controller/backups/ebk_keep.h) */
    if (rc == KERR_OK && kjson_get_str(dsecret, "metadata.resourceVersion"))
        rc = kjson_set_str(nb, EBK_SECRET_VERSION,
                           kjson_get_str(dsecret, "metadata.resourceVersion"), err);
    return rc;
}

/*
 * Why the destination of backup b may not be written, into why: it overlaps, as the backup
 * sidecar lists prefixes, the prefix of an Etcd (the source's included), a BackupEntry, or the
 * copies of an EtcdBackup of another Etcd (read from the API server now). The copies of one
 * Etcd may share a prefix.
 */
static enum kerr destination_free(const struct ebk_env *env, const cJSON *b, const cJSON *dsecret,
                                  char *why, size_t n, struct kerr_info *err)
{
    struct claims_skip skip = { .backup_ns = str(b, "metadata.namespace"),
                                .viewer_ns = str(b, "metadata.namespace"),
                                .backup = str(b, "metadata.name"),
                                .backups_of = str(b, "spec.etcdName") };

    /* a Local destination where the Job built from this same Secret writes */
    return claims_destination_placed(env->client, b, "spec.destination", dsecret, &skip, why, n,
                                     err);
}

/*
 * Read and check the inputs of backup. KERR_OK with *why "" when usable; with *why set when the
 * backup must fail; another code for an API error.
 */
static enum kerr read_inputs(const struct ebk_env *env, const cJSON *b, struct inputs *in,
                             char *why, size_t n, struct kerr_info *err)
{
    const char *ns = str(b, "metadata.namespace"), *en = str(b, "spec.etcdName");
    const char *dsec = str(b, "spec.destination.secretRef.name");
    struct cpjob_spec s = { 0 };
    struct kerr_info e = { 0 };
    cJSON *job = NULL;
    enum kerr rc;

    memset(in, 0, sizeof(*in));
    why[0] = '\0';
    if (!*en)
        return snprintf(why, n, "spec.etcdName: required"), KERR_OK;
    rc = ebk_get_opt(env, &ETCDSPEC_RES_ETCD, ns, en, &in->etcd, err);
    if (rc == KERR_OK && !in->etcd)
        return snprintf(why, n, "Etcd %s/%s not found", ns, en), KERR_OK;
    if (rc == KERR_OK && (etcdspec_read(in->etcd, &in->e, NULL) != KERR_OK || !in->e.has_store))
        return snprintf(why, n, "Etcd %s/%s has no backup store (spec.backup.store)", ns, en),
               KERR_OK;
    if (rc == KERR_OK && in->e.store.secret_name)
        rc = ebk_get_opt(env, &ETCDSPEC_RES_SECRET, ns, in->e.store.secret_name, &in->esecret, err);
    if (rc == KERR_OK && in->e.store.secret_name && !in->esecret)
        return snprintf(why, n, "Secret %s/%s of the Etcd's backup store not found", ns,
                        in->e.store.secret_name ? in->e.store.secret_name : "(none named)"),
               KERR_OK;
    if (rc == KERR_OK && *dsec)
        rc = ebk_get_opt(env, &ETCDSPEC_RES_SECRET, ns, dsec, &in->dsecret, err);
    if (rc == KERR_OK && !in->dsecret)
        return snprintf(why, n, "Secret %s/%s of spec.destination.secretRef not found", ns,
                        *dsec ? dsec : "(none named)"),
               KERR_OK;
    if (rc != KERR_OK)
        return rc;
    /* the Job builder's own checks, on a stand-in: providers, fields */
    s.name = "check";
    s.ns = ns;
    s.owner = b;
    s.from = (struct cpjob_store){
        in->e.store.provider, in->e.store.container,
        in->e.store.prefix,   kjson_get_str(in->etcd, "spec.backup.store.endpointOverride"),
        in->esecret,          NULL
    };
    s.to = (struct cpjob_store){ kjson_get_str(b, "spec.destination.provider"),
                                 kjson_get_str(b, "spec.destination.container"),
                                 kjson_get_str(b, "spec.destination.prefix"),
                                 kjson_get_str(b, "spec.destination.endpointOverride"),
                                 in->dsecret,
                                 NULL };
    s.latest_full = 1;
    if (cpjob_build(&s, &job, &e) != KERR_OK)
        snprintf(why, n, "%s", e.msg);
    cJSON_Delete(job);
    /* a Local destination in the namespace's part, where the Job built from this same Secret
     * writes (it may have been edited since admission), and free */
    rc = *why ? KERR_OK : ebk_dest_part(env, b, in->dsecret, why, n, err);
    return rc != KERR_OK || *why ? rc : destination_free(env, b, in->dsecret, why, n, err);
}

/* Another unfinished EtcdOpsTask of etcd than mine: its name into other. */
static enum kerr other_task(const struct ebk_env *env, const char *ns, const char *etcd,
                            const char *mine, char *other, size_t n, struct kerr_info *err)
{
    cJSON *list = NULL;
    const cJSON *t;
    const char *s;
    enum kerr rc = k8s_list(env->client, &ETCDSPEC_RES_OPSTASK, ns, NULL, &list, err);

    other[0] = '\0';
    cJSON_ArrayForEach (t, kjson_get_arr(list, "items")) {
        s = str(t, "status.state");
        if (strcmp(str(t, "spec.etcdName"), etcd) != 0 ||
            strcmp(str(t, "metadata.name"), mine) == 0 || !strcmp(s, "Succeeded") ||
            !strcmp(s, "Failed") || !strcmp(s, "Rejected"))
            continue;
        snprintf(other, n, "%s", str(t, "metadata.name"));
        break;
    }
    cJSON_Delete(list);
    return rc;
}

static cJSON *owner_refs(const cJSON *b)
{
    cJSON *r = cJSON_CreateObject(), *a = cJSON_CreateArray();

    if (!r || !a || !cJSON_AddStringToObject(r, "apiVersion", ETCDSPEC_WARDEN_API) ||
        !cJSON_AddStringToObject(r, "kind", EBK_KIND) ||
        !cJSON_AddStringToObject(r, "name", str(b, "metadata.name")) ||
        !cJSON_AddStringToObject(r, "uid", str(b, "metadata.uid")) ||
        !cJSON_AddTrueToObject(r, "controller") ||
        !cJSON_AddTrueToObject(r, "blockOwnerDeletion") || !cJSON_AddItemToArray(a, r)) {
        if (!cJSON_GetArraySize(a))
            cJSON_Delete(r);
        cJSON_Delete(a);
        return NULL;
    }
    return a;
}

/* Pending: check, then create the task unless another one of the Etcd is unfinished. */
static enum kerr step_pending(const struct ebk_env *env, const cJSON *b, long *requeue,
                              struct kerr_info *err)
{
    const char *ns = str(b, "metadata.namespace"), *en = str(b, "spec.etcdName");
    char why[EBK_WHY_MAX], tname[KNAME_SUBDOMAIN_MAX + 1], other[KNAME_SUBDOMAIN_MAX + 1];
    struct inputs in;
    cJSON *t = NULL, *nb = NULL;
    enum kerr rc = read_inputs(env, b, &in, why, sizeof(why), err);

    inputs_release(&in);
    if (rc != KERR_OK)
        return rc;
    if (*why)
        return fail(env, b, why, err);
    if (ebk_task_name(str(b, "metadata.name"), tname) != KERR_OK)
        return fail(env, b, "no EtcdOpsTask name for this backup", err);
    rc = other_task(env, ns, en, tname, other, sizeof(other), err);
    if (rc == KERR_OK && *other) {
        ebk_event(env, b, 0, "Waiting", "EtcdOpsTask %s of Etcd %s is unfinished; waiting", other,
                  en);
        ebk_requeue_min(requeue, EBK_WAIT_MS);
        nb = cJSON_Duplicate(b, 1);
        if (!nb || kjson_set_str(nb, "status.phase", EBK_PHASE_PENDING, err))
            rc = kerr_set(err, KERR_NOMEM, NULL);
        rc = rc ? rc : ebk_put_status(env, b, nb, err);
        cJSON_Delete(nb);
        return rc;
    }
    t = cJSON_CreateObject();
    if (rc == KERR_OK && (!t || kjson_set_str(t, "apiVersion", ETCDSPEC_API_VERSION, err) ||
                          kjson_set_str(t, "kind", "EtcdOpsTask", err) ||
                          kjson_set_str(t, "metadata.name", tname, err) ||
                          kjson_set_str(t, "metadata.namespace", ns, err) ||
                          kjson_set(t, "metadata.ownerReferences", owner_refs(b), err) ||
                          kjson_set_str(t, "spec.etcdName", en, err) ||
                          kjson_set_str(t, "spec.config.onDemandSnapshot.type", "full", err)))
        rc = kerr_set(err, KERR_NOMEM, NULL);
    if (rc == KERR_OK)
        rc = k8s_create(env->client, &ETCDSPEC_RES_OPSTASK, ns, t, NULL, NULL, err);
    cJSON_Delete(t);
    if (rc == KERR_EXISTS) { /* created by an earlier step: its owner is checked next */
        kerr_clear(err);
        rc = KERR_OK;
    }
    nb = rc == KERR_OK ? cJSON_Duplicate(b, 1) : NULL;
    if (rc == KERR_OK &&
        (!nb || kjson_set_str(nb, "status.phase", EBK_PHASE_SNAPSHOT, err) ||
         kjson_set_str(nb, "status.opsTaskName", tname, err) || !set_now(nb, "status.startTime")))
        rc = kerr_set(err, KERR_NOMEM, NULL);
    rc = rc ? rc : ebk_put_status(env, b, nb, err);
    if (rc == KERR_OK)
        ebk_event(env, b, 0, "SnapshotStarted", "EtcdOpsTask %s/%s takes a full snapshot of %s", ns,
                  tname, en);
    cJSON_Delete(nb);
    ebk_requeue_min(requeue, EBK_POLL_MS);
    return rc;
}

/* The copy Job of backup b for the snapshot task t said was taken. */
static enum kerr start_copy(const struct ebk_env *env, const cJSON *b, const cJSON *t,
                            long *requeue, struct kerr_info *err);

/* Snapshotting: follow the task. */
static enum kerr step_snapshot(const struct ebk_env *env, const cJSON *b, long *requeue,
                               struct kerr_info *err)
{
    const char *ns = str(b, "metadata.namespace"), *tname = str(b, "status.opsTaskName");
    const cJSON *ref = NULL;
    char msg[512];
    const char *state;
    cJSON *t = NULL;
    enum kerr rc = ebk_get_opt(env, &ETCDSPEC_RES_OPSTASK, ns, tname, &t, err);

    if (rc != KERR_OK)
        return rc;
    if (!t)
        return fail(env, b, "the EtcdOpsTask is gone before the snapshot was taken", err);
    cJSON_ArrayForEach (ref, kjson_get_arr(t, "metadata.ownerReferences"))
        if (strcmp(str(ref, "uid"), str(b, "metadata.uid")) == 0)
            break;
    state = str(t, "status.state");
    if (!ref) {
        snprintf(msg, sizeof(msg), "EtcdOpsTask %s/%s exists and is not this backup's", ns, tname);
        rc = fail(env, b, msg, err);
    } else if (!strcmp(state, "Failed") || !strcmp(state, "Rejected")) {
        const cJSON *errs = kjson_get_arr(t, "status.lastErrors");
        const cJSON *last = cJSON_GetArrayItem(errs, cJSON_GetArraySize(errs) - 1);

        snprintf(msg, sizeof(msg), "EtcdOpsTask %s/%s %s: %s", ns, tname, state,
                 last ? str(last, "description") : str(t, "status.lastOperation.description"));
        rc = fail(env, b, msg, err);
    } else if (!strcmp(state, "Succeeded")) {
        rc = start_copy(env, b, t, requeue, err);
    } else {
        ebk_requeue_min(requeue, EBK_POLL_MS);
    }
    cJSON_Delete(t);
    return rc;
}

static enum kerr start_copy(const struct ebk_env *env, const cJSON *stored, const cJSON *t,
                            long *requeue, struct kerr_info *err)
{
    const char *ns = str(stored, "metadata.namespace");
    char why[EBK_WHY_MAX], snap[128], jname[KNAME_LABEL_MAX + 1], now[KTIME_LEN + 1];
    const char *until = str(t, "status.lastOperation.lastTransitionTime");
    struct cpjob_spec s = { 0 };
    struct inputs in = { 0 };
    cJSON *job = NULL, *b = cJSON_Duplicate(stored, 1), *nb = NULL;
    enum kerr rc = b ? read_inputs(env, stored, &in, why, sizeof(why), err) : KERR_NOMEM;
    int held = 0;

    /* a Job of this backup's copy while none is recorded (a crash, or a controller that made
     * the Job before recording it): stopped and gone before anything else */
    if (rc == KERR_OK && ebk_job_name(str(b, "metadata.name"), jname) == KERR_OK &&
        (rc = ebk_stray_job(env, b, jname, requeue, &held, err)) == KERR_OK && held)
        goto out;
    /* last before the Job: the claim recorded where admissions record theirs */
    if (rc == KERR_OK && !*why)
        rc = ebk_take_claim(env, stored, in.dsecret, why, sizeof(why), &held, requeue, err);
    if (rc != KERR_OK || held)
        goto out;
    /* the copy's write window starts here, once its claim is recorded (never earlier: what
     * another owner wrote before the claim, e.g. while the snapshot was taken, is not the
     * copy's), on this process's clock, in the status only warden-controller writes */
    if (!*why && ktime_format(time(NULL), now) != KERR_OK)
        snprintf(why, sizeof(why), "the copy's start cannot be written");
    if (*why || ebk_job_name(str(b, "metadata.name"), jname) != KERR_OK) {
        if (rc == KERR_OK)
            rc = fail(env, stored, *why ? why : "no Job name for this backup", err);
        goto out;
    }
    /* first: the Job's fields below are borrowed from the updated object */
    rc = ebk_add_finalizer(env, &b, err);
    if (rc != KERR_OK)
        goto out;
    s.name = jname;
    s.ns = ns;
    s.owner = b;
    s.from = (struct cpjob_store){
        in.e.store.provider, in.e.store.container,
        in.e.store.prefix,   kjson_get_str(in.etcd, "spec.backup.store.endpointOverride"),
        in.esecret,          NULL
    };
    s.to = (struct cpjob_store){ kjson_get_str(b, "spec.destination.provider"),
                                 kjson_get_str(b, "spec.destination.container"),
                                 kjson_get_str(b, "spec.destination.prefix"),
                                 kjson_get_str(b, "spec.destination.endpointOverride"),
                                 in.dsecret,
                                 NULL };
    s.image = env->copy_image;
    s.command = env->copy_command;
    if (ebk_snapshot_of(t, snap, sizeof(snap))) {
        s.snapshot = snap;
    } else {
        s.latest_full = 1;
        s.until = *until ? until : NULL;
    }
    if (rc == KERR_OK)
        rc = cpjob_build(&s, &job, err);
    if (rc != KERR_OK)
        goto out;
    /* the copy recorded (status.destination, jobName, copyStartedAt, the snapshot it copies)
     * and read back before its Job exists: a failed status write makes no Job; a pass that
     * wrote the status and stopped leaves no Job, and the next (Uploading) fails the backup,
     * whose deletion deletes what the copy may have written (ebk_del.h) */
    nb = cJSON_Duplicate(b, 1);
    if (!nb || kjson_set_str(nb, "status.phase", EBK_PHASE_UPLOADING, err) ||
        kjson_set_str(nb, "status.jobName", jname, err) ||
        record_destination(nb, in.dsecret, err) ||
        kjson_set_str(nb, "status.copyStartedAt", now, err) ||
        (s.snapshot && kjson_set_str(nb, "status.snapshot.name", s.snapshot, err)))
        rc = kerr_set(err, KERR_NOMEM, NULL);
    rc = rc ? rc : ebk_put_status(env, b, nb, err);
    if (rc == KERR_OK)
        rc = podjob_create_job(env->client, ns, job, err); /* also one of an earlier pass */
    if (rc == KERR_EXISTS) { /* a Job of that name that is not this backup's: nothing ran */
        (void)kjson_delete(nb, "status.jobName");
        (void)kjson_delete(nb, "status.copyStartedAt");
        rc = fail(env, nb, err->msg, err);
        goto out;
    }
    if (rc == KERR_OK) {
        ebk_event(env, b, 0, "SnapshotTaken", "EtcdOpsTask %s: %s", str(t, "metadata.name"),
                  str(t, "status.lastOperation.description"));
        ebk_event(env, b, 0, "UploadStarted", "Job %s/%s copies %s to %s %s/%s", ns, jname,
                  s.snapshot ? s.snapshot : "the latest full snapshot",
                  str(b, "spec.destination.provider"), str(b, "spec.destination.container"),
                  str(b, "spec.destination.prefix"));
    }
    ebk_requeue_min(requeue, EBK_POLL_MS);
out:
    inputs_release(&in);
    cJSON_Delete(job);
    cJSON_Delete(nb);
    cJSON_Delete(b);
    return rc == KERR_NOMEM && !err->msg[0] ? kerr_set(err, rc, NULL) : rc;
}

/* The creation time of a snapshot name "<Kind>-<start>-<last>-<unix>[.suffix]", or 0. */
static time_t created_of(const char *name)
{
    const char *p = strrchr(name, '-');
    char *end = NULL;
    long long v;

    if (!p)
        return 0;
    v = strtoll(p + 1, &end, 10);
    return end != p + 1 && v > 0 && (*end == '\0' || *end == '.') ? (time_t)v : 0;
}

/*
 * 1 when s is the copy's whole report of what it wrote (provenance for the deletion,
 * ebk_del.h): a summary its Pod left on terminating, listing every snapshot it copied (none, or
 * the one an EtcdBackup copies, with its key). A failed `warden-snapshot copy` removes what it
 * wrote and lists nothing (controller/snapshot/snapcopy.h). A Job stopped at its deadline, or a
 * Pod that left no summary, reports nothing proven.
 */
static int reported(const struct cpjob_summary *s)
{
    return s->parsed && s->exit_code >= 0 && s->total == s->n &&
           (s->n == 0 || (s->n == 1 && *s->snaps[0].destination));
}

/* Write phase Failed with msg, with what the copy reported writing when its report was read
 * (status.copyReported, destinationKey). */
static enum kerr fail_copy(const struct ebk_env *env, const cJSON *b, const struct cpjob_summary *s,
                           const char *msg, struct kerr_info *err)
{
    cJSON *fb;
    enum kerr rc;

    if (!reported(s))
        return fail(env, b, msg, err);
    fb = cJSON_Duplicate(b, 1);
    if (!fb || kjson_set_bool(fb, "status.copyReported", true, err) ||
        (s->n == 1 && kjson_set_str(fb, "status.destinationKey", s->snaps[0].destination, err))) {
        cJSON_Delete(fb);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    rc = fail(env, fb, msg, err);
    cJSON_Delete(fb);
    return rc;
}

/* The Job's result into the status. */
static enum kerr record(const struct ebk_env *env, const cJSON *b, const struct cpjob_summary *s,
                        struct kerr_info *err)
{
    const struct cpjob_snap *p = &s->snaps[0];
    char msg[512], when[KTIME_LEN + 1];
    cJSON *nb;
    enum kerr rc = KERR_OK;

    if (!s->succeeded || s->exit_code != 0 || !s->parsed || s->n < 1 || strcmp(p->kind, "Full")) {
        if (*s->error)
            snprintf(msg, sizeof(msg), "copy Job %s: %s", str(b, "status.jobName"), s->error);
        else
            snprintf(msg, sizeof(msg), "copy Job %s failed (exit status %d)",
                     str(b, "status.jobName"), s->exit_code);
        return fail_copy(env, b, s, msg, err);
    }
    nb = cJSON_Duplicate(b, 1);
    if (!nb || kjson_set_str(nb, "status.phase", EBK_PHASE_COMPLETED, err) ||
        (reported(s) && kjson_set_bool(nb, "status.copyReported", true, err)) ||
        !set_now(nb, "status.completionTime") ||
        kjson_set_str(nb, "status.snapshot.name", p->name, err) ||
        kjson_set_str(nb, "status.snapshot.kind", p->kind, err) ||
        kjson_set_int(nb, "status.snapshot.startRevision", p->start_rev, err) ||
        kjson_set_int(nb, "status.snapshot.lastRevision", p->last_rev, err) ||
        kjson_set_int(nb, "status.snapshot.size", p->size, err) ||
        kjson_set_str(nb, "status.snapshot.md5", p->md5, err) ||
        kjson_set_str(nb, "status.destinationKey", p->destination, err) ||
        (created_of(p->name) && (ktime_format(created_of(p->name), when) != KERR_OK ||
                                 kjson_set_str(nb, "status.snapshot.createdOn", when, err))))
        rc = kerr_set(err, KERR_NOMEM, NULL);
    (void)kjson_delete(nb, "status.error");
    rc = rc ? rc : ebk_put_status(env, b, nb, err);
    if (rc == KERR_OK)
        ebk_event(env, b, 0, "Completed", "snapshot %s (%lld bytes, md5 %s) copied to %s", p->name,
                  p->size, p->md5, p->destination);
    cJSON_Delete(nb);
    return rc;
}

/*
 * Deleted while its copy Job runs: the finalizer waits for the copy's result.
 * Said once, in status.deletionError and a Normal event DeletionWaitsForCopy.
 */
static enum kerr tell_deletion_waits(const struct ebk_env *env, const cJSON *b,
                                     struct kerr_info *err)
{
    const char *ns = str(b, "metadata.namespace"), *jname = str(b, "status.jobName");
    char msg[512];
    cJSON *nb;
    enum kerr rc;

    snprintf(msg, sizeof(msg),
             "deleted while its copy Job %s/%s runs: the deletion waits for the copy's result, "
             "then %s; to stop now, delete the Job "
             "(kubectl -n %s delete job %s): the backup then fails and goes",
             ns, jname,
             strcmp(str(b, "spec.deletionPolicy"), EBK_POLICY_RETAIN) == 0
                 ? "hands the copy to a BackupEntry (deletionPolicy Retain)"
                 : "deletes the copy (deletionPolicy Delete)",
             ns, jname);
    if (!kjson_has(b, "metadata.deletionTimestamp") ||
        strcmp(str(b, "status.deletionError"), msg) == 0)
        return KERR_OK;
    if (!(nb = cJSON_Duplicate(b, 1)) || kjson_set_str(nb, "status.deletionError", msg, err)) {
        cJSON_Delete(nb);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    rc = ebk_put_status(env, b, nb, err);
    if (rc == KERR_OK)
        ebk_event(env, b, 0, "DeletionWaitsForCopy", "%s", msg);
    cJSON_Delete(nb);
    return rc;
}

/* Uploading: the Job's result, then the Job deleted. */
static enum kerr step_upload(const struct ebk_env *env, const cJSON *b, long *requeue,
                             struct kerr_info *err)
{
    const char *ns = str(b, "metadata.namespace"), *jname = str(b, "status.jobName");
    struct cpjob_summary *s = malloc(sizeof(*s));
    enum kerr rc =
        s ? cpjob_read(env->client, ns, jname, str(b, "metadata.uid"), s, err) : KERR_NOMEM;

    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        rc = fail(env, b, "the copy Job is gone before its result was read", err);
    } else if (rc == KERR_EXISTS) { /* not this backup's: never read nor deleted */
        rc = fail(env, b, err->msg, err);
    } else if (rc == KERR_OK && !s->finished) {
        ebk_requeue_min(requeue, EBK_POLL_MS);
        rc = tell_deletion_waits(env, b, err);
    } else if (rc == KERR_OK) {
        rc = record(env, b, s, err);
        if (rc == KERR_OK)
            rc = podjob_delete_job(env->client, ns, jname, str(b, "metadata.uid"), err);
    }
    free(s);
    return rc == KERR_NOMEM && !err->msg[0] ? kerr_set(err, rc, NULL) : rc;
}

/* Terminal: a Job left over from a crash between the status and its deletion goes. */
static enum kerr step_done(const struct ebk_env *env, const cJSON *b, struct kerr_info *err)
{
    const char *jname = kjson_get_str(b, "status.jobName");

    return jname && *jname ? podjob_delete_job(env->client, str(b, "metadata.namespace"), jname,
                                               str(b, "metadata.uid"), err)
                           : KERR_OK;
}

enum kerr ebk_step(const struct ebk_env *env, const char *ns, const char *name, long *requeue_ms,
                   struct kerr_info *err)
{
    cJSON *b = NULL;
    const char *phase;
    enum kerr rc;

    *requeue_ms = 0;
    rc = ebk_get_opt(env, &EBK_RES_BACKUP, ns, name, &b, err);
    if (rc != KERR_OK || !b)
        return rc;
    phase = str(b, "status.phase");
    /* a copy in flight is finished first: its result says what there is to delete */
    if (kjson_has(b, "metadata.deletionTimestamp") && strcmp(phase, EBK_PHASE_UPLOADING) != 0)
        rc = ebk_delete_step(env, b, requeue_ms, err);
    else if (!*phase || !strcmp(phase, EBK_PHASE_PENDING))
        rc = step_pending(env, b, requeue_ms, err);
    else if (!strcmp(phase, EBK_PHASE_SNAPSHOT))
        rc = step_snapshot(env, b, requeue_ms, err);
    else if (!strcmp(phase, EBK_PHASE_UPLOADING))
        rc = step_upload(env, b, requeue_ms, err);
    else
        rc = step_done(env, b, err);
    cJSON_Delete(b);
    return rc;
}

enum kerr ebk_reconcile(struct ctl *c, const char *ns, const char *name, struct ctl_result *res,
                        struct kerr_info *err)
{
    const struct ctl_config *cfg = ctl_cfg(c);
    struct ebk_env env = { ctl_client(c),     ctl_events(c),  cfg->copy_image,
                           cfg->copy_command, cfg->bke_image, cfg->bke_command };

    return ebk_step(&env, ns, name, &res->requeue_ms, err);
}
