/*
 * kw_snap - the commands of kubectl-warden that read an Etcd's object store, by running
 * warden-snapshot (found on PATH, or --snapshot-binary) on this machine against the
 * Etcd's spec.backup.store with the credentials of its Secret, as the backup sidecar
 * reads them:
 *   verify ETCD          warden-snapshot list --verify-hash of the Etcd's prefix: every
 *                        snapshot (with immutable-until), each full snapshot read and its
 *                        SHA-256 checked; exit 1 when one is marked sha256=corrupt
 *   check-prefixes ETCD  warden-snapshot check-prefixes of the Etcd's container: every
 *                        pair of prefixes the sidecar mixes up
 * The Secret (the user must be allowed to read it) is written, one file per key as
 * kubelet mounts it, into a new directory (0700, files 0600, under $TMPDIR) named by
 * the provider's variable (AWS_APPLICATION_CREDENTIALS, AZURE_APPLICATION_CREDENTIALS,
 * OPENSHIFT_APPLICATION_CREDENTIALS; GOOGLE_APPLICATION_CREDENTIALS the file
 * serviceaccount.json in it) and removed when warden-snapshot ends. A Local store is a
 * directory of the node: a relative container is looked up under $HOME here, as
 * warden-snapshot does. The exit status is warden-snapshot's (check-prefixes: 1 pairs
 * found, 3 the container could not be listed), 1 when it could not be run.
 */
#ifndef KW_KW_SNAP_H
#define KW_KW_SNAP_H

#include <stddef.h>

#include "controller/kubectl-warden/kw.h"

/* cmd is "verify" or "check-prefixes"; bin the warden-snapshot to run. Exit code. */
int kw_snap_main(struct kw *k, const char *cmd, const char *bin, const char *const *args,
                 size_t nargs);

#endif
