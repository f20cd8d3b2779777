/*
 * blocal - where a Local backup store is on the node, as etcd-druid mounts it
 * and the backup sidecar writes it. etcd-druid mounts the host directory
 * "<hostPath>/<container>" (a plain string concatenation:
 * internal/component/statefulset/builder.go getBackupVolume) at
 * "<home>/<container>", hostPath being the Etcd's backup Secret's data key
 * "hostPath", or BLOCAL_HOSTPATH_DEFAULT when the Etcd has no secretRef or the
 * Secret no such key (internal/store/store.go GetHostMountPathFromSecretRef;
 * a Secret that cannot be read is an error: no StatefulSet). The sidecar
 * writes path.Join(home, container, prefix) (pkg/snapstore/utils.go:78 at
 * v0.43.0, the same at v0.28.4; local_snapstore.go walks and writes below
 * it). So a cluster's directory on the node is
 *
 *     path.Clean(hostPath + "/" + container + "/" + prefix)
 *
 * and two Local stores are one store exactly when they resolve to one
 * directory: "/var/lib/lb" + "bkt" + "shoot--a/etcd" and "/var/lib/lb/bkt" +
 * "shoot--a" + "etcd" are one. A Local claim (common/bstore) is that
 * directory without its leading '/' under the key BLOCAL_KEY, compared as a
 * directory walk (bstore_local_claim_init, bstore_overlap).
 *
 * Refused (KERR_INVAL, the reason in err): a mount path that is not absolute
 * (a relative hostPath: where the kubelet would put it is not known) or has a
 * ".." segment (the API server refuses such a hostPath volume; a container
 * with one mounts elsewhere than it writes), a prefix that leaves its
 * container (the sidecar would write outside the mount, into the pod), a
 * hostPath with a NUL byte, a prefix longer than BLOCAL_PREFIX_MAX. Symbolic
 * links on the node are not known: two spellings of one directory through a
 * link compare apart.
 *
 * Pure functions. Ownership: arguments BORROWED; output into caller buffers unless a function
 * says it allocates. Thread safety: reentrant.
 */
#ifndef COMMON_BLOCAL_H
#define COMMON_BLOCAL_H

#include <stddef.h>

#include <cJSON.h>

#include "common/kerr.h"

/* etcd-druid's LocalProviderDefaultMountPath (internal/store/store.go). */
#define BLOCAL_HOSTPATH_DEFAULT "/etc/gardener/local-backupbuckets"

/* The key of every Local claim: one node file system, compared by directory. */
#define BLOCAL_KEY "Local||"

/* On a BackupEntry (written by warden-controller only): the hostPath of its directory, for an
 * entry no bucket places (a retained Local copy's: the host directory its copy Job mounted). */
#define BLOCAL_HOSTPATH_ANNOTATION "etcd-warden.io/local-host-path"

/* The longest prefix understood (common/bstore's BSTORE_PREFIX_MAX: it includes this). */
#define BLOCAL_PREFIX_MAX 1024

/* The longest hostPath understood (a Linux path is at most 4096 bytes). */
#define BLOCAL_HOSTPATH_MAX 4096

/*
 * The hostPath of a Local store whose backup Secret is secret (as stored, data base64; NULL:
 * the Etcd names no Secret) into out (n bytes): data.hostPath decoded, else
 * BLOCAL_HOSTPATH_DEFAULT. KERR_INVAL (err says why) for a value that is no base64 or holds a
 * NUL byte, KERR_TOOBIG when it does not fit.
 */
enum kerr blocal_hostpath(const cJSON *secret, char *out, size_t n, struct kerr_info *err);

/*
 * The directory of a Local store (hostpath NULL: BLOCAL_HOSTPATH_DEFAULT) as a claim's
 * canonical prefix into out (n bytes): path.Clean(hostpath + "/" + container + "/" + prefix)
 * without its leading '/', "" for the root. KERR_INVAL (err says why) as above, KERR_TOOBIG
 * when it does not fit.
 */
enum kerr blocal_dir(const char *hostpath, const char *container, const char *prefix, char *out,
                     size_t n, struct kerr_info *err);

#endif
