#include "tests/kube-sim/scale.h"

#include <string.h>

#include "common/kjson.h"
#include "tests/kube-sim/admit.h"
#include "tests/kube-sim/obj.h"

#define MAX_RETRIES 16

/* The requested Scale: put as given (checking its resourceVersion precondition) or patched. */
static int wanted_scale(const struct ksim_write_ctx *c, const cJSON *cur, const cJSON *old_scale,
                        const cJSON *put, enum ksim_patch_type type, const cJSON *patch,
                        cJSON **out, struct ksim_apierr *e)
{
    uint64_t want;
    const char *name;

    *out = NULL;
    if (!put)
        return ksim_patch_apply(type, 0, old_scale, patch, out, e);
    want = ksim_store_obj_rv(put);
    if (want && want != ksim_store_obj_rv(cur))
        return ksim_apierr_conflict(e, c->rt->group, c->rt->plural, c->name,
                                    "the object has been modified; please apply your changes to "
                                    "the latest version and try again");
    name = ksim_obj_meta_str(put, "name");
    if (name && strcmp(name, c->name) != 0)
        return ksim_apierr_bad_request(e,
                                       "the name of the object (%s) does not match the name on "
                                       "the URL (%s)",
                                       name, c->name);
    *out = cJSON_Duplicate(put, 1);
    return *out ? 0 : ksim_apierr_internal(e, "out of memory");
}

/* Admit the Scale change and write the replicas into the object. */
static int admit_and_apply(const struct ksim_write_ctx *c, const cJSON *cur, const cJSON *old_scale,
                           cJSON **scale, cJSON **next, struct ksim_apierr *e)
{
    struct ksim_admit_attrs a;
    cJSON *opts = ksim_write_options(c, "UpdateOptions");
    int code;

    ksim_write_attrs(c, "UPDATE", old_scale, opts, &a);
    code = ksim_admit_mutate(c->api, &a, scale, c->resp, e);
    if (!code)
        code = ksim_admit_validate(c->api, &a, *scale, c->resp, e);
    cJSON_Delete(opts);
    if (code)
        return code;
    *next = cJSON_Duplicate(cur, 1);
    if (!*next)
        return ksim_apierr_internal(e, "out of memory");
    code = ksim_obj_scale_apply(c->rt, *scale, *next, c->name, e);
    if (!code)
        code = ksim_obj_prepare_update(c->rt, "", cur, *next, e);
    return code;
}

static int store_next(const struct ksim_write_ctx *c, const cJSON *cur, cJSON *next, cJSON **stored,
                      int *retry, struct ksim_apierr *e)
{
    struct kerr_info err;
    enum kerr rc;

    *retry = 0;
    if (c->dry_run || !ksim_obj_changed(cur, next)) {
        *stored = next;
        return 0;
    }
    rc = ksim_store_update(c->api->store, c->rt->store_key, c->ns, c->name, ksim_store_obj_rv(cur),
                           next, stored, &err);
    if (rc == KERR_CONFLICT) {
        *retry = 1;
        return ksim_apierr_conflict(e, c->rt->group, c->rt->plural, c->name, err.msg);
    }
    if (rc != KERR_OK)
        return ksim_apierr_internal(e, "%s", err.msg);
    return 0;
}

int ksim_scale_write(const struct ksim_write_ctx *c, const cJSON *put, enum ksim_patch_type type,
                     const cJSON *patch, cJSON **out, struct ksim_apierr *e)
{
    cJSON *cur = NULL, *old_scale = NULL, *scale = NULL, *next = NULL, *stored = NULL;
    int code = 0, retry = 1, i;

    *out = NULL;
    for (i = 0; retry && i < MAX_RETRIES; i++) {
        retry = 0;
        code = ksim_write_get(c, &cur, e);
        if (!code && ksim_obj_scale_of(c->rt, cur, &old_scale) != 0)
            code = ksim_apierr_internal(e, "no scale subresource");
        if (!code)
            code = wanted_scale(c, cur, old_scale, put, type, patch, &scale, e);
        if (!code)
            code = admit_and_apply(c, cur, old_scale, &scale, &next, e);
        if (!code) {
            code = store_next(c, cur, next, &stored, &retry, e);
            next = NULL;
        }
        if (!code && ksim_obj_scale_of(c->rt, stored, out) != 0)
            code = ksim_apierr_internal(e, "out of memory");
        if (retry && (!put || !ksim_store_obj_rv(put)))
            code = 0;
        else
            retry = 0;
        cJSON_Delete(stored);
        cJSON_Delete(next);
        cJSON_Delete(scale);
        cJSON_Delete(old_scale);
        cJSON_Delete(cur);
        cur = old_scale = scale = next = stored = NULL;
    }
    return code ? code : 200;
}
