#include "tests/kube-sim/write.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "common/log.h"
#include "tests/kube-sim/admit.h"
#include "tests/kube-sim/convert.h"
#include "tests/kube-sim/delete.h"
#include "tests/kube-sim/kinds.h"
#include "tests/kube-sim/obj.h"
#include "tests/kube-sim/prune.h"
#include "tests/kube-sim/schemaval.h"
#include "tests/kube-sim/scale.h"
#include "tests/kube-sim/svcip.h"
#include "tests/kube-sim/validate.h"

#define BODY_MAX_BYTES (3u * 1024u * 1024u + 4096u)
#define MAX_RETRIES    16

int ksim_write_decode(const char *body, size_t len, cJSON **out, struct ksim_apierr *e)
{
    struct kjson_limits lim = { BODY_MAX_BYTES, 0 };
    struct kerr_info err;

    *out = NULL;
    if (!body || !len)
        return ksim_apierr_bad_request(e, "the request body is empty");
    if (kjson_parse(body, len, &lim, out, NULL, &err) != KERR_OK)
        return ksim_apierr_bad_request(e, "couldn't get version/kind; json parse error: %s",
                                       err.msg);
    if (!cJSON_IsObject(*out)) {
        cJSON_Delete(*out);
        *out = NULL;
        return ksim_apierr_bad_request(e, "the request body must be a JSON object");
    }
    return 0;
}

int ksim_write_dry_run(const struct ksim_req *req, int *dry_run, struct ksim_apierr *e)
{
    const char *v = ksim_req_query(req, "dryRun");

    *dry_run = 0;
    if (!v || !*v)
        return 0;
    if (strcmp(v, "All") != 0)
        return ksim_apierr_invalid(e, "meta.k8s.io", "CreateOptions", "", "dryRun",
                                   "FieldValueNotSupported",
                                   "dryRun: Unsupported value: \"x\": supported values: \"All\"");
    *dry_run = 1;
    return 0;
}

int ksim_write_options_dry_run(const cJSON *options, int *dry_run, struct ksim_apierr *e)
{
    const cJSON *dr = options ? cJSON_GetObjectItemCaseSensitive(options, "dryRun") : NULL;
    const cJSON *v;

    if (!dr || cJSON_IsNull(dr))
        return 0;
    if (!cJSON_IsArray(dr))
        return ksim_apierr_invalid(e, "meta.k8s.io", "DeleteOptions", "", "dryRun",
                                   "FieldValueInvalid", "dryRun: Invalid value: expected a list");
    cJSON_ArrayForEach (v, dr) {
        if (!cJSON_IsString(v) || strcmp(v->valuestring, "All") != 0) {
            char msg[160];

            snprintf(msg, sizeof(msg),
                     "dryRun: Unsupported value: \"%.64s\": supported values: \"All\"",
                     cJSON_IsString(v) ? v->valuestring : "");
            return ksim_apierr_invalid(e, "meta.k8s.io", "DeleteOptions", "", "dryRun",
                                       "FieldValueNotSupported", msg);
        }
        *dry_run = 1;
    }
    return 0;
}

cJSON *ksim_write_options(const struct ksim_write_ctx *c, const char *kind)
{
    cJSON *o = cJSON_CreateObject(), *dr;

    if (!o || !cJSON_AddStringToObject(o, "kind", kind) ||
        !cJSON_AddStringToObject(o, "apiVersion", "meta.k8s.io/v1") ||
        (c->field_manager && !cJSON_AddStringToObject(o, "fieldManager", c->field_manager)) ||
        (c->dry_run && (!(dr = cJSON_AddArrayToObject(o, "dryRun")) ||
                        !cJSON_AddItemToArray(dr, cJSON_CreateString("All"))))) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

void ksim_write_attrs(const struct ksim_write_ctx *c, const char *operation, const cJSON *old,
                      const cJSON *options, struct ksim_admit_attrs *a)
{
    memset(a, 0, sizeof(*a));
    a->rt = c->rt;
    a->sub = c->sub ? c->sub : "";
    a->operation = operation;
    a->ns = c->ns;
    a->name = c->name;
    a->old = old;
    a->options = options;
    a->user = c->user;
    a->dry_run = c->dry_run;
    a->scale_kind = c->sub && strcmp(c->sub, "scale") == 0;
}

int ksim_write_get(const struct ksim_write_ctx *c, cJSON **out, struct ksim_apierr *e)
{
    if (ksim_store_get(c->api->store, c->rt->store_key, c->ns, c->name, out, NULL) != KERR_OK)
        return ksim_apierr_not_found(e, c->rt->group, c->rt->plural, c->name);
    if (ksim_api_externalize(c->rt, *out) != 0)
        return ksim_apierr_internal(e, "out of memory");
    return 0;
}

/* A namespaced object needs a namespace that exists and (on create) is not terminating. */
static int check_namespace(const struct ksim_write_ctx *c, int creating, struct ksim_apierr *e)
{
    const struct ksim_rtype *nsrt = ksim_reg_find(c->api->reg, "", "v1", "namespaces");
    cJSON *ns = NULL;
    char why[512];
    int terminating;

    if (!c->rt->namespaced)
        return 0;
    if (!nsrt || ksim_store_get(c->api->store, nsrt->store_key, NULL, c->ns, &ns, NULL) != KERR_OK)
        return ksim_apierr_not_found(e, "", "namespaces", c->ns);
    terminating = ksim_obj_meta_str(ns, "deletionTimestamp") != NULL;
    cJSON_Delete(ns);
    if (creating && terminating) {
        snprintf(why, sizeof(why),
                 "unable to create new content in namespace %s because it is being terminated",
                 c->ns);
        ksim_apierr_forbidden(e, c->rt->group, c->rt->plural, c->name, why);
        snprintf(e->reason, sizeof(e->reason), "Forbidden");
        return 403;
    }
    return 0;
}

/* apiVersion/kind and namespace of a body must agree with the URL. */
static int check_body(const struct ksim_write_ctx *c, cJSON *obj, struct ksim_apierr *e)
{
    const char *av = kjson_get_str(obj, "apiVersion");
    const char *kind = kjson_get_str(obj, "kind");
    const char *ns = ksim_obj_meta_str(obj, "namespace");
    char gv[300];

    snprintf(gv, sizeof(gv), "%s%s%s", c->rt->group, *c->rt->group ? "/" : "", c->rt->version);
    if (av && *av && strcmp(av, gv) != 0 &&
        !(ksim_reg_find_kind(c->api->reg, av, c->rt->kind) &&
          strcmp(ksim_reg_find_kind(c->api->reg, av, c->rt->kind)->store_key, c->rt->store_key) ==
              0))
        return ksim_apierr_bad_request(e,
                                       "the API version in the data (%s) does not match the "
                                       "expected API version (%s)",
                                       av, gv);
    if (kind && *kind && strcmp(kind, c->rt->kind) != 0)
        return ksim_apierr_bad_request(e,
                                       "the kind in the data (%s) does not match the expected "
                                       "kind (%s)",
                                       kind, c->rt->kind);
    if (c->rt->namespaced && ns && *ns && strcmp(ns, c->ns) != 0)
        return ksim_apierr_bad_request(e, "the namespace of the provided object does not match "
                                          "the namespace sent on the request");
    if (ksim_obj_set_meta_str(obj, "namespace", c->rt->namespaced ? c->ns : NULL) != 0 ||
        ksim_api_externalize(c->rt, obj) != 0)
        return ksim_apierr_internal(e, "out of memory");
    return 0;
}

static int is_builtin(const struct ksim_rtype *rt, const char *group, const char *plural)
{
    return !rt->custom && strcmp(rt->group, group) == 0 && strcmp(rt->plural, plural) == 0;
}

/* Services get a clusterIP on create and keep it on update (taken: what to give back on failure).
 */
static int service_ip(const struct ksim_write_ctx *c, const cJSON *old, cJSON *obj,
                      char taken[KSIM_SVCIP_LEN], struct ksim_apierr *e)
{
    taken[0] = '\0';
    if (!is_builtin(c->rt, "", "services"))
        return 0;
    return ksim_svcip_assign(c->api->svcip, old, obj, taken, e);
}

/* Side effects of a stored write: a CRD's resource is served at once. */
static void after_write(const struct ksim_write_ctx *c, const cJSON *old, const cJSON *obj)
{
    struct kerr_info err;

    if (c->dry_run || !is_builtin(c->rt, "apiextensions.k8s.io", "customresourcedefinitions"))
        return;
    if (old && cJSON_Compare(kjson_get(old, "spec"), kjson_get(obj, "spec"), 1))
        return;
    if (ksim_reg_add_crd(c->api->reg, obj, &err) != KERR_OK)
        log_warn("cannot serve custom resource", "crd", ksim_obj_meta_str(obj, "name"), "error",
                 err.msg);
}

static int name_of(const struct ksim_write_ctx *c, cJSON *obj, char *name, size_t size,
                   struct ksim_apierr *e)
{
    const char *n = ksim_obj_meta_str(obj, "name");
    const char *gen = ksim_obj_meta_str(obj, "generateName");

    if (n && *n) {
        snprintf(name, size, "%s", n);
        return 0;
    }
    if (!gen || !*gen)
        return ksim_apierr_invalid(e, c->rt->group, c->rt->kind, "", "metadata.name",
                                   "FieldValueRequired",
                                   "metadata.name: Required value: name or generateName is "
                                   "required");
    if (ksim_obj_generate_name(gen, name, size) != 0 ||
        ksim_obj_set_meta_str(obj, "name", name) != 0)
        return ksim_apierr_internal(e, "out of memory");
    return 0;
}

static int store_create(const struct ksim_write_ctx *c, const char *name, cJSON *obj, cJSON **out,
                        struct ksim_apierr *e)
{
    struct kerr_info err;
    enum kerr rc;

    if (ksim_convert_in(c->rt, obj) != 0) {
        cJSON_Delete(obj);
        return ksim_apierr_internal(e, "out of memory");
    }
    rc = ksim_store_create(c->api->store, c->rt->store_key, c->ns, name, obj, out, &err);
    if (rc == KERR_OK)
        ksim_api_externalize(c->rt, *out);
    if (rc == KERR_EXISTS)
        return ksim_apierr_exists(e, c->rt->group, c->rt->plural, name);
    if (rc == KERR_TOOBIG)
        return ksim_apierr_internal(e, "kube-sim %s", err.msg);
    if (rc != KERR_OK)
        return ksim_apierr_internal(e, "%s", err.msg);
    return 201;
}

int ksim_write_create(const struct ksim_write_ctx *c, cJSON *obj, cJSON **out,
                      struct ksim_apierr *e)
{
    struct ksim_write_ctx cc = *c;
    struct ksim_admit_attrs a;
    cJSON *opts = ksim_write_options(c, "CreateOptions");
    char name[254], ip[KSIM_SVCIP_LEN] = "";
    const char *n;
    int code;

    *out = NULL;
    n = ksim_obj_meta_str(obj, "name");
    snprintf(name, sizeof(name), "%s", n ? n : "");
    cc.name = name;
    ksim_write_attrs(&cc, "CREATE", NULL, opts, &a);
    code = check_body(&cc, obj, e);
    if (!code)
        code = check_namespace(&cc, 1, e);
    if (!code && ksim_prune_obj(c->rt, obj) != 0)
        code = ksim_apierr_internal(e, "out of memory");
    if (!code)
        code = ksim_admit_mutate(c->api, &a, &obj, c->resp, e);
    if (!code && ksim_prune_obj(c->rt, obj) != 0)
        code = ksim_apierr_internal(e, "out of memory");
    if (!code)
        code = name_of(&cc, obj, name, sizeof(name), e);
    if (!code)
        code = ksim_validate_name(c->rt, name, e);
    if (!code && ksim_obj_prepare_create(c->rt, obj) != 0)
        code = ksim_apierr_internal(e, "out of memory");
    if (!code)
        code = service_ip(c, NULL, obj, ip, e);
    if (!code)
        code = ksim_kinds_validate(c->rt, obj, e);
    if (!code)
        code = ksim_validate_meta(c->rt, obj, e);
    if (!code)
        code = ksim_schemaval_obj(c->rt, obj, NULL, e);
    if (!code)
        code = ksim_admit_validate(c->api, &a, obj, c->resp, e);
    if (!code && c->dry_run) {
        *out = obj;
        obj = NULL;
        code = 201;
    } else if (!code) {
        code = store_create(&cc, name, obj, out, e);
        obj = NULL;
        if (code == 201)
            after_write(c, NULL, *out);
    }
    if (code != 201 || c->dry_run)
        ksim_svcip_release(c->api->svcip, ip);
    cJSON_Delete(obj);
    cJSON_Delete(opts);
    return code;
}

enum kerr ksim_write_store(const struct ksim_write_ctx *c, const cJSON *cur, cJSON *next,
                           cJSON **out, struct kerr_info *err)
{
    enum kerr rc;

    *out = NULL;
    if (ksim_convert_in(c->rt, next) != 0) {
        cJSON_Delete(next);
        return kerr_set(err, KERR_NOMEM, "out of memory");
    }
    rc = ksim_store_update(c->api->store, c->rt->store_key, c->ns, c->name, ksim_store_obj_rv(cur),
                           next, out, err);
    if (rc == KERR_OK)
        ksim_api_externalize(c->rt, *out);
    return rc;
}

/* Store next over cur; delete it when its last finalizer went while deleting. */
static int store_update(const struct ksim_write_ctx *c, const cJSON *cur, cJSON *next, cJSON **out,
                        int *retry, struct ksim_apierr *e)
{
    struct kerr_info err;
    enum kerr rc;
    int gone = ksim_obj_meta_str(next, "deletionTimestamp") &&
               ksim_obj_finalizer_count(next) == 0 &&
               !(is_builtin(c->rt, "", "namespaces") &&
                 cJSON_GetArraySize(kjson_get(next, "spec.finalizers")) > 0);

    rc = ksim_write_store(c, cur, next, out, &err);
    if (rc == KERR_CONFLICT) {
        *retry = 1;
        return ksim_apierr_conflict(e, c->rt->group, c->rt->plural, c->name, err.msg);
    }
    if (rc == KERR_NOTFOUND)
        return ksim_apierr_not_found(e, c->rt->group, c->rt->plural, c->name);
    if (rc != KERR_OK)
        return ksim_apierr_internal(e, "%s", err.msg);
    if (gone &&
        ksim_store_delete(c->api->store, c->rt->store_key, c->ns, c->name, ksim_store_obj_rv(*out),
                          NULL, NULL) == KERR_OK &&
        is_builtin(c->rt, "", "services"))
        ksim_svcip_release_service(c->api->svcip, *out);
    after_write(c, cur, *out);
    return 200;
}

int ksim_write_commit(const struct ksim_write_ctx *c, const cJSON *cur, cJSON *next, cJSON **out,
                      int *retry, struct ksim_apierr *e)
{
    struct ksim_admit_attrs a;
    cJSON *opts = ksim_write_options(c, "UpdateOptions");
    char ip[KSIM_SVCIP_LEN] = "";
    int code;

    *out = NULL;
    *retry = 0;
    ksim_write_attrs(c, "UPDATE", cur, opts, &a);
    code = ksim_prune_obj(c->rt, next) ? ksim_apierr_internal(e, "out of memory") : 0;
    if (!code)
        code = ksim_admit_mutate(c->api, &a, &next, c->resp, e);
    if (!code && ksim_prune_obj(c->rt, next) != 0)
        code = ksim_apierr_internal(e, "out of memory");
    if (!code)
        code = ksim_obj_prepare_update(c->rt, c->sub, cur, next, e);
    if (!code)
        code = service_ip(c, cur, next, ip, e);
    if (!code)
        code = ksim_kinds_validate(c->rt, next, e);
    if (!code)
        code = ksim_validate_meta(c->rt, next, e);
    if (!code)
        code = ksim_schemaval_obj(c->rt, next, cur, e);
    if (!code)
        code = ksim_admit_validate(c->api, &a, next, c->resp, e);
    if (!code && !ksim_obj_changed(cur, next)) {
        *out = cJSON_Duplicate(cur, 1);
        code = *out ? 200 : ksim_apierr_internal(e, "out of memory");
    } else if (!code && c->dry_run) {
        *out = next;
        next = NULL;
        code = 200;
    } else if (!code) {
        code = store_update(c, cur, next, out, retry, e);
        next = NULL;
    }
    if (code != 200 || c->dry_run)
        ksim_svcip_release(c->api->svcip, ip);
    cJSON_Delete(next);
    cJSON_Delete(opts);
    return code;
}

static int check_url_name(const struct ksim_write_ctx *c, const cJSON *obj, struct ksim_apierr *e)
{
    const char *n = ksim_obj_meta_str(obj, "name");
    const char *ns = ksim_obj_meta_str(obj, "namespace");

    if (c->rt->namespaced && ns && strcmp(ns, c->ns) != 0)
        return ksim_apierr_bad_request(e, "the namespace of the provided object does not match "
                                          "the namespace sent on the request");

    if (!n || strcmp(n, c->name) != 0)
        return ksim_apierr_bad_request(e,
                                       "the name of the object (%s) does not match the name on "
                                       "the URL (%s)",
                                       n ? n : "", c->name);
    return 0;
}

int ksim_write_update(const struct ksim_write_ctx *c, cJSON *obj, cJSON **out,
                      struct ksim_apierr *e)
{
    uint64_t want = ksim_store_obj_rv(obj);
    cJSON *cur = NULL, *next;
    int code, retry = 1, i;

    *out = NULL;
    if (c->sub && strcmp(c->sub, "scale") == 0) {
        code = ksim_scale_write(c, obj, KSIM_PATCH_UNKNOWN, NULL, out, e);
        cJSON_Delete(obj);
        return code;
    }
    code = check_body(c, obj, e);
    if (!code)
        code = check_url_name(c, obj, e);
    for (i = 0; !code && retry && i < MAX_RETRIES; i++) {
        cJSON_Delete(cur);
        cur = NULL;
        code = ksim_write_get(c, &cur, e);
        if (code)
            break;
        if (want && want != ksim_store_obj_rv(cur)) {
            code = ksim_apierr_conflict(e, c->rt->group, c->rt->plural, c->name,
                                        "the object has been modified; please apply your "
                                        "changes to the latest version and try again");
            break;
        }
        next = cJSON_Duplicate(obj, 1);
        code = next ? ksim_write_commit(c, cur, next, out, &retry, e)
                    : ksim_apierr_internal(e, "out of memory");
        retry = retry && !want;
        if (retry)
            code = 0;
    }
    cJSON_Delete(cur);
    cJSON_Delete(obj);
    return code;
}

struct patch_arg {
    enum ksim_patch_type type;
    const cJSON *patch;
    int custom;
};

static int apply_patch(cJSON *obj, void *arg, struct ksim_apierr *e)
{
    struct patch_arg *p = arg;
    cJSON *next = NULL, *it;
    int code = ksim_patch_apply(p->type, p->custom, obj, p->patch, &next, e);

    if (code)
        return code;
    /* obj becomes next: move the children over. */
    while (obj->child) {
        it = obj->child;
        cJSON_DetachItemViaPointer(obj, it);
        cJSON_Delete(it);
    }
    while (next->child) {
        it = next->child;
        cJSON_DetachItemViaPointer(next, it);
        cJSON_AddItemToObject(obj, it->string, it);
    }
    cJSON_Delete(next);
    return 0;
}

int ksim_write_modify(const struct ksim_write_ctx *c,
                      int (*fn)(cJSON *obj, void *arg, struct ksim_apierr *e), void *arg,
                      cJSON **out, struct ksim_apierr *e)
{
    cJSON *cur = NULL, *next = NULL;
    uint64_t cur_rv, want;
    int code = 0, retry = 1, i;

    *out = NULL;
    for (i = 0; retry && i < MAX_RETRIES; i++) {
        cJSON_Delete(cur);
        cur = NULL;
        code = ksim_write_get(c, &cur, e);
        if (code)
            break;
        ksim_api_externalize(c->rt, cur);
        next = cJSON_Duplicate(cur, 1);
        cur_rv = ksim_store_obj_rv(cur);
        code = next ? fn(next, arg, e) : ksim_apierr_internal(e, "out of memory");
        if (code == 1) {
            *out = next;
            next = NULL;
            code = 200;
            break;
        }
        want = next ? ksim_store_obj_rv(next) : 0;
        if (!code && want && want != cur_rv) {
            code = ksim_apierr_conflict(e, c->rt->group, c->rt->plural, c->name,
                                        "the object has been modified; please apply your "
                                        "changes to the latest version and try again");
            break;
        }
        if (!code)
            code = check_url_name(c, next, e);
        if (!code) {
            code = ksim_write_commit(c, cur, next, out, &retry, e);
            next = NULL;
        }
        cJSON_Delete(next);
        next = NULL;
        /* A write that lost a race is tried again on the new object, as kube-apiserver's
         * GuaranteedUpdate does; a resourceVersion the patch itself set is checked above
         * against the new object, so a stale one still ends in 409. */
        if (code != 409)
            break;
    }
    cJSON_Delete(next);
    cJSON_Delete(cur);
    return code;
}

int ksim_write_patch(const struct ksim_write_ctx *c, enum ksim_patch_type type, const cJSON *patch,
                     int force, cJSON **out, struct ksim_apierr *e)
{
    struct patch_arg pa = { type, patch, c->rt->custom };
    cJSON *obj;
    int code;

    (void)force;
    *out = NULL;
    if (c->sub && strcmp(c->sub, "scale") == 0)
        return ksim_scale_write(c, NULL, type, patch, out, e);
    code = ksim_write_modify(c, apply_patch, &pa, out, e);
    if (code != 404 || type != KSIM_PATCH_APPLY || (c->sub && *c->sub))
        return code;
    /* Server-side apply creates what does not exist yet. */
    obj = cJSON_Duplicate(patch, 1);
    if (!obj || ksim_obj_set_meta_str(obj, "name", c->name) != 0) {
        cJSON_Delete(obj);
        return ksim_apierr_internal(e, "out of memory");
    }
    return ksim_write_create(c, obj, out, e);
}
