/*
 * restore - the restore capability of warden-controller, as the core runs
 * it (controller/core/ctl_cap.h): the steps of the Etcd key that keep an Etcd
 * restorable and restore it: "status-backup" (sbk_reconcile,
 * controller/restore/sbk.h) and "owner-references" (orefpass_reconcile,
 * controller/restore/orefpass.h) on a live Etcd, "restore" (rst_reconcile,
 * controller/restore/rst.h) alone while the Etcd is labelled etcd-warden.io/restoring; and the
 * EtcdStatusBackup cache (an event queues etcd/<ns>/<name>). Its service (ctl_call), for the
 * hibernation: "restore-lift-suspension", which lifts the suspension a
 * restore ended by hand left behind (rst_ended_by_hand, rst_run) and then
 * sets res->requeue_ms to 1 (0: not such an Etcd, nothing done).
 *
 * Always enabled. Thread safety: the table is read-only.
 */
#ifndef CONTROLLER_RESTORE_H
#define CONTROLLER_RESTORE_H

#include "controller/core/ctl_cap.h"

/* The table entry (BORROWED by the core). */
extern const struct ctl_capability restore_capability;

#endif
