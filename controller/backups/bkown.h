/*
 * bkown - who owns a Local directory that a Job of warden-controller is to read: a restore
 * drill's target (erd_local.c), an EtcdRestore's Local source (erst_plan.c). The controller
 * decides when it makes the Job, from what it reads then, and the Job mounts the hostPath it
 * judged. A namespace owns the directory when
 *   - a BackupBucket of provider Local holds it and selects the namespace (common/lowner: the
 *     rule warden-webhook applies to a restore's source at admission), or
 *   - an EtcdBackup of the namespace recorded a Local copy whose directory holds it
 *     (status.destination.hostPath, container, prefix: written by the controller when it made
 *     the copy's Job), or
 *   - an Etcd of the namespace claims a directory holding it (placed by its own Secret, read
 *     now: controller/core/clocal), or a BackupEntry of the namespace made after the namespace
 *     was created (common/lowner's lowner_entry, warden-webhook's rule at admission) does,
 *     and no claim of another namespace overlaps it (controller/core/claims, read now; one
 *     whose directory cannot be read is in the way), nor a BackupEntry of an earlier
 *     namespace of that name (made before the namespace was created: common/pborn).
 * None of these counts in a directory that a BackupBucket of provider Local with
 * spec.prefixScope Namespace gives to another namespace or to none (common/lowner): the
 * bucket's owner partitioned it.
 * A Secret of the namespace alone never proves it: that Secret is what is judged, so a
 * directory another namespace claims is not the namespace's, whatever its Secrets say.
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant (the client is).
 */
#ifndef CONTROLLER_BKOWN_H
#define CONTROLLER_BKOWN_H

#include <stddef.h>

#include "common/k8s.h"
#include "common/kerr.h"

/*
 * Why namespace ns may not read the Local directory dir (canonical, common/blocal: no leading
 * '/') into why (n bytes, "" when it may); reader ("a drill reads", "a restore reads") ends
 * the message, which names ns and dir only. An API error (buckets, EtcdBackups or the
 * namespace cannot be listed or read) is returned: the caller makes no Job.
 */
enum kerr bkown_local(struct k8s_client *k, const char *ns, const char *dir, const char *reader,
                      char *why, size_t n, struct kerr_info *err);

#endif
