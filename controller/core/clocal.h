/*
 * clocal - Local claims placed on the node when a step that writes or deletes
 * compares them (controller/core/claims). A Local store is the directory
 * hostPath + "/" + container + "/" + prefix (common/blocal), its hostPath in a
 * Secret a tenant may edit at any time, so it is read from the API server when
 * the step runs:
 *   - an Etcd's: its spec.backup.store.secretRef in its namespace (none:
 *     etcd-druid's default);
 *   - an EtcdBackup copy's: status.destination.hostPath, the hostPath its
 *     copy Job mounted, recorded when the Job was made; else (a copy made
 *     before the record) spec.destination.secretRef in its namespace (a
 *     Secret that is not there: the default, as the copy Job mounts it);
 *   - a BackupEntry's: its BLOCAL_HOSTPATH_ANNOTATION, else its bucket's
 *     spec.secretRef (the directory its deletion Job mounts);
 *   - an EtcdRestore's target: status.targetHostPath, the hostPath its copy
 *     Job mounts, recorded before the Job is made; else the Secret
 *     common/rtarget's rtarget_local_secret_in names (as warden-webhook
 *     read it at admission), one that is not there not placed.
 * Each Local item of a list gets CLOCAL_DIR (its directory, canonical) or
 * CLOCAL_UNKNOWN (true: it could not be placed; the caller takes it as
 * overlapping every Local claim).
 *
 * Ownership: arguments BORROWED; items are annotated in place. Thread safety: reentrant.
 */
#ifndef CONTROLLER_CLOCAL_H
#define CONTROLLER_CLOCAL_H

#include <stddef.h>

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"

#define CLOCAL_DIR     "_localDir"
#define CLOCAL_UNKNOWN "_localUnknown"

/* Which kind of object a list holds. */
enum clocal_kind { CLOCAL_ETCD, CLOCAL_ENTRY, CLOCAL_BACKUP };

/*
 * The hostPath of the Local store whose Secret is ns/secret (NULL or "": none, the default)
 * into out (n bytes). missing_default: a Secret that is not there is the default (a copy Job's
 * mount); else it is an error. Errors as the GET, or KERR_INVAL for a value not understood.
 */
enum kerr clocal_hostpath(struct k8s_client *k, const char *ns, const char *secret,
                          int missing_default, char *out, size_t n, struct kerr_info *err);

/* The hostPath of the Local bucket obj (BackupBucket, BORROWED): its spec.secretRef's. */
enum kerr clocal_bucket_hostpath(struct k8s_client *k, const cJSON *bucket, char *out, size_t n,
                                 struct kerr_info *err);

/* Annotate each Local item of items (an array of kind) with CLOCAL_DIR or CLOCAL_UNKNOWN. */
void clocal_place(struct k8s_client *k, cJSON *items, enum clocal_kind kind);

/* Annotate each EtcdRestore of restores whose spec.target.store is Local the same way (its
 * sources found in etcds and backups, arrays of items; BORROWED). */
void clocal_place_restores(struct k8s_client *k, cJSON *restores, const cJSON *etcds,
                           const cJSON *backups);

#endif
