/* ebk_del - the finalizer of an EtcdBackup; see ebk_del.h. */
#include "controller/backups/ebk_del.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/blocal.h"
#include "common/bstore.h"
#include "common/events.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/log.h"
#include "controller/backups/cpjob.h"
#include "controller/backups/ebk_env.h"
#include "controller/backups/ebk_keep.h"
#include "controller/backups/erst.h"
#include "controller/core/claims.h"
#include "controller/core/etcdspec.h"
#include "controller/core/podjob.h"

/* The path of field of the store a copy was written to. */
static const char *dst_path(const cJSON *b, const char *field)
{
    static const char *const rec[] = { "status.destination.provider",
                                       "status.destination.container",
                                       "status.destination.endpointOverride",
                                       "status.destination.prefix" };
    static const char *const spec[] = { "spec.destination.provider", "spec.destination.container",
                                        "spec.destination.endpointOverride",
                                        "spec.destination.prefix" };
    int i = strcmp(field, "provider") == 0    ? 0
            : strcmp(field, "container") == 0 ? 1
            : strcmp(field, "prefix") == 0    ? 3
                                              : 2;

    return kjson_has(b, "status.destination") ? rec[i] : spec[i];
}

static const char *str(const cJSON *obj, const char *path)
{
    const char *s = kjson_get_str(obj, path);

    return s ? s : "";
}

static void requeue_min(long *requeue, long ms)
{
    if (ms < 1)
        ms = 1;
    if (*requeue <= 0 || ms < *requeue)
        *requeue = ms;
}

static int has_finalizer(const cJSON *b)
{
    const cJSON *f;

    cJSON_ArrayForEach (f, kjson_get_arr(b, "metadata.finalizers"))
        if (cJSON_IsString(f) && strcmp(f->valuestring, EBK_FINALIZER) == 0)
            return 1;
    return 0;
}

/* The backup without the finalizer (a PUT with its resourceVersion). */
static enum kerr drop_finalizer(const struct ebk_env *env, const cJSON *b, struct kerr_info *err)
{
    cJSON *nb = cJSON_Duplicate(b, 1),
          *fs = nb ? (cJSON *)kjson_get_arr(nb, "metadata.finalizers") : NULL;
    enum kerr rc;
    int i;

    if (!nb)
        return kerr_set(err, KERR_NOMEM, NULL);
    for (i = cJSON_GetArraySize(fs) - 1; i >= 0; i--) {
        const cJSON *f = cJSON_GetArrayItem(fs, i);

        if (cJSON_IsString(f) && strcmp(f->valuestring, EBK_FINALIZER) == 0)
            cJSON_DeleteItemFromArray(fs, i);
    }
    rc = k8s_update(env->client, &EBK_RES_BACKUP, str(b, "metadata.namespace"),
                    str(b, "metadata.name"), nb, NULL, NULL, err);
    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        rc = KERR_OK;
    }
    cJSON_Delete(nb);
    return rc;
}

/* A Job of the delete Job's name that is not this backup's (why names it): left alone; the
 * error in status.deletionError and a Warning event when new; looked at again after a
 * backoff. */
static enum kerr foreign(const struct ebk_env *env, const cJSON *b, const char *why, long *requeue,
                         struct kerr_info *err)
{
    cJSON *nb = NULL;
    enum kerr rc = KERR_OK;

    requeue_min(requeue, podjob_backoff_ms(4));
    if (strcmp(str(b, "status.deletionError"), why) == 0)
        return KERR_OK;
    nb = cJSON_Duplicate(b, 1);
    if (!nb || kjson_set_str(nb, "status.deletionError", why, err))
        rc = kerr_set(err, KERR_NOMEM, NULL);
    rc = rc ? rc : ebk_put_status(env, b, nb, err);
    cJSON_Delete(nb);
    if (rc == KERR_OK)
        ebk_event(env, b, 1, "DeletionFailed", "%s; the copy is not deleted", why);
    return rc;
}

/*
 * Whether key, a copy's reported destination, is a key the copy can write in prefix: the
 * snapshot "<prefix>/v2/<name>" (the sidecar's layout; name one segment, "Full-" or "Incr-"),
 * not a directory and nothing outside the prefix. The report is a Pod's termination message, and
 * a Pod that takes the copy Job's place can say anything: what it names elsewhere is never
 * deleted.
 */
static int copy_key_in(const char *prefix, const char *key)
{
    size_t pl = strlen(prefix);
    const char *name;

    while (pl > 0 && prefix[pl - 1] == '/')
        pl--;
    if (strncmp(key, prefix, pl) != 0 || (pl > 0 && key[pl] != '/'))
        return 0;
    name = key + pl + (pl > 0);
    if (strncmp(name, "v2/", 3) != 0)
        return 0;
    name += 3;
    return (strncmp(name, "Full-", 5) == 0 || strncmp(name, "Incr-", 5) == 0) &&
           !strchr(name, '/') && !strstr(name, "..");
}

/*
 * What the deletion deletes into key (n bytes), with the provenance bounds *since and *before
 * (NULL: none; before is written into until), only what the copy is proven to have written:
 * status.destinationKey, the key its Job reported; else, its result never read
 * (ebk_copy_reported), the snapshot its Job was told to copy in the destination prefix
 * ("<prefix>/v2/<name>", the one key it can write, written since the copy's start). 0 when
 * nothing is proven: the copy reported writing nothing, no copy Job was made, or its result
 * was never read and the snapshot it copied is unknown (ebk_delete_step hands that on).
 */
static int copy_key(const cJSON *b, char *key, size_t n, const char **since, const char **before,
                    char until[KTIME_LEN + 1])
{
    const char *prefix = str(b, kjson_has(b, "status.destination") ? "status.destination.prefix"
                                                                   : "spec.destination.prefix");
    const char *snap = str(b, "status.snapshot.name");
    size_t pl = strlen(prefix);

    *since = *before = NULL;
    until[0] = '\0';
    if (*str(b, "status.destinationKey"))
        return copy_key_in(prefix, str(b, "status.destinationKey")) &&
               snprintf(key, n, "%s", str(b, "status.destinationKey")) < (int)n;
    if (ebk_copy_reported(b) || !*str(b, "status.jobName") || !*str(b, "status.copyStartedAt") ||
        !*snap)
        return 0;
    (void)ebk_copy_window(b, since, until);
    return snprintf(key, n, "%s%sv2/%s", prefix, pl && prefix[pl - 1] != '/' ? "/" : "", snap) <
           (int)n;
}

/*
 * The name of another EtcdBackup of b's namespace whose copy is key in b's destination
 * container (its status.destinationKey: the key its own copy reported) into other (n bytes),
 * "" when none: that object is the other's as much as b's, and stays. A LIST that fails is
 * returned: nothing is deleted.
 */
static enum kerr key_of_another(const struct ebk_env *env, const cJSON *b, const char *key,
                                char *other, size_t n, struct kerr_info *err)
{
    const char *ns = str(b, "metadata.namespace"), *uid = str(b, "metadata.uid");
    const char *container = str(b, dst_path(b, "container"));
    cJSON *list = NULL;
    const cJSON *o;
    enum kerr rc = k8s_list_all(env->client, &EBK_RES_BACKUP, ns, NULL, &list, err);

    other[0] = '\0';
    cJSON_ArrayForEach (o, kjson_get(list, "items")) {
        if (strcmp(str(o, "metadata.uid"), uid) == 0 ||
            strcmp(str(o, "status.destinationKey"), key) != 0 ||
            strcmp(str(o, dst_path(o, "container")), container) != 0)
            continue;
        snprintf(other, n, "%s/%s", ns, str(o, "metadata.name"));
        break;
    }
    cJSON_Delete(list);
    return rc;
}

/*
 * Provenance of a Local copy's deletion: the host directory its copy Job mounted, recorded in
 * status.destination.hostPath when the Job was made, never what the Secret says now. *kept set
 * (nothing deleted, a Warning event CopyKept, the finalizer off) when it is not recorded, or
 * when that directory now overlaps another's claim (read from the API server now). host
 * (BLOCAL_HOSTPATH_MAX + 1 bytes) gets the recorded hostPath. Not Local: nothing done.
 */
static enum kerr local_provenance(const struct ebk_env *env, const cJSON *b, char *host, int *kept,
                                  struct kerr_info *err)
{
    const char *kind = bstore_provider_kind(kjson_get_str(b, dst_path(b, "provider")));
    const char *rec = kjson_get_str(b, "status.destination.hostPath");
    struct claims_skip skip = { .backup_ns = str(b, "metadata.namespace"),
                                .backup = str(b, "metadata.name"),
                                .backups_of = str(b, "spec.etcdName"),
                                .viewer_ns = str(b, "metadata.namespace") };
    struct bstore_claim c = { "", NULL };
    char other[CLAIMS_WHY_MAX] = "";
    struct kerr_info e = { 0 };
    enum kerr rc = KERR_OK;

    *kept = 0;
    *host = '\0';
    if (!kind || strcmp(kind, "Local") != 0)
        return KERR_OK;
    if (!rec || bstore_local_claim_init(&c, rec, kjson_get_str(b, dst_path(b, "container")),
                                        str(b, "status.destination.prefix"), &e) != KERR_OK)
        snprintf(other, sizeof(other),
                 "the host directory its copy Job mounted is not recorded "
                 "(status.destination.hostPath)%s%.300s",
                 e.msg[0] ? ": " : "", e.msg);
    else if ((rc = claims_find(env->client, NULL, &c, &skip, other, err)) == KERR_OK && *other)
        snprintf(other + strlen(other), sizeof(other) - strlen(other),
                 ", which the copy's directory \"/%.200s\" now overlaps", c.prefix);
    bstore_claim_release(&c);
    if (rc != KERR_OK)
        return rc;
    if (!*other) {
        snprintf(host, BLOCAL_HOSTPATH_MAX + 1, "%s", rec);
        return KERR_OK;
    }
    *kept = 1;
    ebk_event(env, b, 1, "CopyKept",
              "nothing deleted in the Local destination: %s; delete the copy by hand once you know "
              "whose it is (warden-snapshot delete-snapshots)",
              other);
    return drop_finalizer(env, b, err);
}

/* No delete Job: start one unless status.nextDeletionAt lies ahead. */
static enum kerr start(const struct ebk_env *env, const cJSON *b, const char *jname, long *requeue,
                       struct kerr_info *err)
{
    const char *ns = str(b, "metadata.namespace"), *next = str(b, "status.nextDeletionAt");
    struct cpjob_delete_spec s = { 0 };
    char key[1024], until[KTIME_LEN + 1];
    char host[BLOCAL_HOSTPATH_MAX + 1];
    cJSON *job = NULL, *secret = NULL;
    struct timespec at;
    time_t now = time(NULL);
    int kept = 0;
    enum kerr rc;

    if (*next && ktime_parse(next, &at, NULL) == KERR_OK && at.tv_sec > now) {
        requeue_min(requeue, (long)(at.tv_sec - now) * 1000L);
        return KERR_OK;
    }
    if ((rc = local_provenance(env, b, host, &kept, err)) != KERR_OK || kept)
        return rc;
    rc = k8s_get(env->client, &ETCDSPEC_RES_SECRET, ns, str(b, "spec.destination.secretRef.name"),
                 NULL, &secret, err);
    if (rc == KERR_NOTFOUND) { /* Local may go without; the others fail in the Job */
        kerr_clear(err);
        rc = KERR_OK;
    }
    s.name = jname;
    s.ns = ns;
    s.owner = b;
    /* where the copy was written (status.destination), never where spec.destination now
     * points; a backup written before that was recorded has only spec.destination */
    (void)copy_key(b, key, sizeof(key), &s.written_since, &s.written_before, until);
    s.copies_only = 1; /* a sidecar's object of that name is not the copy */
    s.store = (struct cpjob_store){ kjson_get_str(b, dst_path(b, "provider")),
                                    kjson_get_str(b, dst_path(b, "container")),
                                    key,
                                    kjson_get_str(b, dst_path(b, "endpointOverride")),
                                    secret,
                                    *host ? host : NULL };
    s.image = env->del_image ? env->del_image : env->copy_image;
    s.command = env->del_command;
    if (rc == KERR_OK)
        rc = cpjob_build_delete(&s, &job, err);
    if (rc == KERR_OK)
        rc = podjob_create_job(env->client, ns, job, err);
    if (rc == KERR_EXISTS) { /* made meanwhile by another */
        char why[512];

        snprintf(why, sizeof(why), "%s", err->msg);
        kerr_clear(err);
        rc = foreign(env, b, why, requeue, err);
    } else if (rc == KERR_OK)
        ebk_event(env, b, 0, "CopyDeletionStarted", "Job %s/%s deletes %s%s", ns, jname, key,
                  s.written_since ? " (what the copy may have written)" : "");
    cJSON_Delete(job);
    cJSON_Delete(secret);
    requeue_min(requeue, EBK_POLL_MS);
    return rc;
}

/* A finished delete Job: done (finalizer off), or a retry recorded; then the Job goes. */
static enum kerr finish(const struct ebk_env *env, const cJSON *b, const cJSON *job, long *requeue,
                        struct kerr_info *err)
{
    const char *ns = str(b, "metadata.namespace"), *jname = str(job, "metadata.name");
    const char *juid = str(job, "metadata.uid");
    int decided = strcmp(str(b, "status.deletionJobUID"), juid) == 0, locked;
    int64_t failures = 0;
    struct podjob_summary s;
    char why[512], next[KTIME_LEN + 1];
    struct timespec at;
    time_t now = time(NULL);
    long wait_ms;
    cJSON *nb = NULL;
    enum kerr rc = podjob_job_pod(env->client, ns, juid, &s, err);

    if (rc != KERR_OK)
        return rc;
    if (s.terminated && s.exit_code == 0 && s.parsed && s.remaining == 0) {
        rc = drop_finalizer(env, b, err);
        if (rc == KERR_OK) {
            char key[1024], until[KTIME_LEN + 1];
            const char *since, *before;

            (void)copy_key(b, key, sizeof(key), &since, &before, until);
            ebk_event(env, b, 0, "CopyDeleted", "%s deleted from the destination", key);
            rc = podjob_delete_job(env->client, ns, jname, str(b, "metadata.uid"), err);
        }
        return rc;
    }
    (void)kjson_get_int64(b, "status.deletionFailures", &failures);
    if (!decided)
        failures++;
    wait_ms = podjob_backoff_ms(failures > 0 ? (long)failures : 1);
    locked = s.terminated && s.exit_code == 0 && s.parsed && s.failed == 0 && s.locked > 0;
    if (locked) {
        if (*s.earliest && ktime_parse(s.earliest, &at, NULL) == KERR_OK)
            wait_ms = at.tv_sec > now ? (long)(at.tv_sec - now) * 1000L : EBK_POLL_MS;
        snprintf(why, sizeof(why), "the copy %s is locked in the store until %s",
                 str(b, "status.destinationKey"), *s.earliest ? s.earliest : "an unknown time");
    } else if (podjob_deadline_exceeded(job) ||
               (!s.terminated && podjob_job_failed(job, NULL, 0))) {
        char f[256];

        (void)podjob_job_failed(job, f, sizeof(f));
        snprintf(why, sizeof(why), "delete Job %s failed: %s", jname, f);
    } else if (!s.terminated) {
        snprintf(why, sizeof(why), "delete Job %s failed without a terminated Pod", jname);
    } else {
        snprintf(why, sizeof(why), "delete Job %s: exit status %d%s%s", jname, s.exit_code,
                 *s.message ? ": " : "", s.message);
    }
    if (ktime_format(now + wait_ms / 1000, next) != KERR_OK)
        return kerr_set(err, KERR_INTERNAL, "cannot format the time");
    nb = cJSON_Duplicate(b, 1);
    if (!nb || kjson_set_str(nb, "status.deletionError", why, err) ||
        kjson_set_int(nb, "status.deletionFailures", failures, err) ||
        kjson_set_str(nb, "status.deletionJobUID", juid, err) ||
        (!decided && kjson_set_str(nb, "status.nextDeletionAt", next, err)))
        rc = kerr_set(err, KERR_NOMEM, NULL);
    rc = rc ? rc : ebk_put_status(env, b, nb, err);
    cJSON_Delete(nb);
    if (rc == KERR_OK && !decided)
        ebk_event(env, b, !locked, locked ? "CopyLocked" : "DeletionFailed", "%s; retried at %s",
                  why, next);
    if (rc == KERR_OK)
        rc = podjob_delete_job(env->client, ns, jname, str(b, "metadata.uid"), err);
    if (rc == KERR_NOTFOUND) { /* the backup gone meanwhile */
        kerr_clear(err);
        rc = KERR_OK;
    }
    requeue_min(requeue, wait_ms);
    return rc;
}

/*
 * Retain, or a copy nothing of which is proven (unproven: the Warning event's text, NULL for
 * Retain): what the copy may have written handed to a BackupEntry (controller/backups/
 * ebk_keep.h), its prefix claimed so that no other namespace is admitted there, then the
 * finalizer off. Fail closed: while no entry claims the copy the finalizer stays, the reason
 * in status.deletionError with a Warning event RetainFailed (when new), looked at again after
 * a backoff.
 */
static enum kerr retain(const struct ebk_env *env, const cJSON *b, const char *unproven,
                        long *requeue, struct kerr_info *err)
{
    char why[512] = "";
    struct kerr_info e = { 0 };
    enum kerr rc = ebk_keep_copy(env, b, why, sizeof(why), &e);

    if (rc == KERR_OK && !*why) {
        if (unproven)
            ebk_event(env, b, 1, "CopyUnproven", "%s", unproven);
        return drop_finalizer(env, b, err);
    }
    if (rc != KERR_OK)
        snprintf(why, sizeof(why), "the BackupEntry of the retained copy cannot be made: %.380s",
                 e.msg[0] ? e.msg : kerr_str(rc));
    snprintf(why + strlen(why), sizeof(why) - strlen(why),
             "; the EtcdBackup stays until its copy's prefix is claimed");
    return foreign(env, b, why, requeue, err);
}

/* Nothing the copy wrote is proven (its result never read, the snapshot unknown): nothing is
 * deleted, other backups' copies of the prefix included; what it may have written stays,
 * handed to a BackupEntry, and a Warning event names the prefix and the window. */
static enum kerr unproven(const struct ebk_env *env, const cJSON *b, long *requeue,
                          struct kerr_info *err)
{
    char msg[EV_NOTE_MAX], until[KTIME_LEN + 1];
    const char *since;

    (void)ebk_copy_window(b, &since, until);
    snprintf(msg, sizeof(msg),
             "the result of copy Job %s was never read and the snapshot it copied is unknown: "
             "nothing in prefix \"%s\" of %s %s is proven its own, so nothing is deleted (the "
             "prefix may hold other backups' copies); what it may have written there from %s to "
             "%s stays, kept by a BackupEntry (event CopyRetained): check the prefix and delete "
             "what is this copy's",
             str(b, "status.jobName"), str(b, dst_path(b, "prefix")),
             str(b, dst_path(b, "provider")), str(b, dst_path(b, "container")), since,
             *until ? until : "now");
    return retain(env, b, msg, requeue, err);
}

/*
 * *reading set when an EtcdRestore of b's namespace in flight (neither Completed nor Failed)
 * names b as its source (spec.source.backupName): its copy is being read, so it is neither
 * deleted nor handed on until that restore is over (an event says so; looked at again).
 * A LIST that fails is returned: nothing is deleted.
 */
static enum kerr read_by_restore(const struct ebk_env *env, const cJSON *b, long *requeue,
                                 int *reading, struct kerr_info *err)
{
    const char *ns = str(b, "metadata.namespace"), *name = str(b, "metadata.name"), *phase;
    cJSON *list = NULL;
    const cJSON *r, *items;
    enum kerr rc = k8s_list_all(env->client, &ERST_RES_RESTORE, ns, NULL, &list, err);

    *reading = 0;
    if (rc == KERR_NOTFOUND) { /* EtcdRestore's CRD not installed: no restores */
        kerr_clear(err);
        return KERR_OK;
    }
    items = rc == KERR_OK ? kjson_get(list, "items") : NULL;
    cJSON_ArrayForEach (r, items) {
        phase = str(r, "status.phase");
        if (strcmp(str(r, "spec.source.backupName"), name) != 0 ||
            strcmp(phase, ERST_PHASE_COMPLETED) == 0 || strcmp(phase, ERST_PHASE_FAILED) == 0)
            continue;
        *reading = 1;
        requeue_min(requeue, EBK_WAIT_MS);
        ebk_event(env, b, 0, "DeletionWaits",
                  "EtcdRestore %s/%s reads this backup's copy: it stays until the restore is "
                  "Completed or Failed",
                  ns, str(r, "metadata.name"));
        break;
    }
    cJSON_Delete(list);
    return rc;
}

enum kerr ebk_delete_step(const struct ebk_env *env, const cJSON *b, long *requeue,
                          struct kerr_info *err)
{
    const char *ns = str(b, "metadata.namespace"), *name = str(b, "metadata.name");
    const char *since, *before;
    char jname[KNAME_LABEL_MAX + 1], key[1024], until[KTIME_LEN + 1];
    char other[KNAME_SUBDOMAIN_MAX * 2 + 2];
    cJSON *job = NULL;
    int reading = 0;
    enum kerr rc;

    if (!has_finalizer(b))
        return KERR_OK;
    if ((rc = read_by_restore(env, b, requeue, &reading, err)) != KERR_OK || reading)
        return rc;
    /* no copy Job recorded (it failed before one was made): nothing in the destination */
    if (!ebk_copy_window(b, &since, until))
        return drop_finalizer(env, b, err);
    /* the copy's report read and naming no key: it wrote nothing, whatever the policy */
    if (ebk_copy_reported(b) && !*str(b, "status.destinationKey")) {
        ebk_event(env, b, 0, "CopyWroteNothing",
                  "copy Job %s reported writing nothing to prefix \"%s\": nothing to delete",
                  str(b, "status.jobName"), str(b, dst_path(b, "prefix")));
        return drop_finalizer(env, b, err);
    }
    /* Retain: whatever a copy Job may have written stays, claimed by a BackupEntry before the
     * finalizer goes, Completed or not (a copy whose result was never read was written all
     * the same) */
    if (strcmp(str(b, "spec.deletionPolicy"), EBK_POLICY_RETAIN) == 0)
        return retain(env, b, NULL, requeue, err);
    /* provenance before deletion: only what the copy is proven to have written */
    if (!copy_key(b, key, sizeof(key), &since, &before, until))
        return unproven(env, b, requeue, err);
    if (ebk_del_job_name(name, jname) != KERR_OK)
        return kerr_set(err, KERR_INVAL, "no delete Job name for EtcdBackup %s", name);
    rc = k8s_get(env->client, &ETCDSPEC_RES_JOB, ns, jname, NULL, &job, err);
    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        rc = key_of_another(env, b, key, other, sizeof(other), err);
        if (rc == KERR_OK && *other) {
            ebk_event(env, b, 0, "CopyShared",
                      "%s is also the copy of EtcdBackup %s: it stays (that backup deletes it)",
                      key, other);
            rc = drop_finalizer(env, b, err);
        } else if (rc == KERR_OK) {
            rc = start(env, b, jname, requeue, err);
        }
    } else if (rc == KERR_OK && !podjob_owned(job, str(b, "metadata.uid"))) {
        char why[512];

        podjob_foreign(job, why, sizeof(why));
        rc = foreign(env, b, why, requeue, err);
    } else if (rc == KERR_OK && podjob_job_done(job)) {
        rc = finish(env, b, job, requeue, err);
    } else if (rc == KERR_OK) {
        requeue_min(requeue, EBK_POLL_MS);
    }
    cJSON_Delete(job);
    return rc;
}
