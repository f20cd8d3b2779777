/*
 * immutability - the immutability capability of warden-controller, as the
 * core runs it (controller/core/ctl_cap.h): the ExtendFullSnapshotImmutabilityTask
 * key "immtask/<ns>/<name>" (imt_reconcile, controller/immutability/imt.h), the task cache
 * (index CTL_INDEX_ETCD_NAME; an event queues the task's own key, unless it
 * changed its status alone, and etcd/<ns>/<spec.etcdName>) and the cache of
 * the CronJobs the tasks own (label app.kubernetes.io/managed-by=etcd-warden;
 * an event queues its task's key). Its services (ctl_call), for the
 * hibernation: "immutability-task-ensure" and "immutability-task-delete"
 * (imt_task_ensure, imt_task_delete of the Etcd; res untouched).
 *
 * Always enabled. Thread safety: the table is read-only.
 */
#ifndef CONTROLLER_IMMUTABILITY_H
#define CONTROLLER_IMMUTABILITY_H

#include "controller/core/ctl_cap.h"

/* The table entry (BORROWED by the core). */
extern const struct ctl_capability immutability_capability;

#endif
