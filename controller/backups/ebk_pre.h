/*
 * ebk_pre - what an EtcdBackup's reconcile (controller/backups/ebk.h) does
 * last before it creates the copy Job, so that nothing is written that no
 * claim and no status records: a Job of the backup's copy that the status
 * does not record is stopped first, the copy's claim is recorded in its
 * destination store's claim Lease, and the finalizer that deletes (or hands
 * on) the copy is on the backup.
 *
 * Each takes the client and events of env (BORROWED) and the backup as
 * stored (BORROWED); err is set on every error returned.
 */
#ifndef CONTROLLER_EBK_PRE_H
#define CONTROLLER_EBK_PRE_H

#include <stddef.h>

#include <cJSON.h>

#include "common/kerr.h"
#include "controller/backups/ebk_env.h"

/*
 * The copy's claim recorded in its destination store's claim Lease
 * (controller/core/claims.h's claims_take), atomic with warden-webhook's
 * admissions: KERR_OK with why (n bytes) set when a live record of another
 * owner overlaps (the backup fails), *held set when the Lease could not be
 * read or written (status.error, a Warning event ClaimNotRecorded, *requeue
 * lowered: no copy meanwhile). dsecret: the destination Secret as read, the one the copy Job
 * is built from (a Local destination is the directory it places, claims_of_placed).
 */
enum kerr ebk_take_claim(const struct ebk_env *env, const cJSON *b, const cJSON *dsecret, char *why,
                         size_t n, int *held, long *requeue, struct kerr_info *err);

/*
 * Why b's copy may not write its Local destination, into why (n bytes; "" when it may, or the
 * destination is not Local): the directory the copy Job built from dsecret (the destination
 * Secret as read in this pass) writes is not the namespace's part of a partitioned Local
 * BackupBucket (common/lowner's lowner_part_now: the rule warden-webhook admitted b by,
 * applied again because the Secret's hostPath may have been edited since). A destination that
 * cannot be placed is why too. An API error is returned: no copy.
 */
enum kerr ebk_dest_part(const struct ebk_env *env, const cJSON *b, const cJSON *dsecret, char *why,
                        size_t n, struct kerr_info *err);

/*
 * A copy Job of b's (jname, owned by it) before any is recorded: deleted with
 * propagation Foreground (gone only once its Pod is, a Warning event
 * CopyJobUnrecorded), *there set and *requeue lowered until it is gone.
 */
enum kerr ebk_stray_job(const struct ebk_env *env, const cJSON *b, const char *jname, long *requeue,
                        int *there, struct kerr_info *err);

/*
 * The finalizer onto the stored backup *b before its copy is written; *b
 * (OWNED, replaced) is then the updated one. With deletionPolicy Delete it
 * deletes the copy; with Retain it hands the copy's prefix to a BackupEntry
 * (controller/backups/ebk_keep.h).
 */
enum kerr ebk_add_finalizer(const struct ebk_env *env, cJSON **b, struct kerr_info *err);

#endif
