/*
 * hibernation - the hibernation capability of warden-controller, as the
 * core runs it (controller/core/ctl_cap.h): the step "hibernation" of every live
 * Etcd (hib_reconcile, controller/hibernation/hib.h), the EtcdOpsTask executor
 * ("opstask/<ns>/<name>", otask_reconcile, controller/hibernation/otask.h; dispatched
 * with --ops-task-executor=true only, on a lane of its own with
 * --ops-task-workers workers), the EtcdOpsTask cache (index
 * CTL_INDEX_ETCD_NAME; an event queues the task's own key, unless it changed
 * its status alone, and etcd/<ns>/<spec.etcdName>), and the index "phase"
 * of the Etcd cache behind warden_hibernation_phase_etcds.
 *
 * Always enabled. Thread safety: the table is read-only.
 */
#ifndef CONTROLLER_HIBERNATION_H
#define CONTROLLER_HIBERNATION_H

#include "controller/core/ctl_cap.h"

/* Name of the index of the Etcd cache: the etcd-warden.io/hibernation-phase, "none" without. */
#define HIBERNATION_INDEX_PHASE "phase"

/* The table entry (BORROWED by the core). */
extern const struct ctl_capability hibernation_capability;

#endif
