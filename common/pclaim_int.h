/*
 * pclaim_int - what common/pclaim.c (recording claims) and pclaim_read.c (the read-only
 * queries: pclaim_restores, pclaim_restore_targets, pclaim_admitted) share: the resources and
 * what one record of a claim Lease says (pclaim.h describes the records).
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant (the client is).
 */
#ifndef COMMON_PCLAIM_INT_H
#define COMMON_PCLAIM_INT_H

#include <time.h>

#include <cJSON.h>

#include "common/bstore.h"
#include "common/k8s.h"
#include "common/pclaim.h"

extern const struct k8s_resource PCLAIM_RES_LEASE;
extern const struct k8s_resource PCLAIM_RES_RESTORE;

/* The string field k of record o ("" when absent or not a string). */
const char *pclaim_rec_str(const cJSON *o, const char *k);

/* 1 when r is an EtcdRestore's target record (PCLAIM_KIND_RESTORE). */
int pclaim_rec_is_restore(const cJSON *r);

/* 1 when r is an EtcdRestore's source record (PCLAIM_KIND_SOURCE). */
int pclaim_rec_is_source(const cJSON *r);

/* 1 when record r still counts at now: recorded within PCLAIM_TTL_S; an EtcdRestore's target
 * whatever its age (dropped once its restore is gone, Completed, or Failed before its copy). */
int pclaim_rec_live(const cJSON *r, time_t now);

/* 1 when r is c's own record (the same kind, namespace and name). */
int pclaim_rec_same_owner(const cJSON *r, const struct pclaim *c);

/* The owner of record r described into *o (what and ns). */
void pclaim_rec_describe(const cJSON *r, struct pclaim_other *o);

/*
 * 1 when the EtcdRestore of record r is stored and still claims its target (common/rtarget's
 * rtarget_claims: in flight, or Failed after its copy started), or that cannot be told (kept:
 * the safe side); 0 when it is stored and claims nothing (Completed, or Failed before any
 * copy); -1 when it is not stored (or another restore of its name is: the record has a uid).
 */
int pclaim_rec_restore_state(struct k8s_client *k, const cJSON *r);

/* pclaim_rec_restore_state(k, r) == 1. */
int pclaim_rec_restore_claims(struct k8s_client *k, const cJSON *r);

/*
 * The names of the Leases of store into names: its own first, then, for an object store, those
 * earlier releases named after the family keys of its container (bstore_legacy_keys), which a
 * webhook of the release before may still be writing during a rolling upgrade (read, never
 * written). How many; -1 when the container does not fit.
 */
int pclaim_lease_names(const char *store, char names[1 + BSTORE_LEGACY_N][64]);

#endif
