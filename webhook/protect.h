/*
 * protect - etcd-druid's component protection (the /webhooks/etcdcomponents
 * decision), as a pure function of the request, the parent lookups and the
 * configuration.
 *
 * The procedure, its order of checks, its messages (verbatim, spacing
 * included), codes, reasons and warnings are those of etcd-druid's
 * etcdcomponentprotection handler:
 *   1. CREATE / CONNECT are allowed.
 *   2. The object's metadata is decoded by kind (the component kinds; a
 *      statefulsets/scale request by its StatefulSet; a PVC by the one
 *      StatefulSet whose labels it matches); 400 when the object cannot be
 *      decoded, 500 when a parent lookup fails.
 *   3. Unsupported kinds, 4. objects not managed by etcd-druid and 5.
 *      objects without a (live) parent Etcd are allowed, the last with a
 *      warning.
 *   6-7. The Etcd's protection and runtime-component annotations.
 *   8. DELETE while the Etcd is being deleted: reconcilers and exempt
 *      service accounts only.
 *   9. Everything else: reconcilers; an Etcd member renewing its Lease;
 *      exempt service accounts unless the Etcd is being reconciled (then
 *      only for objects already being deleted); else 403.
 * The trusted reconciler is a list (etcd-druid's and warden-controller's
 * service accounts) instead of one name.
 *
 * Deliberate differences (docs/protection.md, "Deliberate differences from etcd-druid's
 * component webhook"):
 *
 * An UPDATE of a component is decided from the OLD object when that one is
 * a component of an Etcd (managed, with a part-of label): a request cannot
 * rewrite the labels that decide whether it is checked. Otherwise the new
 * object decides, as in etcd-druid.
 *
 * Which objects are an Etcd's (labels, name, owner; an UPDATE judged on
 * the old object) is webhook/member.h's to say.
 *
 * Before steps 6-9, etcd-warden's scale-down guard (webhook/scaleguard.h:
 * scale-downs to 0 and partial ones, DELETEs that take the pods, CREATEs that
 * adopt them, ordinal moves; whoever asks) and the member-volume guard
 * (webhook/pvcguard.h: a running member's PVC, a member-named PVC's owners,
 * a StatefulSet taking a planted claim).
 *
 * Then the label rule: an UPDATE that changes the managed-by or part-of
 * label of a component of a live Etcd is refused unless a reconciler asks
 * (component protection disabled or not; not for a runtime component of an
 * Etcd with runtime component creation disabled).
 *
 * Thread safety: protect_decide is reentrant; the config is read-only.
 */
#ifndef WEBHOOK_PROTECT_H
#define WEBHOOK_PROTECT_H

#include <stddef.h>
#include <time.h>

#include "common/events.h"
#include "common/kerr.h"
#include "webhook/lookup.h"
#include "webhook/review.h"

/* Who is trusted. Arrays and strings are BORROWED for the life of the config's use. */
struct protect_config {
    const char *const *reconcilers; /* full usernames "system:serviceaccount:<ns>:<name>" */
    size_t n_reconcilers;
    const char *const *exempt; /* full usernames, exact match */
    size_t n_exempt;
    struct ev_recorder *events; /* BORROWED, may be NULL: break-glass scale-downs are evented */
    /*
     * warden-controller's identities (full usernames): the only ones that may
     * write the state annotations of an Etcd (webhook/toggles.h). BORROWED.
     */
    const char *const *controllers;
    size_t n_controllers;
    time_t (*clock)(void); /* the time break glass expires against; NULL: time() */
};

/*
 * Decide req (BORROWED) into resp (initialised by the caller; the verdict,
 * message and warnings are set). Lookup failures and undecodable objects
 * are answers (500 / 400 in resp), not errors: the return value is
 * KERR_OK, or KERR_NOMEM / KERR_TOOBIG when the answer could not be built.
 */
enum kerr protect_decide(const struct protect_config *cfg, const struct lookup *lk,
                         const struct review_req *req, struct review_resp *resp,
                         struct kerr_info *err);

/*
 * The scale-down guard alone (/webhooks/scaleguard, registered where
 * etcd-druid's own component webhook protects the components): a scale-down
 * of a managed StatefulSet (or its scale) to 0, a DELETE that takes its
 * pods, and a non-reconciler's change of its managed-by or part-of label
 * are judged as above, refused or allowed with the same messages;
 * everything else is allowed without a lookup, so component protection is
 * never applied twice. Returns as protect_decide.
 */
enum kerr protect_guard_decide(const struct protect_config *cfg, const struct lookup *lk,
                               const struct review_req *req, struct review_resp *resp,
                               struct kerr_info *err);

/* True when user is in list (exact match). */
int protect_user_in(const char *user, const char *const *list, size_t n);

#endif
