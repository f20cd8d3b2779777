/*
 * ebk_del - the finalizer of an EtcdBackup (controller/backups/ebk.h): its
 * copy in the destination deleted by a Job before the backup goes, retried
 * with backoff while the store keeps it locked.
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
