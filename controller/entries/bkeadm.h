/*
 * bkeadm - what warden-webhook recorded on a BackupEntry when it admitted a request of its Etcd
 * (webhook/pgone: etcdDeleteAdmittedAt, etcdStoreChangedAt), checked against the Etcd read from
 * the API server. The webhook writes before the API server stores the request, and another
 * webhook may hold it or refuse it after: an Etcd read alive, or with its earlier store, shows
 * the request refused only BKEALIVE_SETTLE_S after the record (controller/entries/bkealive.h).
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef CONTROLLER_BKEADM_H
#define CONTROLLER_BKEADM_H

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"
#include "controller/entries/bkealive.h"

/*
 * 1 in *stale when entry's etcdDeleteAdmittedAt no longer tells when etcd (cached) went: the
 * entry is taken by another Etcd, or a GET sent BKEALIVE_SETTLE_S after that time reads the same
 * Etcd alive and not being deleted (the DELETE the webhook admitted was refused after it). Errors
 * of the GET but KERR_NOTFOUND are returned.
 */
enum kerr bkeadm_admitted_stale(struct k8s_client *k, const cJSON *entry, const cJSON *etcd,
                                int *stale, struct kerr_info *err);

/*
 * What entry's etcdStoreChangedAt tells of etcd (cached), its live Etcd (bkealive_change), into
 * *c: a change settled unseen is read from the API server, a GET sent now: the same generation
 * there shows it refused (BKEALIVE_CHANGE_SETTLED), a later one stored, the Etcd gone or another
 * pending. Errors of the GET but KERR_NOTFOUND are returned.
 */
enum kerr bkeadm_store_change(struct k8s_client *k, const cJSON *entry, const cJSON *etcd,
                              enum bkealive_change *c, struct kerr_info *err);

#endif
