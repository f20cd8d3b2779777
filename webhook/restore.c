/* restore - the restoring rules for Etcd objects; see restore.h. */
#include "webhook/restore.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "webhook/lookup.h"
#include "webhook/member.h"

static int equal(const cJSON *a, const cJSON *b);

static int cmp_member(const void *pa, const void *pb)
{
    const cJSON *a = *(const cJSON *const *)pa, *b = *(const cJSON *const *)pb;

    return strcmp(a->string ? a->string : "", b->string ? b->string : "");
}

static size_t count_from(const cJSON *e)
{
    size_t n = 0;

    for (; e; e = e->next)
        n++;
    return n;
}

/* Members from x and y on, in any order: sort both by key and compare pairwise. */
static int members_equal_sorted(const cJSON *x, const cJSON *y)
{
    size_t n = count_from(x), i;
    const cJSON **ax = NULL, **ay = NULL;
    int eq = 0;

    if (n != count_from(y))
        return 0;
    ax = malloc(n * sizeof(*ax));
    ay = malloc(n * sizeof(*ay));
    if (!ax || !ay)
        goto out;
    for (i = 0; i < n; i++, x = x->next, y = y->next) {
        ax[i] = x;
        ay[i] = y;
    }
    qsort(ax, n, sizeof(*ax), cmp_member);
    qsort(ay, n, sizeof(*ay), cmp_member);
    for (i = 0; i < n; i++) {
        if (cmp_member(&ax[i], &ay[i]) != 0 || !equal(ax[i], ay[i]))
            goto out;
    }
    eq = 1;
out:
    free(ax);
    free(ay);
    return eq;
}

static int objects_equal(const cJSON *a, const cJSON *b)
{
    const cJSON *x = a->child, *y = b->child;

    /* Usually both sides list the members in the same order: walk them together. */
    while (x && y && x->string && y->string && strcmp(x->string, y->string) == 0) {
        if (!equal(x, y))
            return 0;
        x = x->next;
        y = y->next;
    }
    if (!x && !y)
        return 1;
    return members_equal_sorted(x, y);
}

static int equal(const cJSON *a, const cJSON *b)
{
    const cJSON *x, *y;

    if ((a->type & 0xFF) != (b->type & 0xFF))
        return 0;
    if (cJSON_IsNumber(a))
        return a->valuedouble == b->valuedouble;
    if (cJSON_IsString(a))
        return strcmp(a->valuestring ? a->valuestring : "", b->valuestring ? b->valuestring : "") ==
               0;
    if (cJSON_IsObject(a))
        return objects_equal(a, b);
    if (cJSON_IsArray(a)) {
        for (x = a->child, y = b->child; x && y; x = x->next, y = y->next) {
            if (!equal(x, y))
                return 0;
        }
        return !x && !y;
    }
    return 1; /* true, false, null, raw of the same type */
}

int restore_json_equal(const cJSON *a, const cJSON *b)
{
    if (cJSON_IsNull(a))
        a = NULL;
    if (cJSON_IsNull(b))
        b = NULL;
    if (!a || !b)
        return !a && !b;
    return equal(a, b);
}

static int has_label(const cJSON *obj, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(kjson_get_obj(obj, "metadata.labels"), key) != NULL;
}

static enum kerr problem(struct buf *b, const char *what)
{
    return buf_appendf(b, "%s label cannot be removed: %s\n", LOOKUP_LABEL_RESTORING, what);
}

enum kerr restore_check_valid(const cJSON *etcd, struct buf *problems)
{
    const cJSON *store = kjson_get(etcd, "spec.backup.store");
    const char *prefix;
    enum kerr rc = KERR_OK;

    if (!cJSON_IsNumber(kjson_get(etcd, "spec.replicas")))
        rc = problem(problems, "spec.replicas is missing");
    if (!rc && !kjson_get_obj(etcd, "spec.etcd"))
        rc = problem(problems, "spec.etcd is missing");
    if (!rc && !kjson_get_obj(etcd, "spec.backup"))
        rc = problem(problems, "spec.backup is missing");
    if (rc || !store || cJSON_IsNull(store))
        return rc;
    prefix = kjson_get_str(store, "prefix");
    if (!prefix || !*prefix)
        rc = problem(problems, "spec.backup.store.prefix is missing although a store is set");
    return rc;
}

static enum kerr decide_delete(const struct review_req *req, int restoring,
                               struct review_resp *resp)
{
    const cJSON *old = req->old_object;

    if (!restoring)
        return review_allow(resp, "deletion of Etcd %s/%s is allowed",
                            lookup_meta_str(old, "namespace"), lookup_meta_str(old, "name"));
    if (has_label(old, LOOKUP_LABEL_ALLOW_DELETE))
        return review_allow(resp, "deletion of restoring Etcd %s/%s is allowed by label %s",
                            lookup_meta_str(old, "namespace"), lookup_meta_str(old, "name"),
                            LOOKUP_LABEL_ALLOW_DELETE);
    return review_deny(resp,
                       "\ndelete not allowed while %s label exists, unless %s label also exists",
                       LOOKUP_LABEL_RESTORING, LOOKUP_LABEL_ALLOW_DELETE);
}

static enum kerr decide_update(const struct review_req *req, struct review_resp *resp)
{
    const cJSON *old = req->old_object, *obj = req->object;
    struct buf problems;
    enum kerr rc;

    if (!cJSON_IsObject(obj))
        return review_errored(resp, 400, "object: expected the Etcd being stored");
    if (!restore_json_equal(cJSON_GetObjectItemCaseSensitive(old, "spec"),
                            cJSON_GetObjectItemCaseSensitive(obj, "spec")))
        return review_deny(resp, "\nspec changes not allowed while %s label exists",
                           LOOKUP_LABEL_RESTORING);
    if (has_label(obj, LOOKUP_LABEL_RESTORING))
        return review_allow(resp, "metadata changes of restoring Etcd %s/%s are allowed",
                            lookup_meta_str(obj, "namespace"), lookup_meta_str(obj, "name"));
    buf_init(&problems, REVIEW_MAX_TEXT);
    rc = restore_check_valid(obj, &problems);
    if (!rc && problems.len > 0) {
        problems.data[problems.len - 1] = '\0'; /* no newline after the last problem */
        rc = review_deny(resp, "\n%s", problems.data);
    } else if (!rc) {
        rc = review_allow(resp, "Etcd %s/%s leaves the restoring state",
                          lookup_meta_str(obj, "namespace"), lookup_meta_str(obj, "name"));
    }
    buf_release(&problems);
    return rc;
}

enum kerr restore_decide(const struct review_req *req, struct review_resp *resp,
                         struct kerr_info *err)
{
    int restoring;
    enum kerr rc;

    if (req->op != REVIEW_OP_UPDATE && req->op != REVIEW_OP_DELETE) {
        rc = review_allow(resp, "operation %s is allowed", req->operation);
        goto out;
    }
    if (!cJSON_IsObject(req->old_object)) {
        rc = review_errored(resp, 400, "oldObject: expected the stored Etcd");
        goto out;
    }
    restoring = has_label(req->old_object, LOOKUP_LABEL_RESTORING);
    if (req->op == REVIEW_OP_DELETE)
        rc = decide_delete(req, restoring, resp);
    else if (!restoring)
        rc = review_allow(resp, "Etcd %s/%s is not restoring",
                          lookup_meta_str(req->old_object, "namespace"),
                          lookup_meta_str(req->old_object, "name"));
    else
        rc = decide_update(req, resp);
out:
    if (rc)
        kerr_set(err, rc, "building the admission response");
    return rc;
}

enum kerr restore_decide_scale(const struct lookup *lk, const struct review_req *req,
                               struct review_resp *resp, struct kerr_info *err)
{
    struct lookup_etcd etcd;
    struct kerr_info e;
    long from, to;
    enum kerr rc;

    if (req->op != REVIEW_OP_UPDATE) {
        rc = review_allow(resp, "operation %s is allowed", req->operation);
        goto out;
    }
    from = member_replicas_count(req->old_object, 1, LONG_MAX);
    to = member_replicas_count(req->object, 1, LONG_MAX);
    if (from >= 0 && from == to) {
        rc = review_allow(resp, "replicas of Etcd %s/%s unchanged", req->namespace, req->name);
        goto out;
    }
    kerr_clear(&e);
    if (!lk || !lk->etcd)
        rc = kerr_set(&e, KERR_UNSUPPORTED, "no Etcd lookup");
    else
        rc = lk->etcd(lk->ctx, req->namespace, req->name, &etcd, &e);
    if (rc == KERR_NOTFOUND && strcmp(e.reason, LOOKUP_REASON_UNCONFIRMED) != 0) {
        rc = review_allow(resp, "Etcd %s/%s not found", req->namespace, req->name);
        goto out;
    }
    if (rc != KERR_OK) {
        rc = review_errored(resp, 500,
                            "Etcd %s/%s could not be looked up, a change of its replicas is not "
                            "admitted unconfirmed: %s",
                            req->namespace, req->name, e.msg);
        goto out;
    }
    if (etcd.restoring)
        rc = review_deny(resp, "\nspec changes not allowed while %s label exists",
                         LOOKUP_LABEL_RESTORING);
    else
        rc = review_allow(resp, "Etcd %s/%s is not restoring", req->namespace, req->name);
out:
    if (rc)
        kerr_set(err, rc, "building the admission response");
    return rc;
}

/* In metadata copy m: the map member map without key k (NULL: none), gone when left empty. */
static void drop_key(cJSON *m, const char *map, const char *k)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(m, map);

    if (k && cJSON_IsObject(v))
        cJSON_DeleteItemFromObjectCaseSensitive(v, k);
    if (cJSON_IsObject(v) && !v->child)
        cJSON_DeleteItemFromObjectCaseSensitive(m, map);
}

/*
 * obj's metadata (OWNED copy; NULL without memory, *nomem set) without what the API server
 * writes itself or a removal by hand may change with the label: resourceVersion, generation,
 * managedFields, the restoring and allow-delete labels; empty maps dropped (Kubernetes omits
 * them).
 */
static cJSON *comparable_meta(const cJSON *obj, int *nomem)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    cJSON *m = cJSON_IsObject(md) ? cJSON_Duplicate(md, 1) : cJSON_CreateObject();

    if (!m) {
        *nomem = 1;
        return NULL;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(m, "resourceVersion");
    cJSON_DeleteItemFromObjectCaseSensitive(m, "generation");
    cJSON_DeleteItemFromObjectCaseSensitive(m, "managedFields");
    drop_key(m, "labels", LOOKUP_LABEL_RESTORING);
    drop_key(m, "labels", LOOKUP_LABEL_ALLOW_DELETE);
    drop_key(m, "annotations", NULL);
    return m;
}

enum restore_removal restore_removal(const struct review_req *req)
{
    const cJSON *old = req->old_object, *obj = req->object;
    int nomem = 0, alone;
    cJSON *a, *b;

    if (req->op != REVIEW_OP_UPDATE || !cJSON_IsObject(obj) ||
        !has_label(old, LOOKUP_LABEL_RESTORING) || has_label(obj, LOOKUP_LABEL_RESTORING))
        return RESTORE_REMOVAL_NONE;
    a = comparable_meta(old, &nomem);
    b = comparable_meta(obj, &nomem);
    alone = !nomem && restore_json_equal(a, b);
    cJSON_Delete(a);
    cJSON_Delete(b);
    return alone ? RESTORE_REMOVAL_ALONE : RESTORE_REMOVAL_WITH_OTHERS;
}
