/*
 * backups - the backups capability of warden-controller, as the core runs
 * it (controller/core/ctl_cap.h), with --backups only: the keys
 * "backup/<ns>/<name>" of an EtcdBackup (ebk_reconcile, controller/backups/ebk.h),
 * "restore/<ns>/<name>" of an EtcdRestore (erst_reconcile, controller/backups/erst.h),
 * "bschedule/<ns>/<name>" of an EtcdBackupSchedule (ebs_reconcile,
 * controller/backups/ebs.h) and "rdrill/<ns>/<name>" of an EtcdRestoreDrill (erd_reconcile,
 * controller/backups/erd.h, its own key but not for an update of its status alone), the
 * per-drill gauges warden_etcd_restorable, warden_etcd_last_successful_drill_timestamp_seconds
 * and warden_etcd_newest_restorable_snapshot_timestamp_seconds (from the cached drills'
 * status), and their caches: an EtcdBackup (indexed by
 * CTL_INDEX_ETCD_NAME) queues its own key and, when a schedule made it, its
 * schedule's "bschedule/<ns>/<label>"; an EtcdRestore its own key; a
 * schedule its own key, but not for an update of its status alone.
 *
 * Thread safety: the table is read-only.
 */
#ifndef CONTROLLER_BACKUPS_H
#define CONTROLLER_BACKUPS_H

#include "controller/core/ctl_cap.h"

/* The table entry (BORROWED by the core). */
extern const struct ctl_capability backups_capability;

#endif
