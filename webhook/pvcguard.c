/* pvcguard - the member-volume guard; see pvcguard.h. */
#include "webhook/pvcguard.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/hibguard.h"
#include "common/ktime.h"

int pvcguard_applies(const struct review_req *req, const struct member_meta *m)
{
    return req->op == REVIEW_OP_DELETE && member_is_kind(req, "", "PersistentVolumeClaim") &&
           m->managed && m->part_of && m->live;
}

/* Why the break glass on etcd does not count ("" when it counts), into why. */
static void glass_problem(time_t now, const struct lookup_etcd *etcd, char *why, size_t size)
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
                         const struct lookup_etcd *etcd, struct review_resp *resp, int *decided)
{
    char why[160];
    char range[64];

    *decided = 0;
    glass_problem(now, etcd, why, sizeof(why));
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

/* True when ref (an owner reference) is StatefulSet e, Etcd e or Pod e-<ord> (ord: digits). */
static int owner_of_member(const cJSON *ref, const char *e, size_t le, const char *ord)
{
    const char *av = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ref, "apiVersion")),
               *k = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ref, "kind")),
               *n = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ref, "name"));

    if (!av || !k || !n || strncmp(n, e, le) != 0)
        return 0;
    if (strcmp(k, "Pod") == 0)
        return strcmp(av, "v1") == 0 && n[le] == '-' && strcmp(n + le + 1, ord) == 0;
    if (n[le])
        return 0;
    return (strcmp(k, "StatefulSet") == 0 && strncmp(av, "apps/", 5) == 0) ||
           (strcmp(k, "Etcd") == 0 && strncmp(av, "druid.gardener.cloud/", 21) == 0);
}

/* The first owner reference in refs that is not a member's of Etcd e, or NULL. */
static const cJSON *foreign_owner(const cJSON *refs, const char *e, size_t le, const char *ord)
{
    const cJSON *ref;

    cJSON_ArrayForEach (ref, refs) {
        if (!owner_of_member(ref, e, le, ord))
            return ref;
    }
    return NULL;
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
        if (!(bad = foreign_owner(refs, e, d - 1 - i, name + d)))
            continue;
        kerr_clear(&err);
        rc = lk->etcd(lk->ctx, ns, e, &etcd, &err);
        if (rc == KERR_NOTFOUND && !lookup_unconfirmed(rc, &err))
            continue;
        *decided = 1;
        if (rc != KERR_OK)
            return review_errored(resp, 500,
                                  "PersistentVolumeClaim %s/%s may be the claim of a member of "
                                  "Etcd %s, which cannot be looked up (%s): not admitted with "
                                  "owner references unchecked",
                                  ns, name, e, err.msg);
        return review_deny(
            resp,
            "PersistentVolumeClaim %s/%s is named as the claim of member %s-%s of Etcd %s and "
            "cannot be owned by %s %s: the garbage collector deletes a claim when any owner "
            "goes, and a member's volume is owned only by StatefulSet %s, Etcd %s or Pod %s-%s",
            ns, name, e, name + d, e,
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(bad, "kind"))
                ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(bad, "kind"))
                : "(no kind)",
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(bad, "name"))
                ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(bad, "name"))
                : "(no name)",
            e, e, e, name + d);
    }
    return KERR_OK;
}
