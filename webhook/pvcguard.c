/* pvcguard - the member-volume guard; see pvcguard.h. */
#include "webhook/pvcguard.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/hibguard.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "webhook/claimalias.h"
#include "webhook/glassadm.h"
#include "webhook/scaleguard.h"

int pvcguard_applies(const struct review_req *req, const struct member_meta *m)
{
    return req->op == REVIEW_OP_DELETE && member_is_kind(req, "", "PersistentVolumeClaim") &&
           m->managed && m->part_of && m->live;
}

void pvcguard_glass_problem(time_t now, const struct lookup_etcd *etcd, char *why, size_t size)
{
    char when[KTIME_LEN + 1] = "";

    if (!etcd->break_glass)
        snprintf(why, size, "annotation %s is not set", HIBGUARD_ANN_BREAK_GLASS);
    else if (etcd->break_glass_rc != KERR_OK)
        snprintf(why, size,
                 "annotation %s is ignored: its value is not \"<RFC 3339 expiry> <reason>\"",
                 HIBGUARD_ANN_BREAK_GLASS);
    else if (etcd->break_glass_expires <= now) {
        if (ktime_format(etcd->break_glass_expires, when) != KERR_OK)
            snprintf(when, sizeof(when), "?");
        snprintf(why, size, "annotation %s expired at %s", HIBGUARD_ANN_BREAK_GLASS, when);
    } else
        why[0] = '\0';
}

enum kerr pvcguard_judge(time_t now, const struct review_req *req, const struct member_meta *m,
                         const struct lookup_etcd *etcd, struct glassadm_pending *gp,
                         struct review_resp *resp, int *decided)
{
    char why[160], what[3 * LOOKUP_NAME_MAX + 64];
    char range[64];

    *decided = 0;
    pvcguard_glass_problem(now, etcd, why, sizeof(why));
    if (!why[0]) {
        snprintf(what, sizeof(what),
                 "deleting PersistentVolumeClaim %s/%s of running member %s-%ld", m->ns, m->pvc,
                 m->sts.name, m->ordinal);
        /* one use per value: recorded once the decision allows (webhook/glassadm.h) */
        glassadm_pend(gp, what, 0);
    }
    if (!why[0])
        return review_warn(resp,
                           "PersistentVolumeClaim %s/%s of running member %s-%ld of Etcd %s is "
                           "deleted, allowed by annotation %s: %s",
                           m->ns, m->pvc, m->sts.name, m->ordinal, m->part_of,
                           HIBGUARD_ANN_BREAK_GLASS, etcd->break_glass_reason);
    if (m->sts.ordinals_ok)
        snprintf(range, sizeof(range), "ordinals [%lld, %lld)", (long long)m->sts.start,
                 (long long)(m->sts.start + m->sts.replicas));
    else
        snprintf(range, sizeof(range), "ordinals that are not valid numbers");
    *decided = 1;
    return review_deny(resp,
                       "PersistentVolumeClaim %s/%s cannot be deleted by %s: it is the volume of "
                       "running member %s-%ld of Etcd %s (StatefulSet %s has %s), and the pod's "
                       "next restart would start that member on a new, empty volume. Scale the "
                       "Etcd down first or, if the volume must go now, allow it: kubectl "
                       "annotate etcd -n %s %s %s=\"<RFC 3339 expiry, at most 24h ahead> "
                       "<reason>\" (%s)",
                       m->ns, m->pvc, req->username, m->sts.name, m->ordinal, m->part_of,
                       m->sts.name, range, m->ns, m->part_of, HIBGUARD_ANN_BREAK_GLASS, why);
}

/*
 * True when ref (an owner reference) is StatefulSet sts, Etcd etcd or Pod sts-<ord> (ord:
 * digits); sts is ls bytes long (need not end there), etcd is NUL-terminated.
 */
static int owner_of_member(const cJSON *ref, const char *sts, size_t ls, const char *etcd,
                           const char *ord)
{
    const char *av = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ref, "apiVersion")),
               *k = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ref, "kind")),
               *n = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ref, "name"));

    if (!av || !k || !n)
        return 0;
    if (strcmp(k, "Etcd") == 0)
        return strcmp(n, etcd) == 0 && strncmp(av, "druid.gardener.cloud/", 21) == 0;
    if (strncmp(n, sts, ls) != 0)
        return 0;
    if (strcmp(k, "Pod") == 0)
        return strcmp(av, "v1") == 0 && n[ls] == '-' && strcmp(n + ls + 1, ord) == 0;
    return !n[ls] && strcmp(k, "StatefulSet") == 0 && strncmp(av, "apps/", 5) == 0;
}

/* The first owner reference in refs that is not a member's (owner_of_member), or NULL. */
static const cJSON *foreign_owner(const cJSON *refs, const char *sts, size_t ls, const char *etcd,
                                  const char *ord)
{
    const cJSON *ref;

    cJSON_ArrayForEach (ref, refs) {
        if (!owner_of_member(ref, sts, ls, etcd, ord))
            return ref;
    }
    return NULL;
}

/* The kind (what "kind") or the name (what "name") of owner reference ref, for a message. */
static const char *ref_str(const cJSON *ref, const char *what)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ref, what));

    return v ? v : strcmp(what, "kind") == 0 ? "(no kind)" : "(no name)";
}

enum kerr pvcguard_owners(const struct lookup *lk, const struct review_req *req,
                          struct review_resp *resp, int *decided)
{
    const cJSON *refs, *bad;
    const char *name, *ns;
    char e[LOOKUP_NAME_MAX + 1];
    struct lookup_etcd etcd;
    struct kerr_info err;
    size_t n, d, i;
    int other;
    enum kerr rc;

    *decided = 0;
    if ((req->op != REVIEW_OP_CREATE && req->op != REVIEW_OP_UPDATE) ||
        !member_is_kind(req, "", "PersistentVolumeClaim") || member_raw_problem(req->object))
        return KERR_OK;
    refs = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(req->object, "metadata"), "ownerReferences");
    name = lookup_meta_str(req->object, "name");
    ns = *req->namespace ? req->namespace : lookup_meta_str(req->object, "namespace");
    n = d = strlen(name);
    while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
        d--;
    if (!cJSON_IsArray(refs) || !refs->child || d == n || d < 2 || name[d - 1] != '-' ||
        d - 1 > LOOKUP_NAME_MAX)
        return KERR_OK;
    /* each "<template>-<E>" split of the name before "-<n>": E is an Etcd's name */
    for (i = 1; i + 1 < d - 1; i++) {
        if (name[i - 1] != '-')
            continue;
        memcpy(e, name + i, d - 1 - i);
        e[d - 1 - i] = '\0';
        if (!(bad = foreign_owner(refs, e, d - 1 - i, e, name + d)))
            continue;
        kerr_clear(&err);
        rc = lk->etcd(lk->ctx, ns, e, &etcd, &err);
        if (rc == KERR_NOTFOUND && !lookup_unconfirmed(rc, &err))
            continue;
        if (rc != KERR_OK) {
            *decided = 1;
            return review_errored(resp, 500,
                                  "PersistentVolumeClaim %s/%s may be the claim of a member of "
                                  "Etcd %s, which cannot be looked up (%s): not admitted with "
                                  "owner references unchecked",
                                  ns, name, e, err.msg);
        }
        /* another application's claim, its name read as E's too: an UPDATE on the old object */
        if ((rc = claimalias_review(lk, ns, req->old_object, req->op == REVIEW_OP_CREATE, name,
                                    i - 1, e, "admitted with owner references", &other, resp,
                                    decided)) ||
            *decided)
            return rc;
        if (other)
            continue;
        *decided = 1;
        return review_deny(
            resp,
            "PersistentVolumeClaim %s/%s is named as the claim of member %s-%s of Etcd %s and "
            "cannot be owned by %s %s: the garbage collector deletes a claim when any owner "
            "goes, and a member's volume is owned only by StatefulSet %s, Etcd %s or Pod %s-%s",
            ns, name, e, name + d, e, ref_str(bad, "kind"), ref_str(bad, "name"), e, e, e,
            name + d);
    }
    return KERR_OK;
}

/*
 * The ordinals req brings into a StatefulSet: those of [*lo1, *hi1) outside [*lo0, *hi0)
 * (a CREATE: every one). A Scale's start is m's StatefulSet's (m NULL: 0). 0 when req is
 * no such request or its numbers are not valid (the API server refuses those first).
 */
static int brought_in(const struct review_req *req, const struct member_meta *m, long *lo0,
                      long *hi0, long *lo1, long *hi1)
{
    long start = m && m->sts.ordinals_ok ? (long)m->sts.start : 0;

    *lo0 = *hi0 = *lo1 = *hi1 = 0;
    if (member_is_kind(req, "autoscaling", "Scale")) {
        if (req->op != REVIEW_OP_UPDATE ||
            member_replicas_count(req->old_object, 1, 2147483647L) < 0 ||
            member_replicas_count(req->object, 1, 2147483647L) < 0)
            return 0;
        *lo0 = *lo1 = start;
        *hi0 = start + member_replicas_count(req->old_object, 1, 2147483647L);
        *hi1 = start + member_replicas_count(req->object, 1, 2147483647L);
    } else if (!member_is_kind(req, "apps", "StatefulSet") || !cJSON_IsObject(req->object) ||
               !scaleguard_ordinals(req->object, lo1, hi1)) {
        return 0;
    } else if (req->op == REVIEW_OP_UPDATE) {
        if (!cJSON_IsObject(req->old_object) || !scaleguard_ordinals(req->old_object, lo0, hi0))
            return 0;
    } else if (req->op != REVIEW_OP_CREATE)
        return 0;
    if (*hi0 <= *lo0)
        *lo0 = *hi0 = *lo1;
    return *lo1 < *hi1 && (*lo1 < *lo0 || *hi1 > *hi0);
}

int pvcguard_claims(const struct review_req *req)
{
    long lo0, hi0, lo1, hi1;

    return brought_in(req, NULL, &lo0, &hi0, &lo1, &hi1);
}

/*
 * Whether the StatefulSet controller would give a member of req's StatefulSet a claim whose
 * name begins with the n bytes of t: t is one of spec.volumeClaimTemplates' names in the
 * request's object (or its old object). A Scale carries no templates: every prefix counts.
 */
static int template_of(const struct review_req *req, const char *t, size_t n)
{
    const cJSON *objs[2] = { req->object, req->old_object }, *v;
    const char *name;
    int i;

    if (!member_is_kind(req, "apps", "StatefulSet"))
        return 1;
    for (i = 0; i < 2; i++)
        cJSON_ArrayForEach (v, kjson_get_arr(objs[i], "spec.volumeClaimTemplates")) {
            name = lookup_meta_str(v, "name");
            if (strlen(name) == n && memcmp(name, t, n) == 0)
                return 1;
        }
    return 0;
}

/*
 * The first PVC of items named "<template>-<sts>-<n>" (template one of req's, see
 * template_of), n in [lo1, hi1) but not in [lo0, hi0), with an owner reference that is not a
 * member's of sts and etcd (*bad: that owner) or seeded with data by spec.dataSource or
 * spec.dataSourceRef (*bad NULL, *field the field's name): NULL when there is none, else the PVC,
 * with *ord n.
 */
static const cJSON *planted_claim(const struct review_req *req, const cJSON *items, const char *sts,
                                  const char *etcd, long lo0, long hi0, long lo1, long hi1,
                                  const cJSON **bad, const char **field, int64_t *ord)
{
    size_t ls = strlen(sts), i;
    const cJSON *p, *refs, *spec;
    const char *name;

    cJSON_ArrayForEach (p, items) {
        name = lookup_meta_str(p, "name");
        refs = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "metadata"),
                                                "ownerReferences");
        spec = cJSON_GetObjectItemCaseSensitive(p, "spec");
        /* each "<template>-" prefix the name may have before "<sts>-<n>" */
        for (i = 1; name[0] && name[i]; i++) {
            if (name[i] != '-' || !lookup_pod_ordinal(name + i + 1, sts, ord) || *ord < lo1 ||
                *ord >= hi1 || (*ord >= lo0 && *ord < hi0) || !template_of(req, name, i))
                continue;
            if (cJSON_IsArray(refs) &&
                (*bad = foreign_owner(refs, sts, ls, etcd, name + i + 1 + ls + 1)))
                return p;
            /* a bound claim carries volumeName: only a clone's fields tell a seeded one */
            *field = kjson_has(spec, "dataSource")      ? "dataSource"
                     : kjson_has(spec, "dataSourceRef") ? "dataSourceRef"
                                                        : NULL;
            if (*field && !cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(spec, *field)))
                return p;
        }
    }
    return NULL;
}

/*
 * A claim seeded with data (pvc, by field) that member m->name-ord would take: refused
 * unless the break glass on etcd counts (its use into *gp, a warning). *decided as
 * pvcguard_planted.
 */
static enum kerr seeded(time_t now, const struct review_req *req, const struct member_meta *m,
                        const struct lookup_etcd *etcd, const cJSON *pvc, const char *field,
                        int64_t ord, struct glassadm_pending *gp, struct review_resp *resp,
                        int *decided)
{
    const char *verb = req->op == REVIEW_OP_CREATE ? "creating" : "scaling up";
    char why[160], what[3 * LOOKUP_NAME_MAX + 96];

    pvcguard_glass_problem(now, etcd, why, sizeof(why));
    if (!why[0]) {
        snprintf(what, sizeof(what),
                 "%s StatefulSet %s/%s onto PersistentVolumeClaim %s with spec.%s", verb, m->ns,
                 m->name, lookup_meta_str(pvc, "name"), field);
        glassadm_pend(gp, what, 0);
        return review_warn(resp, "%s, allowed by annotation %s: %s", what, HIBGUARD_ANN_BREAK_GLASS,
                           etcd->break_glass_reason);
    }
    *decided = 1;
    return review_deny(resp,
                       "%s StatefulSet %s/%s of Etcd %s is refused: its member %s-%lld would use "
                       "PersistentVolumeClaim %s/%s, created with spec.%s, and start on the data "
                       "of that volume instead of its own or its final snapshot's. Delete the "
                       "claim (the StatefulSet controller creates it again, empty) or, if that "
                       "data is meant: kubectl annotate etcd -n %s %s %s=\"<RFC 3339 expiry, at "
                       "most 24h ahead> <reason>\" (%s)",
                       verb, m->ns, m->name, m->part_of, m->name, (long long)ord, m->ns,
                       lookup_meta_str(pvc, "name"), field, m->ns, m->part_of,
                       HIBGUARD_ANN_BREAK_GLASS, why);
}

enum kerr pvcguard_planted(time_t now, const struct lookup *lk, const struct review_req *req,
                           const struct member_meta *m, const struct lookup_etcd *etcd,
                           struct glassadm_pending *gp, struct review_resp *resp, int *decided)
{
    long lo0, hi0, lo1, hi1;
    const cJSON *pvc, *bad = NULL;
    const char *field = NULL;
    cJSON *items = NULL;
    struct kerr_info e;
    int64_t ord = -1;
    enum kerr rc;

    *decided = 0;
    if (!brought_in(req, m, &lo0, &hi0, &lo1, &hi1))
        return KERR_OK;
    kerr_clear(&e);
    if (!lk->pvcs)
        kerr_set(&e, KERR_UNSUPPORTED, "no PersistentVolumeClaim lookup is configured");
    else
        lk->pvcs(lk->ctx, m->ns, &items, &e);
    if (e.code != KERR_OK) {
        cJSON_Delete(items);
        *decided = 1;
        return review_errored(resp, 500,
                              "%s StatefulSet %s/%s of Etcd %s: the PersistentVolumeClaims its "
                              "new members would use cannot be told (%s), and a claim planted "
                              "with an owner of someone else's would take a member's volume "
                              "with that owner: not admitted unchecked",
                              req->op == REVIEW_OP_CREATE ? "creating" : "scaling up", m->ns,
                              m->name, m->part_of, e.msg);
    }
    pvc = planted_claim(req, items, m->name, m->part_of, lo0, hi0, lo1, hi1, &bad, &field, &ord);
    rc = KERR_OK;
    if (pvc && !bad)
        rc = seeded(now, req, m, etcd, pvc, field, ord, gp, resp, decided);
    else if (pvc) {
        *decided = 1;
        rc = review_deny(
            resp,
            "%s StatefulSet %s/%s of Etcd %s is refused: its member %s-%lld would use "
            "PersistentVolumeClaim %s/%s, which is owned by %s %s, and the garbage collector "
            "deletes a claim when any owner goes (a member's volume is owned only by "
            "StatefulSet %s, Etcd %s or Pod %s-%lld). Remove that owner reference (kubectl "
            "patch pvc -n %s %s --type json -p '[{\"op\": \"remove\", \"path\": "
            "\"/metadata/ownerReferences\"}]') or delete the claim, then try again",
            req->op == REVIEW_OP_CREATE ? "creating" : "scaling up", m->ns, m->name, m->part_of,
            m->name, (long long)ord, m->ns, lookup_meta_str(pvc, "name"), ref_str(bad, "kind"),
            ref_str(bad, "name"), m->name, m->part_of, m->name, (long long)ord, m->ns,
            lookup_meta_str(pvc, "name"));
    }
    cJSON_Delete(items);
    return rc;
}

/* 1 when name has the shape of a member's claim, "<a>-<b>-<digits>" (a and b not empty). */
static int claim_shaped(const char *name)
{
    const char *d = name ? strrchr(name, '-') : NULL, *p;

    if (!d || !d[1] || d == name)
        return 0;
    for (p = d + 1; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    for (p = d - 1; p > name; p--)
        if (*p == '-')
            return p[1] != '-' && p + 1 < d;
    return 0;
}

/* 1 when pod p mounts claim and is not being deleted. */
static int mounts(const cJSON *p, const char *claim)
{
    const cJSON *v;

    if (kjson_has(p, "metadata.deletionTimestamp"))
        return 0;
    cJSON_ArrayForEach (v, kjson_get_arr(p, "spec.volumes")) {
        const char *c = kjson_get_str(v, "persistentVolumeClaim.claimName");

        if (c && strcmp(c, claim) == 0)
            return 1;
    }
    return 0;
}

/*
 * Judge claim against pod p that mounts it: the Etcd "<E>" of its name "<E>-<digits>" looked
 * up; *decided as pvcguard_in_use.
 */
static enum kerr in_use_by(time_t now, const struct lookup *lk, const struct review_req *req,
                           const cJSON *p, struct pvcguard_glass *pg, struct review_resp *resp,
                           int *decided)
{
    const char *pod = lookup_meta_str(p, "name"), *d = strrchr(pod, '-');
    char etcd_name[254], why[160], what[3 * LOOKUP_NAME_MAX + 64];
    struct lookup_etcd etcd;
    struct kerr_info e;
    int64_t ord;
    enum kerr rc;

    if (!d || (size_t)(d - pod) >= sizeof(etcd_name))
        return KERR_OK;
    memcpy(etcd_name, pod, (size_t)(d - pod));
    etcd_name[d - pod] = '\0';
    if (!lookup_pod_ordinal(pod, etcd_name, &ord))
        return KERR_OK;
    kerr_clear(&e);
    rc = lk->etcd(lk->ctx, req->namespace, etcd_name, &etcd, &e);
    if (rc == KERR_NOTFOUND && !lookup_unconfirmed(rc, &e))
        return KERR_OK;
    if (rc != KERR_OK) {
        *decided = 1;
        return review_errored(resp, 500,
                              "PersistentVolumeClaim %s/%s is mounted by pod %s, and whether "
                              "that is a member of Etcd %s could not be told: %s",
                              req->namespace, req->name, pod, etcd_name, e.msg);
    }
    if (etcd.deleting)
        return KERR_OK;
    pvcguard_glass_problem(now, &etcd, why, sizeof(why));
    if (!why[0] && pg->gp.what[0] && strcmp(pg->etcd.uid, etcd.uid) != 0) {
        /* one request, one recorded use: a second Etcd's break glass is not admitted on */
        *decided = 1;
        return review_deny(resp,
                           "PersistentVolumeClaim %s/%s is mounted by members of Etcd %s and Etcd "
                           "%s: a request is admitted on the break glass of one Etcd only",
                           req->namespace, req->name, pg->name, etcd_name);
    }
    if (!why[0] && !pg->gp.what[0]) {
        snprintf(what, sizeof(what), "deleting PersistentVolumeClaim %s/%s mounted by member %s",
                 req->namespace, req->name, pod);
        glassadm_pend(&pg->gp, what, 0);
        snprintf(pg->name, sizeof(pg->name), "%s", etcd_name);
        pg->etcd = etcd;
    }
    if (!why[0])
        return review_warn(resp,
                           "PersistentVolumeClaim %s/%s, mounted by member %s of Etcd %s, is "
                           "deleted, allowed by annotation %s: %s",
                           req->namespace, req->name, pod, etcd_name, HIBGUARD_ANN_BREAK_GLASS,
                           etcd.break_glass_reason);
    *decided = 1;
    return review_deny(resp,
                       "PersistentVolumeClaim %s/%s cannot be deleted by %s: pod %s, member %lld "
                       "of Etcd %s, mounts it (its StatefulSet does not hold it: deleted with "
                       "its pods orphaned), and that member's next start would be on a new, "
                       "empty volume. Let etcd-druid re-create the StatefulSet, scale the Etcd "
                       "down first or, if the volume must go now, allow it: kubectl annotate "
                       "etcd -n %s %s %s=\"<RFC 3339 expiry, at most 24h ahead> <reason>\" (%s)",
                       req->namespace, req->name, req->username, pod, (long long)ord, etcd_name,
                       req->namespace, etcd_name, HIBGUARD_ANN_BREAK_GLASS, why);
}

enum kerr pvcguard_in_use(time_t now, const struct lookup *lk, const struct review_req *req,
                          struct pvcguard_glass *pg, struct review_resp *resp, int *decided)
{
    cJSON *items = NULL;
    const cJSON *p;
    struct kerr_info e;
    enum kerr rc;

    *decided = 0;
    if (req->op != REVIEW_OP_DELETE || !member_is_kind(req, "", "PersistentVolumeClaim") ||
        !claim_shaped(req->name))
        return KERR_OK;
    kerr_clear(&e);
    rc = lk->pod_items ? lk->pod_items(lk->ctx, req->namespace, &items, &e)
                       : kerr_set(&e, KERR_UNSUPPORTED, "no pod lookup");
    if (rc != KERR_OK) {
        *decided = 1;
        return review_errored(resp, 500,
                              "PersistentVolumeClaim %s/%s: the pods of %s could not be listed "
                              "(%s): a claim a running member may mount is not deleted on an "
                              "unanswered question",
                              req->namespace, req->name, req->namespace, e.msg);
    }
    cJSON_ArrayForEach (p, items) {
        if (!mounts(p, req->name))
            continue;
        if ((rc = in_use_by(now, lk, req, p, pg, resp, decided)) || *decided)
            break;
    }
    cJSON_Delete(items);
    return rc;
}
