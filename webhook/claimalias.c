/* claimalias - another application's claim read as an Etcd's; see claimalias.h. */
#include "webhook/claimalias.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/kjson.h"
#include "common/ktime.h"

/* The first owner reference of pvc to a StatefulSet (apps) not named sts_name, or NULL. */
static const cJSON *other_sts_owner(const cJSON *pvc, const char *sts_name)
{
    const cJSON *ref;

    cJSON_ArrayForEach (ref, kjson_get_arr(pvc, "metadata.ownerReferences")) {
        const char *av = kjson_get_str(ref, "apiVersion"), *k = kjson_get_str(ref, "kind"),
                   *n = kjson_get_str(ref, "name");

        if (av && k && n && *n && strncmp(av, "apps/", 5) == 0 && strcmp(k, "StatefulSet") == 0 &&
            strcmp(n, sts_name) != 0)
            return ref;
    }
    return NULL;
}

/* 1 when one of sts's spec.volumeClaimTemplates is named as the tlen bytes of t (or unread). */
static int has_template(const cJSON *sts, const char *t, size_t tlen)
{
    const cJSON *tmpls = kjson_get(sts, "spec.volumeClaimTemplates"), *v;

    if (tmpls && !cJSON_IsArray(tmpls))
        return 1;
    cJSON_ArrayForEach (v, tmpls) {
        const char *n = kjson_get_str(v, "metadata.name");

        if (!n || (strlen(n) == tlen && memcmp(n, t, tlen) == 0))
            return 1;
    }
    return 0;
}

/* 1 when the template (the tlen bytes of name) is sts_name: etcd-druid's default claim template,
 * the Etcd's name. Not looked into: such a claim stays the Etcd's without an API call. */
static int default_template(const char *name, size_t tlen, const char *sts_name)
{
    return strlen(sts_name) == tlen && memcmp(name, sts_name, tlen) == 0;
}

/* metadata.creationTimestamp of obj in seconds; 0 when absent or not an RFC 3339 time. */
static time_t created_at(const cJSON *obj)
{
    struct timespec ts;

    if (ktime_parse(lookup_meta_str(obj, "creationTimestamp"), &ts, NULL) != KERR_OK ||
        ts.tv_sec <= 0)
        return 0;
    return ts.tv_sec;
}

int claimalias_proven(const cJSON *pvc, int creating, const char *name, size_t tlen,
                      const char *sts_name, const cJSON *sts, char *why, size_t size)
{
    char made[KTIME_LEN + 1], claim[KTIME_LEN + 1];
    const cJSON *ref = creating ? NULL : other_sts_owner(pvc, sts_name);
    time_t s, c = 0;

    why[0] = '\0';
    /* a stored claim that is not an object (a malformed review) proves nothing */
    if (!name || tlen == 0 || tlen >= strlen(name) || (!creating && !cJSON_IsObject(pvc)))
        return 0;
    if (ref) {
        snprintf(why, size,
                 "it is owned by StatefulSet %.253s, whose claim it is, and a member of "
                 "StatefulSet %.253s never starts on a claim with such an owner",
                 kjson_get_str(ref, "name"), sts_name);
        return 1;
    }
    if (default_template(name, tlen, sts_name) || !sts ||
        strcmp(lookup_meta_str(sts, "name"), sts_name) != 0 || has_template(sts, name, tlen))
        return 0;
    s = created_at(sts);
    if (!creating)
        c = created_at(pvc);
    if (s == 0 || (!creating && (c == 0 || c <= s)))
        return 0;
    if (ktime_format(s, made) != KERR_OK)
        snprintf(made, sizeof(made), "?");
    if (creating || ktime_format(c, claim) != KERR_OK)
        snprintf(claim, sizeof(claim), "now");
    snprintf(why, size,
             "StatefulSet %.253s, created at %s before the claim (%s), has no claim template "
             "%.*s: none of its members, nor of an earlier StatefulSet of that name, took it",
             sts_name, made, claim, (int)(tlen > 253 ? 253 : tlen), name);
    return 1;
}

enum kerr claimalias_other(const struct lookup *lk, const char *ns, const cJSON *pvc, int creating,
                           const char *name, size_t tlen, const char *sts_name, int *other,
                           char *why, size_t size, struct kerr_info *err)
{
    cJSON *sts = NULL;
    enum kerr rc;

    *other = 0;
    why[0] = '\0';
    if (!name || tlen == 0 || tlen >= strlen(name))
        return KERR_OK;
    if (claimalias_proven(pvc, creating, name, tlen, sts_name, NULL, why, size)) {
        *other = 1;
        return KERR_OK;
    }
    if (default_template(name, tlen, sts_name))
        return KERR_OK;
    if (!lk->sts_fresh)
        return kerr_set(err, KERR_UNSUPPORTED, "no StatefulSet lookup is configured");
    /* from the API server: a cache may not have seen the StatefulSet re-created */
    rc = lk->sts_fresh(lk->ctx, ns, sts_name, &sts, err);
    if (rc == KERR_NOTFOUND && !lookup_unconfirmed(rc, err)) {
        kerr_clear(err);
        return KERR_OK;
    }
    if (rc != KERR_OK)
        return rc;
    *other = claimalias_proven(pvc, creating, name, tlen, sts_name, sts, why, size);
    cJSON_Delete(sts);
    return KERR_OK;
}

enum kerr claimalias_review(const struct lookup *lk, const char *ns, const cJSON *pvc, int creating,
                            const char *name, size_t tlen, const char *sts_name, const char *verb,
                            int *other, struct review_resp *resp, int *decided)
{
    char why[CLAIMALIAS_WHY_MAX];
    struct kerr_info err;

    *decided = 0;
    kerr_clear(&err);
    if (claimalias_other(lk, ns, pvc, creating, name, tlen, sts_name, other, why, sizeof(why),
                         &err) == KERR_OK)
        return KERR_OK;
    *decided = 1;
    return review_errored(resp, 500,
                          "PersistentVolumeClaim %s/%s is named as a member claim of StatefulSet "
                          "%s, and whether that StatefulSet ever took it cannot be told (%s): "
                          "not %s on an unanswered question",
                          ns, name, sts_name, err.msg, verb);
}
