/*
 * kube-sim pruning and fieldValidation of custom resources (tests/kube-sim/prune):
 * the pruning rules on their own (declared properties, additionalProperties,
 * x-kubernetes-preserve-unknown-fields nested, items, embedded resources and the
 * root's metadata), then through the API: create, update, merge patch and
 * status writes store pruned objects, Strict answers 400 naming every unknown
 * field, Warn answers Warning headers, Ignore nothing.
 */
#include "tests/kube-sim/prune.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "tests/support/ksimfix.h"

static const char schema_json[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"spec\":{\"type\":\"object\",\"properties\":{"
    "  \"replicas\":{\"type\":\"integer\"},"
    "  \"labels\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}},"
    "  \"open\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true,"
    "    \"properties\":{\"strict\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":"
    "\"string\"}}}}},"
    "  \"list\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
    "    \"name\":{\"type\":\"string\"}}}},"
    "  \"template\":{\"type\":\"object\",\"x-kubernetes-embedded-resource\":true,"
    "    \"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":"
    "\"string\"}}}}}"
    "}},"
    "\"status\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}";

static char *pruned(const char *obj_json, char *paths_out, size_t n)
{
    cJSON *schema = cJSON_Parse(schema_json), *obj = cJSON_Parse(obj_json);
    struct strlist paths;
    char *text;
    size_t i, len = 0;

    cr_assert_not_null(schema);
    cr_assert_not_null(obj, "%s", obj_json);
    strlist_init(&paths);
    cr_assert_eq(ksim_prune(schema, obj, &paths), 0);
    paths_out[0] = '\0';
    for (i = 0; i < paths.n; i++)
        len += (size_t)snprintf(paths_out + len, n - len, "%s%s", i ? " " : "", paths.v[i]);
    text = cJSON_PrintUnformatted(obj);
    strlist_release(&paths);
    cJSON_Delete(schema);
    cJSON_Delete(obj);
    return text;
}

#define EXPECT_PRUNED(in, want, want_paths)    \
    do {                                       \
        char p_[1024];                         \
        char *t_ = pruned(in, p_, sizeof(p_)); \
        cr_expect_str_eq(t_, want);            \
        cr_expect_str_eq(p_, want_paths);      \
        free(t_);                              \
    } while (0)

Test(kubesim_prune, declared_fields_stay_unknown_ones_go)
{
    EXPECT_PRUNED("{\"apiVersion\":\"x/v1\",\"kind\":\"K\",\"metadata\":{\"name\":\"a\","
                  "\"anything\":1},\"spec\":{\"replicas\":1,\"foo\":2},\"top\":true}",
                  "{\"apiVersion\":\"x/v1\",\"kind\":\"K\",\"metadata\":{\"name\":\"a\","
                  "\"anything\":1},\"spec\":{\"replicas\":1}}",
                  "spec.foo top");
}

Test(kubesim_prune, additional_properties_keep_every_key)
{
    EXPECT_PRUNED("{\"spec\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"}}}",
                  "{\"spec\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"}}}", "");
}

Test(kubesim_prune, preserve_unknown_fields_nested)
{
    EXPECT_PRUNED("{\"spec\":{\"open\":{\"free\":{\"deep\":1},\"strict\":{\"a\":\"x\","
                  "\"b\":\"y\"}}},\"status\":{\"any\":{\"thing\":[1]}}}",
                  "{\"spec\":{\"open\":{\"free\":{\"deep\":1},\"strict\":{\"a\":\"x\"}}},"
                  "\"status\":{\"any\":{\"thing\":[1]}}}",
                  "spec.open.strict.b");
}

Test(kubesim_prune, array_items)
{
    EXPECT_PRUNED("{\"spec\":{\"list\":[{\"name\":\"a\",\"x\":1},{\"name\":\"b\"},{\"y\":2}]}}",
                  "{\"spec\":{\"list\":[{\"name\":\"a\"},{\"name\":\"b\"},{}]}}",
                  "spec.list[0].x spec.list[2].y");
}

Test(kubesim_prune, embedded_resource_keeps_type_and_metadata)
{
    EXPECT_PRUNED("{\"spec\":{\"template\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
                  "\"metadata\":{\"labels\":{\"a\":\"b\"}},\"spec\":{\"x\":\"1\",\"y\":\"2\"},"
                  "\"extra\":1}}}",
                  "{\"spec\":{\"template\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
                  "\"metadata\":{\"labels\":{\"a\":\"b\"}},\"spec\":{\"x\":\"1\"}}}}",
                  "spec.template.spec.y spec.template.extra");
    /* a non-string kind is not a type field: pruned */
    EXPECT_PRUNED("{\"kind\":3,\"spec\":{}}", "{\"spec\":{}}", "kind");
}

/* ---- through the API */

static struct ksim_harness *h;

#define CRD_HEAD                                                                           \
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","   \
    "\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\"," \
    "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\","  \
    "\"kind\":\"Widget\",\"listKind\":\"WidgetList\"},"
#define CRD_VERSIONS                                                                            \
    "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,\"subresources\":{"        \
    "\"status\":{}},\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\",\"properties\":{"      \
    "\"spec\":{\"type\":\"object\",\"properties\":{\"size\":{\"type\":\"integer\"},\"store\":{" \
    "\"type\":\"object\",\"properties\":{\"prefix\":{\"type\":\"string\"}}}}},"                 \
    "\"status\":{\"type\":\"object\",\"properties\":{\"ready\":{\"type\":\"boolean\"}}}}}}}]}}"
#define PATH "/apis/example.com/v1/namespaces/default/widgets"

static void up(const char *crd)
{
    long code;

    h = ksimfix_start(NULL);
    cJSON_Delete(ksimfix_call(h, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                              NULL, crd, &code));
    cr_assert_eq(code, 201);
    cr_assert(ksimfix_await_status(h, PATH, 200, 10000), "the CRD is never served");
}

static void down(void)
{
    ksim_harness_stop(h);
}

static const char widget[] = "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":"
                             "{\"name\":\"w\"},\"spec\":{\"size\":1,\"foo\":1,\"store\":{"
                             "\"prefix\":\"p\",\"immutability\":{\"retentionType\":\"bucket\"}}}}";

static cJSON *get_widget(void)
{
    long code;
    cJSON *w = ksimfix_call(h, "GET", PATH "/w", NULL, NULL, &code);

    cr_assert_eq(code, 200);
    return w;
}

Test(kubesim_prune, create_update_patch_and_status_are_pruned, .fini = down, .timeout = 60)
{
    char warning[1024];
    long code;
    cJSON *w;

    up(CRD_HEAD CRD_VERSIONS);
    cJSON_Delete(
        ksimfix_call_as(h, NULL, "POST", PATH, NULL, widget, &code, warning, sizeof(warning)));
    cr_assert_eq(code, 201);
    cr_expect(strstr(warning, "unknown field \\\"spec.foo\\\"") ||
                  strstr(warning, "unknown field \"spec.foo\""),
              "Warn is the default: %s", warning);
    w = get_widget();
    cr_expect_null(kjson_get(w, "spec.foo"));
    cr_expect_null(kjson_get(w, "spec.store.immutability"));
    cr_expect_str_eq(kjson_get_str(w, "spec.store.prefix"), "p");
    cJSON_Delete(w);

    cJSON_Delete(ksimfix_call(h, "PATCH", PATH "/w?fieldValidation=Ignore",
                              "application/merge-patch+json", "{\"spec\":{\"bar\":1,\"size\":2}}",
                              &code));
    cr_assert_eq(code, 200);
    cJSON_Delete(ksimfix_call(h, "PATCH", PATH "/w/status", "application/merge-patch+json",
                              "{\"status\":{\"ready\":true,\"phase\":\"x\"}}", &code));
    cr_assert_eq(code, 200);
    w = get_widget();
    cr_expect_null(kjson_get(w, "spec.bar"));
    cr_expect_null(kjson_get(w, "status.phase"));
    cr_expect(cJSON_IsTrue(kjson_get(w, "status.ready")));
    cJSON_DeleteItemFromObject(w, "status");
    kjson_set(w, "spec.baz", cJSON_CreateTrue(), NULL);
    {
        char *body = cJSON_PrintUnformatted(w);

        cJSON_Delete(ksimfix_call(h, "PUT", PATH "/w", NULL, body, &code));
        free(body);
    }
    cr_assert_eq(code, 200);
    cJSON_Delete(w);
    w = get_widget();
    cr_expect_null(kjson_get(w, "spec.baz"));
    cr_expect_eq(kjson_get(w, "spec.size")->valueint, 2);
    cJSON_Delete(w);
}

Test(kubesim_prune, strict_is_400_and_stores_nothing, .fini = down, .timeout = 60)
{
    char warning[256];
    const char *msg;
    long code;
    cJSON *r;

    up(CRD_HEAD CRD_VERSIONS);
    r = ksimfix_call(h, "POST", PATH "?fieldValidation=Strict", NULL, widget, &code);
    cr_assert_eq(code, 400);
    cr_expect_str_eq(kjson_get_str(r, "reason"), "BadRequest");
    msg = kjson_get_str(r, "message");
    cr_expect_str_eq(msg, "Widget in version \"v1\" cannot be handled as a Widget: strict "
                          "decoding error: unknown field \"spec.foo\", unknown field "
                          "\"spec.store.immutability\"");
    cJSON_Delete(r);
    cr_expect_eq(ksimfix_status(h, PATH "/w"), 404);

    cJSON_Delete(ksimfix_call(h, "POST", PATH "?fieldValidation=Ignore", NULL, widget, &code));
    cr_assert_eq(code, 201);
    r = ksimfix_call(h, "PATCH", PATH "/w?fieldValidation=Strict", "application/merge-patch+json",
                     "{\"spec\":{\"store\":{\"immutability\":{}}}}", &code);
    cr_expect_eq(code, 400);
    cr_expect(strstr(kjson_get_str(r, "message"),
                     "strict decoding error: unknown field \"spec.store.immutability\""));
    cJSON_Delete(r);
    /* a merge patch removing an unknown field is not an unknown field */
    cJSON_Delete(ksimfix_call_as(
        h, NULL, "PATCH", PATH "/w?fieldValidation=Strict", "application/merge-patch+json",
        "{\"spec\":{\"foo\":null,\"size\":3}}", &code, warning, sizeof(warning)));
    cr_expect_eq(code, 200);
    cr_expect_str_eq(warning, "");
    r = ksimfix_call(h, "PATCH", PATH "/w?fieldValidation=Sometimes",
                     "application/merge-patch+json", "{}", &code);
    cr_expect_eq(code, 400);
    cJSON_Delete(r);
}
