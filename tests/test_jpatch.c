#include "common/jpatch.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "tests/support/jsonfix.h"

Test(jpatch, json_pointer_escaping)
{
    struct buf b;

    buf_init(&b, 256);
    cr_assert_eq(jpatch_ptr_append(&b, "metadata"), KERR_OK);
    cr_assert_eq(jpatch_ptr_append(&b, "app.kubernetes.io/part-of"), KERR_OK);
    cr_assert_eq(jpatch_ptr_append(&b, "~/~"), KERR_OK);
    cr_assert_eq(jpatch_ptr_append_n(&b, "a/bXXX", 3), KERR_OK);
    cr_assert_eq(jpatch_ptr_append(&b, ""), KERR_OK);
    cr_assert_str_eq(buf_str(&b), "/metadata/app.kubernetes.io~1part-of/~0~1~0/a~1b/");
    buf_release(&b);
    buf_init(&b, 4);
    cr_assert_eq(jpatch_ptr_append(&b, "a/b"), KERR_TOOBIG);
    buf_release(&b);
}

Test(jpatch, json_patch_build_and_apply)
{
    cJSON *doc = jsonfix_parse(jsonfix_etcd), *patch = cJSON_CreateArray(), *out = NULL;
    struct kerr_info err;

    cr_assert_eq(jpatch_test(patch, "/metadata/name", cJSON_CreateString("etcd-main"), &err),
                 KERR_OK);
    cr_assert_eq(jpatch_add(patch, "/metadata/labels/etcd-warden.io~1restoring",
                            cJSON_CreateString(""), &err),
                 KERR_OK);
    cr_assert_eq(jpatch_replace(patch, "/spec/replicas", cJSON_CreateNumber(0), &err), KERR_OK);
    cr_assert_eq(jpatch_remove(patch, "/metadata/annotations/etcd-warden.io~1hibernate", &err),
                 KERR_OK);
    cr_assert_eq(jpatch_add(patch, "/spec/containers/-", cJSON_CreateObject(), &err), KERR_OK);
    cr_assert_eq(jpatch_add(patch, "/x", NULL, &err), KERR_INVAL);
    cr_assert_eq(cJSON_GetArraySize(patch), 5);
    cr_assert_str_eq(kjson_get_str(patch, "[1].op"), "add");
    cr_assert_eq(jpatch_apply(doc, patch, &out, &err), KERR_OK, "%s", err.msg);
    cr_assert_str_eq(kjson_get_str(out, "metadata.labels[etcd-warden.io/restoring]"), "");
    cr_assert_eq(kjson_get(out, "spec.replicas")->valuedouble, 0);
    cr_assert_not(kjson_has(out, "metadata.annotations[etcd-warden.io/hibernate]"));
    cr_assert_eq(cJSON_GetArraySize(kjson_get_arr(out, "spec.containers")), 3);
    /* The input document is untouched. */
    cr_assert_eq(kjson_get(doc, "spec.replicas")->valuedouble, 3);
    cJSON_Delete(out);
    cJSON_Delete(patch);
    cJSON_Delete(doc);
}

Test(jpatch, json_patch_failures_are_atomic)
{
    cJSON *doc = jsonfix_parse("{\"a\":1,\"b\":{\"c\":2}}"), *out = (cJSON *)1, *p;
    struct kerr_info err;

    p = jsonfix_parse("[{\"op\":\"replace\",\"path\":\"/a\",\"value\":5},"
                      "{\"op\":\"test\",\"path\":\"/b/c\",\"value\":3}]");
    cr_assert_eq(jpatch_apply(doc, p, &out, &err), KERR_CONFLICT);
    cr_assert_null(out);
    cr_assert_str_eq(err.msg, "jpatch: patch operation 1 (test /b/c): test failed");
    cJSON_Delete(p);
    p = jsonfix_parse("[{\"op\":\"remove\",\"path\":\"/nope\"}]");
    cr_assert_eq(jpatch_apply(doc, p, &out, &err), KERR_INVAL);
    cr_assert_not_null(strstr(err.msg, "path does not exist"), "%s", err.msg);
    cJSON_Delete(p);
    p = jsonfix_parse("[{\"op\":\"add\",\"path\":\"/x/y\",\"value\":1}]");
    cr_assert_eq(jpatch_apply(doc, p, &out, &err), KERR_INVAL);
    cJSON_Delete(p);
    p = jsonfix_parse("[{\"op\":\"frobnicate\",\"path\":\"/a\"}]");
    cr_assert_eq(jpatch_apply(doc, p, &out, &err), KERR_INVAL);
    cJSON_Delete(p);
    p = jsonfix_parse("{\"op\":\"add\"}");
    cr_assert_eq(jpatch_apply(doc, p, &out, &err), KERR_INVAL);
    cJSON_Delete(p);
    jsonfix_assert_sorted(doc, "{\"a\":1,\"b\":{\"c\":2}}");
    cJSON_Delete(doc);
}

Test(jpatch, merge_patch_apply_with_null_deletion)
{
    cJSON *doc = jsonfix_parse(jsonfix_etcd), *p, *out = NULL;
    struct kerr_info err;

    p = jsonfix_parse(
        "{\"metadata\":{\"annotations\":{\"etcd-warden.io/hibernate\":null,"
        "\"new\":\"v\"},\"labels\":null},\"spec\":{\"replicas\":0,\"containers\":[]}}");
    cr_assert_eq(jpatch_merge_apply(doc, p, &out, &err), KERR_OK, "%s", err.msg);
    jsonfix_assert_sorted(
        kjson_get(out, "metadata"),
        "{\"annotations\":{\"new\":\"v\"},\"generation\":7,\"name\":\"etcd-main\","
        "\"namespace\":\"shoot\"}");
    jsonfix_assert_sorted(kjson_get(out, "spec"),
                          "{\"backup\":{\"enabled\":true},\"containers\":[],\"replicas\":0}");
    cJSON_Delete(out);
    cJSON_Delete(p);
    /* A non-object patch replaces the whole document. */
    p = jsonfix_parse("[1]");
    cr_assert_eq(jpatch_merge_apply(doc, p, &out, &err), KERR_OK);
    jsonfix_assert_sorted(out, "[1]");
    cJSON_Delete(out);
    cJSON_Delete(p);
    cJSON_Delete(doc);
}

Test(jpatch, merge_diff_round_trips)
{
    cJSON *from = jsonfix_parse("{\"a\":1,\"b\":{\"c\":2,\"d\":3},\"l\":[1]}");
    cJSON *to = jsonfix_parse("{\"b\":{\"d\":3,\"c\":4},\"l\":[1,2],\"e\":\"x\"}");
    cJSON *p = NULL, *back = NULL;

    cr_assert_eq(jpatch_merge_diff(from, to, &p, NULL), KERR_OK);
    jsonfix_assert_sorted(p, "{\"a\":null,\"b\":{\"c\":4},\"e\":\"x\",\"l\":[1,2]}");
    cr_assert_eq(jpatch_merge_apply(from, p, &back, NULL), KERR_OK);
    cr_assert(cJSON_Compare(back, to, 1));
    /* Inputs are not reordered. */
    cr_assert_str_eq(to->child->string, "b");
    cJSON_Delete(p);
    cJSON_Delete(back);
    cr_assert_eq(jpatch_merge_diff(from, from, &p, NULL), KERR_OK);
    jsonfix_assert_sorted(p, "{}");
    cJSON_Delete(p);
    cJSON_Delete(from);
    cJSON_Delete(to);
}

/* Escaped segments and keys differing only in case, as in label keys. */
Test(jpatch, json_patch_escaped_and_case_sensitive_keys)
{
    cJSON *doc = jsonfix_parse(
        "{\"l\":{\"a/b\":\"1\",\"A/B\":\"2\",\"t~x\":\"3\",\"k\":\"4\",\"K\":\"5\"}}");
    cJSON *p, *out = NULL;
    struct kerr_info err;

    p = jsonfix_parse("[{\"op\":\"remove\",\"path\":\"/l/A~1B\"},"
                      "{\"op\":\"replace\",\"path\":\"/l/t~0x\",\"value\":\"r\"},"
                      "{\"op\":\"add\",\"path\":\"/l/new~1key\",\"value\":\"n\"},"
                      "{\"op\":\"add\",\"path\":\"/l/a~1b\",\"value\":\"a\"},"
                      "{\"op\":\"remove\",\"path\":\"/l/K\"},"
                      "{\"op\":\"move\",\"from\":\"/l/k\",\"path\":\"/l/m~1v\"},"
                      "{\"op\":\"copy\",\"from\":\"/l/m~1v\",\"path\":\"/l/c~0p\"},"
                      "{\"op\":\"test\",\"path\":\"/l/c~0p\",\"value\":\"4\"}]");
    cr_assert_eq(jpatch_apply(doc, p, &out, &err), KERR_OK, "%s", err.msg);
    jsonfix_assert_sorted(out,
                          "{\"l\":{\"a/b\":\"a\",\"c~p\":\"4\",\"m/v\":\"4\",\"new/key\":\"n\","
                          "\"t~x\":\"r\"}}");
    cJSON_Delete(out);
    cJSON_Delete(p);
    p = jsonfix_parse("[{\"op\":\"replace\",\"path\":\"/l/a~1B\",\"value\":1}]");
    cr_assert_eq(jpatch_apply(doc, p, &out, &err), KERR_INVAL);
    cJSON_Delete(p);
    cJSON_Delete(doc);
}

Test(jpatch, json_patch_arrays_and_root)
{
    cJSON *doc = jsonfix_parse("{\"a\":[1,2,3]}"), *p, *out = NULL;

    p = jsonfix_parse(
        "[{\"op\":\"add\",\"path\":\"/a/1\",\"value\":9},{\"op\":\"remove\",\"path\":\"/a/0\"},"
        "{\"op\":\"replace\",\"path\":\"/a/2\",\"value\":0}]");
    cr_assert_eq(jpatch_apply(doc, p, &out, NULL), KERR_OK);
    jsonfix_assert_sorted(out, "{\"a\":[9,2,0]}");
    cJSON_Delete(out);
    cJSON_Delete(p);
    p = jsonfix_parse("[{\"op\":\"add\",\"path\":\"/a/7\",\"value\":9}]");
    cr_assert_eq(jpatch_apply(doc, p, &out, NULL), KERR_INVAL);
    cJSON_Delete(p);
    p = jsonfix_parse("[{\"op\":\"replace\",\"path\":\"\",\"value\":{\"b\":true}}]");
    cr_assert_eq(jpatch_apply(doc, p, &out, NULL), KERR_OK);
    jsonfix_assert_sorted(out, "{\"b\":true}");
    cJSON_Delete(out);
    cJSON_Delete(p);
    cJSON_Delete(doc);
}

/*
 * The restoring label as the webhook's mutating patch writes it and the
 * controller removes it: the pointer escapes '/' as "~1", and the key must
 * come out decoded, not as "etcd-warden.io~1restoring".
 */
Test(jpatch, restoring_label_round_trip)
{
    cJSON *doc = jsonfix_parse(jsonfix_etcd), *patch = cJSON_CreateArray(), *mid = NULL,
          *out = NULL;
    struct kerr_info err;

    cr_assert_eq(jpatch_add(patch, "/metadata/labels/etcd-warden.io~1restoring",
                            cJSON_CreateString("true"), &err),
                 KERR_OK);
    cr_assert_eq(jpatch_apply(doc, patch, &mid, &err), KERR_OK, "%s", err.msg);
    cr_assert_str_eq(kjson_get_str(mid, "metadata.labels[etcd-warden.io/restoring]"), "true");
    cr_assert_null(kjson_get(mid, "metadata.labels[etcd-warden.io~1restoring]"));
    cJSON_Delete(patch);
    patch = cJSON_CreateArray();
    cr_assert_eq(jpatch_test(patch, "/metadata/labels/etcd-warden.io~1restoring",
                             cJSON_CreateString("true"), &err),
                 KERR_OK);
    cr_assert_eq(jpatch_remove(patch, "/metadata/labels/etcd-warden.io~1restoring", &err), KERR_OK);
    cr_assert_eq(jpatch_apply(mid, patch, &out, &err), KERR_OK, "%s", err.msg);
    jsonfix_assert_sorted(kjson_get(out, "metadata.labels"),
                          "{\"a[b\":\"x\",\"app.kubernetes.io/part-of\":\"etcd-main\"}");
    cJSON_Delete(out);
    cJSON_Delete(mid);
    cJSON_Delete(patch);
    cJSON_Delete(doc);
}

/* Removing or replacing one of two keys that differ only in case touches only that key. */
Test(jpatch, keys_differing_in_case_are_distinct)
{
    cJSON *doc = jsonfix_parse("{\"l\":{\"k\":\"lower\",\"K\":\"upper\"}}"), *p, *out = NULL;
    struct kerr_info err;

    p = jsonfix_parse("[{\"op\":\"remove\",\"path\":\"/l/K\"}]");
    cr_assert_eq(jpatch_apply(doc, p, &out, &err), KERR_OK, "%s", err.msg);
    jsonfix_assert_sorted(out, "{\"l\":{\"k\":\"lower\"}}");
    cJSON_Delete(out);
    cJSON_Delete(p);
    p = jsonfix_parse("[{\"op\":\"replace\",\"path\":\"/l/K\",\"value\":\"new\"}]");
    cr_assert_eq(jpatch_apply(doc, p, &out, &err), KERR_OK, "%s", err.msg);
    jsonfix_assert_sorted(out, "{\"l\":{\"K\":\"new\",\"k\":\"lower\"}}");
    cJSON_Delete(out);
    cJSON_Delete(p);
    p = jsonfix_parse("[{\"op\":\"move\",\"from\":\"/l/K\",\"path\":\"/l/m\"}]");
    cr_assert_eq(jpatch_apply(doc, p, &out, &err), KERR_OK, "%s", err.msg);
    jsonfix_assert_sorted(out, "{\"l\":{\"k\":\"lower\",\"m\":\"upper\"}}");
    cJSON_Delete(out);
    cJSON_Delete(p);
    cJSON_Delete(doc);
}
