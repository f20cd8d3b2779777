/*
 * restore - the restore capability of warden-controller, as the core runs
 * it (controller/ctl_cap.h): the steps of the Etcd key that keep an Etcd
 * restorable and restore it: "status-backup" (sbk_reconcile,
 * controller/sbk.h) and "owner-references" (oref_reconcile, controller/oref.h)
 * on a live Etcd, "restore" (rst_reconcile, controller/rst.h) alone while
 * the Etcd is labelled etcd-warden.io/restoring; and the EtcdStatusBackup
 * cache (an event queues etcd/<ns>/<name>).
 *
 * Always enabled. Thread safety: the table is read-only.
 */
#ifndef CONTROLLER_RESTORE_H
#define CONTROLLER_RESTORE_H

#include "controller/ctl_cap.h"

/* The table entry (BORROWED by the core). */
extern const struct ctl_capability restore_capability;

#endif
