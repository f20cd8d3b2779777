/*
 * immutability - the immutability capability of warden-controller, as the
 * core runs it (controller/ctl_cap.h): the ExtendFullSnapshotImmutabilityTask
 * key "immtask/<ns>/<name>" (imt_reconcile, controller/imt.h), the task cache
 * (index CTL_INDEX_ETCD_NAME; an event queues the task's own key, unless it
 * changed its status alone, and etcd/<ns>/<spec.etcdName>) and the cache of
 * the CronJobs the tasks own (label app.kubernetes.io/managed-by=etcd-warden;
 * an event queues its task's key).
 *
 * Always enabled. Thread safety: the table is read-only.
 */
#ifndef CONTROLLER_IMMUTABILITY_H
#define CONTROLLER_IMMUTABILITY_H

#include "controller/ctl_cap.h"

/* The table entry (BORROWED by the core). */
extern const struct ctl_capability immutability_capability;

#endif
