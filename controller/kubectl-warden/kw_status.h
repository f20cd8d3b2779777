/*
 * kw_status - `kubectl warden status [ETCD]`: what etcd-warden knows of an Etcd on one
 * screen, read from the API server only (no object store is opened):
 *   protection   on, or off with druid.gardener.cloud/disable-etcd-component-protection
 *   store        spec.backup.store (provider, container, prefix)
 *   hibernation  requested (etcd-warden.io/hibernate, or spec.replicas 0), phase, the
 *                traffic cut time and the condition (etcd-warden.io/hibernation-*)
 *   snapshots    the last full and delta snapshot as the backup sidecar records them in
 *                the Leases <etcd>-full-snap / <etcd>-delta-snap (renewTime: when it was
 *                taken; holderIdentity: its last revision), with their age; the newest
 *                on-demand snapshot EtcdOpsTask (final or not) and its state
 *   immutability the retention type and the ExtendFullSnapshotImmutabilityTask's last run
 *                and Ready condition
 *   entry        the BackupEntry of the Etcd (cluster-scoped, spec.etcd)
 *   backup       the newest EtcdBackup of the Etcd, and the newest Completed one
 *   drill        of the EtcdRestoreDrills whose status.etcdName is the Etcd, the one that
 *                drilled last: its result, when, the newest restorable snapshot's time and
 *                the restorable revision (the message when not Restorable)
 *   restore      the restoring label and etcd-warden.io/restore-progress
 * Without ETCD, one line per Etcd of the namespace. `-o json` prints the same as JSON
 * (kw_status_collect's object; a list {"items": [...]} without ETCD).
 */
#ifndef KW_KW_STATUS_H
#define KW_KW_STATUS_H

#include <time.h>

#include <cJSON.h>

#include "controller/kubectl-warden/kw.h"

/*
 * The summary of Etcd etcd (BORROWED, the object as read) at now. On KERR_OK *out OWNS a
 * cJSON object (see the header comment for its fields).
 */
enum kerr kw_status_collect(struct kw *k, const cJSON *etcd, time_t now, cJSON **out,
                            struct kerr_info *err);

/* The command: args are the positional arguments after "status" (0 or 1). Exit code. */
int kw_status_main(struct kw *k, const char *const *args, size_t nargs);

#endif
