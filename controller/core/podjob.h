/*
 * podjob - what the Jobs and CronJobs the controller builds share with each
 * other (the copy and delete Jobs of controller/backups/cpjob.h, the immutability
 * CronJob of controller/core/imtjob.h and the BackupEntry deletion Job built from
 * it, controller/entries/bkejob.h): the host directory of Local buckets, the command
 * split into words, the restricted security contexts of pod and container,
 * the reading of a terminated container's last message line, whether a Job
 * is done or failed, who owns a Job, and a Job's creation (adopting only a
 * Job of the same owner) and deletion (only of its owner's Job).
 *
 * Every Job the controller builds has spec.activeDeadlineSeconds: the Job
 * controller stops one running longer (or never started: a Pod that cannot
 * be scheduled or pull its image) and marks it Failed with reason
 * DeadlineExceeded, which its owner reports as a failure.
 *
 * A Job's owner is known by uid: its controller ownerReference's, else, for
 * a Job that cannot have one (the deletion Jobs: they run while their owner
 * is being deleted, or in another namespace), the annotation
 * PODJOB_ANN_OWNER_UID. A Job of the expected name with another owner is
 * never adopted, read as a result, nor deleted.
 *
 * Ownership: arguments BORROWED; results as documented.
 * Thread safety: reentrant.
 */
#ifndef CONTROLLER_PODJOB_H
#define CONTROLLER_PODJOB_H

#include <stddef.h>

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"
#include "common/ktime.h"

/* etcd-druid's default host directory of Local buckets, and the home the
 * snapshot tools find $HOME/<container> under. */
#define PODJOB_LOCAL_HOST_ROOT "/etc/gardener/local-backupbuckets"
#define PODJOB_LOCAL_HOME      "/home/nonroot"

/* The owner of a Job without an owner reference (its uid). */
#define PODJOB_ANN_OWNER_UID "etcd-warden.io/owner-uid"

/* spec.activeDeadlineSeconds: copy Jobs (EtcdBackup, EtcdRestore), the deletion Jobs (an
 * EtcdBackup's copy, a BackupEntry's prefix), the immutability CronJob's Jobs. */
#define PODJOB_COPY_DEADLINE_S   (2L * 3600)
#define PODJOB_DELETE_DEADLINE_S (1L * 3600)
#define PODJOB_IMT_DEADLINE_S    (1L * 3600)
#define PODJOB_VERIFY_DEADLINE_S (1L * 3600) /* a restore drill's Job */

/*
 * The host directory of the Local buckets into out (n bytes): the Secret's
 * data.hostPath (base64, absolute, trailing '/' dropped), as etcd-druid reads
 * it, else PODJOB_LOCAL_HOST_ROOT (secret NULL, no key, not absolute).
 */
void podjob_local_root(const cJSON *secret, char *out, size_t n);

/* command split at blanks and tabs into a new array (OWNED by the caller); NULL when it has
 * no words, more than max, or on NOMEM. */
cJSON *podjob_split_words(const char *command, int max);

/* The container's securityContext: no privilege escalation, read-only root file system,
 * non-root, every capability dropped. 0 on NOMEM (ctr then partly filled). */
int podjob_secure_container(cJSON *ctr);

/* The pod's securityContext: non-root as run_as (user, group, fsGroup), seccomp
 * RuntimeDefault. 0 on NOMEM (pod then partly filled). */
int podjob_secure_pod(cJSON *pod, int run_as);

/*
 * The first container of pod, if terminated: 1, *exit_code its exitCode (0 to 255, else -1),
 * *line the last line of its termination message (trailing line ends dropped; points into
 * pod, BORROWED) and *len its length; *line NULL without a message. 0 when not terminated
 * (outputs untouched).
 */
int podjob_terminated(const cJSON *pod, int *exit_code, const char **line, size_t *len);

/* Whether the Job has finished: status.succeeded or status.failed above 0, or a condition
 * Complete or Failed with status "True" (a Job stopped before any Pod ran has only that). */
int podjob_job_finished(const cJSON *job);

/* Whether the Job has finished and is not being deleted (no metadata.deletionTimestamp). */
int podjob_job_done(const cJSON *job);

/*
 * 1 when the Job has a condition Failed with status "True" (the deadline exceeded, the
 * backoff limit reached): "<reason>: <message>" of it into out (n bytes, cut; the parts it
 * has; out may be NULL when n is 0); 0 otherwise (out "").
 */
int podjob_job_failed(const cJSON *job, char *out, size_t n);

/* 1 when the Job's condition Failed says the deadline was exceeded (reason DeadlineExceeded). */
int podjob_deadline_exceeded(const cJSON *job);

/* The uid of the Job's owner (above), or NULL. BORROWED from job. */
const char *podjob_owner_uid(const cJSON *job);

/* 1 when the Job's owner is uid (not NULL, not empty). */
int podjob_owned(const cJSON *job, const char *uid);

/*
 * "Job <ns>/<name> exists and is not ours: its owner is <kind> <name> (uid <uid>)" (or "it
 * belongs to uid <uid>", "it has no owner") into out (n bytes): the error of a Job of an
 * expected name owned by another.
 */
void podjob_foreign(const cJSON *job, char *out, size_t n);

/*
 * Create job (BORROWED, carrying its owner's uid as above) in ns. A Job of its name there
 * already: KERR_OK (err cleared) when it has the same owner (an earlier pass created it);
 * KERR_EXISTS with the podjob_foreign message when it has another or
 * none; KERR_CONFLICT when it went between the create and the read (try again).
 */
enum kerr podjob_create_job(struct k8s_client *cl, const char *ns, const cJSON *job,
                            struct kerr_info *err);

/*
 * Delete the Job ns/name of the owner with uid owner_uid, with propagation Background (its
 * Pods go too) and the Job's uid as precondition: KERR_OK also when it is gone already or
 * is not that owner's (left alone; err cleared).
 */
enum kerr podjob_delete_job(struct k8s_client *cl, const char *ns, const char *name,
                            const char *owner_uid, struct kerr_info *err);

#define PODJOB_BACKOFF_MS     2000L
#define PODJOB_BACKOFF_MAX_MS (30L * 60 * 1000)

/*
 * What the finished Pod of a deletion Job (warden-snapshot's delete command:
 * the BackupEntry deletion Jobs of controller/entries/bkejob.h, the backup
 * deletion Jobs of controller/backups/ebk.h) says.
 */
struct podjob_summary {
    int terminated; /* a terminated container status was found */
    int exit_code;
    int parsed; /* the message's last line is a summary */
    long deleted, locked, failed, remaining;
    long kept;             /* objects outside the owner's window, left in place (0 when not said) */
    long foreign;          /* objects of other prefixes in the final listing (0: none) */
    char foreign_key[256]; /* the first of them, cut; "" when none */
    char earliest[KTIME_LEN + 1]; /* "" when none */
    char message[256];            /* the message's last line, cut */
};

/* Read pod's first container's termination into *s. */
void podjob_read_pod(const cJSON *pod, struct podjob_summary *s);

/*
 * The terminated Pod of the Job with uid juid in ns read into *s (s->terminated 0 when
 * none): selected by the Job controller's label controller-uid, never a Pod of an earlier
 * Job of the same name.
 */
enum kerr podjob_job_pod(struct k8s_client *cl, const char *ns, const char *juid,
                         struct podjob_summary *s, struct kerr_info *err);

/* The next delay after failures failed deletions (1, 2, ...). */
long podjob_backoff_ms(long failures);

#endif
