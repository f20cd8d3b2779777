/*
 * podjob - what the Jobs and CronJobs the controller builds share with each
 * other (the copy and delete Jobs of controller/cpjob.h, the immutability
 * CronJob of controller/imtjob.h and the BackupEntry deletion Job built from
 * it, controller/bkejob.h): the host directory of Local buckets, the command
 * split into words, the restricted security contexts of pod and container,
 * the reading of a terminated container's last message line, whether a Job
 * is done, and a Job's creation and deletion.
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

/* etcd-druid's default host directory of Local buckets, and the home the
 * snapshot tools find $HOME/<container> under. */
#define PODJOB_LOCAL_HOST_ROOT "/etc/gardener/local-backupbuckets"
#define PODJOB_LOCAL_HOME      "/home/nonroot"

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

/* Whether the Job has finished (status.succeeded or status.failed above 0) and is not being
 * deleted (no metadata.deletionTimestamp). */
int podjob_job_done(const cJSON *job);

/* Create job (BORROWED) in ns: KERR_OK also when a Job of its name is there already (an
 * earlier pass created it; err cleared). */
enum kerr podjob_create_job(struct k8s_client *cl, const char *ns, const cJSON *job,
                            struct kerr_info *err);

/* Delete the Job ns/name with propagation Background (its Pods go too): KERR_OK also when it
 * is gone already (err cleared). */
enum kerr podjob_delete_job(struct k8s_client *cl, const char *ns, const char *name,
                            struct kerr_info *err);

#endif
