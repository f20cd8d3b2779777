/*
 * kube-sim's defaulting and OpenAPI validation of custom resources
 * (tests/kube-sim/schemaval, schemadef, goregex, govalue): each message is
 * compared with the one kube-apiserver answers for the same object (its
 * field.Error texts built from k8s.io/kube-openapi's validation errors),
 * defaulting with apiextensions' algorithm, Go patterns with what Go's
 * regexp matches, then the whole path through the API: a 422 Invalid with
 * one cause per error and nothing stored, defaults on create, update and
 * read.
 */
#include "tests/kube-sim/schemaval.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "tests/kube-sim/goregex.h"
#include "tests/kube-sim/govalue.h"
#include "tests/kube-sim/schemadef.h"
#include "tests/support/ksimfix.h"

/* All errors of obj against schema, "<field>: <body>" joined by " | ". */
static void errors_of(const char *schema_json, const char *obj_json, char *out, size_t n)
{
    cJSON *schema = cJSON_Parse(schema_json), *obj = cJSON_Parse(obj_json);
    struct ksim_fielderr errs[16];
    size_t k, i, len = 0;

    cr_assert_not_null(schema, "%s", schema_json);
    cr_assert_not_null(obj, "%s", obj_json);
    k = ksim_schemaval_check(schema, obj, NULL, errs, 16);
    out[0] = '\0';
    for (i = 0; i < k && i < 16 && len < n; i++)
        len += (size_t)snprintf(out + len, n - len, "%s%s: %s", i ? " | " : "", errs[i].field,
                                errs[i].body);
    cJSON_Delete(schema);
    cJSON_Delete(obj);
}

#define EXPECT_ERRORS(schema, obj, want)                      \
    do {                                                      \
        char e_[4096];                                        \
        errors_of(schema, obj, e_, sizeof(e_));               \
        cr_expect_str_eq(e_, want, "object %s: %s", obj, e_); \
    } while (0)

/* spec.<field> with the given schema. */
#define SPEC(field, s)                                                                            \
    "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{\"" field \
    "\":" s "}}}}"

Test(kubesim_schema, enum_is_unsupported_value)
{
    const char *s =
        SPEC("deletionPolicy", "{\"type\":\"string\",\"enum\":[\"Delete\",\"Retain\"]}");

    EXPECT_ERRORS(s, "{\"spec\":{\"deletionPolicy\":\"Keep\"}}",
                  "spec.deletionPolicy: Unsupported value: \"Keep\": supported values: "
                  "\"Delete\", \"Retain\"");
    EXPECT_ERRORS(s, "{\"spec\":{\"deletionPolicy\":\"Retain\"}}", "");
    /* enum values that are not strings are listed as JSON, quoted */
    EXPECT_ERRORS(SPEC("n", "{\"type\":\"integer\",\"enum\":[1,2]}"), "{\"spec\":{\"n\":3}}",
                  "spec.n: Unsupported value: 3: supported values: \"1\", \"2\"");
}

Test(kubesim_schema, required_value_nested_and_in_lists)
{
    const char *s = "{\"type\":\"object\",\"required\":[\"spec\"],\"properties\":{\"spec\":{"
                    "\"type\":\"object\",\"required\":[\"a\"],\"properties\":{\"a\":{\"type\":"
                    "\"string\"},\"l\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
                    "\"required\":[\"name\"],\"properties\":{\"name\":{\"type\":\"string\"}}}}}}}}";

    EXPECT_ERRORS(s, "{}", "spec: Required value");
    EXPECT_ERRORS(s, "{\"spec\":{\"a\":\"x\",\"l\":[{\"name\":\"n\"},{}]}}",
                  "spec.l[1].name: Required value");
    EXPECT_ERRORS(s, "{\"spec\":{}}", "spec.a: Required value");
}

Test(kubesim_schema, types_as_kube_openapi_words_them)
{
    EXPECT_ERRORS(SPEC("replicas", "{\"type\":\"integer\"}"), "{\"spec\":{\"replicas\":\"3\"}}",
                  "spec.replicas: Invalid value: \"string\": spec.replicas in body must be of "
                  "type integer: \"string\"");
    EXPECT_ERRORS(SPEC("s", "{\"type\":\"string\"}"), "{\"spec\":{\"s\":[1]}}",
                  "spec.s: Invalid value: \"array\": spec.s in body must be of type string: "
                  "\"array\"");
    EXPECT_ERRORS(SPEC("f", "{\"type\":\"integer\"}"), "{\"spec\":{\"f\":1.5}}",
                  "spec.f: Invalid value: \"number\": spec.f in body must be of type integer: "
                  "\"number\"");
    /* with a format, a non-string of another type names the format */
    EXPECT_ERRORS(SPEC("i", "{\"type\":\"integer\",\"format\":\"int32\"}"),
                  "{\"spec\":{\"i\":true}}",
                  "spec.i: Invalid value: \"\": spec.i in body must be of type int32: \"\"");
    /* an integer is a number; 2.0 is an integer */
    EXPECT_ERRORS(SPEC("r", "{\"type\":\"number\"}"), "{\"spec\":{\"r\":2}}", "");
    EXPECT_ERRORS(SPEC("i", "{\"type\":\"integer\"}"), "{\"spec\":{\"i\":2.0}}", "");
}

Test(kubesim_schema, null_needs_nullable)
{
    const char *s = "{\"type\":\"object\",\"properties\":{\"l\":{\"type\":\"array\",\"items\":{"
                    "\"type\":\"string\"}},\"n\":{\"type\":\"string\",\"nullable\":true}}}";

    EXPECT_ERRORS(s, "{\"l\":[\"a\",null],\"n\":null}",
                  "l[1]: Invalid value: \"null\": l[1] in body must be of type string: \"null\"");
}

Test(kubesim_schema, strings_lengths_pattern_format)
{
    EXPECT_ERRORS(SPEC("x", "{\"type\":\"string\",\"pattern\":\"^[a-z]+$\"}"),
                  "{\"spec\":{\"x\":\"abc1\"}}",
                  "spec.x: Invalid value: \"abc1\": spec.x in body should match '^[a-z]+$'");
    EXPECT_ERRORS(
        SPEC("x", "{\"type\":\"string\",\"maxLength\":63}"),
        "{\"spec\":{\"x\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}}",
        "spec.x: Too long: may not be more than 63 bytes");
    EXPECT_ERRORS(SPEC("x", "{\"type\":\"string\",\"maxLength\":1}"), "{\"spec\":{\"x\":\"ab\"}}",
                  "spec.x: Too long: may not be more than 1 byte");
    /* lengths count characters, not bytes */
    EXPECT_ERRORS(SPEC("x", "{\"type\":\"string\",\"maxLength\":2}"),
                  "{\"spec\":{\"x\":\"\xc3\xa9\xc3\xa9\"}}", "");
    EXPECT_ERRORS(SPEC("x", "{\"type\":\"string\",\"minLength\":1}"), "{\"spec\":{\"x\":\"\"}}",
                  "spec.x: Invalid value: \"\": spec.x in body should be at least 1 chars long");
    /* the first failing string check only */
    EXPECT_ERRORS(SPEC("x", "{\"type\":\"string\",\"minLength\":3,\"pattern\":\"^[0-9]+$\"}"),
                  "{\"spec\":{\"x\":\"a\"}}",
                  "spec.x: Invalid value: \"a\": spec.x in body should be at least 3 chars long");
    EXPECT_ERRORS(SPEC("t", "{\"type\":\"string\",\"format\":\"date-time\"}"),
                  "{\"spec\":{\"t\":\"yesterday\"}}",
                  "spec.t: Invalid value: \"yesterday\": spec.t in body must be of type "
                  "date-time: \"yesterday\"");
    EXPECT_ERRORS(SPEC("t", "{\"type\":\"string\",\"format\":\"date-time\"}"),
                  "{\"spec\":{\"t\":\"2026-02-29T10:00:00Z\"}}",
                  "spec.t: Invalid value: \"2026-02-29T10:00:00Z\": spec.t in body must be of "
                  "type date-time: \"2026-02-29T10:00:00Z\"");
    EXPECT_ERRORS(SPEC("t", "{\"type\":\"string\",\"format\":\"date-time\"}"),
                  "{\"spec\":{\"t\":\"2028-02-29T10:00:00.123456+01:00\"}}", "");
}

Test(kubesim_schema, numbers_bounds_and_multiples)
{
    const char *s = SPEC("x", "{\"type\":\"integer\",\"minimum\":1,\"maximum\":10}");

    EXPECT_ERRORS(s, "{\"spec\":{\"x\":0}}",
                  "spec.x: Invalid value: 0: spec.x in body should be greater than or equal to 1");
    EXPECT_ERRORS(s, "{\"spec\":{\"x\":11}}",
                  "spec.x: Invalid value: 11: spec.x in body should be less than or equal to 10");
    EXPECT_ERRORS(SPEC("x", "{\"type\":\"integer\",\"minimum\":1,\"exclusiveMinimum\":true}"),
                  "{\"spec\":{\"x\":1}}",
                  "spec.x: Invalid value: 1: spec.x in body should be greater than 1");
    EXPECT_ERRORS(SPEC("x", "{\"type\":\"number\",\"minimum\":1000000}"), "{\"spec\":{\"x\":0.5}}",
                  "spec.x: Invalid value: 0.5: spec.x in body should be greater than or equal to "
                  "1e+06");
    EXPECT_ERRORS(SPEC("x", "{\"type\":\"integer\",\"multipleOf\":5}"), "{\"spec\":{\"x\":12}}",
                  "spec.x: Invalid value: 12: spec.x in body should be a multiple of 5");
}

Test(kubesim_schema, arrays_and_objects_counts)
{
    EXPECT_ERRORS(SPEC("l", "{\"type\":\"array\",\"maxItems\":3,\"items\":{\"type\":\"integer\"}}"),
                  "{\"spec\":{\"l\":[1,2,\"x\",4]}}",
                  "spec.l[2]: Invalid value: \"string\": spec.l[2] in body must be of type "
                  "integer: \"string\" | spec.l: Too many: 4: must have at most 3 items");
    EXPECT_ERRORS(SPEC("l", "{\"type\":\"array\",\"minItems\":1}"), "{\"spec\":{\"l\":[]}}",
                  "spec.l: Invalid value: 0: spec.l in body should have at least 1 items");
    EXPECT_ERRORS(SPEC("m", "{\"type\":\"object\",\"maxProperties\":1,\"additionalProperties\":{"
                            "\"type\":\"string\"}}"),
                  "{\"spec\":{\"m\":{\"a\":\"1\",\"b\":2}}}",
                  "spec.m: Too many: 2: must have at most 1 item");
    EXPECT_ERRORS(SPEC("m", "{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}}"),
                  "{\"spec\":{\"m\":{\"a\":\"1\",\"b\":2}}}",
                  "spec.m.b: Invalid value: \"integer\": spec.m.b in body must be of type string: "
                  "\"integer\"");
}

Test(kubesim_schema, int_or_string_any_of)
{
    const char *s =
        SPEC("q", "{\"x-kubernetes-int-or-string\":true,\"anyOf\":[{\"type\":"
                  "\"integer\"},{\"type\":\"string\"}],\"pattern\":\"^[0-9]+[KMG]i?$\"}");

    EXPECT_ERRORS(s, "{\"spec\":{\"q\":5}}", "");
    EXPECT_ERRORS(s, "{\"spec\":{\"q\":\"5Gi\"}}", "");
    EXPECT_ERRORS(s, "{\"spec\":{\"q\":\"5 GB\"}}",
                  "spec.q: Invalid value: \"5 GB\": spec.q in body should match "
                  "'^[0-9]+[KMG]i?$'");
    EXPECT_ERRORS(s, "{\"spec\":{\"q\":true}}",
                  "<nil>: Invalid value: \"\": \"spec.q\" must validate at least one schema "
                  "(anyOf) | spec.q: Invalid value: \"boolean\": spec.q in body must be of type "
                  "integer: \"boolean\"");
}

Test(kubesim_schema, list_types_set_and_map)
{
    const char *s = "{\"type\":\"object\",\"properties\":{\"tags\":{\"type\":\"array\","
                    "\"x-kubernetes-list-type\":\"set\",\"items\":{\"type\":\"string\"}},"
                    "\"conditions\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\","
                    "\"x-kubernetes-list-map-keys\":[\"type\"],\"items\":{\"type\":\"object\","
                    "\"properties\":{\"type\":{\"type\":\"string\",\"default\":\"Ready\"}}}}}}";

    EXPECT_ERRORS(s, "{\"tags\":[\"a\",\"b\",\"a\",\"a\",\"b\"]}",
                  "tags[2]: Duplicate value: \"a\" | tags[4]: Duplicate value: \"b\"");
    /* a missing key counts as its default; every repeat is reported */
    EXPECT_ERRORS(
        s,
        "{\"conditions\":[{\"type\":\"Ready\"},{},{\"type\":\"Ready\",\"x\":1},{\"type\":\"B\"}]}",
        "conditions[1]: Duplicate value: map[string]interface {}{\"type\":\"Ready\"} | "
        "conditions[2]: Duplicate value: map[string]interface {}{\"type\":\"Ready\"}");
    EXPECT_ERRORS(s, "{\"conditions\":[\"x\",\"y\"]}",
                  "conditions[0]: Invalid value: \"string\": conditions[0] in body must be of type "
                  "object: \"string\" | conditions[1]: Invalid value: \"string\": conditions[1] in "
                  "body must be of type object: \"string\" | conditions[0]: Invalid value: \"x\": "
                  "must be an object for an array of list-type map");
}

/* ---- defaulting */

static char *defaulted(const char *schema_json, const char *obj_json)
{
    cJSON *schema = cJSON_Parse(schema_json), *obj = cJSON_Parse(obj_json);
    char *text;

    cr_assert_not_null(schema);
    cr_assert_not_null(obj);
    ksim_schemadef_prune_nulls(schema, obj);
    cr_assert_eq(ksim_schemadef_default(schema, obj), 0);
    text = cJSON_PrintUnformatted(obj);
    cJSON_Delete(schema);
    cJSON_Delete(obj);
    return text;
}

#define EXPECT_DEFAULTED(schema, in, want)                 \
    do {                                                   \
        char *t_ = defaulted(schema, in);                  \
        cr_expect_str_eq(t_, want, "from %s: %s", in, t_); \
        free(t_);                                          \
    } while (0)

static const char def_schema[] =
    "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{"
    "\"policy\":{\"type\":\"string\",\"default\":\"Delete\"},"
    "\"opt\":{\"type\":\"string\",\"nullable\":true,\"default\":\"d\"},"
    "\"plain\":{\"type\":\"string\"},"
    "\"nested\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\","
    "\"default\":3}}},"
    "\"made\":{\"type\":\"object\",\"default\":{},\"properties\":{\"b\":{\"type\":\"string\","
    "\"default\":\"x\"}}},"
    "\"list\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"c\":{"
    "\"type\":\"boolean\",\"default\":true}}}}}}}}";

Test(kubesim_schema, defaults_only_where_the_parent_exists)
{
    EXPECT_DEFAULTED(def_schema, "{}", "{}");
    /* a default object is defaulted in turn; nested has no parent default: stays absent */
    EXPECT_DEFAULTED(def_schema, "{\"spec\":{}}",
                     "{\"spec\":{\"policy\":\"Delete\",\"opt\":\"d\",\"made\":{\"b\":\"x\"}}}");
    EXPECT_DEFAULTED(def_schema,
                     "{\"spec\":{\"policy\":\"Retain\",\"nested\":{},\"list\":[{},"
                     "{\"c\":false}]}}",
                     "{\"spec\":{\"policy\":\"Retain\",\"nested\":{\"a\":3},\"list\":[{\"c\":"
                     "true},{\"c\":false}],\"opt\":\"d\",\"made\":{\"b\":\"x\"}}}");
}

Test(kubesim_schema, nulls_are_defaulted_dropped_or_kept)
{
    /* non-nullable null with a default: the default; without: dropped; nullable: kept */
    EXPECT_DEFAULTED(def_schema, "{\"spec\":{\"policy\":null,\"plain\":null,\"opt\":null}}",
                     "{\"spec\":{\"policy\":\"Delete\",\"opt\":null,\"made\":{\"b\":\"x\"}}}");
}

/* ---- Go patterns */

Test(kubesim_schema, go_patterns_of_the_crds)
{
    const char *quantity = "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
                           "([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$";
    const char *duration = "^([0-9]+(\\.[0-9]+)?(ns|us|\xc2\xb5s|ms|s|m|h))+$";
    const char *cron = "^(\\*|[1-5]?[0-9]|(?:[1-9]|[1-4][0-9]|5[0-9])\\/(?:[1-9]|60)|\\*\\/"
                       "(?:[1-9]|[1-4][0-9]))\\s+(\\*|[0-9]|1[0-9]|2[0-3])$";

    cr_expect_eq(ksim_goregex_match(quantity, "100Mi"), 1);
    cr_expect_eq(ksim_goregex_match(quantity, "-1.5e3"), 1);
    cr_expect_eq(ksim_goregex_match(quantity, "1 Gi"), 0);
    cr_expect_eq(ksim_goregex_match(duration, "1h30m"), 1);
    cr_expect_eq(ksim_goregex_match(duration, "5\xc2\xb5s"), 1);
    cr_expect_eq(ksim_goregex_match(duration, "1d"), 0);
    cr_expect_eq(ksim_goregex_match(cron, "*/5 3"), 1);
    cr_expect_eq(ksim_goregex_match(cron, "*/5\t23"), 1);
    cr_expect_eq(ksim_goregex_match(cron, "*/5 24"), 0);
    cr_expect_eq(ksim_goregex_match("^[a-zA-Z0-9][a-zA-Z0-9._-]{1,61}[a-zA-Z0-9]$", "a.b"), 1);
    cr_expect_eq(ksim_goregex_match("^[a-zA-Z0-9][a-zA-Z0-9._-]{1,61}[a-zA-Z0-9]$", "ab"), 0);
}

Test(kubesim_schema, go_pattern_syntax)
{
    /* unanchored search, \d \w, escapes in brackets, non-greedy, a '{' that is no repeat */
    cr_expect_eq(ksim_goregex_match("b+", "abc"), 1);
    cr_expect_eq(ksim_goregex_match("^\\d{2}-\\w+$", "12-a_b"), 1);
    cr_expect_eq(ksim_goregex_match("^[\\d\\-\\]^]+$", "1-]^"), 1);
    cr_expect_eq(ksim_goregex_match("^[^\\s]+$", "a b"), 0);
    cr_expect_eq(ksim_goregex_match("^a.*?b$", "axxb"), 1);
    cr_expect_eq(ksim_goregex_match("^a{x}$", "a{x}"), 1);
    cr_expect_eq(ksim_goregex_match("^(?P<n>ab)+$", "abab"), 1);
    cr_expect_eq(ksim_goregex_match("^a.b$", "a\nb"), 0);
    cr_expect_eq(ksim_goregex_match("^[[:alpha:]]+$", "abC"), 1);
    /* what kube-sim cannot run: -1, the pattern goes unchecked */
    cr_expect_eq(ksim_goregex_match("(?i)abc", "ABC"), -1);
    cr_expect_eq(ksim_goregex_match("\\bword\\b", "a word"), -1);
    cr_expect_eq(ksim_goregex_match("[\xc3\xa9]", "x"), -1);
    cr_expect_eq(ksim_goregex_match("(a", "a"), -1);
}

Test(kubesim_schema, go_printing)
{
    char buf[128];
    struct ksim_text t;

    ksim_text_init(&t, buf, sizeof(buf));
    ksim_goval_quote(&t, "a\"b\\\n\x01\xc3\xa9\xff");
    cr_expect_str_eq(buf, "\"a\\\"b\\\\\\n\\x01\xc3\xa9\\xff\"");
    ksim_text_init(&t, buf, sizeof(buf));
    ksim_goval_float(&t, 1000000);
    ksim_text_put(&t, " ", 1);
    ksim_goval_float(&t, 123456);
    ksim_text_put(&t, " ", 1);
    ksim_goval_float(&t, 0.00001);
    ksim_text_put(&t, " ", 1);
    ksim_goval_float(&t, 1.5);
    cr_expect_str_eq(buf, "1e+06 123456 1e-05 1.5");
}

/* ---- through the API */

static struct ksim_harness *h;

#define CRD                                                                                       \
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","          \
    "\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\","        \
    "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\","         \
    "\"kind\":\"Widget\",\"listKind\":\"WidgetList\"},\"versions\":[{\"name\":\"v1\",\"served\":" \
    "true,\"storage\":true,\"subresources\":{\"status\":{}},\"schema\":{\"openAPIV3Schema\":{"    \
    "\"type\":\"object\",\"required\":[\"spec\"],\"properties\":{\"spec\":{\"type\":\"object\","  \
    "\"required\":[\"size\"],\"properties\":{\"size\":{\"type\":\"integer\",\"minimum\":1},"      \
    "\"policy\":{\"type\":\"string\",\"enum\":[\"Delete\",\"Retain\"],\"default\":"               \
    "\"Delete\"}" EXTRA_PROPS                                                                     \
    "}},\"status\":{\"type\":\"object\",\"properties\":{\"phase\":{\"type\":"                     \
    "\"string\",\"enum\":[\"Ready\"]}}}}}}}]}}"
#define EXTRA_PROPS ""
#define PATH        "/apis/example.com/v1/namespaces/default/widgets"

static void up(void)
{
    long code;

    h = ksimfix_start(NULL);
    cJSON_Delete(ksimfix_call(h, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                              NULL, CRD, &code));
    cr_assert_eq(code, 201);
    cr_assert(ksimfix_await_status(h, PATH, 200, 10000), "the CRD is never served");
}

static void down(void)
{
    ksim_harness_stop(h);
}

static cJSON *post(const char *spec, long *code)
{
    char body[512];

    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":"
             "\"w\"},\"spec\":%s}",
             spec);
    return ksimfix_call(h, "POST", PATH, NULL, body, code);
}

Test(kubesim_schema, invalid_is_422_with_every_cause, .init = up, .fini = down, .timeout = 60)
{
    const cJSON *causes;
    long code;
    cJSON *st = post("{\"size\":0,\"policy\":\"Keep\"}", &code);

    cr_assert_eq(code, 422);
    cr_expect_str_eq(kjson_get_str(st, "reason"), "Invalid");
    cr_expect_str_eq(kjson_get_str(st, "message"),
                     "Widget.example.com \"w\" is invalid: [spec.size: Invalid value: 0: "
                     "spec.size in body should be greater than or equal to 1, spec.policy: "
                     "Unsupported value: \"Keep\": supported values: \"Delete\", \"Retain\"]");
    cr_expect_str_eq(kjson_get_str(st, "details.kind"), "Widget");
    cr_expect_str_eq(kjson_get_str(st, "details.group"), "example.com");
    causes = kjson_get(st, "details.causes");
    cr_assert_eq(cJSON_GetArraySize(causes), 2);
    cr_expect_str_eq(kjson_get_str(cJSON_GetArrayItem(causes, 1), "reason"),
                     "FieldValueNotSupported");
    cr_expect_str_eq(kjson_get_str(cJSON_GetArrayItem(causes, 1), "field"), "spec.policy");
    cr_expect_str_eq(kjson_get_str(cJSON_GetArrayItem(causes, 0), "message"),
                     "Invalid value: 0: spec.size in body should be greater than or equal to 1");
    cr_expect_str_eq(kjson_get_str(cJSON_GetArrayItem(causes, 0), "reason"), "FieldValueInvalid");
    cJSON_Delete(st);
    cr_expect_eq(ksimfix_status(h, PATH "/w"), 404, "nothing stored");

    st = post("{}", &code);
    cr_expect_eq(code, 422);
    cr_expect_str_eq(kjson_get_str(st, "message"),
                     "Widget.example.com \"w\" is invalid: spec.size: Required value");
    cJSON_Delete(st);
}

Test(kubesim_schema, defaults_on_create_update_and_status, .init = up, .fini = down, .timeout = 60)
{
    long code;
    cJSON *w = post("{\"size\":2,\"policy\":null}", &code);

    cr_assert_eq(code, 201);
    cr_expect_str_eq(kjson_get_str(w, "spec.policy"), "Delete");
    cJSON_Delete(w);
    w = ksimfix_call(h, "PATCH", PATH "/w", "application/merge-patch+json",
                     "{\"spec\":{\"policy\":null,\"size\":3}}", &code);
    cr_assert_eq(code, 200);
    cr_expect_str_eq(kjson_get_str(w, "spec.policy"), "Delete", "a removed default comes back");
    cJSON_Delete(w);
    w = ksimfix_call(h, "PATCH", PATH "/w", "application/merge-patch+json",
                     "{\"spec\":{\"size\":-1}}", &code);
    cr_expect_eq(code, 422);
    cJSON_Delete(w);
    /* a status write validates the whole object */
    w = ksimfix_call(h, "PATCH", PATH "/w/status", "application/merge-patch+json",
                     "{\"status\":{\"phase\":\"Gone\"}}", &code);
    cr_expect_eq(code, 422);
    cr_expect_str_eq(kjson_get_str(cJSON_GetArrayItem(kjson_get(w, "details.causes"), 0), "field"),
                     "status.phase");
    cJSON_Delete(w);
    w = ksimfix_call(h, "GET", PATH "/w", NULL, NULL, &code);
    cr_assert(cJSON_IsNumber(kjson_get(w, "spec.size")));
    cr_expect_eq(kjson_get(w, "spec.size")->valueint, 3);
    cr_expect_null(kjson_get(w, "status.phase"));
    cJSON_Delete(w);
}

Test(kubesim_schema, updates_are_ratcheted)
{
    const char *s = SPEC("name", "{\"type\":\"string\",\"maxLength\":3}");
    cJSON *schema = cJSON_Parse(s), *old = cJSON_Parse("{\"spec\":{\"name\":\"long\"}}");
    cJSON *same = cJSON_Parse("{\"spec\":{\"name\":\"long\",\"x\":1}}");
    cJSON *changed = cJSON_Parse("{\"spec\":{\"name\":\"longer\"}}");
    struct ksim_fielderr errs[4];

    cr_assert(schema && old && same && changed);
    cr_expect_eq(ksim_schemaval_check(schema, same, NULL, errs, 4), 1, "a create is validated");
    cr_expect_eq(ksim_schemaval_check(schema, same, old, errs, 4), 0,
                 "an update keeping the invalid value passes");
    cr_expect_eq(ksim_schemaval_check(schema, changed, old, errs, 4), 1,
                 "an update changing it to another invalid value does not");
    cJSON_Delete(schema);
    cJSON_Delete(old);
    cJSON_Delete(same);
    cJSON_Delete(changed);
}

/* The CRD with one more defaulted property, spec.color. */
static char *crd_with_color(void)
{
    static const char at[] = "\"default\":\"Delete\"}";
    static const char add[] = ",\"color\":{\"type\":\"string\",\"default\":\"blue\"}";
    const char *p = strstr(CRD, at);
    char *out = malloc(sizeof(CRD) + sizeof(add));

    cr_assert_not_null(p);
    cr_assert_not_null(out);
    snprintf(out, sizeof(CRD) + sizeof(add), "%.*s%s%s", (int)(p - CRD + sizeof(at) - 1), CRD, add,
             p + sizeof(at) - 1);
    return out;
}

Test(kubesim_schema, defaults_apply_on_read, .init = up, .fini = down, .timeout = 60)
{
    char *crd = crd_with_color();
    long code;
    cJSON *w = post("{\"size\":1}", &code), *old;

    cr_assert_eq(code, 201);
    cr_expect_null(kjson_get(w, "spec.color"));
    cJSON_Delete(w);
    old = ksimfix_call(
        h, "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
        NULL, NULL, &code);
    cr_assert_eq(code, 200);
    w = cJSON_Parse(crd);
    cr_assert_not_null(w);
    cJSON_AddItemToObject(cJSON_GetObjectItem(w, "metadata"), "resourceVersion",
                          cJSON_Duplicate(kjson_get(old, "metadata.resourceVersion"), 1));
    free(crd);
    crd = cJSON_PrintUnformatted(w);
    cJSON_Delete(w);
    cJSON_Delete(old);
    cJSON_Delete(ksimfix_call(
        h, "PUT", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
        NULL, crd, &code));
    free(crd);
    cr_assert_eq(code, 200);
    w = ksimfix_call(h, "GET", PATH "/w", NULL, NULL, &code);
    cr_assert_eq(code, 200);
    cr_expect_str_eq(kjson_get_str(w, "spec.color"), "blue", "the new default shows on read");
    cJSON_Delete(w);
    w = ksimfix_call(h, "GET", PATH, NULL, NULL, &code);
    cr_expect_str_eq(kjson_get_str(cJSON_GetArrayItem(kjson_get(w, "items"), 0), "spec.color"),
                     "blue", "and in lists");
    cJSON_Delete(w);
}
