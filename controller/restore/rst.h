/*
 * rst - restore progress of an Etcd re-created from a backup (KubeDirector's
 * handleRestore, with etcd-warden's names). Called instead of every other step while the Etcd
 * carries the label etcd-warden.io/restoring.
 *
 * Progress lives in the annotation etcd-warden.io/restore-progress, JSON
 * {"awaitingStatus":bool,"awaitingResources":bool,"error":"..."} (all true
 * and "" at the start), plus "waiting":"..." while it waits: what is missing
 * and what to do (the note of the events below). One pass:
 *   1. awaitingStatus: the EtcdStatusBackup of the same name is read. Found:
 *      its spec.statusBackup is written as the Etcd's status through the
 *      /status subresource (PUT with the Etcd's resourceVersion) and the
 *      flag clears; its spec.components is the inventory. Not found while
 *      etcd-warden.io/status-backup-exists says "false": status recovery is
 *      impossible (error set, Warning event StatusRecoveryImpossible) and the
 *      pass goes on with the components etcd-druid always builds
 *      (StatefulSet <etcd>) as the inventory. Not found otherwise: wait,
 *      saying how to go on (apply the EtcdStatusBackup from the cluster's
 *      backup, or annotate the Etcd status-backup-exists=false).
 *   2. awaitingResources (once the status is settled): every component of
 *      the inventory must exist (the components cache, else a GET); a
 *      missing one keeps the flag set. The Normal events RestoreAwaitingStatus
 *      and RestoreAwaitingResources (naming what is missing) are emitted when
 *      the progress changes, not on every pass.
 *   3. Both clear: one merge patch removes the restoring label, the suspend
 *      annotation and the progress annotation (the webhook judges it). An
 *      Etcd that is hibernated (etcd-warden.io/hibernate "true" or a
 *      hibernation phase) keeps the suspend annotation: hibernation owns it,
 *      and etcd-druid would otherwise scale the StatefulSet back up. A
 *      refusal goes into "error" (Warning event RestoreResumeRefused) and is
 *      retried on the next pass. Success: Normal event RestoreCompleted.
 * Removed by hand (the toggle of docs/toggles.md; the webhook lets it go only from a
 * valid Etcd), the label leaves the progress annotation behind: the next
 * pass on such an Etcd (rst_ended_by_hand; the live steps call it, as the
 * Etcd is no longer restoring) removes the progress annotation and the
 * suspension when etcd-warden added it and no hibernation holds it, in one
 * merge patch, with an event RestoreEndedByHand (Warning when the restore
 * had not finished, naming what it still awaited).
 * While restoring, the suspend annotation is held: removed by anyone
 * (`kubectl druid reconciliation resume`), the pass sets it again with
 * etcd-warden.io/suspend-added beside it, Warning event SuspensionReasserted,
 * and does nothing else until the next pass.
 * The progress annotation is written (merge patch with the resourceVersion)
 * only when it changed. While waiting, the step asks to be called again
 * after RST_REQUEUE_MS (the informers also wake it).
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef CONTROLLER_RST_H
#define CONTROLLER_RST_H

#include <stdbool.h>

#include <cJSON.h>

#include "common/kerr.h"

struct ctl;
struct ctl_result;
struct rctx;

#define RST_REQUEUE_MS 5000L
#define RST_ERROR_MAX  1024
#define RST_NO_BACKUP_MSG                                                                      \
    "status backups were not enabled when this Etcd was backed up; automatic status recovery " \
    "is not possible, reconciliation resumes once its resources are restored"

/* The progress annotation. */
struct rst_progress {
    bool awaiting_status;
    bool awaiting_resources;
    char error[RST_ERROR_MAX];
    char waiting[RST_ERROR_MAX]; /* what it waits for and what to do; "" when not waiting */
};

/* Parse the annotation text (NULL or malformed: the initial progress, all awaiting). */
void rst_progress_parse(const char *text, struct rst_progress *out);

/* The annotation text of p. On KERR_OK *out OWNS it (free()). */
enum kerr rst_progress_print(const struct rst_progress *p, char **out, struct kerr_info *err);

/* True when etcd (BORROWED, live) has the restore progress but no restoring label. */
bool rst_ended_by_hand(const cJSON *etcd);

/*
 * One pass for etcd (BORROWED, carrying the restoring label, or rst_ended_by_hand);
 * *requeue_ms set when waiting.
 */
enum kerr rst_run(const struct rctx *x, const cJSON *etcd, long *requeue_ms, struct kerr_info *err);

/* The step of the contract (controller/core/ctl.h). */
enum kerr rst_reconcile(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                        struct kerr_info *err);

#endif
