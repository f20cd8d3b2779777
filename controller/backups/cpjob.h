/*
 * cpjob - the batch/v1 Job that copies snapshots from one object store to
 * another with `warden-snapshot copy` (controller/snapshot/snapcopy.h), for
 * an EtcdBackup (the Etcd's store to the backup's destination) or an
 * EtcdRestore (a source store to the new Etcd's), and the reading of a
 * finished one's result.
 *
 * The Job (cpjob_build): named s->name in s->ns, one container "copy"
 * running s->image with s->command split at blanks (default
 * CPJOB_DEFAULT_COMMAND) and the args
 *   --from-storage-provider=<kind> --from-store-container=C
 *   --from-store-prefix=X [--from-store-endpoint-override=URL]
 *   [--from-credentials-dir=CPJOB_FROM_DIR], the same with --to-,
 *   then --snapshot=NAME, or [--latest-full] [--until=TIME]. A Local store's
 * Secret is optional (without it: the default host directory).
 * Providers are etcd-backup-restore's names or etcd-druid's aliases
 * (common/bstore: aws, azure, local, ...); the copy opens S3 and ABS (the
 * Secret mounted at CPJOB_FROM_DIR / CPJOB_TO_DIR, one file per key, read
 * as the credentials directory of that side) and Local (a hostPath volume
 * <hostPath>/<container>, hostPath the Secret's key of that name, else
 * etcd-druid's default /etc/gardener/local-backupbuckets, at
 * /home/nonroot/<container> with HOME=/home/nonroot, as etcd-backup-restore
 * finds $HOME/<container>/<prefix>); any other provider is KERR_UNSUPPORTED.
 * restartPolicy Never, backoffLimit 0 (the owner decides what a failure
 * means), activeDeadlineSeconds (default PODJOB_COPY_DEADLINE_S),
 * terminationMessagePolicy FallbackToLogsOnError; pod and container
 * non-root, read-only root file system, no capabilities, seccomp
 * RuntimeDefault, as the immutability CronJob (controller/core/imtjob.h). Labels
 * app.kubernetes.io/managed-by=etcd-warden and CPJOB_LABEL_FOR=
 * "<owner kind, lowercase>.<owner name>" (cut by kname to a label value),
 * on the Job and its Pods; the controller reference to s->owner. The
 * name, s->name, is the caller's (kname_job: one per kind of Job and owner).
 *
 * The result (cpjob_read): the Job (status.succeeded / status.failed) and
 * its Pod (label controller-uid=<the Job's uid>, never a Pod of an earlier
 * Job of the same name): containerStatuses[0].state.terminated {exitCode,
 * message}; the message's last line is the summary `warden-snapshot copy`
 * writes to its termination log:
 *   {"snapshots":[{"name","kind","startRevision","lastRevision","size",
 *    "md5","destination"},...],"total":N,"error":"..."}
 * (snapshots may list fewer than total when the message had to fit in 4096
 * bytes: the full, the last delta).
 *
 * Ownership: arguments BORROWED; results OWNED by the caller.
 * Thread safety: reentrant.
 */
#ifndef CONTROLLER_CPJOB_H
#define CONTROLLER_CPJOB_H

#include <stddef.h>

#include <cJSON.h>

#include "common/kerr.h"
#include "common/ktime.h"
#include "controller/core/kname.h"

struct k8s_client;

#define CPJOB_LABEL_FOR              "etcd-warden.io/copy-for"
#define CPJOB_MANAGED_BY             "etcd-warden"
#define CPJOB_CONTAINER              "copy"
#define CPJOB_FROM_DIR               "/var/etcd-backup-from"
#define CPJOB_TO_DIR                 "/var/etcd-backup-to"
#define CPJOB_DEFAULT_COMMAND        "warden-snapshot copy"
#define CPJOB_DEFAULT_IMAGE          WARDEN_DEFAULT_IMAGE
#define CPJOB_DEFAULT_DELETE_COMMAND "warden-snapshot delete-snapshots"
#define CPJOB_SNAPS_MAX              8
#define CPJOB_DEFAULT_VERIFY_COMMAND "warden-snapshot verify --json"
#define CPJOB_VERIFY_CONTAINER       "verify"
#define CPJOB_WORK_DIR               "/var/etcd-drill"

/* One side of the copy. All BORROWED. */
struct cpjob_store {
    const char *provider, *container, *prefix, *endpoint_override;
    const cJSON *secret;   /* the Secret object (data base64), read by the caller */
    const char *host_path; /* Local: the hostPath to mount, recorded when the copy was made
                              (provenance: a deletion deletes where the copy wrote, whatever
                              the Secret says now); NULL: the Secret's (cpjob_local_root) */
};

/* The hostPath a Job mounts for Local store st into out (n bytes): st->host_path, else its
 * Secret's (controller/core/podjob's podjob_local_root), without trailing '/'. */
void cpjob_local_root(const struct cpjob_store *st, char *out, size_t n);

/* What to build. All BORROWED. */
struct cpjob_spec {
    const char *name, *ns;
    const cJSON *owner; /* the EtcdBackup or EtcdRestore: apiVersion, kind, metadata.name/uid */
    struct cpjob_store from, to;
    const char *snapshot, *until; /* --snapshot NAME, or --until TIME (RFC 3339), or neither */
    int latest_full;              /* --latest-full: the latest full only, no deltas */
    const char *image, *command;  /* NULL: the defaults above */
    long deadline_s;              /* activeDeadlineSeconds; 0: PODJOB_COPY_DEADLINE_S */
};

/*
 * The Job of s. KERR_INVAL with a message for a missing name, namespace,
 * owner (name, uid, kind), store field or Secret, or both snapshot and
 * until; KERR_UNSUPPORTED for a provider the copy does not open. On KERR_OK
 * *out OWNS the Job.
 */
enum kerr cpjob_build(const struct cpjob_spec *s, cJSON **out, struct kerr_info *err);

/*
 * The Job deleting what lies under store.prefix (a path: one object when it is
 * an object's key; controller/snapshot/snapdel.h) with `warden-snapshot
 * delete-snapshots` (default CPJOB_DEFAULT_DELETE_COMMAND): --storage-provider,
 * --store-container, --store-prefix, --store-endpoint-override; the Secret
 * mounted at CPJOB_TO_DIR, named by the provider's credentials variable
 * (AWS_APPLICATION_CREDENTIALS, AZURE_APPLICATION_CREDENTIALS), or Local's
 * hostPath as above; --written-since and --written-before (provenance:
 * controller/snapshot/snapdel.h) when given. Labels as the copy's; activeDeadlineSeconds (default
 * PODJOB_DELETE_DEADLINE_S); no owner reference (it runs while its owner is
 * being deleted, and a foreground deletion would delete it first; the
 * owner's reconcile deletes it) but the owner's uid in the annotation
 * PODJOB_ANN_OWNER_UID (controller/core/podjob.h).
 */
struct cpjob_delete_spec {
    const char *name, *ns;
    const cJSON *owner; /* kind and metadata.name, for the label; metadata.uid */
    struct cpjob_store store;
    const char *written_since, *written_before; /* --written-since/--written-before (RFC 3339):
                                                   only what was written then; NULL: no bound */
    int copies_only; /* --only-copies: only objects warden-snapshot wrote (its mark) */
    const char *image, *command;
    long deadline_s; /* activeDeadlineSeconds; 0: PODJOB_DELETE_DEADLINE_S */
};

/* The delete Job of s; errors as cpjob_build. On KERR_OK *out OWNS it. */
enum kerr cpjob_build_delete(const struct cpjob_delete_spec *s, cJSON **out, struct kerr_info *err);

/*
 * The Job checking a store's chain with `warden-snapshot verify --json` (default
 * CPJOB_DEFAULT_VERIFY_COMMAND; controller/snapshot/snapchain.h) for a restore drill:
 * --storage-provider, --store-container, --store-prefix, --store-endpoint-override and
 * --tmp-dir=CPJOB_WORK_DIR (an emptyDir "work" there: the full snapshot is spooled to
 * disk), the Secret mounted and named as the delete Job's (or Local's hostPath); labels
 * as the copy's; the controller reference to owner; activeDeadlineSeconds (default
 * PODJOB_VERIFY_DEADLINE_S). Its one container is CPJOB_VERIFY_CONTAINER; the summary it
 * leaves in its termination message is snapchain_summary's.
 */
struct cpjob_verify_spec {
    const char *name, *ns;
    const cJSON *owner; /* apiVersion, kind, metadata.name/uid */
    struct cpjob_store store;
    const char *image, *command;
    long deadline_s; /* activeDeadlineSeconds; 0: PODJOB_VERIFY_DEADLINE_S */
};

/* The verify Job of s; errors as cpjob_build. On KERR_OK *out OWNS it. */
enum kerr cpjob_build_verify(const struct cpjob_verify_spec *s, cJSON **out, struct kerr_info *err);

/* The value of CPJOB_LABEL_FOR of owner's Jobs ("<kind, lowercase>.<name>" as a label value). */
enum kerr cpjob_for_label(const cJSON *owner, char out[KNAME_LABEL_MAX + 1]);

/* The credentials variable of a provider kind (AWS_APPLICATION_CREDENTIALS for S3, ...), NULL
 * for Local. */
const char *cpjob_credentials_var(const char *kind);

/* What a Job says. */
struct cpjob_summary {
    int finished;  /* podjob_job_finished */
    int succeeded; /* status.succeeded > 0 */
    int parsed;    /* the Pod's message was a summary */
    int exit_code; /* -1: no terminated container */
    size_t n;      /* snaps used */
    struct cpjob_snap {
        char name[128], kind[8];
        long long start_rev, last_rev, size;
        char md5[33], destination[512];
    } snaps[CPJOB_SNAPS_MAX];
    size_t total;    /* snapshots copied (may exceed n) */
    char error[256]; /* the summary's error, else the message's last line when not a summary */
};

/* Read a Pod's first container's termination into *out (finished/succeeded untouched). */
void cpjob_read_pod(const cJSON *pod, struct cpjob_summary *out);

/*
 * Read the Job job_name of ns and, once finished (controller/core/podjob.h:
 * podjob_job_finished), its Pod into *out (zeroed first). A failed Job's
 * condition ("DeadlineExceeded: <message>") is the error when the deadline
 * stopped it or the Pod said nothing. KERR_NOTFOUND when there is no such
 * Job; KERR_EXISTS with a message naming it when its owner's uid is not
 * owner_uid (it is not read); the client's error otherwise.
 */
enum kerr cpjob_read(struct k8s_client *cl, const char *ns, const char *job_name,
                     const char *owner_uid, struct cpjob_summary *out, struct kerr_info *err);

/*
 * Where what an EtcdRestore's copy writes starts (status.copyStartedAt, the deletions'
 * --written-since): the creation of obj (the EtcdRestore, whose target is claimed from its
 * admission), on the API server's clock and before the Job it makes; a minute before now
 * (formatted into now) when obj has none. The result is obj's string (BORROWED) or now. (An
 * EtcdBackup's copy starts when its destination claim is recorded: controller/backups/ebk.c.)
 */
const char *cpjob_copy_start(const cJSON *obj, char now[KTIME_LEN + 1]);

#endif
