/*
 * kw_why - `kubectl warden why ETCD`: why etcd-warden refused or could not do what was
 * asked of an Etcd, from what it recorded in the cluster:
 *   - the Warning events (events.k8s.io/v1) etcd-warden wrote about the Etcd and about the
 *     objects of that Etcd (its EtcdOpsTasks, EtcdBackups, EtcdRestores, immutability
 *     task), newest last, at most --limit (default 5), with the reporting controller;
 *   - what stands now: the hibernation condition of the Etcd, the error of its newest
 *     EtcdBackup, the PrefixConflict condition of its BackupEntries.
 * An admission refusal is answered to the requester (kubectl prints it at once) and is
 * not an event: the webhook's break-glass events are, and so is every step the controller
 * refused. Exit 0 (also when nothing is recorded: it says so), 1 on errors.
 */
#ifndef KW_KW_WHY_H
#define KW_KW_WHY_H

#include <stddef.h>

#include "controller/kubectl-warden/kw.h"

/* args[0] is the Etcd; limit the most events shown. Exit code. */
int kw_why_main(struct kw *k, long limit, const char *const *args, size_t nargs);

#endif
