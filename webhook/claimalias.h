/*
 * claimalias - whether a PVC whose name reads as "<template>-<S>-<n>" for the StatefulSet S of
 * an Etcd (named as its Etcd) is proven another application's claim, from facts a tenant
 * cannot write for a member's claim.
 *
 * A PVC name has no separator of its own: "data-redis-cache-0" is the claim "data" of member 0
 * of an application's StatefulSet redis-cache, and it reads as "<data-redis>-<cache>-0" too, a
 * claim of Etcd cache with template "data-redis". It is proven not S's when
 *
 * (a) StatefulSet S, as the API server has it now, was created strictly before the claim (the
 *     metadata.creationTimestamp of both, which the API server sets and nobody changes; a
 *     claim being created is younger than the S the API server answers with during its
 *     admission), and none of S's spec.volumeClaimTemplates (immutable) is named as the
 *     claim's template: the StatefulSet controller gives S's members only the claims
 *     "<its template>-<S>-<n>", so no member of S took it, and no earlier StatefulSet S did
 *     either (each was gone before the one there now was created, before the claim was); or
 * (b) the stored claim carries an owner reference to a StatefulSet (apps) not named S, as the
 *     StatefulSet controller writes for persistentVolumeClaimRetentionPolicy: a member-named
 *     claim gets such an owner only where (a) holds (pvcguard_owners, decided on the old
 *     object for an UPDATE), and S is refused creation or scale-up onto a claim that has one
 *     (pvcguard_planted), so S's members never start on it.
 *
 * Nothing else proves it: a template named as S (etcd-druid's default, the Etcd's name: not
 * looked into, no API call), no StatefulSet S, a claim created in the same second as S or without
 * a creationTimestamp, S's claim template, labels (written by whoever creates the claim: a
 * claim planted with an application's labels before a member takes it keeps them), a
 * StatefulSet of the other reading (anyone can create one with a selector that matches) -
 * the claim stays S's, as before (fail closed).
 *
 * Thread safety: reentrant, as struct lookup allows.
 */
#ifndef WEBHOOK_CLAIMALIAS_H
#define WEBHOOK_CLAIMALIAS_H

#include <stddef.h>

#include <cJSON.h>

#include "common/kerr.h"
#include "webhook/lookup.h"
#include "webhook/review.h"

/* The longest reason claimalias_proven writes, with its NUL. */
#define CLAIMALIAS_WHY_MAX 640

/*
 * Pure: 1 when the claim pvc (the stored object; creating 1: one being created, pvc not read;
 * a stored one that is not an object proves nothing) named name, read as
 * "<template>-<S>-<n>" with a template of its first tlen bytes, is proven not a member claim of
 * StatefulSet sts_name: by (b) from pvc alone, or by (a) against sts (the StatefulSet as the API
 * server has it, BORROWED; NULL: there is none, nothing proven). Why into why (size bytes,
 * "" when 0). All pointers BORROWED.
 */
int claimalias_proven(const cJSON *pvc, int creating, const char *name, size_t tlen,
                      const char *sts_name, const cJSON *sts, char *why, size_t size);

/*
 * The same with StatefulSet ns/sts_name read from the API server (lk->sts_fresh) when (b) does
 * not prove it already: *other 1 when proven (why as above), 0 when not (no StatefulSet: 0). A
 * lookup that fails, or none configured: its code, err set (the caller fails closed: a 500).
 */
enum kerr claimalias_other(const struct lookup *lk, const char *ns, const cJSON *pvc, int creating,
                           const char *name, size_t tlen, const char *sts_name, int *other,
                           char *why, size_t size, struct kerr_info *err);

/*
 * claimalias_other for the review of claim ns/name (verb: what the request would do to it, for
 * the message, e.g. "deleted"): a lookup that fails is a 500 in resp, *decided 1, its result
 * returned (review_errored's); else *other as claimalias_other, *decided 0.
 */
enum kerr claimalias_review(const struct lookup *lk, const char *ns, const cJSON *pvc, int creating,
                            const char *name, size_t tlen, const char *sts_name, const char *verb,
                            int *other, struct review_resp *resp, int *decided);

#endif
