/*
 * ebk_env - what the EtcdBackup reconcile (controller/backups/ebk.h) and its
 * finalizer (controller/backups/ebk_del.h) share: the names and constants of
 * an EtcdBackup, what a step needs (struct ebk_env), the names of its task
 * and Jobs, the snapshot a task took, the status write and the events.
 *
 * Ownership: arguments BORROWED; results as documented. Thread safety: reentrant.
 */
#ifndef CONTROLLER_EBK_ENV_H
#define CONTROLLER_EBK_ENV_H

#include <stddef.h>

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"
#include "common/ktime.h"
#include "controller/core/kname.h"

struct ev_recorder; /* common/events.h */

#define EBK_KIND            "EtcdBackup"
#define EBK_FINALIZER       "etcd-warden.io/backup-copy"
#define EBK_DEL_JOB_TAG     "delete-copy" /* kname_job: "<backup>--delete-copy" */
#define EBK_COPY_JOB_TAG    "copy"        /* kname_job: "<backup>--copy" */
#define EBK_POLL_MS         2000L
#define EBK_WAIT_MS         5000L
#define EBK_WHY_MAX         1024 /* a failure's message (status.error, the Warning event) */
#define EBK_PHASE_PENDING   "Pending"
#define EBK_PHASE_SNAPSHOT  "Snapshotting"
#define EBK_PHASE_UPLOADING "Uploading"
#define EBK_PHASE_COMPLETED "Completed"
#define EBK_PHASE_FAILED    "Failed"
#define EBK_POLICY_RETAIN   "Retain"

extern const struct k8s_resource EBK_RES_BACKUP;

/* What a step needs. */
struct ebk_env {
    struct k8s_client *client;  /* BORROWED, required */
    struct ev_recorder *events; /* BORROWED; NULL: no events */
    const char *copy_image;     /* NULL: cpjob's defaults */
    const char *copy_command;
    const char *del_image;   /* the delete Job's; NULL: the copy image */
    const char *del_command; /* NULL: "warden-snapshot delete-snapshots" */
};

/* The EtcdOpsTask, copy Job and delete Job names of a backup (kname: at most 253; kname_job:
 * a label, one per kind of Job and backup). */
enum kerr ebk_task_name(const char *backup, char out[KNAME_SUBDOMAIN_MAX + 1]);
enum kerr ebk_job_name(const char *backup, char out[KNAME_LABEL_MAX + 1]);
enum kerr ebk_del_job_name(const char *backup, char out[KNAME_LABEL_MAX + 1]);

/*
 * The write window of backup's copy in its destination prefix into *since (BORROWED from
 * backup) and until. Its start: status.copyStartedAt (a backup recorded before that field:
 * status.startTime, else metadata.creationTimestamp). Its end: a copy whose result was read
 * (ebk_copy_reported) ended by status.completionTime (its Job had finished); a copy never
 * read may have been written until the later of its failure time (status.completionTime; none:
 * now) and its Job's deadline (the start + PODJOB_COPY_DEADLINE_S: the Pod of a Job deleted
 * while the controller was down may outlive the failure). Returns 1 when a copy Job was
 * recorded (status.jobName, copyStartedAt or destinationKey), 0 when none was (nothing was
 * written; the window is then the backup's start to its end or now).
 */
int ebk_copy_window(const cJSON *backup, const char **since, char until[KTIME_LEN + 1]);

/*
 * 1 when the report of backup's copy Job was read (status.copyReported, or a
 * status.destinationKey recorded before that field): status.destinationKey is then all the
 * copy wrote, and without one it wrote nothing. 0: its result was never read.
 */
int ebk_copy_reported(const cJSON *backup);

/* *requeue lowered to ms (set when it is 0 or less). */
void ebk_requeue_min(long *requeue, long ms);

/* The object res ns/name into *out (OWNED), NULL when gone (KERR_OK); other errors returned. */
enum kerr ebk_get_opt(const struct ebk_env *env, const struct k8s_resource *res, const char *ns,
                      const char *name, cJSON **out, struct kerr_info *err);

/*
 * The snapshot an executor's lastOperation.description names ("full
 * snapshot NAME taken ...") into out; 0 when it names none.
 */
int ebk_snapshot_of(const cJSON *task, char *out, size_t n);

/*
 * Write backup's status (the whole object's, through /status) with observedGeneration
 * = metadata.generation, when it differs from stored's; backup's resourceVersion then the
 * stored one (a write that follows goes with it).
 */
enum kerr ebk_put_status(const struct ebk_env *env, const cJSON *stored, cJSON *backup,
                         struct kerr_info *err);

/* An event on backup. */
void ebk_event(const struct ebk_env *env, const cJSON *backup, int warning, const char *reason,
               const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
