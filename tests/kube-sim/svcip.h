/*
 * svcip - kube-sim's Service clusterIP allocator, as kube-apiserver's for
 * --service-cluster-ip-range (IPv4 only): a bitmap over the range in which
 * the network and broadcast addresses are never handed out, the first usable
 * address belongs to the "kubernetes" Service, the others go to Services in
 * order (wrapping around, skipping addresses in use), a requested address is
 * honoured when it is in the range and free, and an address is freed when its
 * Service goes. The range is at most a /12 (kube-apiserver's limit for IPv4)
 * and must leave at least one usable address (/30 at the narrowest).
 *
 * Ownership: ksim_svcip_new returns an allocator the caller OWNS
 * (ksim_svcip_free). Thread safety: every function may be called from any
 * thread (one mutex).
 */
#ifndef KSIM_SVCIP_H
#define KSIM_SVCIP_H

#include <stddef.h>

#include <cJSON.h>

#include "common/kerr.h"
#include "tests/kube-sim/apierr.h"

#define KSIM_SVCIP_DEFAULT_RANGE "10.96.0.0/12"
#define KSIM_SVCIP_LEN           16 /* "255.255.255.255" and the NUL */

struct ksim_svcip;

/*
 * An allocator for cidr ("A.B.C.D/N"; the address is masked to its network)
 * with the first usable address already taken (the kubernetes Service's).
 * KERR_INVAL with a message naming the problem; *out OWNS it on KERR_OK.
 */
enum kerr ksim_svcip_new(const char *cidr, struct ksim_svcip **out, struct kerr_info *err);

/* NULL is a no-op. */
void ksim_svcip_free(struct ksim_svcip *a);

/* The range, normalised ("10.96.0.0/12"); BORROWED for the allocator's life. */
const char *ksim_svcip_range(const struct ksim_svcip *a);

/* The first usable address (the kubernetes Service's) into out. */
void ksim_svcip_first(const struct ksim_svcip *a, char out[KSIM_SVCIP_LEN]);

/* The next free address into out. KERR_TOOBIG when the range is full. */
enum kerr ksim_svcip_alloc(struct ksim_svcip *a, char out[KSIM_SVCIP_LEN], struct kerr_info *err);

/*
 * Take the requested address ip. KERR_INVAL "provided IP is not in the
 * valid range. The range of valid IPs is R" (also for the network and
 * broadcast addresses and for text that is not an IPv4 address), KERR_EXISTS
 * "provided IP is already allocated".
 */
enum kerr ksim_svcip_reserve(struct ksim_svcip *a, const char *ip, struct kerr_info *err);

/* Give ip back (an address outside the range, or free, is ignored). ip may be NULL. */
void ksim_svcip_release(struct ksim_svcip *a, const char *ip);

/* 1 when ip is taken, else 0. */
int ksim_svcip_taken(struct ksim_svcip *a, const char *ip);

/*
 * Give obj (a Service being created: old NULL; or updated from old) its
 * spec.clusterIP and spec.clusterIPs as kube-apiserver does: "None" stays
 * headless, ExternalName gets none, a requested address is reserved, an empty
 * one is allocated (on update: the old one is kept), and a changed address is
 * refused ("may not change once set"). 0, or the HTTP code with e set (422
 * for an address out of range or taken, 500 for a full range). *taken gets
 * the address this call reserved ("" if none): the caller releases it when
 * the write does not happen.
 */
int ksim_svcip_assign(struct ksim_svcip *a, const cJSON *old, cJSON *obj,
                      char taken[KSIM_SVCIP_LEN], struct ksim_apierr *e);

/* Give the clusterIP of Service obj (BORROWED) back; NULL or headless: nothing. */
void ksim_svcip_release_service(struct ksim_svcip *a, const cJSON *obj);

#endif
