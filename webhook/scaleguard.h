/*
 * scaleguard - etcd-warden's scale-down guard, the part of the component
 * decisions (webhook/protect.h) that judges what takes an Etcd's members:
 * a pure function of the request, the recognised component (webhook/member.h),
 * its parent Etcd and the lookups.
 *
 * For an Etcd with a backup store (spec.backup.store), an UPDATE of its
 * StatefulSet, or of its scale subresource, that takes spec.replicas from
 * above 0 to 0; a CREATE of its StatefulSet at 0 replicas while pods of that
 * name lie outside its ordinals (lookup.pods, a LIST the API server answers;
 * no answer: 500);
 * or a DELETE of the StatefulSet with replicas above 0 that does not
 * orphan its pods (unless the Etcd carries a deletionTimestamp: its
 * status.lastOperation is anyone's with etcds/status to write), is refused -
 * whoever asks, reconcilers and an Etcd with component protection disabled
 * included - unless a full snapshot of that Etcd Succeeded after its traffic
 * cut (annotation HIBGUARD_ANN_CUT_AT; the snapshot lookup reads a cache)
 * while that cut is current (hibguard_phase_current: the hibernation phase
 * says a sleep is under way; a cut left from an earlier sleep, after which
 * the StatefulSet was scaled up again, counts for nothing), the request is
 * warden-controller's own scale-down of the StatefulSet it checked the
 * snapshot against (HIBGUARD_ANN_CHECKED, phase ScalingDown), or the Etcd
 * carries HIBGUARD_ANN_BREAK_GLASS with an expiry still ahead
 * (hibguard_break_glass; malformed or expired: ignored, and the denial
 * says so): then the request goes on to the usual checks with an admission
 * warning and, once they allow it, its use is recorded (webhook/glassadm.h:
 * one request per value, a later one refused) and a Warning event is emitted
 * on the Etcd (not for a dry run). Without a backup store there is nothing to
 * wait for.
 *
 * A partial scale-down - an UPDATE of the StatefulSet or its scale that
 * lowers spec.replicas to a value above 0 (judged on the new object as the
 * API server made it: a removed spec.replicas is 1), or a CREATE from
 * ordinal 0 with replicas above 0 while pods of its name run past them - is
 * never etcd-druid's (its Etcd CRD: "Replicas can either be increased or be
 * downscaled to 0."): it is refused whoever asks, with a backup store or
 * without, snapshot or not; only break glass lets it through (warning, event).
 *
 * spec.ordinals is never etcd-druid's either: an Etcd's members are
 * <etcd>-0..n-1 on the claims <template>-<etcd>-<n>. A CREATE of an Etcd's
 * StatefulSet with spec.ordinals.start other than 0 (absent is 0), or an
 * UPDATE that changes it (at 0 replicas too: the wake would start the members
 * on other, empty claims), is refused whoever asks, with a backup store or
 * without, protection on or off; only break glass lets one through (warning,
 * no event).
 *
 * Thread safety: reentrant, as struct lookup allows; the context is read-only.
 */
#ifndef WEBHOOK_SCALEGUARD_H
#define WEBHOOK_SCALEGUARD_H

#include <time.h>

#include <cJSON.h>

#include "common/events.h"
#include "common/kerr.h"
#include "webhook/glassadm.h"
#include "webhook/lookup.h"
#include "webhook/member.h"
#include "webhook/review.h"

/* What the guard knows of the caller beyond the request. */
struct scaleguard_ctx {
    int by_controller;          /* the request's user is warden-controller's identity */
    struct ev_recorder *events; /* BORROWED, may be NULL: break-glass scale-downs are evented */
    time_t now;                 /* the time break glass expires against */
};

/*
 * True when req is what the guard judges: a scale-down of a StatefulSet (or
 * its scale) to 0 or to fewer members, a DELETE that takes its pods, a CREATE
 * (which may adopt pods and delete them), a change of its spec.ordinals.start.
 */
int scaleguard_applies(const struct review_req *req);

/* True when req is a CREATE of a StatefulSet with an object. */
int scaleguard_creates(const struct review_req *req);

/*
 * The ordinals [*lo, *hi) of a StatefulSet object: spec.ordinals.start
 * (absent: 0) and spec.replicas (absent: 1). 0 when either is not a number
 * in range (an int32 at least 0).
 */
int scaleguard_ordinals(const cJSON *obj, long *lo, long *hi);

/*
 * Judge req (m: the component as member_decode recognised it, a StatefulSet or
 * its scale; etcd: its parent Etcd, looked up) as above. *decided 1: resp
 * holds the answer (a refusal, or a 500 for a lookup that failed); 0: the
 * usual checks go on (resp may carry the break-glass warning). Admitted on a
 * break glass that counts: the use into *gp, for the caller to record once its
 * decision allows (glassadm_settle), then to emit scaleguard_event. Returns
 * review_*'s result.
 */
enum kerr scaleguard_judge(const struct scaleguard_ctx *g, const struct lookup *lk,
                           const struct review_req *req, const struct member_meta *m,
                           const struct lookup_etcd *etcd, struct glassadm_pending *gp,
                           struct review_resp *resp, int *decided);

/*
 * The Warning event on Etcd etcd (m's parent) for req, a scale-down scaleguard_judge admitted
 * on break glass whose use was recorded (none for a dry run or without g->events): kind
 * GLASSADM_EV_NO_SNAPSHOT, ScaleDownWithoutSnapshot (no full snapshot since the cut);
 * GLASSADM_EV_UNCHECKED, ScaleDownSnapshotUnverified (one after the cut, which counts only
 * once warden-controller checked it against etcd's last revision).
 */
void scaleguard_event(const struct scaleguard_ctx *g, const struct review_req *req,
                      const struct member_meta *m, const struct lookup_etcd *etcd, int kind);

#endif
