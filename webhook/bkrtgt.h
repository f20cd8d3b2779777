/*
 * bkrtgt - an EtcdRestore's target store at admission (webhook/bkadm): its provider and
 * endpoint resolved by common/rtarget (the controller's rule) from the restore, the cached
 * source Etcd (webhook/prefix's projection: its claim's store key) and the cached source
 * EtcdBackup (its destination).
 *
 * Ownership: arguments BORROWED; struct bkrtgt_src OWNS what a resolved struct rtarget points
 * into (bkrtgt_release frees it). Thread safety: reentrant (the stores are).
 */
#ifndef WEBHOOK_BKRTGT_H
#define WEBHOOK_BKRTGT_H

#include <cJSON.h>

#include "common/rtarget.h"
#include "common/store.h"

/* What an EtcdRestore's target store is resolved from (common/rtarget), as the caches know it. */
struct bkrtgt_src {
    cJSON *etcd_store; /* OWNS: {provider, endpointOverride} of the source Etcd's claim */
    cJSON *backup;     /* OWNS: the cached source EtcdBackup */
    int etcd_known;
};

void bkrtgt_release(struct bkrtgt_src *r);

/*
 * An EtcdRestore's target provider and endpoint (common/rtarget: the controller's rule) into
 * *t, from the caches etcds and backups (projected by webhook/prefix; either may be NULL): the
 * source Etcd (spec.source.etcdName, else the source EtcdBackup's spec.etcdName) and the
 * source EtcdBackup's spec.destination. r OWNS what t points into: release it after.
 */
enum rtarget_from bkrtgt_resolve(struct store *etcds, struct store *backups, const cJSON *obj,
                                 struct bkrtgt_src *r, struct rtarget *t);

/* 1 when the EtcdRestores obj and old resolve to one target store and prefix (an UPDATE
 * claiming nothing new: neither spec.target.store nor any input of its store changed). */
int bkrtgt_same(struct store *etcds, struct store *backups, const cJSON *obj, const cJSON *old);

#endif
