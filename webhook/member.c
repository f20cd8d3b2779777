/* member - recognition of an Etcd's components and member PVCs; see member.h. */
#include "webhook/member.h"

#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "webhook/claimalias.h"

static const struct member_component components[] = {
    { "", "ServiceAccount", 1 },
    { "", "Service", 1 },
    { "", "ConfigMap", 0 },
    { "rbac.authorization.k8s.io", "Role", 1 },
    { "rbac.authorization.k8s.io", "RoleBinding", 1 },
    { "apps", "StatefulSet", 0 },
    { "policy", "PodDisruptionBudget", 1 },
    { "coordination.k8s.io", "Lease", 1 },
};

int member_is_kind(const struct review_req *req, const char *group, const char *kind)
{
    return strcmp(req->kind_group, group) == 0 && strcmp(req->kind_kind, kind) == 0;
}

enum kerr member_replicas(const cJSON *obj, int scale, int64_t *r)
{
    enum kerr rc = kjson_get_int64(obj, "spec.replicas", r);

    if (rc == KERR_NOTFOUND && scale && cJSON_IsObject(obj)) {
        *r = 0;
        return KERR_OK;
    }
    return rc;
}

long member_replicas_count(const cJSON *obj, int scale, long max)
{
    int64_t r;
    enum kerr rc = member_replicas(obj, scale, &r);

    if (rc == KERR_NOTFOUND)
        return scale ? 0 : 1;
    return rc == KERR_OK && r >= 0 && r <= max ? (long)r : -1;
}

const struct member_component *member_component_of(const struct review_req *req)
{
    size_t i;

    for (i = 0; i < sizeof(components) / sizeof(components[0]); i++) {
        if (member_is_kind(req, components[i].group, components[i].kind))
            return &components[i];
    }
    return NULL;
}

/* Why raw cannot be decoded as an object, in the words of Go's decoder; NULL when it can. */
const char *member_raw_problem(const cJSON *raw)
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

static void meta_from_object(const cJSON *obj, struct member_meta *m)
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
static void meta_from_update(const cJSON *old, const cJSON *obj, struct member_meta *m)
{
    const cJSON *lo = lookup_meta_map(old, "labels"), *ln = lookup_meta_map(obj, "labels");
    static const char *const keys[] = { LOOKUP_LABEL_MANAGED_BY, LOOKUP_LABEL_PART_OF };
    struct member_meta n;
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

static void meta_from_sts(struct member_meta *m)
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
static enum member_decoded decode_object(const struct review_req *req, const cJSON **obj,
                                         struct review_resp *resp, enum kerr *rc)
{
    const char *problem = NULL;

    *obj = NULL;
    if (req->op == REVIEW_OP_UPDATE) {
        problem = member_raw_problem(req->old_object);
        if (!problem)
            problem = member_raw_problem(req->object);
        *obj = req->object;
    } else if (req->op == REVIEW_OP_DELETE) {
        problem = member_raw_problem(req->old_object);
        *obj = req->old_object;
    } else if (req->op == REVIEW_OP_CREATE) {
        problem = member_raw_problem(req->object);
        *obj = req->object;
    }
    if (!problem)
        return MEMBER_META;
    *rc = review_errored(resp, 400, "[Operation: %s, Code: ERR_DECODE_REQUEST_OBJECT] %s",
                         req->operation, problem);
    return MEMBER_ANSWERED;
}

static enum member_decoded decode_scale(const struct lookup *lk, const struct review_req *req,
                                        struct member_meta *m, struct review_resp *resp,
                                        enum kerr *rc)
{
    struct kerr_info e;

    if (strcmp(req->res_group, "apps") != 0 || strcmp(req->res_resource, "statefulsets") != 0)
        return MEMBER_UNSUPPORTED;
    kerr_clear(&e);
    if (lk->sts(lk->ctx, req->namespace, req->name, &m->sts, &e) != KERR_OK) {
        *rc =
            review_errored(resp, 500, "[Operation: %s, Code: ERR_GET_SCALE_SUBRESOURCE_PARENT] %s",
                           req->operation, e.msg);
        return MEMBER_ANSWERED;
    }
    meta_from_sts(m);
    return MEMBER_META;
}

/*
 * Whether PVC obj, read by name as a claim of StatefulSet sts (an Etcd's: managed, part-of)
 * with a template of its first tlen bytes, is proven another application's (claimalias.h):
 * *other 1. Only the StatefulSet etcd-druid makes, named as its Etcd, is read so (the owners
 * and planted-claim rules that (b) rests on are kept for Etcd names). A lookup that fails:
 * its code, err set.
 */
static enum kerr not_its(const struct lookup *lk, const cJSON *obj, size_t tlen,
                         const struct lookup_sts *sts, int *other, struct kerr_info *err)
{
    char why[CLAIMALIAS_WHY_MAX];
    struct kerr_info e;
    enum kerr rc;

    *other = 0;
    if (strcmp(sts->name, sts->part_of) != 0)
        return KERR_OK;
    kerr_clear(&e);
    rc = claimalias_other(lk, sts->namespace, obj, 0, lookup_meta_str(obj, "name"), tlen, sts->name,
                          other, why, sizeof(why), &e);
    /* never KERR_NOTFOUND: the caller reads that as "no StatefulSet claims it" */
    if (rc != KERR_OK)
        return kerr_set(err, rc == KERR_NOTFOUND ? KERR_API : rc,
                        "whether StatefulSet %s/%s ever took PVC %s cannot be told: %s",
                        sts->namespace, sts->name, lookup_meta_str(obj, "name"), e.msg);
    return KERR_OK;
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
    int unconfirmed = 0, other;
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
        if (rc != KERR_OK && rc != KERR_NOTFOUND)
            return kerr_set(err, rc, "%s", e.msg);
        unconfirmed |= lookup_unconfirmed(rc, &e);
        if (rc != KERR_OK || !out->managed || !out->has_part_of)
            continue;
        /* another application's claim whose name reads as this StatefulSet's too */
        if ((rc = not_its(lk, obj, i - 1, out, &other, err)) != KERR_OK)
            return rc;
        if (!other)
            return KERR_OK;
        /* not that StatefulSet's: its view goes, nobody takes it for the PVC's */
        memset(out, 0, sizeof(*out));
    }
none:
    kerr_set(err, KERR_NOTFOUND, "no StatefulSet of an Etcd claims PVC %s/%s", ns, name);
    if (unconfirmed)
        snprintf(err->reason, sizeof(err->reason), "%s", LOOKUP_REASON_UNCONFIRMED);
    return KERR_NOTFOUND;
}

/* The ordinal of PVC name as a claim of StatefulSet sts, -1 when it is not one. */
static long pvc_ordinal(const char *name, const char *sts)
{
    size_t n = strlen(name), ls = strlen(sts), d = n;
    long v = 0;

    while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
        d--;
    /* "<template>-<sts>-<digits>", a template of at least one character, no leading zero */
    if (d == n || n - d > 10 || (n - d > 1 && name[d] == '0') || d < ls + 3 || name[d - 1] != '-' ||
        memcmp(name + d - 1 - ls, sts, ls) != 0 || name[d - 2 - ls] != '-')
        return -1;
    for (; d < n; d++)
        v = v * 10 + (name[d] - '0');
    return v <= 2147483647L ? v : -1;
}

/* Whether PVC name is the claim of a running member of m->sts (m->live, m->ordinal). */
static void pvc_live(const char *name, struct member_meta *m)
{
    m->ordinal = pvc_ordinal(name, m->sts.name);
    if (m->ordinal < 0)
        return;
    m->live = !m->sts.ordinals_ok ||
              (m->ordinal >= m->sts.start && m->ordinal < m->sts.start + m->sts.replicas);
}

/*
 * A PVC is a member's by the labels of a StatefulSet (as etcd-druid finds
 * it), else by ownership or name (pvc_by_name): a relabel does not take it
 * out of protection. An UPDATE is decided on the old object.
 */
static enum member_decoded decode_pvc(const struct lookup *lk, const struct review_req *req,
                                      struct member_meta *m, struct review_resp *resp,
                                      enum kerr *rc)
{
    const cJSON *obj = NULL, *labels;
    const char *ns, *name;
    struct kerr_info e;
    size_t matches = 0;
    enum member_decoded d = decode_object(req, &obj, resp, rc);

    if (d != MEMBER_META)
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
        return MEMBER_ANSWERED;
    }
    if (matches > 1) {
        *rc = review_errored(resp, 500,
                             "[Operation: %s, Code: ERR_TOO_MANY_MATCHING_STATEFULSETS] found %zu "
                             "StatefulSets matching the labels of resource %s/%s, expected one",
                             req->operation, matches, ns, name);
        return MEMBER_ANSWERED;
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
            return MEMBER_ANSWERED;
        }
        if (r == KERR_NOTFOUND && matches == 0)
            return MEMBER_UNSUPPORTED;
        if (r != KERR_OK && r != KERR_NOTFOUND) {
            *rc = review_errored(resp, 500, "[Operation: %s, Code: ERR_GET_STATEFULSET] %s",
                                 req->operation, e.msg);
            return MEMBER_ANSWERED;
        }
    }
    meta_from_sts(m);
    m->pvc = name;
    pvc_live(name, m);
    return MEMBER_META;
}

enum member_decoded member_decode(const struct lookup *lk, const struct review_req *req,
                                  struct member_meta *m, struct review_resp *resp, enum kerr *rc)
{
    const cJSON *obj = NULL;
    enum member_decoded d;

    memset(m, 0, sizeof(*m));
    m->ns = m->name = "";
    m->ordinal = -1;
    if (member_component_of(req)) {
        d = decode_object(req, &obj, resp, rc);
        if (d == MEMBER_META && req->op == REVIEW_OP_UPDATE)
            meta_from_update(req->old_object, obj, m);
        else if (d == MEMBER_META)
            meta_from_object(obj, m);
        return d;
    }
    if (member_is_kind(req, "autoscaling", "Scale"))
        return decode_scale(lk, req, m, resp, rc);
    if (member_is_kind(req, "", "PersistentVolumeClaim"))
        return decode_pvc(lk, req, m, resp, rc);
    return MEMBER_UNSUPPORTED;
}

/* metadata.ownerReferences of obj, or NULL. BORROWED. */
static const cJSON *owner_refs(const cJSON *obj)
{
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"),
                                            "ownerReferences");
}

/*
 * A PVC UPDATE is judged only when it changes what makes it a member's: a
 * label etcd-druid finds it by (managed-by, part-of) or its owner references
 * (a PVC known by its StatefulSet owner would otherwise lose its protection
 * to a patch, then be deleted). Such a change is refused where deleting it
 * would be (decided on the old object); anything else (a resize) is
 * etcd-druid's users' own.
 */
int member_pvc_judged(const struct review_req *req)
{
    const cJSON *lo = lookup_meta_map(req->old_object, "labels"),
                *ln = lookup_meta_map(req->object, "labels");
    const cJSON *ro = owner_refs(req->old_object), *rn = owner_refs(req->object);

    if (member_raw_problem(req->old_object) || member_raw_problem(req->object))
        return 1;
    return !same_str(lookup_map_get(lo, LOOKUP_LABEL_MANAGED_BY),
                     lookup_map_get(ln, LOOKUP_LABEL_MANAGED_BY)) ||
           !same_str(lookup_map_get(lo, LOOKUP_LABEL_PART_OF),
                     lookup_map_get(ln, LOOKUP_LABEL_PART_OF)) ||
           ((ro || rn) && !(ro && rn && cJSON_Compare(ro, rn, 1)));
}

/*
 * A StatefulSet without etcd-druid's labels is still an Etcd's when an Etcd
 * owns it or one of its name lives in its namespace (the StatefulSet
 * etcd-druid creates is named as its Etcd): m then names that Etcd, and the
 * Etcd lookup that follows decides (not found: not an Etcd's).
 */
void member_sts_by_name(const struct review_req *req, struct member_meta *m)
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
