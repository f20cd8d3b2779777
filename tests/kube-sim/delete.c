#include "tests/kube-sim/delete.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "tests/kube-sim/admit.h"
#include "tests/kube-sim/obj.h"
#include "tests/kube-sim/svcip.h"

#define MAX_RETRIES 16

static int is_builtin(const struct ksim_rtype *rt, const char *group, const char *plural)
{
    return !rt->custom && strcmp(rt->group, group) == 0 && strcmp(rt->plural, plural) == 0;
}

static int check_preconditions(const struct ksim_write_ctx *c, const cJSON *cur,
                               const cJSON *options, struct ksim_apierr *e)
{
    const char *uid = kjson_get_str(options, "preconditions.uid");
    const char *rv = kjson_get_str(options, "preconditions.resourceVersion");
    const char *have = ksim_obj_meta_str(cur, "uid");
    char why[512];

    if (uid && *uid && (!have || strcmp(uid, have) != 0)) {
        snprintf(why, sizeof(why),
                 "Precondition failed: UID in precondition: %s, UID in object meta: %s", uid,
                 have ? have : "");
        return ksim_apierr_conflict(e, c->rt->group, c->rt->plural, c->name, why);
    }
    have = ksim_obj_meta_str(cur, "resourceVersion");
    if (rv && *rv && (!have || strcmp(rv, have) != 0)) {
        snprintf(why, sizeof(why),
                 "Precondition failed: ResourceVersion in precondition: %s, ResourceVersion in "
                 "object meta: %s",
                 rv, have ? have : "");
        return ksim_apierr_conflict(e, c->rt->group, c->rt->plural, c->name, why);
    }
    return 0;
}

/* propagationPolicy from the query, the options or orphanDependents; default Background. */
static int policy_of(const cJSON *options, const char *query, const char **out,
                     struct ksim_apierr *e)
{
    const char *p = query && *query ? query : kjson_get_str(options, "propagationPolicy");
    const cJSON *orphan = kjson_get(options, "orphanDependents");

    if (!p && cJSON_IsBool(orphan))
        p = cJSON_IsTrue(orphan) ? "Orphan" : "Foreground";
    if (!p)
        p = "Background";
    if (strcmp(p, "Orphan") != 0 && strcmp(p, "Background") != 0 && strcmp(p, "Foreground") != 0)
        return ksim_apierr_invalid(e, "meta.k8s.io", "DeleteOptions", "", "propagationPolicy",
                                   "FieldValueNotSupported",
                                   "propagationPolicy: Unsupported value: supported values: "
                                   "\"Foreground\", \"Background\", \"Orphan\", \"nil\"");
    *out = p;
    return 0;
}

static cJSON *success_status(const struct ksim_write_ctx *c, const cJSON *obj)
{
    cJSON *st = cJSON_CreateObject(), *d;
    const char *uid = ksim_obj_meta_str(obj, "uid");

    if (!st || !cJSON_AddStringToObject(st, "kind", "Status") ||
        !cJSON_AddStringToObject(st, "apiVersion", "v1") ||
        !cJSON_AddObjectToObject(st, "metadata") ||
        !cJSON_AddStringToObject(st, "status", "Success") ||
        !(d = cJSON_AddObjectToObject(st, "details")) ||
        !cJSON_AddStringToObject(d, "name", c->name) ||
        !cJSON_AddStringToObject(d, "group", c->rt->group) ||
        !cJSON_AddStringToObject(d, "kind", c->rt->plural) ||
        (uid && !cJSON_AddStringToObject(d, "uid", uid))) {
        cJSON_Delete(st);
        return NULL;
    }
    return st;
}

/* Objects of a deleted CRD go with it. */
static void crd_cleanup(const struct ksim_write_ctx *c, const cJSON *crd)
{
    const char *group = kjson_get_str(crd, "spec.group");
    const char *plural = kjson_get_str(crd, "spec.names.plural");
    const char *name = ksim_obj_meta_str(crd, "name");
    struct ksim_store_page page;
    const cJSON *it;
    char skey[512];

    if (!group || !plural || !name)
        return;
    ksim_reg_remove_crd(c->api->reg, name);
    snprintf(skey, sizeof(skey), "%s/%s", group, plural);
    if (ksim_store_list(c->api->store, skey, NULL, NULL, NULL, NULL, 0, &page, NULL) != KERR_OK)
        return;
    cJSON_ArrayForEach (it, page.items) {
        ksim_store_delete(c->api->store, skey, ksim_obj_meta_str(it, "namespace"),
                          ksim_obj_meta_str(it, "name"), 0, NULL, NULL);
    }
    ksim_store_page_release(&page);
}

/* Mark cur (a copy is written) as being deleted. 0, 1 (changed underneath) or an error code. */
static int mark_deleting(const struct ksim_write_ctx *c, const cJSON *cur, const char *policy,
                         cJSON **out, struct ksim_apierr *e)
{
    cJSON *next = cJSON_Duplicate(cur, 1);
    const cJSON *gen = kjson_get(cur, "metadata.generation");
    struct kerr_info err;
    char now[21];
    enum kerr rc;
    int fresh = !ksim_obj_meta_str(cur, "deletionTimestamp");

    if (!next)
        return ksim_apierr_internal(e, "out of memory");
    ksim_obj_now(now);
    if ((strcmp(policy, "Orphan") == 0 && ksim_obj_add_finalizer(next, "orphan") != 0) ||
        (strcmp(policy, "Foreground") == 0 &&
         ksim_obj_add_finalizer(next, "foregroundDeletion") != 0) ||
        (fresh && (ksim_obj_set_meta_str(next, "deletionTimestamp", now) != 0 ||
                   kjson_set_int(next, "metadata.deletionGracePeriodSeconds", 0, NULL) != KERR_OK ||
                   (cJSON_IsNumber(gen) &&
                    kjson_set_int(next, "metadata.generation", (int64_t)gen->valuedouble + 1,
                                  NULL) != KERR_OK))) ||
        (is_builtin(c->rt, "", "namespaces") &&
         kjson_set_str(next, "status.phase", "Terminating", NULL) != KERR_OK)) {
        cJSON_Delete(next);
        return ksim_apierr_internal(e, "out of memory");
    }
    if (c->dry_run || !ksim_obj_changed(cur, next)) {
        *out = next;
        return 0;
    }
    rc = ksim_write_store(c, cur, next, out, &err);
    if (rc == KERR_CONFLICT)
        return 1;
    return rc == KERR_OK ? 0 : ksim_apierr_internal(e, "%s", err.msg);
}

static int remove_now(const struct ksim_write_ctx *c, const cJSON *cur, cJSON **out,
                      struct ksim_apierr *e)
{
    struct kerr_info err;
    cJSON *gone = NULL;
    enum kerr rc;

    if (!c->dry_run) {
        rc = ksim_store_delete(c->api->store, c->rt->store_key, c->ns, c->name,
                               ksim_store_obj_rv(cur), &gone, &err);
        if (rc == KERR_CONFLICT)
            return 1;
        if (rc == KERR_NOTFOUND)
            return ksim_apierr_not_found(e, c->rt->group, c->rt->plural, c->name);
        if (rc != KERR_OK)
            return ksim_apierr_internal(e, "%s", err.msg);
        if (is_builtin(c->rt, "apiextensions.k8s.io", "customresourcedefinitions"))
            crd_cleanup(c, gone);
        if (is_builtin(c->rt, "", "services"))
            ksim_svcip_release_service(c->api->svcip, gone);
    }
    if (is_builtin(c->rt, "", "pods")) {
        *out = gone ? gone : cJSON_Duplicate(cur, 1);
        return 0;
    }
    cJSON_Delete(gone);
    *out = success_status(c, cur);
    return *out ? 0 : ksim_apierr_internal(e, "out of memory");
}

static int needs_finalizing(const struct ksim_write_ctx *c, const cJSON *cur, const char *policy)
{
    return ksim_obj_finalizer_count(cur) > 0 || strcmp(policy, "Background") != 0 ||
           (is_builtin(c->rt, "", "namespaces") &&
            cJSON_GetArraySize(kjson_get(cur, "spec.finalizers")) > 0);
}

static int admit_delete(const struct ksim_write_ctx *c, const cJSON *cur, const cJSON *options,
                        const char *policy, struct ksim_apierr *e)
{
    struct ksim_admit_attrs a;
    cJSON *opts = options ? cJSON_Duplicate(options, 1) : ksim_write_options(c, "DeleteOptions");
    int code;

    if (!opts)
        return ksim_apierr_internal(e, "out of memory");
    cJSON_DeleteItemFromObjectCaseSensitive(opts, "kind");
    cJSON_DeleteItemFromObjectCaseSensitive(opts, "apiVersion");
    cJSON_DeleteItemFromObjectCaseSensitive(opts, "propagationPolicy");
    cJSON_AddStringToObject(opts, "kind", "DeleteOptions");
    cJSON_AddStringToObject(opts, "apiVersion", "meta.k8s.io/v1");
    cJSON_AddStringToObject(opts, "propagationPolicy", policy);
    ksim_write_attrs(c, "DELETE", cur, opts, &a);
    code = ksim_admit_mutate(c->api, &a, NULL, c->resp, e);
    if (!code)
        code = ksim_admit_validate(c->api, &a, NULL, c->resp, e);
    cJSON_Delete(opts);
    return code;
}

int ksim_delete_one(const struct ksim_write_ctx *c, const cJSON *options, const char *query_policy,
                    cJSON **out, struct ksim_apierr *e)
{
    const char *policy = NULL;
    cJSON *cur = NULL;
    int code, i;

    *out = NULL;
    code = policy_of(options, query_policy, &policy, e);
    for (i = 0; !code && i < MAX_RETRIES; i++) {
        cJSON_Delete(cur);
        cur = NULL;
        code = ksim_write_get(c, &cur, e);
        if (!code)
            code = check_preconditions(c, cur, options, e);
        if (!code)
            code = admit_delete(c, cur, options, policy, e);
        if (code)
            break;
        ksim_api_externalize(c->rt, cur);
        if (needs_finalizing(c, cur, policy))
            code = mark_deleting(c, cur, policy, out, e);
        else
            code = remove_now(c, cur, out, e);
        if (code != 1)
            break;
        code = 0;
    }
    cJSON_Delete(cur);
    if (code == 1)
        code = ksim_apierr_conflict(e, c->rt->group, c->rt->plural, c->name,
                                    "the object is being modified too often");
    return code ? code : 200;
}

int ksim_delete_collection(const struct ksim_write_ctx *c, const struct ksim_read_filter *f,
                           const cJSON *options, const char *policy, cJSON **out,
                           struct ksim_apierr *e)
{
    struct ksim_store_page page;
    struct ksim_write_ctx one = *c;
    cJSON *list = cJSON_CreateObject(), *items, *res = NULL;
    const cJSON *it;
    int code = 200;

    *out = NULL;
    if (!list || !cJSON_AddStringToObject(list, "kind", c->rt->list_kind) ||
        !cJSON_AddObjectToObject(list, "metadata") ||
        !(items = cJSON_AddArrayToObject(list, "items")) ||
        ksim_store_list(c->api->store, c->rt->store_key, c->ns, NULL, NULL, NULL, 0, &page, NULL) !=
            KERR_OK) {
        cJSON_Delete(list);
        return ksim_apierr_internal(e, "out of memory");
    }
    cJSON_ArrayForEach (it, page.items) {
        if (!ksim_read_filter_match(f, it))
            continue;
        one.ns = ksim_obj_meta_str(it, "namespace") ? ksim_obj_meta_str(it, "namespace") : "";
        one.name = ksim_obj_meta_str(it, "name");
        code = ksim_delete_one(&one, options, policy, &res, e);
        if (code == 404)
            code = 200;
        if (code != 200)
            break;
        if (res &&
            strcmp(kjson_get_str(res, "kind") ? kjson_get_str(res, "kind") : "", "Status") != 0) {
            cJSON_AddItemToArray(items, res);
            res = NULL;
        } else {
            cJSON_AddItemToArray(items, cJSON_Duplicate(it, 1));
        }
        cJSON_Delete(res);
        res = NULL;
    }
    ksim_store_page_release(&page);
    if (code != 200) {
        cJSON_Delete(list);
        return code;
    }
    *out = list;
    return 200;
}
