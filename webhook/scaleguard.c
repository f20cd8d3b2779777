/* scaleguard - the scale-down guard's decision; see scaleguard.h. */
#include "webhook/scaleguard.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/hibguard.h"
#include "common/kjson.h"
#include "common/ktime.h"

/* True when req takes a StatefulSet (or its scale) from above 0 replicas to 0. */
static int scales_to_zero(const struct review_req *req)
{
    int scale = member_is_kind(req, "autoscaling", "Scale");

    if (req->op != REVIEW_OP_UPDATE || (!scale && !member_is_kind(req, "apps", "StatefulSet")))
        return 0;
    return member_replicas_count(req->old_object, scale, LONG_MAX) > 0 &&
           member_replicas_count(req->object, scale, LONG_MAX) == 0;
}

/*
 * True when req lowers spec.replicas of a StatefulSet (or its scale) to a
 * value above 0: etcd-druid never does (its Etcd CRD lets spec.replicas grow
 * or go to 0 only), and the members above the new count go with their PVCs
 * (whenScaled: Delete) while the rest have no quorum. The new object is what
 * the API server made of the request: a patch that removes spec.replicas, or
 * a $retainKeys without it, leaves the default, 1.
 */
static int scales_partly(const struct review_req *req)
{
    int scale = member_is_kind(req, "autoscaling", "Scale");
    long from, to;

    if (req->op != REVIEW_OP_UPDATE || (!scale && !member_is_kind(req, "apps", "StatefulSet")))
        return 0;
    from = member_replicas_count(req->old_object, scale, LONG_MAX);
    to = member_replicas_count(req->object, scale, LONG_MAX);
    return to > 0 && to < from;
}

/*
 * True when req deletes a StatefulSet that has pods (spec.replicas above
 * 0) and its pods with it: a DELETE that orphans them (etcd-druid's
 * re-creation of a StatefulSet whose immutable fields changed) leaves the
 * pods running and is not guarded.
 */
static int deletes_pods(const struct review_req *req)
{
    return req->op == REVIEW_OP_DELETE && member_is_kind(req, "apps", "StatefulSet") &&
           !req->orphan && cJSON_IsObject(req->old_object) &&
           member_replicas_count(req->old_object, 0, LONG_MAX) > 0;
}

/* Ordinals past this are no StatefulSet's (kube-apiserver keeps both fields in an int32). */
#define ORDINAL_MAX 2147483647L

/* spec.ordinals.start of a StatefulSet (absent: 0); -1 when not a number in range. */
static long start_of(const cJSON *obj)
{
    int64_t s;
    enum kerr rc = kjson_get_int64(obj, "spec.ordinals.start", &s);

    if (rc == KERR_NOTFOUND)
        return 0;
    return rc == KERR_OK && s >= 0 && s <= ORDINAL_MAX ? (long)s : -1;
}

/* The ordinals [lo, hi) of a StatefulSet; 0 when its fields are not numbers in range. */
int scaleguard_ordinals(const cJSON *obj, long *lo, long *hi)
{
    long r = member_replicas_count(obj, 0, LONG_MAX);

    *lo = start_of(obj);
    *hi = *lo + r;
    return *lo >= 0 && r >= 0 && r <= ORDINAL_MAX;
}

/*
 * True when req creates a StatefulSet, which may adopt pods and delete them:
 * any outside its ordinals (an orphaning DELETE, then a CREATE at 1 replica,
 * or from ordinal 3, adopts pods 0..2 and deletes those outside). Whether
 * pods are there to lose is the pods lookup's to say.
 */
int scaleguard_creates(const struct review_req *req)
{
    return req->op == REVIEW_OP_CREATE && member_is_kind(req, "apps", "StatefulSet") &&
           cJSON_IsObject(req->object);
}

/*
 * True when req sets spec.ordinals of a StatefulSet: a CREATE whose
 * spec.ordinals.start is not 0 (absent is 0), or an UPDATE that changes it.
 * etcd-druid never sets spec.ordinals: an Etcd's members are <etcd>-0..n-1 on
 * the claims <template>-<etcd>-<n>, and a StatefulSet from another ordinal
 * starts its members on other, empty claims (or deletes the running ones)
 * while the claims that hold the data are read by no member. A StatefulSet at
 * 0 replicas, or gone, has no member such a move takes out: it must be judged
 * before its members run.
 */
static int sets_ordinals(const struct review_req *req)
{
    if (!member_is_kind(req, "apps", "StatefulSet") || !cJSON_IsObject(req->object))
        return 0;
    if (req->op == REVIEW_OP_CREATE)
        return start_of(req->object) != 0;
    return req->op == REVIEW_OP_UPDATE && cJSON_IsObject(req->old_object) &&
           start_of(req->old_object) != start_of(req->object);
}

/*
 * What the scale-down guard judges: a scale-down to 0 or to fewer members, a
 * DELETE that takes the pods, a CREATE that may adopt and delete them, a
 * StatefulSet's spec.ordinals set.
 */
int scaleguard_applies(const struct review_req *req)
{
    return scales_to_zero(req) || scales_partly(req) || deletes_pods(req) ||
           scaleguard_creates(req) || sets_ordinals(req);
}

/*
 * True when req is a partial scale-down: spec.replicas lowered to a value
 * above 0, or a CREATE from ordinal 0 with replicas above 0 (which takes
 * members only when pods lie past its ordinals: create_takes says so).
 */
static int partial(const struct review_req *req)
{
    long lo, hi;

    if (req->op == REVIEW_OP_CREATE)
        return scaleguard_creates(req) && scaleguard_ordinals(req->object, &lo, &hi) && lo == 0 &&
               hi > 0;
    return scales_partly(req);
}

/*
 * A guarded CREATE takes members only where pods of the StatefulSet's name
 * lie outside its ordinals: the API server is asked (pods are facts nobody
 * forges in an Etcd's status). *lost 0: none are, nothing to guard; a failed
 * or impossible lookup is a 500 in resp (*decided 1), never an admission.
 */
static enum kerr create_takes(const struct lookup *lk, const struct review_req *req,
                              const struct member_meta *m, char *what, size_t size,
                              struct review_resp *resp, int *decided)
{
    long lo = 0, hi = 0;
    size_t lost = 0;
    int64_t first = -1;
    struct kerr_info e;

    kerr_clear(&e);
    if (!scaleguard_ordinals(req->object, &lo, &hi))
        kerr_set(&e, KERR_INVAL, "its spec.replicas or spec.ordinals.start is not a valid number");
    else if (!lk->pods)
        kerr_set(&e, KERR_UNSUPPORTED, "no pod lookup is configured");
    else
        lk->pods(lk->ctx, m->ns, m->name, lo, hi, &lost, &first, &e);
    if (e.code != KERR_OK) {
        *decided = 1;
        return review_errored(resp, 500,
                              "creating StatefulSet %s/%s of Etcd %s: its pods cannot be told "
                              "(%s), and a StatefulSet created %s adopts and deletes any outside "
                              "its ordinals: not admitted unchecked",
                              m->ns, m->name, m->part_of, e.msg,
                              hi == lo  ? "at 0 replicas"
                              : lo != 0 ? "from a later ordinal"
                                        : "with fewer replicas than its members");
    }
    if (lost && hi == lo)
        snprintf(what, size, "creating StatefulSet %s/%s with 0 replicas", m->ns, m->name);
    else if (lost)
        snprintf(what, size,
                 "creating StatefulSet %s/%s with ordinals [%ld, %ld) while its pod %s-%lld "
                 "runs (%zu outside them)",
                 m->ns, m->name, lo, hi, m->name, (long long)first, lost);
    return KERR_OK;
}

/* What req does, for the guard's refusal: "scaling StatefulSet ns/name to 0 replicas". */
static void guarded_what(const struct review_req *req, const struct member_meta *m, char *what,
                         size_t size)
{
    long hi0 = 0, hi1 = 0;
    int scale;

    if (req->op == REVIEW_OP_DELETE)
        snprintf(what, size, "deleting StatefulSet %s/%s", m->ns, m->name);
    else if (scales_partly(req)) {
        scale = member_is_kind(req, "autoscaling", "Scale");
        hi0 = member_replicas_count(req->old_object, scale, LONG_MAX);
        hi1 = member_replicas_count(req->object, scale, LONG_MAX);
        if (hi1 == hi0 - 1)
            snprintf(what, size,
                     "scaling StatefulSet %s/%s from %ld to %ld replicas (its member %ld is "
                     "deleted)",
                     m->ns, m->name, hi0, hi1, hi1);
        else
            snprintf(what, size,
                     "scaling StatefulSet %s/%s from %ld to %ld replicas (its members %ld..%ld "
                     "are deleted)",
                     m->ns, m->name, hi0, hi1, hi1, hi0 - 1);
    } else
        snprintf(what, size, "scaling StatefulSet %s/%s to 0 replicas", m->ns, m->name);
}

void scaleguard_event(const struct scaleguard_ctx *g, const struct review_req *req,
                      const struct member_meta *m, const struct lookup_etcd *etcd, int kind)
{
    struct ev_ref ref = { "druid.gardener.cloud/v1alpha1", "Etcd", m->ns, m->part_of, etcd->uid };
    int unchecked = kind == GLASSADM_EV_UNCHECKED;

    if (!g->events || req->dry_run || kind == GLASSADM_EV_NONE)
        return;
    ev_emitf(g->events, &ref, EV_WARNING,
             unchecked ? "ScaleDownSnapshotUnverified" : "ScaleDownWithoutSnapshot", "BreakGlass",
             "%s %s StatefulSet %s%s %s, allowed by annotation %s: %s", req->username,
             req->op == REVIEW_OP_DELETE ? "deleted" : "scaled", m->name,
             req->op == REVIEW_OP_DELETE ? ""
             : partial(req)              ? " down to fewer members"
                                         : " to 0",
             unchecked ? "with a full snapshot taken after the traffic cut but not checked "
                         "against etcd's last revision (writes after it may be missing)"
                       : "without a snapshot of this cycle",
             HIBGUARD_ANN_BREAK_GLASS, etcd->break_glass_reason);
}

/*
 * The event due for a scale-down to 0 admitted on break glass because no snapshot counts
 * (missing: why; "" when none of this cycle was found): GLASSADM_EV_UNCHECKED when one was
 * taken after a current cut but did not count for want of the check, else
 * GLASSADM_EV_NO_SNAPSHOT (also when the tasks cannot be read: nothing is claimed).
 */
static int glass_event_kind(const struct lookup *lk, const struct member_meta *m,
                            const struct lookup_etcd *etcd, const char *missing)
{
    struct kerr_info e;
    int found = 0;

    if (!missing[0] || !lk->snapshot || etcd->cut_rc != KERR_OK || !etcd->cut_current)
        return GLASSADM_EV_NO_SNAPSHOT;
    kerr_clear(&e);
    if (lk->snapshot(lk->ctx, m->ns, m->part_of, etcd->cut_at, &found, &e) != KERR_OK || !found)
        return GLASSADM_EV_NO_SNAPSHOT;
    return GLASSADM_EV_UNCHECKED;
}

/* Why the break glass on etcd does not count ("" when it does), into why. */
static void break_glass_problem(const struct scaleguard_ctx *g, const struct lookup_etcd *etcd,
                                char *why, size_t size)
{
    char when[KTIME_LEN + 1] = "";

    why[0] = '\0';
    if (!etcd->break_glass)
        return;
    if (etcd->break_glass_rc != KERR_OK)
        snprintf(why, size,
                 "; annotation %s is ignored: its value is not \"<RFC 3339 expiry> <reason>\"",
                 HIBGUARD_ANN_BREAK_GLASS);
    else if (etcd->break_glass_expires <= g->now) {
        if (ktime_format(etcd->break_glass_expires, when) != KERR_OK)
            snprintf(when, sizeof(when), "?");
        snprintf(why, size, "; annotation %s expired at %s", HIBGUARD_ANN_BREAK_GLASS, when);
    }
}

/* Why no snapshot counts for this request, into missing. */
static void missing_snapshot(const struct lookup_etcd *etcd, char *missing, size_t size)
{
    char cut[KTIME_LEN + 1] = "";

    if (etcd->cut_rc == KERR_NOTFOUND)
        snprintf(missing, size, "its traffic has not been cut yet (no annotation %s)",
                 HIBGUARD_ANN_CUT_AT);
    else if (etcd->cut_rc != KERR_OK)
        snprintf(missing, size, "annotation %s is not an RFC 3339 time", HIBGUARD_ANN_CUT_AT);
    else if (ktime_format(etcd->cut_at, cut) != KERR_OK)
        snprintf(missing, size,
                 "no full snapshot EtcdOpsTask of it has Succeeded since its traffic cut");
    else if (!etcd->cut_current)
        snprintf(missing, size,
                 "its traffic cut at %s belongs to an earlier sleep (hibernation phase \"%s\": "
                 "the StatefulSet was scaled up after it), and no hibernation is under way",
                 cut, etcd->phase);
    else
        snprintf(missing, size,
                 "no full snapshot EtcdOpsTask of it has Succeeded since its traffic cut at %s",
                 cut);
}

/*
 * Whether a snapshot may count for req at all ("" into why) or not (why says
 * so). A final snapshot holds the last write only as long as etcd has not
 * moved on since: warden-controller checks that with the backup sidecar
 * before it writes hibernation phase ScalingDown, stamps the StatefulSet it
 * checked against (HIBGUARD_ANN_CHECKED: uid and generation, read before the
 * check), and scales to 0 right after checking. So a snapshot counts only for
 * warden-controller's own scale-down of a StatefulSet still at that uid and
 * generation, in ScalingDown: a scale-up since (etcd-druid waking the Etcd,
 * warden-controller down or not) moves the generation and voids it, and no
 * one else's scale-down, made at a time nobody checked, is admitted on it.
 */
static void snapshot_ground(const struct scaleguard_ctx *g, const struct review_req *req,
                            const struct lookup_etcd *etcd, char *why, size_t size)
{
    why[0] = '\0';
    if (etcd->cut_rc != KERR_OK || !etcd->cut_current)
        missing_snapshot(etcd, why, size);
    else if (!g->by_controller)
        snprintf(why, size,
                 "only warden-controller scales to 0 on a final snapshot, right after the backup "
                 "sidecar confirmed etcd has not moved on since it (a scale-down by %s would "
                 "lose the writes made after the snapshot)",
                 req->username);
    else if (strcmp(etcd->phase, HIBGUARD_PHASE_SCALING) != 0)
        snprintf(why, size,
                 "hibernation phase is \"%s\", not %s: etcd's revision has not been checked "
                 "against the final snapshot",
                 etcd->phase, HIBGUARD_PHASE_SCALING);
    else if (req->op == REVIEW_OP_CREATE || member_is_kind(req, "autoscaling", "Scale"))
        snprintf(why, size,
                 "the final snapshot was checked against the StatefulSet itself (its uid and "
                 "generation), which a %s does not show: warden-controller scales the "
                 "StatefulSet",
                 req->op == REVIEW_OP_CREATE ? "creation" : "scale subresource");
    else if (!hibguard_checked_matches(etcd->checked, req->old_object))
        snprintf(why, size,
                 "the StatefulSet is not the one the final snapshot was checked against "
                 "(annotation %s \"%s\"): it was scaled up or changed since, etcd may have "
                 "moved on",
                 HIBGUARD_ANN_CHECKED, etcd->checked);
}

/*
 * A partial scale-down (partial()) of the StatefulSet of an Etcd, described
 * by what: refused whoever asks, as etcd-druid's Etcd CRD refuses it on the
 * Etcd; no snapshot makes it safe (the members left have no quorum), only
 * break glass lets it through. *decided as scaleguard_judge.
 */
static enum kerr guard_partial(const struct scaleguard_ctx *g, const struct member_meta *m,
                               const struct lookup_etcd *etcd, const char *what,
                               struct glassadm_pending *gp, struct review_resp *resp, int *decided)
{
    char glass[160];

    break_glass_problem(g, etcd, glass, sizeof(glass));
    if (etcd->break_glass && !glass[0]) {
        glassadm_pend(gp, what, GLASSADM_EV_NO_SNAPSHOT);
        return review_warn(resp, "%s of Etcd %s allowed by annotation %s: %s", what, m->part_of,
                           HIBGUARD_ANN_BREAK_GLASS, etcd->break_glass_reason);
    }
    *decided = 1;
    return review_deny(resp,
                       "%s is refused: etcd-druid scales an etcd cluster up or down to 0 only "
                       "(Replicas can either be increased or be downscaled to 0.), and the "
                       "members left of Etcd %s would have no quorum and need not hold its last "
                       "acknowledged write%s. Scale the Etcd to 0 (hibernation) instead or, if "
                       "you must: kubectl annotate etcd -n %s %s %s=\"<RFC 3339 expiry, at most "
                       "24h ahead> <reason>\"",
                       what, m->part_of, glass, m->ns, m->part_of, HIBGUARD_ANN_BREAK_GLASS);
}

/* spec.ordinals.start of obj for a message: "3", "0 (absent)", "not a valid ordinal". */
static void start_text(const cJSON *obj, char *buf, size_t size)
{
    long s = start_of(obj);

    if (s < 0)
        snprintf(buf, size, "a value that is not a valid ordinal");
    else if (!kjson_get(obj, "spec.ordinals.start"))
        snprintf(buf, size, "0 (absent)");
    else
        snprintf(buf, size, "%ld", s);
}

/*
 * spec.ordinals set on the StatefulSet of an Etcd (sets_ordinals): refused
 * whoever asks, with a backup store or without, protection on or off; no
 * snapshot makes it safe (the claims that hold the data are left), only break
 * glass lets one through. *decided as scaleguard_judge.
 */
static enum kerr guard_ordinals(const struct scaleguard_ctx *g, const struct review_req *req,
                                const struct member_meta *m, const struct lookup_etcd *etcd,
                                struct glassadm_pending *gp, struct review_resp *resp, int *decided)
{
    char what[2 * LOOKUP_NAME_MAX + 160], from[40], to[40], glass[160];

    start_text(req->object, to, sizeof(to));
    if (req->op == REVIEW_OP_CREATE)
        snprintf(what, sizeof(what), "creating StatefulSet %s/%s with spec.ordinals.start %s",
                 m->ns, m->name, to);
    else {
        start_text(req->old_object, from, sizeof(from));
        snprintf(what, sizeof(what),
                 "changing spec.ordinals.start of StatefulSet %s/%s from %s to %s", m->ns, m->name,
                 from, to);
    }
    break_glass_problem(g, etcd, glass, sizeof(glass));
    if (etcd->break_glass && !glass[0]) {
        glassadm_pend(gp, what, 0);
        return review_warn(resp, "%s of Etcd %s allowed by annotation %s: %s", what, m->part_of,
                           HIBGUARD_ANN_BREAK_GLASS, etcd->break_glass_reason);
    }
    *decided = 1;
    return review_deny(resp,
                       "%s is refused: etcd-druid never sets spec.ordinals; the members of Etcd "
                       "%s are %s-0..n-1 and keep their data on the claims "
                       "<template>-%s-<ordinal>, and a StatefulSet from another ordinal would "
                       "start its members on other, empty claims (or delete the running ones) "
                       "while the claims that hold the data are read by no member%s. Leave "
                       "spec.ordinals unset or, if you must: kubectl annotate etcd -n %s %s "
                       "%s=\"<RFC 3339 expiry, at most 24h ahead> <reason>\"",
                       what, m->part_of, m->part_of, m->part_of, glass, m->ns, m->part_of,
                       HIBGUARD_ANN_BREAK_GLASS);
}

/*
 * The scale-down guard (see scaleguard.h). *decided is 1 when resp holds the
 * answer (a denial or a failed lookup); 0 lets the usual checks go on.
 */
enum kerr scaleguard_judge(const struct scaleguard_ctx *g, const struct lookup *lk,
                           const struct review_req *req, const struct member_meta *m,
                           const struct lookup_etcd *etcd, struct glassadm_pending *gp,
                           struct review_resp *resp, int *decided)
{
    char missing[480], glass[160], what[2 * LOOKUP_NAME_MAX + 160] = "";
    int del = req->op == REVIEW_OP_DELETE, create = req->op == REVIEW_OP_CREATE;
    struct lookup_etcd fresh;
    struct kerr_info e;
    int found = 0;
    enum kerr rc;

    *decided = 0;
    /* nor are ordinals: judged whoever asks, with a backup store or without */
    if (sets_ordinals(req))
        return guard_ordinals(g, req, m, etcd, gp, resp, decided);
    /* a partial scale-down is never etcd-druid's: judged with a backup store or without */
    if (!scaleguard_applies(req) || (!partial(req) && !etcd->has_backup_store))
        return KERR_OK;
    /* a StatefulSet created at 0 or from a later ordinal takes the pods outside its ordinals */
    if (create && ((rc = create_takes(lk, req, m, what, sizeof(what), resp, decided)) || *decided ||
                   !what[0]))
        return rc;
    /* the components of an Etcd being deleted go with it: the API server's deletionTimestamp
     * says so, not status.lastOperation (anyone with etcds/status writes that) */
    if (del && etcd->deleting)
        return KERR_OK;
    if (!create)
        guarded_what(req, m, what, sizeof(what));
    if (partial(req))
        return guard_partial(g, m, etcd, what, gp, resp, decided);
    /* a cut counts only while its sleep is under way, for the scale-down that was checked */
    snapshot_ground(g, req, etcd, missing, sizeof(missing));
    /* warden-controller writes phase ScalingDown and scales right after: the cache may not
     * have the phase yet, the API server has (a failed GET keeps the refusal) */
    if (missing[0] && lk->etcd_fresh && etcd->cut_rc == KERR_OK && etcd->cut_current &&
        strcmp(etcd->phase, HIBGUARD_PHASE_SCALING) != 0 && g->by_controller) {
        kerr_clear(&e);
        if (lk->etcd_fresh(lk->ctx, m->ns, m->part_of, &fresh, &e) == KERR_OK) {
            etcd = &fresh;
            snapshot_ground(g, req, etcd, missing, sizeof(missing));
        }
    }
    if (!missing[0] && lk->snapshot) {
        kerr_clear(&e);
        if ((rc = lk->snapshot(lk->ctx, m->ns, m->part_of, etcd->cut_at, &found, &e))) {
            *decided = 1;
            return review_errored(resp, 500, "looking up the snapshots of Etcd %s: %s", m->part_of,
                                  e.msg);
        }
        if (found)
            return KERR_OK;
    }
    break_glass_problem(g, etcd, glass, sizeof(glass));
    if (etcd->break_glass && !glass[0]) {
        glassadm_pend(gp, what, glass_event_kind(lk, m, etcd, missing));
        return review_warn(resp,
                           "StatefulSet %s/%s is %s without a snapshot of Etcd %s taken "
                           "for this hibernation, allowed by annotation %s: %s",
                           m->ns, m->name,
                           del      ? "deleted"
                           : create ? "created taking its members"
                                    : "scaled to 0",
                           m->part_of, HIBGUARD_ANN_BREAK_GLASS, etcd->break_glass_reason);
    }
    if (!missing[0])
        missing_snapshot(etcd, missing, sizeof(missing));
    *decided = 1;
    return review_deny(resp,
                       "%s needs a full snapshot of Etcd %s "
                       "taken for this hibernation: %s%s. Wait for the snapshot or, if the "
                       "backups of Etcd %s are broken, allow the %s without one: kubectl "
                       "annotate etcd -n %s %s %s=\"<RFC 3339 expiry, at most 24h ahead> "
                       "<reason>\"",
                       what, m->part_of, missing, glass, m->part_of,
                       del ? "deletion" : "scale-down", m->ns, m->part_of,
                       HIBGUARD_ANN_BREAK_GLASS);
}
