/* guardfix - the guard's decision harness for table tests; see guardfix.h. */
#include "tests/support/guardfix.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "tests/support/whdiff.h"

static const char *const reconcilers[] = { GUARDFIX_DRUID, GUARDFIX_WARDEN };
static const char *const controllers[] = { GUARDFIX_WARDEN };

static time_t fixed_clock(void)
{
    return GUARDFIX_NOW;
}

void guardfix_config(struct protect_config *cfg)
{
    struct protect_config c = { reconcilers, 2, NULL, 0, NULL, controllers, 1, fixed_clock };

    *cfg = c;
}

cJSON *guardfix_dispatch(const struct protect_config *cfg, const struct lookup_mem *mem,
                         const struct lookup *lk, enum wh_hook h, bool diff, const char *body)
{
    struct wh_dispatch d;
    struct kerr_info err;
    cJSON *doc = NULL;
    char *out = NULL;
    size_t len = 0;
    unsigned int status = 0;

    cr_assert_eq(wh_dispatch_init(&d, cfg, lk, NULL, &err), KERR_OK, "%s", err.msg);
    if (diff)
        whdiff_same(cfg, mem, h, body);
    cr_assert_eq(wh_dispatch_review(&d, h, body, strlen(body), &out, &len, &status, &err), KERR_OK,
                 "%s", err.msg);
    cr_assert_eq(status, 200);
    cr_assert_eq(kjson_parse(out, len, NULL, &doc, NULL, NULL), KERR_OK);
    free(out);
    return doc;
}

cJSON *guardfix_sts(const char *labels, int replicas)
{
    cJSON *o = cJSON_CreateObject(), *meta;

    cJSON_AddStringToObject(o, "apiVersion", "apps/v1");
    cJSON_AddStringToObject(o, "kind", "StatefulSet");
    meta = cJSON_AddObjectToObject(o, "metadata");
    cJSON_AddStringToObject(meta, "namespace", "shoot");
    cJSON_AddStringToObject(meta, "name", "etcd-main");
    cJSON_AddStringToObject(meta, "uid", "uid-sts");
    cJSON_AddNumberToObject(meta, "generation", 7);
    cJSON_AddItemToObject(meta, "labels", cJSON_Parse(labels));
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(o, "spec"), "replicas", replicas);
    return o;
}

cJSON *guardfix_sts_review(const char *op, const char *user, cJSON *object, cJSON *old_object)
{
    cJSON *root = cJSON_CreateObject(), *req, *k;

    cJSON_AddStringToObject(root, "apiVersion", "admission.k8s.io/v1");
    cJSON_AddStringToObject(root, "kind", "AdmissionReview");
    req = cJSON_AddObjectToObject(root, "request");
    cJSON_AddStringToObject(req, "uid", "0000-2222");
    k = cJSON_AddObjectToObject(req, "kind");
    cJSON_AddStringToObject(k, "group", "apps");
    cJSON_AddStringToObject(k, "version", "v1");
    cJSON_AddStringToObject(k, "kind", "StatefulSet");
    k = cJSON_AddObjectToObject(req, "resource");
    cJSON_AddStringToObject(k, "group", "apps");
    cJSON_AddStringToObject(k, "version", "v1");
    cJSON_AddStringToObject(k, "resource", "statefulsets");
    cJSON_AddStringToObject(req, "name", "etcd-main");
    cJSON_AddStringToObject(req, "namespace", "shoot");
    cJSON_AddStringToObject(req, "operation", op);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(req, "userInfo"), "username", user);
    cJSON_AddItemToObject(req, "object", object ? object : cJSON_CreateNull());
    cJSON_AddItemToObject(req, "oldObject", old_object ? old_object : cJSON_CreateNull());
    return root;
}

void guardfix_expect(const cJSON *doc, const char *title, int allowed, const char *message)
{
    bool got = !allowed;
    const char *msg = kjson_get_str(doc, "response.status.message");

    cr_assert_eq(kjson_get_bool(doc, "response.allowed", &got), KERR_OK);
    cr_expect_eq(got, allowed != 0, "%s: allowed (%s)", title, msg ? msg : "");
    if (message && *message)
        cr_expect(msg && strstr(msg, message), "%s: message %s", title, msg ? msg : "(none)");
}
