/*
 * rtrec - the target store an EtcdRestore was admitted with, and the one rule by which
 * warden-controller's copy keeps to it (docs/backups-and-restores.md, "The target admitted").
 *
 * A target without its own provider (and without spec.etcdTemplate) takes its store from the
 * live source Etcd (common/rtarget, rule 3), which can change between admission and the
 * controller's planning: the copy would then write a store nobody admitted (another
 * namespace's part of a bucket, a store its owner never authorised). warden-webhook records
 * every admitted EtcdRestore's target in the claim Lease of the store it resolved
 * (common/pclaim, PCLAIM_KIND_RESTORE: the restore's uid, the canonical prefix, the provider
 * and endpoint resolved), in etcd-warden's namespace, which only etcd-warden writes. Before
 * its copy, warden-controller finds that record (rtrec_find: among every claim Lease) and
 * resolves the target again by common/rtarget; rtrec_judge says:
 *
 *   RTREC_SAME  the record's store (the Lease it is in: one per store key, common/bstore) and
 *               prefix are the live resolution's: the copy writes what was admitted;
 *   RTREC_MOVED they differ, or the record is not of a store it can be compared with: the
 *               restore is refused (Failed, a Warning event, nothing written);
 *   RTREC_NONE  no record of this restore (its uid) in any claim Lease: no warden-webhook
 *               recording claims admitted it (the backups webhook not installed, or without
 *               --backup-entries), so there is no admitted target to keep to; the live
 *               resolution is used, as before any admission record existed.
 *
 * A record is this restore's when its kind, namespace and name match and its uid is the
 * restore's (a record without a uid, from an earlier release, by name alone).
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant (the client is).
 */
#ifndef COMMON_RTREC_H
#define COMMON_RTREC_H

#include <stddef.h>

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"
#include "common/rtarget.h"

enum rtrec_verdict {
    RTREC_NONE = 0, /* not recorded: nothing admitted to keep to */
    RTREC_SAME,     /* the live target is the one admitted */
    RTREC_MOVED,    /* it is not: refuse */
};

/* The record of restore (an EtcdRestore as stored) in rec (a Lease's records), or NULL. Pure. */
const cJSON *rtrec_find(const cJSON *rec, const cJSON *restore);

/*
 * Judge the record (found in the Lease named lease) against the live target: provider and
 * endpoint live, container and prefix the restore's spec.target.store's. RTREC_SAME or
 * RTREC_MOVED, the reason in why (n bytes) when moved. Pure.
 */
enum rtrec_verdict rtrec_judge(const char *lease, const cJSON *record, const struct rtarget *live,
                               const char *container, const char *prefix, char *why, size_t n);

/*
 * rtrec_find over every claim Lease of lease_ns (one LIST), then rtrec_judge into *v (why set
 * when RTREC_MOVED). Errors of the LIST are returned (the caller must not copy).
 */
enum kerr rtrec_check(struct k8s_client *k, const char *lease_ns, const cJSON *restore,
                      const struct rtarget *live, enum rtrec_verdict *v, char *why, size_t n,
                      struct kerr_info *err);

#endif
