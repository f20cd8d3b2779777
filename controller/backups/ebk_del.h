/*
 * ebk_del - the finalizer of an EtcdBackup (controller/backups/ebk.h): its
 * copy in the destination deleted by a Job before the backup goes, retried
 * with backoff while the store keeps it locked.
 *
 * Provenance before deletion: the copies of one Etcd share a prefix (a
 * schedule writes one every fire time), so only what this copy is proven to
 * have written is deleted: the key its copy Job reported (status.destinationKey),
 * or, its result never read, the one snapshot its Job was told to copy
 * (status.snapshot.name), written since status.copyStartedAt. Never a key
 * another EtcdBackup of the namespace records as its destinationKey. A copy
 * that reported writing nothing (status.copyReported, no key) deletes nothing.
 * A copy never read whose snapshot is unknown (etcd-druid's executor does not
 * name it) deletes nothing either: what it may have written is handed to a
 * BackupEntry (controller/backups/ebk_keep.h: the prefix stays claimed, the
 * entry's deletion waits while another claim overlaps it) and a Warning event
 * CopyUnproven names the prefix and the window for the operator.
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef CONTROLLER_EBK_DEL_H
#define CONTROLLER_EBK_DEL_H

#include <cJSON.h>

#include "common/kerr.h"
#include "controller/backups/ebk_env.h"

/* The deletion of backup (as stored, being deleted). */
enum kerr ebk_delete_step(const struct ebk_env *env, const cJSON *backup, long *requeue_ms,
                          struct kerr_info *err);

#endif
