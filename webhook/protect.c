/* protect - etcd-druid's component-protection decision; see protect.h. */
#include "webhook/protect.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "webhook/cfgguard.h"
#include "webhook/cfgvol.h"
#include "webhook/claimguard.h"
#include "webhook/glassadm.h"
#include "webhook/member.h"
#include "webhook/mntguard.h"
#include "webhook/pvcguard.h"
#include "webhook/scaleguard.h"

#define SA_PREFIX "system:serviceaccount:"

int protect_user_in(const char *user, const char *const *list, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (list[i] && strcmp(user, list[i]) == 0)
            return 1;
    }
    return 0;
}

/* strings.TrimSpace(user) == "system:serviceaccount:<ns>:<name>" */
static int is_member_sa(const char *user, const char *ns, const char *name)
{
    size_t n = strlen(user), lp = strlen(SA_PREFIX), ln = strlen(ns), lm = strlen(name);

    while (n > 0 && strchr(" \t\n\v\f\r", user[n - 1]))
        n--;
    while (n > 0 && strchr(" \t\n\v\f\r", *user)) {
        user++;
        n--;
    }
    return n == lp + ln + 1 + lm && memcmp(user, SA_PREFIX, lp) == 0 &&
           memcmp(user + lp, ns, ln) == 0 && user[lp + ln] == ':' &&
           memcmp(user + lp + ln + 1, name, lm) == 0;
}

static enum kerr handle_delete(const struct protect_config *cfg, const struct review_req *req,
                               const char *etcd, struct review_resp *resp)
{
    const char *user = req->username;

    if (protect_user_in(user, cfg->reconcilers, cfg->n_reconcilers))
        return review_allow(
            resp, "deletion of resource by etcd-druid is allowed during deletion of Etcd %s", etcd);
    if (protect_user_in(user, cfg->exempt, cfg->n_exempt))
        return review_allow(
            resp, "deletion of resource by exempt SA %s is allowed during deletion of Etcd %s",
            user, etcd);
    return review_deny(
        resp, "no external intervention allowed during ongoing deletion of Etcd %s by etcd-druid",
        etcd);
}

static enum kerr handle_update(const struct protect_config *cfg, const struct review_req *req,
                               const struct member_meta *m, const struct lookup_etcd *etcd,
                               struct review_resp *resp)
{
    const char *user = req->username;

    if (protect_user_in(user, cfg->reconcilers, cfg->n_reconcilers))
        return review_allow(resp, "update of managed resources by etcd-druid is allowed");
    if (member_is_kind(req, "coordination.k8s.io", "Lease") &&
        is_member_sa(user, m->ns, m->part_of))
        return review_allow(resp, "lease resource can be freely updated by etcd members");
    if (protect_user_in(user, cfg->exempt, cfg->n_exempt)) {
        if (!etcd->reconcile_in_progress)
            return review_allow(
                resp, "operations on resources by exempt service account %s are allowed", user);
        if (m->deleting)
            return review_allow(resp,
                                "deletion of resource by exempt service account %s is allowed "
                                "during ongoing reconciliation of Etcd %s, since deletion "
                                "timestamp is set on the resource",
                                user, m->part_of);
    }
    return review_deny(resp,
                       "changes from service account %s are disallowed at the moment. Please "
                       "consider disabling component protection by setting annotation `%s` on "
                       "the parent Etcd resource",
                       user, LOOKUP_ANN_DISABLE_PROTECTION);
}

static time_t now_of(const struct protect_config *cfg)
{
    return cfg->clock ? cfg->clock() : time(NULL);
}

/*
 * True when req is a StatefulSet request the guards judge beyond component protection:
 * a scale-down (scaleguard), new ordinals (their claims), a claim's volume unmounted, etcd's
 * configuration read from elsewhere (cfgvol).
 */
static int sts_judged(const struct review_req *req)
{
    return scaleguard_applies(req) || pvcguard_claims(req) || mntguard_remounts(req) ||
           cfgvol_applies(req);
}

/* What the scale-down guard knows of the caller of req. */
static struct scaleguard_ctx guard_ctx(const struct protect_config *cfg,
                                       const struct review_req *req)
{
    struct scaleguard_ctx g = { protect_user_in(req->username, cfg->controllers,
                                                cfg->n_controllers),
                                cfg->events, now_of(cfg) };

    return g;
}

/*
 * etcd-warden's label rule: an UPDATE that changes the managed-by or the
 * part-of label of a component of an Etcd is refused unless a reconciler
 * asks; those labels decide whether the component is checked at all (the
 * webhooks' objectSelector, component protection, the scale-down guard),
 * so a change of them would take it out of every check for good.
 * *decided as scaleguard_judge.
 */
static enum kerr guard_labels(const struct protect_config *cfg, const struct review_req *req,
                              const struct member_meta *m, struct review_resp *resp, int *decided)
{
    char from[LOOKUP_NAME_MAX + 8], to[LOOKUP_NAME_MAX + 8];

    *decided = 0;
    if (!m->label || protect_user_in(req->username, cfg->reconcilers, cfg->n_reconcilers))
        return KERR_OK;
    if (m->label_old)
        snprintf(from, sizeof(from), "\"%.*s\"", LOOKUP_NAME_MAX, m->label_old);
    else
        snprintf(from, sizeof(from), "(absent)");
    if (m->label_new)
        snprintf(to, sizeof(to), "\"%.*s\"", LOOKUP_NAME_MAX, m->label_new);
    else
        snprintf(to, sizeof(to), "(removed)");
    *decided = 1;
    return review_deny(resp,
                       "label %s of %s %s/%s cannot be changed from %s to %s by %s: the object "
                       "is a component of Etcd %s, and its labels %s and %s decide whether "
                       "component protection and the scale-down guard apply to it, so only the "
                       "reconcilers of the Etcd (etcd-druid, warden-controller) may change them",
                       m->label, req->kind_kind, m->ns, m->name, from, to, req->username,
                       m->part_of, LOOKUP_LABEL_MANAGED_BY, LOOKUP_LABEL_PART_OF);
}

/*
 * The break glass a decision admitted on (*gp, for Etcd etcd, m's parent), once the
 * decision allows: its use recorded (webhook/glassadm.h) and the scale-down evented, else
 * resp replaced by the refusal. rc: the decision's result.
 */
static enum kerr settle_glass(const struct protect_config *cfg, const struct lookup *lk,
                              const struct review_req *req, const struct member_meta *m,
                              const struct lookup_etcd *etcd, const struct glassadm_pending *gp,
                              struct review_resp *resp, enum kerr rc)
{
    struct scaleguard_ctx g = guard_ctx(cfg, req);

    if (rc != KERR_OK || !gp->what[0] || !resp->allowed)
        return rc;
    rc = glassadm_settle(lk, req, m->ns, m->part_of, etcd, gp, resp);
    if (rc == KERR_OK && resp->allowed && gp->event)
        scaleguard_event(&g, req, m, etcd, gp->event);
    return rc;
}

/* settle_glass for the break glass pvcguard_in_use admitted on (*pg). */
static enum kerr settle_in_use(const struct lookup *lk, const struct review_req *req,
                               const struct pvcguard_glass *pg, struct review_resp *resp,
                               enum kerr rc)
{
    if (rc != KERR_OK || !pg->gp.what[0] || !resp->allowed)
        return rc;
    return glassadm_settle(lk, req, req->namespace, pg->name, &pg->etcd, &pg->gp, resp);
}

static enum kerr judge_parented(const struct protect_config *cfg, const struct lookup *lk,
                                const struct review_req *req, const struct member_meta *m,
                                const struct lookup_etcd *etcd, struct glassadm_pending *gp,
                                struct review_resp *resp);

/* Steps 5-9 for an object managed by etcd-druid; *glassed 1 when admitted on break glass. */
static enum kerr judge_managed(const struct protect_config *cfg, const struct lookup *lk,
                               const struct review_req *req, const struct member_meta *m,
                               struct review_resp *resp, int *glassed)
{
    struct glassadm_pending gp = { "", 0 };
    struct lookup_etcd etcd;
    struct kerr_info e;
    enum kerr rc;

    if (!m->part_of) {
        if ((rc = review_allow(resp,
                               "resource: %s/%s  is not part of any Etcd, skipping validations",
                               m->ns, m->name)))
            return rc;
        return review_warn(resp,
                           "cannot determine parent etcd resource, label %s not found on "
                           "resource: %s/%s",
                           LOOKUP_LABEL_PART_OF, m->ns, m->name);
    }
    kerr_clear(&e);
    rc = lk->etcd(lk->ctx, m->ns, m->part_of, &etcd, &e);
    if ((sts_judged(req) || pvcguard_applies(req, m)) && lookup_unconfirmed(rc, &e))
        return review_errored(resp, 500,
                              "parent Etcd %s of %s/%s is not in the cache and the API could not "
                              "be asked: a guarded request is not admitted on an unconfirmed miss",
                              m->part_of, m->ns, m->name);
    if (rc == KERR_NOTFOUND) {
        if ((rc = review_allow(resp,
                               "resource: %s/%s  is not part of any Etcd, skipping validations",
                               m->ns, m->name)))
            return rc;
        return review_warn(resp, "parent Etcd %s not found for resource: %s/%s", m->part_of, m->ns,
                           m->name);
    }
    if (rc != KERR_OK)
        return review_errored(resp, 500, "%s", e.msg);
    rc = judge_parented(cfg, lk, req, m, &etcd, &gp, resp);
    *glassed = gp.what[0] != '\0';
    return settle_glass(cfg, lk, req, m, &etcd, &gp, resp, rc);
}

/* judge_managed once the parent Etcd is found: a break glass it admits on into *gp. */
static enum kerr judge_parented(const struct protect_config *cfg, const struct lookup *lk,
                                const struct review_req *req, const struct member_meta *m,
                                const struct lookup_etcd *etcd, struct glassadm_pending *gp,
                                struct review_resp *resp)
{
    const struct member_component *c = member_component_of(req);
    struct scaleguard_ctx g = guard_ctx(cfg, req);
    int decided = 0;
    enum kerr rc;

    if ((rc = scaleguard_judge(&g, lk, req, m, etcd, gp, resp, &decided)) || decided)
        return rc;
    if ((rc = pvcguard_planted(now_of(cfg), lk, req, m, etcd, gp, resp, &decided)) || decided ||
        (rc = claimguard_wake(lk, req, m, etcd, resp, &decided)) || decided ||
        (rc = mntguard_mounts(now_of(cfg), req, m, etcd, gp, resp, &decided)) || decided ||
        (rc = cfgvol_judge(req, m, etcd, resp, &decided)) || decided)
        return rc;
    if (pvcguard_applies(req, m) &&
        ((rc = pvcguard_judge(now_of(cfg), req, m, etcd, gp, resp, &decided)) || decided))
        return rc;
    if (!(c && c->runtime && etcd->runtime_disabled) &&
        ((rc = guard_labels(cfg, req, m, resp, &decided)) || decided))
        return rc;
    if (etcd->protection_disabled)
        return review_allow(resp, "changes allowed, since Etcd %s has annotation %s", m->part_of,
                            LOOKUP_ANN_DISABLE_PROTECTION);
    if (c && c->runtime && etcd->runtime_disabled)
        return review_allow(resp,
                            "Etcd %s has runtime component creation disabled, skipping "
                            "validations for resource %s/%s",
                            m->part_of, m->ns, m->name);
    if (req->op == REVIEW_OP_DELETE && etcd->deletion_in_progress)
        return handle_delete(cfg, req, m->part_of, resp);
    return handle_update(cfg, req, m, etcd, resp);
}

/*
 * The member claims of a live Etcd (webhook/claimguard.h), once the other checks allow req
 * (rc, resp): a DELETE of one, a CREATE seeded with data, an UPDATE binding one. Not judged when a
 * break glass was already admitted on (gp, pg: that request is the value's one use). A refusal or a
 * 500 replaces resp; a break glass admitted on goes into *pg.
 */
static enum kerr guard_claims(const struct protect_config *cfg, const struct lookup *lk,
                              const struct review_req *req, const struct glassadm_pending *gp,
                              struct pvcguard_glass *pg, struct review_resp *resp, enum kerr rc)
{
    int decided = 0;

    if (rc != KERR_OK || !resp->allowed || (gp && gp->what[0]) || pg->gp.what[0])
        return rc;
    if (req->op == REVIEW_OP_CREATE || req->op == REVIEW_OP_UPDATE)
        return claimguard_create(now_of(cfg), lk, req, pg, resp, &decided);
    return claimguard_delete(now_of(cfg), lk, req, pg, resp, &decided);
}

enum kerr protect_decide(const struct protect_config *cfg, const struct lookup *lk,
                         const struct review_req *req, struct review_resp *resp,
                         struct kerr_info *err)
{
    struct pvcguard_glass pg;
    struct member_meta m;
    enum kerr rc = KERR_OK;
    int decided = 0, glassed = 0;

    memset(&pg, 0, sizeof(pg));
    if (scaleguard_creates(req))
        return protect_guard_decide(cfg, lk, req, resp, err);
    if ((rc = cfgguard_judge(lk, req, resp, &decided)) || decided ||
        (rc = pvcguard_owners(lk, req, resp, &decided)) || decided)
        goto out;
    if (req->op == REVIEW_OP_UPDATE && member_is_kind(req, "", "PersistentVolumeClaim") &&
        !member_pvc_judged(req)) {
        rc = review_allow(resp, "update of PersistentVolumeClaim %s/%s allowed", req->namespace,
                          req->name);
        goto out;
    }
    if (req->op == REVIEW_OP_CREATE || req->op == REVIEW_OP_CONNECT) {
        rc = review_allow(resp, "operation %s is allowed", req->operation);
        goto out;
    }
    switch (member_decode(lk, req, &m, resp, &rc)) {
    case MEMBER_ANSWERED:
        goto out;
    case MEMBER_UNSUPPORTED:
        if ((rc = pvcguard_in_use(now_of(cfg), lk, req, &pg, resp, &decided)) || decided)
            goto out;
        rc = review_allow(resp, "resource: %s%s%s is not supported by EtcdComponents webhook",
                          req->kind_kind, *req->kind_group ? "." : "", req->kind_group);
        goto out;
    case MEMBER_META:
        break;
    }
    if (!pvcguard_applies(req, &m) &&
        ((rc = pvcguard_in_use(now_of(cfg), lk, req, &pg, resp, &decided)) || decided))
        goto out;
    if (sts_judged(req) && member_is_kind(req, "apps", "StatefulSet") && (!m.managed || !m.part_of))
        return protect_guard_decide(cfg, lk, req, resp, err);
    if (!m.managed)
        rc = review_allow(resp, "resource: %s/%s is not managed by druid, skipping validations",
                          m.ns, m.name);
    else
        rc = judge_managed(cfg, lk, req, &m, resp, &glassed);
out:
    if (!glassed)
        rc = guard_claims(cfg, lk, req, NULL, &pg, resp, rc);
    rc = settle_in_use(lk, req, &pg, resp, rc);
    if (rc)
        kerr_set(err, rc, "building the admission response");
    return rc;
}

enum kerr protect_guard_decide(const struct protect_config *cfg, const struct lookup *lk,
                               const struct review_req *req, struct review_resp *resp,
                               struct kerr_info *err)
{
    struct scaleguard_ctx g = guard_ctx(cfg, req);
    struct pvcguard_glass pg;
    struct glassadm_pending gp = { "", 0 };
    struct lookup_etcd etcd;
    struct kerr_info e;
    struct member_meta m;
    int decided = 0, judged = scaleguard_applies(req),
        claims = pvcguard_claims(req) || mntguard_remounts(req) || cfgvol_applies(req),
        pvc = req->op == REVIEW_OP_DELETE && member_is_kind(req, "", "PersistentVolumeClaim");
    enum kerr rc = KERR_OK;

    memset(&pg, 0, sizeof(pg));
    if ((rc = cfgguard_judge(lk, req, resp, &decided)) || decided ||
        (rc = pvcguard_owners(lk, req, resp, &decided)) || decided)
        goto out;
    /*
     * Only a scale-down to 0, a DELETE that takes the pods, what brings
     * ordinals in (their claims) and a change of the labels that decide
     * whether a StatefulSet is checked are judged: nothing else is looked
     * up, nothing else refused.
     */
    if (!judged && !claims && !pvc &&
        (req->op != REVIEW_OP_UPDATE || !member_is_kind(req, "apps", "StatefulSet") ||
         member_raw_problem(req->old_object) || member_raw_problem(req->object))) {
        rc = review_allow(resp, "not a scale-down to 0 replicas");
        goto out;
    }
    switch (member_decode(lk, req, &m, resp, &rc)) {
    case MEMBER_ANSWERED:
        goto out;
    case MEMBER_UNSUPPORTED:
        m.managed = 0;
        break;
    case MEMBER_META:
        break;
    }
    if (pvc && !pvcguard_applies(req, &m)) {
        if ((rc = pvcguard_in_use(now_of(cfg), lk, req, &pg, resp, &decided)) || decided)
            goto out;
        rc = review_allow(resp, "PersistentVolumeClaim %s/%s is no running member's",
                          req->namespace, m.pvc ? m.pvc : req->name);
        goto out;
    }
    if (!judged && !claims && !pvc &&
        (!m.label || protect_user_in(req->username, cfg->reconcilers, cfg->n_reconcilers))) {
        rc = review_allow(resp, "not a scale-down to 0 replicas");
        goto out;
    }
    if ((judged || claims) && member_is_kind(req, "apps", "StatefulSet") &&
        (!m.managed || !m.part_of))
        member_sts_by_name(req, &m);
    if (!m.managed || !m.part_of) {
        rc = review_allow(resp, "resource: %s/%s is not a component of an Etcd", m.ns, m.name);
        goto out;
    }
    kerr_clear(&e);
    rc = lk->etcd(lk->ctx, m.ns, m.part_of, &etcd, &e);
    if ((judged || claims || pvc) && lookup_unconfirmed(rc, &e)) {
        rc = review_errored(resp, 500,
                            "parent Etcd %s of %s/%s is not in the cache and the API could not be "
                            "asked: a guarded request is not admitted on an unconfirmed miss",
                            m.part_of, m.ns, m.name);
        goto out;
    }
    if (rc == KERR_NOTFOUND) {
        rc = review_allow(resp, "parent Etcd %s of resource %s/%s not found", m.part_of, m.ns,
                          m.name);
        goto out;
    }
    if (rc != KERR_OK) {
        rc = review_errored(resp, 500, "%s", e.msg);
        goto out;
    }
    if ((rc = scaleguard_judge(&g, lk, req, &m, &etcd, &gp, resp, &decided)) || decided ||
        (rc = pvcguard_planted(now_of(cfg), lk, req, &m, &etcd, &gp, resp, &decided)) || decided ||
        (rc = claimguard_wake(lk, req, &m, &etcd, resp, &decided)) || decided ||
        (rc = mntguard_mounts(now_of(cfg), req, &m, &etcd, &gp, resp, &decided)) || decided ||
        (rc = mntguard_adopts(now_of(cfg), lk, req, &m, &etcd, &gp, resp, &decided)) || decided ||
        (rc = cfgvol_judge(req, &m, &etcd, resp, &decided)) || decided)
        goto out;
    if (pvc) {
        if (!(rc = pvcguard_judge(now_of(cfg), req, &m, &etcd, &gp, resp, &decided)) && !decided)
            rc = review_allow(resp, "deletion of PersistentVolumeClaim %s/%s allowed",
                              req->namespace, m.pvc);
        goto out;
    }
    if ((rc = guard_labels(cfg, req, &m, resp, &decided)) || decided)
        goto out;
    if (req->op == REVIEW_OP_DELETE)
        rc = review_allow(resp, "deletion of StatefulSet %s/%s allowed", m.ns, m.name);
    else if (req->op == REVIEW_OP_CREATE)
        rc = review_allow(resp, "creation of StatefulSet %s/%s allowed", m.ns, m.name);
    else if (judged)
        rc = review_allow(resp, "scale-down of StatefulSet %s/%s allowed", m.ns, m.name);
    else
        rc = review_allow(resp, "update of StatefulSet %s/%s allowed", m.ns, m.name);
out:
    rc = guard_claims(cfg, lk, req, &gp, &pg, resp, rc);
    /* gp is set only once m and etcd are */
    if (gp.what[0])
        rc = settle_glass(cfg, lk, req, &m, &etcd, &gp, resp, rc);
    rc = settle_in_use(lk, req, &pg, resp, rc);
    if (rc)
        kerr_set(err, rc, "building the admission response");
    return rc;
}
