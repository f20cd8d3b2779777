/*
 * erst - the EtcdRestore (etcd-warden.io/v1alpha1, namespaced; charts/etcd-warden/
 * crds/etcd-warden.io_etcdrestores.yaml): a backup brought up as a NEW Etcd. A
 * restore never touches an existing Etcd.
 *
 * One reconcile per restore (queue key "restore/<ns>/<name>"), driven by what it
 * reads back (a fresh GET of the restore), so a crash at any point resumes:
 *
 * Pending (no phase yet): the spec is checked and the stores resolved:
 *   - the target name (spec.target.etcdName) must be a valid Etcd name (a
 *     DNS-1123 subdomain), else the restore is refused before anything else;
 *   - source: exactly one of backupName and store. backupName: the EtcdBackup of
 *     this namespace; while it is not terminal, or missing for less than
 *     backup_wait_ms since the restore was created (an EtcdBackup applied with
 *     it), the restore waits (status.error says why, looked at again in
 *     ERST_WAIT_MS); missing for longer: refused ("EtcdBackup X not found"); Failed when the
 *     backup Failed; Completed: its spec.destination is the source store and
 *     status.snapshot.name the one snapshot copied (pointInTime is refused with
 *     a backup). store: that store, pointInTime (RFC 3339) bounding the choice;
 *   - the source Etcd (spec.source.etcdName, with a backup its spec.etcdName) and
 *     the spec of the new Etcd: spec.etcdTemplate, else the live source Etcd's
 *     spec. The EtcdStatusBackup keeps the status only, never the spec: without
 *     a template and without the live Etcd the restore is refused;
 *   - the target store: spec.target.store's container and prefix; its provider
 *     and endpointOverride (together) by common/rtarget, the rule warden-webhook
 *     claims by; secretRef defaults to the new Etcd's spec.backup.store's (the
 *     template's or the live Etcd's), else to the source store's;
 *   - refused (phase Failed, status.error, a Warning event Refused): a target
 *     Etcd name that exists; a target prefix in use: in the same store it
 *     overlaps as the backup sidecar lists prefixes (common/bstore: one
 *     canonical prefix a string prefix of the other) the source prefix, or
 *     the prefix of any Etcd, BackupEntry or EtcdBackup copy (controller/core/
 *     claims.h, read from the API server); a source prefix a BackupEntry in
 *     phase Deleting overlaps (claims_find_deleting); Secrets of either
 *     store missing from the restore's namespace; an unknown provider.
 *   - the target admitted (common/rtrec): warden-webhook's record of the restore in
 *     a claim Lease; a target resolved now in another store or prefix than it
 *     says is refused (no record: nothing admitted to keep to);
 *   - then the target's claim taken in its store's claim Lease (controller/core/
 *     claims.h's claims_take): an overlapping live record of another owner (an
 *     Etcd admitted and not stored yet) refuses; a Lease that cannot be read or
 *     written keeps it Pending (status.error, a Warning event ClaimNotRecorded,
 *     looked at again in ERST_WAIT_MS).
 * Copying: a copy Job (controller/backups/cpjob.h: "<restore>--restore", kname_job,
 *   owned by the restore; a Job of that name owned by another fails the
 *   restore and is left alone) copies from the source store into the target prefix
 *   with `--snapshot <the backup's snapshot>` or `--until <pointInTime>` (neither:
 *   the latest full snapshot and its deltas), always with
 *   --require-empty-destination: a target prefix holding snapshots fails the
 *   restore without writing anything. The Job is read with a GET every
 *   ERST_POLL_MS; once finished, its summary goes to status.snapshots (or its
 *   error line to status.error, phase Failed), then the Job is deleted.
 * Creating: the target prefix is checked against the claims again (nobody
 *   owned it while the copy ran: one claimed meanwhile fails the restore and no
 *   Etcd is created); then the Etcd (druid.gardener.cloud/v1alpha1) named
 *   spec.target.etcdName (erst_build_etcd) is created; AlreadyExists is ours
 *   when it carries the label ERST_LABEL_RESTORED_FROM=<restore name> (a crash
 *   after the create), else the restore Fails (someone else took the name).
 * Completed: status.etcdName, completionTime; event Completed.
 * Completed and Failed are terminal: nothing more is done (the Job, if still
 * there, is deleted). Status writes go through /status with the resourceVersion
 * read, so a concurrent change is a conflict retried by the work queue.
 * The finalizer ERST_FINALIZER is put on the restore before its copy Job is
 * created (status.copyStartedAt: the Job's creation): a restore deleted after its
 * copy started (in flight, or Failed with status.jobName; Completed: its Etcd
 * owns the data) has its copy Job stopped and, unless something else now owns an
 * overlapping prefix of the target store, what it wrote there (written from the
 * copy's start to its end, status.completionTime) deleted by a Job before it goes
 * (controller/backups/erst_del.h). A Failed restore's copy stays claimed
 * (common/rtarget's rtarget_claims) until then.
 *
 * Files: erst.c the pass; erst_etcd.c the new Etcd and the prefix check; erst_plan.c
 * the source and target; erst_del.c the deletion.
 *
 * Ownership: arguments BORROWED; results OWNED by the caller as documented.
 * Thread safety: reentrant (one reconcile per key at a time, as the queue ensures).
 */
#ifndef CONTROLLER_ERST_H
#define CONTROLLER_ERST_H

#include <cJSON.h>

#include "common/bstore.h"
#include "common/events.h"
#include "common/k8s.h"
#include "common/kerr.h"

struct ctl;
struct ctl_result;

#define ERST_LABEL_RESTORED_FROM "etcd-warden.io/restored-from"
#define ERST_FINALIZER           "etcd-warden.io/restore-copy" /* erst_del.h */
#define ERST_JOB_TAG             "restore"
#define ERST_POLL_MS             2000L  /* a copy Job running */
#define ERST_WAIT_MS             10000L /* waiting for the source EtcdBackup */
#define ERST_BACKUP_WAIT_MS      60000L /* a source EtcdBackup missing this long: refused */

#define ERST_PHASE_PENDING       "Pending"
#define ERST_PHASE_COPYING       "Copying"
#define ERST_PHASE_CREATING      "Creating"
#define ERST_PHASE_COMPLETED     "Completed"
#define ERST_PHASE_FAILED        "Failed"

extern const struct k8s_resource ERST_RES_RESTORE; /* etcd-warden.io/v1alpha1 etcdrestores */
extern const struct k8s_resource ERST_RES_BACKUP;  /* etcd-warden.io/v1alpha1 etcdbackups */

/* What a reconcile needs: all BORROWED. */
struct erst_ctx {
    struct k8s_client *client;  /* required */
    struct ev_recorder *events; /* NULL: no events */
    const char *job_image;      /* the copy Job's image and command (NULL: cpjob's defaults) */
    const char *job_command;
    const char *del_command; /* the delete Job's (erst_del.h; image job_image); NULL: cpjob's */
    long backup_wait_ms;     /* how long after its creation a restore waits for a missing source
                                EtcdBackup before it is refused (ERST_BACKUP_WAIT_MS; 0: not at all) */
};

/* A store of a restore, its strings BORROWED. */
struct erst_store {
    const char *provider, *container, *prefix, *endpoint, *secret; /* endpoint, secret or NULL */
};

/*
 * The Etcd restore (BORROWED, as stored) creates from spec (BORROWED: the Etcd
 * spec to start from) with spec.backup.store = target (provider, container,
 * prefix, endpointOverride, secretRef {name}); labels and annotations copied
 * from meta (BORROWED: the live source Etcd's metadata, or NULL) except
 * etcd-warden's restore and hibernation marks and the suspend annotation, plus
 * the label ERST_LABEL_RESTORED_FROM=<restore's name>. spec.replicas 0 (a
 * hibernated source) or absent becomes 1, so the new Etcd starts. On KERR_OK
 * *out OWNS it.
 */
enum kerr erst_build_etcd(const cJSON *restore, const cJSON *spec, const cJSON *meta,
                          const struct erst_store *target, cJSON **out, struct kerr_info *err);

/*
 * The first claim (controller/claims: an Etcd, a BackupEntry, an EtcdBackup's
 * copies, read from the API server now) other than the Etcd ns/name's whose
 * prefix overlaps s's as the backup sidecar lists it (a Local s: the directory
 * hostPath host places, erst_target_claim), described into why (n
 * bytes); 0 when none, 1 when one does, -1 (err set; KERR_INVAL when s is not
 * a usable store) when it cannot be told.
 */
int erst_prefix_in_use(struct k8s_client *client, const char *ns, const char *name,
                       const struct erst_store *s, const char *host, char *why, size_t n,
                       struct kerr_info *err);

/*
 * The claim of target store s into *c (release it): a Local one the directory hostPath host
 * places (common/blocal; NULL or "": etcd-druid's default), the others as common/bstore keys
 * them. Errors as bstore_claim_init.
 */
enum kerr erst_target_claim(const struct erst_store *s, const char *host, struct bstore_claim *c,
                            struct kerr_info *err);

/* One pass over the restore ns/name; *requeue_ms set when it is to be looked at again. */
enum kerr erst_run(const struct erst_ctx *x, const char *ns, const char *name, long *requeue_ms,
                   struct kerr_info *err);

/* The step of the key "restore/<ns>/<name>" (controller/core/ctl.h). */
enum kerr erst_reconcile(struct ctl *c, const char *ns, const char *name, struct ctl_result *res,
                         struct kerr_info *err);

/* ---- erst_plan.c: one pass over a restore (internal to the module) ---- */

/*
 * What a pass found out about a restore: what it restores from (the
 * EtcdBackup, its store and Secret, the snapshot) and to (the new Etcd's
 * name, spec and store), and whether it is to wait or to be refused, with
 * the reason. OWNS the objects it read (erst_plan_release).
 */
#define ERST_PLAN_WHY_MAX 1024

#define ERST_HOST_MAX     4097 /* BLOCAL_HOSTPATH_MAX + 1 */

struct erst_plan {
    cJSON *backup, *etcd, *from_secret, *to_secret; /* OWNS, or NULL */
    const cJSON *spec, *meta;                       /* of the new Etcd, BORROWED */
    struct erst_store from, to;
    const char *snapshot, *until;
    int wait, refuse;
    char why[ERST_PLAN_WHY_MAX];
    char to_host[ERST_HOST_MAX];   /* a Local target's hostPath, as its copy Job mounts it: with
                                      checks, the target Secret's as read (to_secret); else
                                      status.targetHostPath, recorded when the Job was made; ""
                                      when neither */
    char from_host[ERST_HOST_MAX]; /* a Local source's hostPath, as its copy Job mounts it:
                                      decided with checks (erst_plan.c), "" otherwise */
};

/*
 * Read the restore rs's source and target into *p (zeroed by the caller); with
 * checks, also the target's name and that no Etcd or store is in the way.
 * KERR_OK with p->wait or p->refuse and p->why set when the restore is to
 * wait or is refused. Call erst_plan_release after, whatever the result.
 */
enum kerr erst_plan_resolve(const struct erst_ctx *x, const cJSON *rs, int checks,
                            struct erst_plan *p, struct kerr_info *err);

/* Free what p OWNS. */
void erst_plan_release(struct erst_plan *p);

/* ---- erst.c, shared with erst_del.c ---- */

/* An event about rs (nothing when x->events is NULL). */
void erst_event(const struct erst_ctx *x, const cJSON *rs, enum ev_type type, const char *reason,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* phase and error (NULL: removed) set in rs's status (startTime when absent, completionTime
 * when terminal, observedGeneration), then PUT /status with rs's resourceVersion. */
enum kerr erst_put_status(const struct erst_ctx *x, cJSON *rs, const char *phase, const char *error,
                          struct kerr_info *err);

/* ---- erst_del.c: the finalizer (controller/backups/erst_del.h) ---- */

/*
 * The copy Job job (rs's) stopped: its name and start recorded in rs's status first when
 * nothing records them (the claim kept while what it wrote may be there), then deleted with
 * propagation Foreground (it is gone only once its Pod is). Arguments BORROWED.
 */
enum kerr erst_stop_copy(const struct erst_ctx *x, const cJSON *rs, const cJSON *job,
                         struct kerr_info *err);

/* 1 when ERST_FINALIZER is on rs. */
int erst_has_finalizer(const cJSON *rs);

/*
 * ERST_FINALIZER put on rs (BORROWED, as stored; its metadata.finalizers and resourceVersion
 * then follow what was written) with a PUT of its resourceVersion; nothing when it has it.
 */
enum kerr erst_add_finalizer(const struct erst_ctx *x, cJSON *rs, struct kerr_info *err);

/* One pass over rs (as stored) being deleted; *requeue_ms set when to look again. */
enum kerr erst_delete_step(const struct erst_ctx *x, const cJSON *rs, long *requeue_ms,
                           struct kerr_info *err);

#endif
