/* protect - etcd-druid's component-protection decision; see protect.h. */
#include "webhook/protect.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/hibguard.h"
#include "common/kjson.h"
#include "common/ktime.h"

#define SA_PREFIX "system:serviceaccount:"

/* The partial object metadata the checks read. */
struct meta {
    const char *ns, *name;
    int managed;
    const char *part_of; /* NULL when the label is absent */
    int deleting;
    struct lookup_sts sts; /* storage when the metadata is a parent StatefulSet's */
    /*
     * An UPDATE of a component: the label (LOOKUP_LABEL_MANAGED_BY or
     * LOOKUP_LABEL_PART_OF) whose value the request changes while the old
     * object is a component of an Etcd, with its old and new values (NULL:
     * absent); label is NULL when there is none.
     */
    const char *label, *label_old, *label_new;
};

enum decoded { DEC_META, DEC_UNSUPPORTED, DEC_ANSWERED };

struct component {
    const char *group, *kind;
    int runtime; /* not created when runtime component creation is disabled */
};

static const struct component components[] = {
    { "", "ServiceAccount", 1 },
    { "", "Service", 1 },
    { "", "ConfigMap", 0 },
    { "rbac.authorization.k8s.io", "Role", 1 },
    { "rbac.authorization.k8s.io", "RoleBinding", 1 },
    { "apps", "StatefulSet", 0 },
    { "policy", "PodDisruptionBudget", 1 },
    { "coordination.k8s.io", "Lease", 1 },
};

static int is_kind(const struct review_req *req, const char *group, const char *kind)
{
    return strcmp(req->kind_group, group) == 0 && strcmp(req->kind_kind, kind) == 0;
}

static const struct component *find_component(const struct review_req *req)
{
    size_t i;

    for (i = 0; i < sizeof(components) / sizeof(components[0]); i++) {
        if (is_kind(req, components[i].group, components[i].kind))
            return &components[i];
    }
    return NULL;
}

int protect_user_in(const char *user, const char *const *list, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (list[i] && strcmp(user, list[i]) == 0)
            return 1;
    }
    return 0;
}

/* Why raw cannot be decoded as an object, in the words of Go's decoder; NULL when it can. */
static const char *raw_problem(const cJSON *raw)
{
    if (!raw)
        return "there is no content to decode";
    if (cJSON_IsObject(raw))
        return NULL;
    if (cJSON_IsString(raw))
        return "json: cannot unmarshal string into Go value of type map[string]interface {}";
    if (cJSON_IsNumber(raw))
        return "json: cannot unmarshal number into Go value of type map[string]interface {}";
    if (cJSON_IsBool(raw))
        return "json: cannot unmarshal bool into Go value of type map[string]interface {}";
    return "json: cannot unmarshal array into Go value of type map[string]interface {}";
}

static void meta_from_object(const cJSON *obj, struct meta *m)
{
    const cJSON *labels = lookup_meta_map(obj, "labels");
    const char *managed = lookup_map_get(labels, LOOKUP_LABEL_MANAGED_BY);

    m->ns = lookup_meta_str(obj, "namespace");
    m->name = lookup_meta_str(obj, "name");
    m->managed = managed && strcmp(managed, LOOKUP_MANAGED_BY_DRUID) == 0;
    m->part_of = lookup_map_get(labels, LOOKUP_LABEL_PART_OF);
    m->deleting = lookup_meta_deleting(obj);
}

static int same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/*
 * The metadata of an UPDATE of a component (both objects decode). The
 * labels that decide whether a request is checked are read from the old
 * object: when it is a component of an Etcd (managed, with a part-of
 * label) the request is judged as a change of that component, whatever
 * the new object says, and a change of either label is recorded in m;
 * otherwise the new object decides, as etcd-druid decides.
 */
static void meta_from_update(const cJSON *old, const cJSON *obj, struct meta *m)
{
    const cJSON *lo = lookup_meta_map(old, "labels"), *ln = lookup_meta_map(obj, "labels");
    static const char *const keys[] = { LOOKUP_LABEL_MANAGED_BY, LOOKUP_LABEL_PART_OF };
    struct meta n;
    size_t i;

    memset(&n, 0, sizeof(n));
    meta_from_object(old, m);
    meta_from_object(obj, &n);
    if (!m->managed || !m->part_of) {
        *m = n;
        return;
    }
    m->deleting = m->deleting || n.deleting;
    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        const char *a = lookup_map_get(lo, keys[i]), *b = lookup_map_get(ln, keys[i]);

        if (!same_str(a, b)) {
            m->label = keys[i];
            m->label_old = a;
            m->label_new = b;
            break;
        }
    }
}

static void meta_from_sts(struct meta *m)
{
    m->ns = m->sts.namespace;
    m->name = m->sts.name;
    m->managed = m->sts.managed;
    m->part_of = m->sts.has_part_of ? m->sts.part_of : NULL;
    m->deleting = m->sts.deleting;
}

/*
 * The object of the request as etcd-druid decodes it: UPDATE needs both
 * objects and reads the new one, DELETE reads the old one, an unknown
 * operation reads nothing. *obj is NULL for "nothing". (A component's
 * UPDATE then reads both: meta_from_update.)
 */
static enum decoded decode_object(const struct review_req *req, const cJSON **obj,
                                  struct review_resp *resp, enum kerr *rc)
{
    const char *problem = NULL;

    *obj = NULL;
    if (req->op == REVIEW_OP_UPDATE) {
        problem = raw_problem(req->old_object);
        if (!problem)
            problem = raw_problem(req->object);
        *obj = req->object;
    } else if (req->op == REVIEW_OP_DELETE) {
        problem = raw_problem(req->old_object);
        *obj = req->old_object;
    } else if (req->op == REVIEW_OP_CREATE) {
        problem = raw_problem(req->object);
        *obj = req->object;
    }
    if (!problem)
        return DEC_META;
    *rc = review_errored(resp, 400, "[Operation: %s, Code: ERR_DECODE_REQUEST_OBJECT] %s",
                         req->operation, problem);
    return DEC_ANSWERED;
}

static enum decoded decode_scale(const struct lookup *lk, const struct review_req *req,
                                 struct meta *m, struct review_resp *resp, enum kerr *rc)
{
    struct kerr_info e;

    if (strcmp(req->res_group, "apps") != 0 || strcmp(req->res_resource, "statefulsets") != 0)
        return DEC_UNSUPPORTED;
    kerr_clear(&e);
    if (lk->sts(lk->ctx, req->namespace, req->name, &m->sts, &e) != KERR_OK) {
        *rc =
            review_errored(resp, 500, "[Operation: %s, Code: ERR_GET_SCALE_SUBRESOURCE_PARENT] %s",
                           req->operation, e.msg);
        return DEC_ANSWERED;
    }
    meta_from_sts(m);
    return DEC_META;
}

/*
 * The StatefulSet whose member PVC obj is by ownership (a StatefulSet owner,
 * persistentVolumeClaimRetentionPolicy) or by name
 * ("<volumeClaimTemplate>-<StatefulSet>-<ordinal>"): each StatefulSet name the
 * PVC's name allows is looked up, and the first managed component of an Etcd
 * wins. KERR_NOTFOUND when none is (err->reason LOOKUP_REASON_UNCONFIRMED
 * when a cache miss nobody confirmed was among the candidates).
 */
static enum kerr pvc_by_name(const struct lookup *lk, const cJSON *obj, struct lookup_sts *out,
                             struct kerr_info *err)
{
    const cJSON *refs = cJSON_GetObjectItemCaseSensitive(
                    cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "ownerReferences"),
                *ref;
    const char *ns = lookup_meta_str(obj, "namespace"), *name = lookup_meta_str(obj, "name");
    size_t n = strlen(name), i;
    char cand[LOOKUP_NAME_MAX + 1];
    int unconfirmed = 0;
    struct kerr_info e;
    enum kerr rc;

    cJSON_ArrayForEach (ref, refs) {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(ref, "kind"),
                    *nm = cJSON_GetObjectItemCaseSensitive(ref, "name");

        if (!cJSON_IsString(k) || !cJSON_IsString(nm) || strcmp(k->valuestring, "StatefulSet"))
            continue;
        kerr_clear(&e);
        rc = lk->sts(lk->ctx, ns, nm->valuestring, out, &e);
        if (rc == KERR_OK && out->managed && out->has_part_of)
            return KERR_OK;
        if (rc != KERR_OK && rc != KERR_NOTFOUND)
            return kerr_set(err, rc, "%s", e.msg);
        unconfirmed |= lookup_unconfirmed(rc, &e);
    }
    /* the ordinal */
    while (n > 0 && name[n - 1] >= '0' && name[n - 1] <= '9')
        n--;
    if (n == strlen(name) || n < 2 || name[n - 1] != '-' || n - 1 > LOOKUP_NAME_MAX)
        goto none;
    memcpy(cand, name, n - 1);
    cand[n - 1] = '\0';
    for (i = 1; i + 1 < n - 1; i++) {
        if (cand[i - 1] != '-')
            continue;
        kerr_clear(&e);
        rc = lk->sts(lk->ctx, ns, cand + i, out, &e);
        if (rc == KERR_OK && out->managed && out->has_part_of)
            return KERR_OK;
        if (rc != KERR_OK && rc != KERR_NOTFOUND)
            return kerr_set(err, rc, "%s", e.msg);
        unconfirmed |= lookup_unconfirmed(rc, &e);
    }
none:
    kerr_set(err, KERR_NOTFOUND, "no StatefulSet of an Etcd claims PVC %s/%s", ns, name);
    if (unconfirmed)
        snprintf(err->reason, sizeof(err->reason), "%s", LOOKUP_REASON_UNCONFIRMED);
    return KERR_NOTFOUND;
}

/*
 * A PVC is a member's by the labels of a StatefulSet (as etcd-druid finds
 * it), else by ownership or name (pvc_by_name): a relabel does not take it
 * out of protection. An UPDATE is decided on the old object.
 */
static enum decoded decode_pvc(const struct lookup *lk, const struct review_req *req,
                               struct meta *m, struct review_resp *resp, enum kerr *rc)
{
    const cJSON *obj = NULL, *labels;
    const char *ns, *name;
    struct kerr_info e;
    size_t matches = 0;
    enum decoded d = decode_object(req, &obj, resp, rc);

    if (d != DEC_META)
        return d;
    if (req->op == REVIEW_OP_UPDATE)
        obj = req->old_object;
    labels = lookup_meta_map(obj, "labels");
    ns = lookup_meta_str(obj, "namespace");
    name = lookup_meta_str(obj, "name");
    kerr_clear(&e);
    if (labels && labels->child &&
        lk->sts_by_labels(lk->ctx, ns, labels, &m->sts, &matches, &e) != KERR_OK) {
        *rc = review_errored(resp, 500, "[Operation: %s, Code: ERR_LIST_STATEFULSETS] %s",
                             req->operation, e.msg);
        return DEC_ANSWERED;
    }
    if (matches > 1) {
        *rc = review_errored(resp, 500,
                             "[Operation: %s, Code: ERR_TOO_MANY_MATCHING_STATEFULSETS] found %zu "
                             "StatefulSets matching the labels of resource %s/%s, expected one",
                             req->operation, matches, ns, name);
        return DEC_ANSWERED;
    }
    if (matches == 0 || !m->sts.managed || !m->sts.has_part_of) {
        enum kerr r;

        kerr_clear(&e);
        r = pvc_by_name(lk, obj, &m->sts, &e);
        if (r == KERR_NOTFOUND && lookup_unconfirmed(r, &e)) {
            *rc = review_errored(resp, 500,
                                 "the StatefulSets that PVC %s/%s may belong to are not all in "
                                 "the cache and the API could not be asked: not admitted on an "
                                 "unconfirmed miss",
                                 ns, name);
            return DEC_ANSWERED;
        }
        if (r == KERR_NOTFOUND && matches == 0)
            return DEC_UNSUPPORTED;
        if (r != KERR_OK && r != KERR_NOTFOUND) {
            *rc = review_errored(resp, 500, "[Operation: %s, Code: ERR_GET_STATEFULSET] %s",
                                 req->operation, e.msg);
            return DEC_ANSWERED;
        }
    }
    meta_from_sts(m);
    return DEC_META;
}

static enum decoded decode_meta(const struct lookup *lk, const struct review_req *req,
                                struct meta *m, struct review_resp *resp, enum kerr *rc)
{
    const cJSON *obj = NULL;
    enum decoded d;

    memset(m, 0, sizeof(*m));
    m->ns = m->name = "";
    if (find_component(req)) {
        d = decode_object(req, &obj, resp, rc);
        if (d == DEC_META && req->op == REVIEW_OP_UPDATE)
            meta_from_update(req->old_object, obj, m);
        else if (d == DEC_META)
            meta_from_object(obj, m);
        return d;
    }
    if (is_kind(req, "autoscaling", "Scale"))
        return decode_scale(lk, req, m, resp, rc);
    if (is_kind(req, "", "PersistentVolumeClaim"))
        return decode_pvc(lk, req, m, resp, rc);
    return DEC_UNSUPPORTED;
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
                               const struct meta *m, const struct lookup_etcd *etcd,
                               struct review_resp *resp)
{
    const char *user = req->username;

    if (protect_user_in(user, cfg->reconcilers, cfg->n_reconcilers))
        return review_allow(resp, "update of managed resources by etcd-druid is allowed");
    if (is_kind(req, "coordination.k8s.io", "Lease") && is_member_sa(user, m->ns, m->part_of))
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

/*
 * spec.replicas of a StatefulSet (absent: its default, 1) or of a Scale
 * (absent: 0, the field is omitted when empty); -1 when not a number.
 */
static long replicas_of(const cJSON *obj, int scale)
{
    int64_t r;
    enum kerr rc = kjson_get_int64(obj, "spec.replicas", &r);

    if (rc == KERR_NOTFOUND)
        return scale ? 0 : 1;
    return rc == KERR_OK && r >= 0 ? (long)r : -1;
}

/* True when req takes a StatefulSet (or its scale) from above 0 replicas to 0. */
static int scales_to_zero(const struct review_req *req)
{
    int scale = is_kind(req, "autoscaling", "Scale");

    if (req->op != REVIEW_OP_UPDATE || (!scale && !is_kind(req, "apps", "StatefulSet")))
        return 0;
    return replicas_of(req->old_object, scale) > 0 && replicas_of(req->object, scale) == 0;
}

/*
 * True when req deletes a StatefulSet that has pods (spec.replicas above
 * 0) and its pods with it: a DELETE that orphans them (etcd-druid's
 * re-creation of a StatefulSet whose immutable fields changed) leaves the
 * pods running and is not guarded.
 */
static int deletes_pods(const struct review_req *req)
{
    return req->op == REVIEW_OP_DELETE && is_kind(req, "apps", "StatefulSet") && !req->orphan &&
           cJSON_IsObject(req->old_object) && replicas_of(req->old_object, 0) > 0;
}

/*
 * True when req creates a StatefulSet with 0 replicas: after an orphaning
 * DELETE, the pods of the old one are adopted and deleted by it.
 */
static int creates_at_zero(const struct review_req *req)
{
    return req->op == REVIEW_OP_CREATE && is_kind(req, "apps", "StatefulSet") &&
           cJSON_IsObject(req->object) && replicas_of(req->object, 0) == 0;
}

/*
 * What the scale-down guard judges: a scale-down to 0, a DELETE that takes
 * the pods, a CREATE at 0 replicas.
 */
static int guarded(const struct review_req *req)
{
    return scales_to_zero(req) || deletes_pods(req) || creates_at_zero(req);
}

static void event_break_glass(const struct protect_config *cfg, const struct review_req *req,
                              const struct meta *m, const struct lookup_etcd *etcd)
{
    struct ev_ref ref = { "druid.gardener.cloud/v1alpha1", "Etcd", m->ns, m->part_of, etcd->uid };

    if (!cfg->events || req->dry_run)
        return;
    ev_emitf(cfg->events, &ref, EV_WARNING, "ScaleDownWithoutSnapshot", "BreakGlass",
             "%s %s StatefulSet %s%s without a snapshot of this cycle, allowed by "
             "annotation %s: %s",
             req->username, req->op == REVIEW_OP_DELETE ? "deleted" : "scaled", m->name,
             req->op == REVIEW_OP_DELETE ? "" : " to 0", HIBGUARD_ANN_BREAK_GLASS,
             etcd->break_glass_reason);
}

static time_t now_of(const struct protect_config *cfg)
{
    return cfg->clock ? cfg->clock() : time(NULL);
}

/* Why the break glass on etcd does not count ("" when it does), into why. */
static void break_glass_problem(const struct protect_config *cfg, const struct lookup_etcd *etcd,
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
    else if (etcd->break_glass_expires <= now_of(cfg)) {
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
static void snapshot_ground(const struct protect_config *cfg, const struct review_req *req,
                            const struct lookup_etcd *etcd, char *why, size_t size)
{
    why[0] = '\0';
    if (etcd->cut_rc != KERR_OK || !etcd->cut_current)
        missing_snapshot(etcd, why, size);
    else if (!protect_user_in(req->username, cfg->controllers, cfg->n_controllers))
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
    else if (req->op == REVIEW_OP_CREATE || is_kind(req, "autoscaling", "Scale"))
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
 * The scale-down guard (see protect.h). *decided is 1 when resp holds the
 * answer (a denial or a failed lookup); 0 lets the usual checks go on.
 */
static enum kerr guard_scale_down(const struct protect_config *cfg, const struct lookup *lk,
                                  const struct review_req *req, const struct meta *m,
                                  const struct lookup_etcd *etcd, struct review_resp *resp,
                                  int *decided)
{
    char missing[480], glass[160];
    int del = req->op == REVIEW_OP_DELETE, create = req->op == REVIEW_OP_CREATE;
    struct lookup_etcd fresh;
    struct kerr_info e;
    int found = 0;
    enum kerr rc;

    *decided = 0;
    if (!guarded(req) || !etcd->has_backup_store)
        return KERR_OK;
    /* a StatefulSet created at 0 takes pods only where the Etcd has members */
    if (creates_at_zero(req) && !etcd->has_members)
        return KERR_OK;
    /* the components of an Etcd being deleted go with it */
    if (del && (etcd->deleting || etcd->deletion_in_progress))
        return KERR_OK;
    /* a cut counts only while its sleep is under way, for the scale-down that was checked */
    snapshot_ground(cfg, req, etcd, missing, sizeof(missing));
    /* warden-controller writes phase ScalingDown and scales right after: the cache may not
     * have the phase yet, the API server has (a failed GET keeps the refusal) */
    if (missing[0] && lk->etcd_fresh && etcd->cut_rc == KERR_OK && etcd->cut_current &&
        strcmp(etcd->phase, HIBGUARD_PHASE_SCALING) != 0 &&
        protect_user_in(req->username, cfg->controllers, cfg->n_controllers)) {
        kerr_clear(&e);
        if (lk->etcd_fresh(lk->ctx, m->ns, m->part_of, &fresh, &e) == KERR_OK) {
            etcd = &fresh;
            snapshot_ground(cfg, req, etcd, missing, sizeof(missing));
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
    break_glass_problem(cfg, etcd, glass, sizeof(glass));
    if (etcd->break_glass && !glass[0]) {
        event_break_glass(cfg, req, m, etcd);
        return review_warn(resp,
                           "StatefulSet %s/%s is %s without a snapshot of Etcd %s taken "
                           "for this hibernation, allowed by annotation %s: %s",
                           m->ns, m->name, del ? "deleted" : "scaled to 0", m->part_of,
                           HIBGUARD_ANN_BREAK_GLASS, etcd->break_glass_reason);
    }
    if (!missing[0])
        missing_snapshot(etcd, missing, sizeof(missing));
    *decided = 1;
    return review_deny(resp,
                       "%s StatefulSet %s/%s%s needs a full snapshot of Etcd %s "
                       "taken for this hibernation: %s%s. Wait for the snapshot or, if the "
                       "backups of Etcd %s are broken, allow the %s without one: kubectl "
                       "annotate etcd -n %s %s %s=\"<RFC 3339 expiry, at most 24h ahead> "
                       "<reason>\"",
                       del      ? "deleting"
                       : create ? "creating"
                                : "scaling",
                       m->ns, m->name,
                       del      ? ""
                       : create ? " with 0 replicas"
                                : " to 0 replicas",
                       m->part_of, missing, glass, m->part_of, del ? "deletion" : "scale-down",
                       m->ns, m->part_of, HIBGUARD_ANN_BREAK_GLASS);
}

/*
 * etcd-warden's label rule: an UPDATE that changes the managed-by or the
 * part-of label of a component of an Etcd is refused unless a reconciler
 * asks; those labels decide whether the component is checked at all (the
 * webhooks' objectSelector, component protection, the scale-down guard),
 * so a change of them would take it out of every check for good.
 * *decided as guard_scale_down.
 */
static enum kerr guard_labels(const struct protect_config *cfg, const struct review_req *req,
                              const struct meta *m, struct review_resp *resp, int *decided)
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
 * A PVC UPDATE is judged only when it changes a label that makes it a
 * member's (managed-by, part-of): a relabel is refused where deleting it
 * would be; anything else (a resize) is etcd-druid's users' own.
 */
static int pvc_relabels(const struct review_req *req)
{
    const cJSON *lo = lookup_meta_map(req->old_object, "labels"),
                *ln = lookup_meta_map(req->object, "labels");

    if (raw_problem(req->old_object) || raw_problem(req->object))
        return 1;
    return !same_str(lookup_map_get(lo, LOOKUP_LABEL_MANAGED_BY),
                     lookup_map_get(ln, LOOKUP_LABEL_MANAGED_BY)) ||
           !same_str(lookup_map_get(lo, LOOKUP_LABEL_PART_OF),
                     lookup_map_get(ln, LOOKUP_LABEL_PART_OF));
}

/*
 * A StatefulSet without etcd-druid's labels is still an Etcd's when an Etcd
 * owns it or one of its name lives in its namespace (the StatefulSet
 * etcd-druid creates is named as its Etcd): m then names that Etcd, and the
 * Etcd lookup that follows decides (not found: not an Etcd's).
 */
static void sts_by_name(const struct review_req *req, struct meta *m)
{
    const cJSON *obj = req->op == REVIEW_OP_CREATE ? req->object : req->old_object, *ref;
    const cJSON *refs = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "ownerReferences");

    m->managed = 1;
    m->part_of = m->name;
    cJSON_ArrayForEach (ref, refs) {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(ref, "kind"),
                    *nm = cJSON_GetObjectItemCaseSensitive(ref, "name");

        if (cJSON_IsString(k) && cJSON_IsString(nm) && strcmp(k->valuestring, "Etcd") == 0) {
            m->part_of = nm->valuestring;
            return;
        }
    }
}

/* Steps 5-9 for an object managed by etcd-druid. */
static enum kerr judge_managed(const struct protect_config *cfg, const struct lookup *lk,
                               const struct review_req *req, const struct meta *m,
                               struct review_resp *resp)
{
    const struct component *c = find_component(req);
    struct lookup_etcd etcd;
    struct kerr_info e;
    int decided = 0;
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
    if (guarded(req) && lookup_unconfirmed(rc, &e))
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
    if ((rc = guard_scale_down(cfg, lk, req, m, &etcd, resp, &decided)) || decided)
        return rc;
    if (!(c && c->runtime && etcd.runtime_disabled) &&
        ((rc = guard_labels(cfg, req, m, resp, &decided)) || decided))
        return rc;
    if (etcd.protection_disabled)
        return review_allow(resp, "changes allowed, since Etcd %s has annotation %s", m->part_of,
                            LOOKUP_ANN_DISABLE_PROTECTION);
    if (c && c->runtime && etcd.runtime_disabled)
        return review_allow(resp,
                            "Etcd %s has runtime component creation disabled, skipping "
                            "validations for resource %s/%s",
                            m->part_of, m->ns, m->name);
    if (req->op == REVIEW_OP_DELETE && etcd.deletion_in_progress)
        return handle_delete(cfg, req, m->part_of, resp);
    return handle_update(cfg, req, m, &etcd, resp);
}

enum kerr protect_decide(const struct protect_config *cfg, const struct lookup *lk,
                         const struct review_req *req, struct review_resp *resp,
                         struct kerr_info *err)
{
    struct meta m;
    enum kerr rc = KERR_OK;

    if (creates_at_zero(req))
        return protect_guard_decide(cfg, lk, req, resp, err);
    if (req->op == REVIEW_OP_UPDATE && is_kind(req, "", "PersistentVolumeClaim") &&
        !pvc_relabels(req)) {
        rc = review_allow(resp, "update of PersistentVolumeClaim %s/%s allowed", req->namespace,
                          req->name);
        goto out;
    }
    if (req->op == REVIEW_OP_CREATE || req->op == REVIEW_OP_CONNECT) {
        rc = review_allow(resp, "operation %s is allowed", req->operation);
        goto out;
    }
    switch (decode_meta(lk, req, &m, resp, &rc)) {
    case DEC_ANSWERED:
        goto out;
    case DEC_UNSUPPORTED:
        rc = review_allow(resp, "resource: %s%s%s is not supported by EtcdComponents webhook",
                          req->kind_kind, *req->kind_group ? "." : "", req->kind_group);
        goto out;
    case DEC_META:
        break;
    }
    if (guarded(req) && is_kind(req, "apps", "StatefulSet") && (!m.managed || !m.part_of))
        return protect_guard_decide(cfg, lk, req, resp, err);
    if (!m.managed)
        rc = review_allow(resp, "resource: %s/%s is not managed by druid, skipping validations",
                          m.ns, m.name);
    else
        rc = judge_managed(cfg, lk, req, &m, resp);
out:
    if (rc)
        kerr_set(err, rc, "building the admission response");
    return rc;
}

enum kerr protect_guard_decide(const struct protect_config *cfg, const struct lookup *lk,
                               const struct review_req *req, struct review_resp *resp,
                               struct kerr_info *err)
{
    struct lookup_etcd etcd;
    struct kerr_info e;
    struct meta m;
    int decided = 0, judged = guarded(req);
    enum kerr rc = KERR_OK;

    /*
     * Only a scale-down to 0, a DELETE that takes the pods and a change of
     * the labels that decide whether a StatefulSet is checked are judged:
     * nothing else is looked up, nothing else refused.
     */
    if (!judged && (req->op != REVIEW_OP_UPDATE || !is_kind(req, "apps", "StatefulSet") ||
                    raw_problem(req->old_object) || raw_problem(req->object))) {
        rc = review_allow(resp, "not a scale-down to 0 replicas");
        goto out;
    }
    switch (decode_meta(lk, req, &m, resp, &rc)) {
    case DEC_ANSWERED:
        goto out;
    case DEC_UNSUPPORTED:
        m.managed = 0;
        break;
    case DEC_META:
        break;
    }
    if (!judged &&
        (!m.label || protect_user_in(req->username, cfg->reconcilers, cfg->n_reconcilers))) {
        rc = review_allow(resp, "not a scale-down to 0 replicas");
        goto out;
    }
    if (judged && is_kind(req, "apps", "StatefulSet") && (!m.managed || !m.part_of))
        sts_by_name(req, &m);
    if (!m.managed || !m.part_of) {
        rc = review_allow(resp, "resource: %s/%s is not a component of an Etcd", m.ns, m.name);
        goto out;
    }
    kerr_clear(&e);
    rc = lk->etcd(lk->ctx, m.ns, m.part_of, &etcd, &e);
    if (judged && lookup_unconfirmed(rc, &e)) {
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
    if ((rc = guard_scale_down(cfg, lk, req, &m, &etcd, resp, &decided)) || decided)
        goto out;
    if ((rc = guard_labels(cfg, req, &m, resp, &decided)) || decided)
        goto out;
    if (req->op == REVIEW_OP_DELETE)
        rc = review_allow(resp, "deletion of StatefulSet %s/%s allowed", m.ns, m.name);
    else if (req->op == REVIEW_OP_CREATE)
        rc = review_allow(resp, "creation of StatefulSet %s/%s allowed", m.ns, m.name);
    else
        rc = review_allow(resp, "scale-down of StatefulSet %s/%s allowed", m.ns, m.name);
out:
    if (rc)
        kerr_set(err, rc, "building the admission response");
    return rc;
}
