/*
 * entries - the backup-entries capability of warden-controller, as the core
 * runs it (controller/core/ctl_cap.h), with --backup-entries only: the key
 * "bucket//<name>" of a BackupBucket and its BackupEntries (bke_reconcile,
 * controller/entries/bke.h), the caches of BackupBuckets and BackupEntries
 * (cluster-scoped, never restricted to --watch-namespace; the entries
 * indexed by BKE_INDEX_BUCKET), and their events: a bucket queues its own
 * key, an entry its bucket's, and an Etcd every cached bucket's (an Etcd
 * may join or leave any bucket). It feeds
 * warden_backup_entry_prefix_conflicts (bke_conflicts).
 *
 * Thread safety: the table is read-only.
 */
#ifndef CONTROLLER_ENTRIES_H
#define CONTROLLER_ENTRIES_H

#include "controller/core/ctl_cap.h"

/* The table entry (BORROWED by the core). */
extern const struct ctl_capability entries_capability;

#endif
