#include "common/kjson.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static const char etcd_json[] =
    "{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"Etcd\","
    "\"metadata\":{\"name\":\"etcd-main\",\"namespace\":\"shoot\",\"generation\":7,"
    "\"labels\":{\"app.kubernetes.io/part-of\":\"etcd-main\",\"a[b\":\"x\"},"
    "\"annotations\":{\"etcd-warden.io/hibernate\":\"true\"}},"
    "\"spec\":{\"replicas\":3,\"backup\":{\"enabled\":true},"
    "\"containers\":[{\"name\":\"etcd\"},{\"name\":\"backup-restore\"}]}}";

static cJSON *parse(const char *s)
{
    cJSON *v = NULL;
    struct kerr_info err;

    cr_assert_eq(kjson_parse(s, strlen(s), NULL, &v, NULL, &err), KERR_OK, "%s", err.msg);
    return v;
}

static void assert_json(const cJSON *v, const char *want)
{
    char *text = NULL;

    cr_assert_eq(kjson_print_sorted(v, &text, NULL, NULL), KERR_OK);
    cr_assert_str_eq(text, want);
    free(text);
}

Test(kjson, getters_with_dotted_and_bracketed_keys)
{
    cJSON *o = parse(etcd_json);
    static const char *const segs[] = { "metadata", "labels", "app.kubernetes.io/part-of", NULL };
    int64_t n = -1;
    bool b = false;

    cr_assert_str_eq(kjson_get_str(o, "metadata.name"), "etcd-main");
    cr_assert_str_eq(kjson_get_str(o, "metadata.labels[app.kubernetes.io/part-of]"), "etcd-main");
    cr_assert_str_eq(kjson_get_str(o, "metadata.annotations.[etcd-warden.io/hibernate]"), "true");
    cr_assert_str_eq(cJSON_GetStringValue(kjson_getv(o, segs)), "etcd-main");
    cr_assert_str_eq(kjson_get_str(o, "metadata.labels[a[b]"), "x");
    cr_assert_null(kjson_get_str(o, "metadata.labels.app.kubernetes.io/part-of"));
    cr_assert_str_eq(kjson_get_str(o, "spec.containers[1].name"), "backup-restore");
    cr_assert_str_eq(kjson_get_str(o, "spec.containers.0.name"), "etcd");
    cr_assert_null(kjson_get(o, "spec.containers[2]"));
    cr_assert_null(kjson_get(o, "spec.containers[x]"));
    cr_assert_eq(kjson_get(o, ""), o);
    cr_assert_eq(kjson_get(o, NULL), o);
    cr_assert_null(kjson_get(o, "metadata..name"));
    cr_assert_null(kjson_get(o, "metadata."));
    cr_assert_null(kjson_get(o, "metadata[name"));
    cr_assert_null(kjson_get(o, "metadata[name]x"));
    cr_assert_null(kjson_get_str(o, "spec.replicas"));
    cr_assert_not_null(kjson_get_obj(o, "spec.backup"));
    cr_assert_null(kjson_get_obj(o, "spec.containers"));
    cr_assert_not_null(kjson_get_arr(o, "spec.containers"));
    cr_assert(kjson_has(o, "spec.backup.enabled"));
    cr_assert_not(kjson_has(o, "spec.backup.store"));
    cr_assert_eq(kjson_get_int64(o, "spec.replicas", &n), KERR_OK);
    cr_assert_eq(n, 3);
    cr_assert_eq(kjson_get_int64(o, "metadata.name", &n), KERR_INVAL);
    cr_assert_eq(n, 0);
    cr_assert_eq(kjson_get_int64(o, "spec.nothing", &n), KERR_NOTFOUND);
    cr_assert_eq(kjson_get_bool(o, "spec.backup.enabled", &b), KERR_OK);
    cr_assert(b);
    cr_assert_eq(kjson_get_bool(o, "spec.replicas", &b), KERR_INVAL);
    cr_assert_eq(kjson_get_bool(o, "spec.x", &b), KERR_NOTFOUND);
    cJSON_Delete(o);
}

Test(kjson, int64_range_and_fractions)
{
    cJSON *o = parse("{\"a\":1.5,\"b\":-9007199254740992,\"c\":1e19,\"d\":-0}");
    int64_t n;

    cr_assert_eq(kjson_get_int64(o, "a", &n), KERR_INVAL);
    cr_assert_eq(kjson_get_int64(o, "b", &n), KERR_OK);
    cr_assert_eq(n, -9007199254740992LL);
    cr_assert_eq(kjson_get_int64(o, "c", &n), KERR_INVAL);
    cr_assert_eq(kjson_get_int64(o, "d", &n), KERR_OK);
    cr_assert_eq(n, 0);
    cJSON_Delete(o);
}

Test(kjson, setters_create_parents_and_replace_in_place)
{
    cJSON *o = parse("{\"metadata\":{\"name\":\"x\",\"uid\":\"u\"}}");
    static const char *const segs[] = { "metadata", "annotations", "x/y[z]", NULL };
    struct kerr_info err;

    cr_assert_eq(kjson_set_str(o, "metadata.labels[app.kubernetes.io/part-of]", "main", &err),
                 KERR_OK, "%s", err.msg);
    cr_assert_eq(kjson_set_int(o, "spec.replicas", 3, &err), KERR_OK);
    cr_assert_eq(kjson_set_bool(o, "spec.backup.enabled", false, &err), KERR_OK);
    cr_assert_eq(kjson_set_str(o, "metadata.name", "y", &err), KERR_OK);
    cr_assert_eq(kjson_setv(o, segs, cJSON_CreateString("v"), &err), KERR_OK);
    cr_assert_eq(kjson_set(o, "status", cJSON_CreateObject(), &err), KERR_OK);
    /* Replacing keeps the key where it was. */
    cr_assert_str_eq(o->child->child->string, "name");
    assert_json(o, "{\"metadata\":{\"annotations\":{\"x/y[z]\":\"v\"},\"labels\":"
                   "{\"app.kubernetes.io/part-of\":\"main\"},\"name\":\"y\",\"uid\":\"u\"},"
                   "\"spec\":{\"backup\":{\"enabled\":false},\"replicas\":3},\"status\":{}}");
    cJSON_Delete(o);
}

Test(kjson, setters_refuse_bad_parents)
{
    cJSON *o = parse("{\"a\":\"s\",\"l\":[1,2]}");
    struct kerr_info err;

    cr_assert_eq(kjson_set_str(o, "a.b", "x", &err), KERR_INVAL);
    cr_assert_eq(kjson_set_str(o, "", "x", &err), KERR_INVAL);
    cr_assert_eq(kjson_set_str(o, "x..y", "x", &err), KERR_INVAL);
    cr_assert_eq(kjson_set_int(o, "l[5]", 1, &err), KERR_INVAL);
    cr_assert_eq(kjson_set_int(o, "l[3].x", 1, &err), KERR_INVAL);
    cr_assert_eq(kjson_set_int(o, "l[1]", 9, &err), KERR_OK);
    cr_assert_eq(kjson_set_int(o, "l[2]", 7, &err), KERR_OK);
    cr_assert_eq(kjson_set(o, "x", NULL, &err), KERR_NOMEM);
    assert_json(o, "{\"a\":\"s\",\"l\":[1,9,7]}");
    cJSON_Delete(o);
}

Test(kjson, delete_paths)
{
    cJSON *o = parse(etcd_json);
    static const char *const segs[] = { "metadata", "annotations", "etcd-warden.io/hibernate",
                                        NULL };

    cr_assert_eq(kjson_delete(o, "metadata.labels[app.kubernetes.io/part-of]"), KERR_OK);
    cr_assert_not(kjson_has(o, "metadata.labels[app.kubernetes.io/part-of]"));
    cr_assert(kjson_has(o, "metadata.labels[a[b]"));
    cr_assert_eq(kjson_delete(o, "metadata.labels[app.kubernetes.io/part-of]"), KERR_NOTFOUND);
    cr_assert_eq(kjson_deletev(o, segs), KERR_OK);
    cr_assert_null(kjson_get_obj(o, "metadata.annotations")->child);
    cr_assert_eq(kjson_delete(o, "spec.containers[0]"), KERR_OK);
    cr_assert_str_eq(kjson_get_str(o, "spec.containers[0].name"), "backup-restore");
    cr_assert_eq(kjson_delete(o, "spec.nothing.deeper"), KERR_NOTFOUND);
    cr_assert_eq(kjson_delete(o, ""), KERR_NOTFOUND);
    cJSON_Delete(o);
}

Test(kjson, parse_errors_report_offsets)
{
    cJSON *v = (cJSON *)1;
    size_t off = 99;
    struct kerr_info err;
    const char trailing[] = "{\"a\":1} x";
    const char notnul[] = { '{', '}', ' ', '\n', '[' };

    cr_assert_eq(kjson_parse("{\"a\":}", 6, NULL, &v, &off, &err), KERR_PARSE);
    cr_assert_null(v);
    cr_assert_eq(off, 5);
    cr_assert_str_eq(err.msg, "kjson: invalid JSON at offset 5");
    cr_assert_eq(kjson_parse(trailing, strlen(trailing), NULL, &v, &off, &err), KERR_PARSE);
    cr_assert_eq(off, 8);
    cr_assert_eq(kjson_parse("", 0, NULL, &v, &off, &err), KERR_PARSE);
    cr_assert_eq(off, 0);
    /* Only the given length is read: the '[' after it is not part of the input. */
    cr_assert_eq(kjson_parse(notnul, 4, NULL, &v, &off, &err), KERR_OK);
    cJSON_Delete(v);
    cr_assert_eq(kjson_parse(notnul, 5, NULL, &v, &off, &err), KERR_PARSE);
    cr_assert_eq(kjson_parse("{\"a\":\"\0\"}", 9, NULL, &v, &off, &err), KERR_PARSE);
    cr_assert_eq(off, 6);
    cr_assert_not_null(strstr(err.msg, "control character"));
}

Test(kjson, parse_caps_depth_and_size)
{
    struct kjson_limits lim = { .max_bytes = 64, .max_depth = 3 };
    cJSON *v = NULL;
    size_t off = 0;
    struct kerr_info err;
    char deep[4001];

    cr_assert_eq(kjson_parse("[[[1]]]", 7, &lim, &v, &off, &err), KERR_OK);
    cJSON_Delete(v);
    cr_assert_eq(kjson_parse("[[{\"a\":[1]}]]", 13, &lim, &v, &off, &err), KERR_PARSE);
    cr_assert_eq(off, 7);
    cr_assert_not_null(strstr(err.msg, "too deep"));
    /* Brackets inside strings do not count. */
    cr_assert_eq(kjson_parse("[\"[[[[\\\"[[[\"]", 13, &lim, &v, &off, &err), KERR_OK, "%s",
                 err.msg);
    cJSON_Delete(v);
    memset(deep, '[', 2000);
    memset(deep + 2000, ']', 2000);
    deep[4000] = '\0';
    cr_assert_eq(kjson_parse(deep, 4000, NULL, &v, &off, &err), KERR_PARSE);
    cr_assert_eq(off, KJSON_DEFAULT_MAX_DEPTH);
    cr_assert_eq(kjson_parse(deep, 4000, &lim, &v, &off, &err), KERR_TOOBIG);
}

Test(kjson, sorted_printing_is_deterministic)
{
    cJSON *a = parse("{\"b\":{\"y\":1,\"x\":[{\"d\":1,\"c\":2}]},\"a\":\"s\"}");
    cJSON *b = parse("{\"a\":\"s\",\"b\":{\"x\":[{\"c\":2,\"d\":1}],\"y\":1}}");
    char *ta = NULL, *tb = NULL;
    size_t la = 0;

    cr_assert_eq(kjson_print_sorted(a, &ta, &la, NULL), KERR_OK);
    cr_assert_eq(kjson_print_sorted(b, &tb, NULL, NULL), KERR_OK);
    cr_assert_str_eq(ta, "{\"a\":\"s\",\"b\":{\"x\":[{\"c\":2,\"d\":1}],\"y\":1}}");
    cr_assert_str_eq(ta, tb);
    cr_assert_eq(la, strlen(ta));
    /* The input is left as it was. */
    cr_assert_str_eq(a->child->string, "b");
    free(ta);
    free(tb);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

Test(kjson, json_pointer_escaping)
{
    static const char *const segs[] = { "metadata", "labels", "a~b/c", NULL };
    struct buf b;
    char *p = NULL;

    buf_init(&b, 256);
    cr_assert_eq(kjson_ptr_append(&b, "metadata"), KERR_OK);
    cr_assert_eq(kjson_ptr_append(&b, "app.kubernetes.io/part-of"), KERR_OK);
    cr_assert_eq(kjson_ptr_append(&b, "~/~"), KERR_OK);
    cr_assert_str_eq(buf_str(&b), "/metadata/app.kubernetes.io~1part-of/~0~1~0");
    buf_release(&b);
    cr_assert_eq(kjson_segs_to_ptr(segs, &p, NULL), KERR_OK);
    cr_assert_str_eq(p, "/metadata/labels/a~0b~1c");
    free(p);
    cr_assert_eq(kjson_path_to_ptr("metadata.labels[etcd-warden.io/restoring]", &p, NULL), KERR_OK);
    cr_assert_str_eq(p, "/metadata/labels/etcd-warden.io~1restoring");
    free(p);
    cr_assert_eq(kjson_path_to_ptr("", &p, NULL), KERR_OK);
    cr_assert_str_eq(p, "");
    free(p);
    cr_assert_eq(kjson_path_to_ptr("a..b", &p, NULL), KERR_INVAL);
    cr_assert_null(p);
}

Test(kjson, json_patch_build_and_apply)
{
    cJSON *doc = parse(etcd_json), *patch = cJSON_CreateArray(), *out = NULL;
    struct kerr_info err;

    cr_assert_eq(kjson_patch_test(patch, "/metadata/name", cJSON_CreateString("etcd-main"), &err),
                 KERR_OK);
    cr_assert_eq(kjson_patch_add(patch, "/metadata/labels/etcd-warden.io~1restoring",
                                 cJSON_CreateString(""), &err),
                 KERR_OK);
    cr_assert_eq(kjson_patch_replace(patch, "/spec/replicas", cJSON_CreateNumber(0), &err),
                 KERR_OK);
    cr_assert_eq(kjson_patch_remove(patch, "/metadata/annotations/etcd-warden.io~1hibernate", &err),
                 KERR_OK);
    cr_assert_eq(kjson_patch_add(patch, "/spec/containers/-", cJSON_CreateObject(), &err), KERR_OK);
    cr_assert_eq(kjson_patch_add(patch, "/x", NULL, &err), KERR_INVAL);
    cr_assert_eq(cJSON_GetArraySize(patch), 5);
    cr_assert_str_eq(kjson_get_str(patch, "[1].op"), "add");
    cr_assert_eq(kjson_patch_apply(doc, patch, &out, &err), KERR_OK, "%s", err.msg);
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

Test(kjson, json_patch_failures_are_atomic)
{
    cJSON *doc = parse("{\"a\":1,\"b\":{\"c\":2}}"), *out = (cJSON *)1, *p;
    struct kerr_info err;

    p = parse("[{\"op\":\"replace\",\"path\":\"/a\",\"value\":5},"
              "{\"op\":\"test\",\"path\":\"/b/c\",\"value\":3}]");
    cr_assert_eq(kjson_patch_apply(doc, p, &out, &err), KERR_CONFLICT);
    cr_assert_null(out);
    cr_assert_str_eq(err.msg, "kjson: patch operation 1 (test /b/c): test failed");
    cJSON_Delete(p);
    p = parse("[{\"op\":\"remove\",\"path\":\"/nope\"}]");
    cr_assert_eq(kjson_patch_apply(doc, p, &out, &err), KERR_INVAL);
    cr_assert_not_null(strstr(err.msg, "path does not exist"), "%s", err.msg);
    cJSON_Delete(p);
    p = parse("[{\"op\":\"add\",\"path\":\"/x/y\",\"value\":1}]");
    cr_assert_eq(kjson_patch_apply(doc, p, &out, &err), KERR_INVAL);
    cJSON_Delete(p);
    p = parse("[{\"op\":\"frobnicate\",\"path\":\"/a\"}]");
    cr_assert_eq(kjson_patch_apply(doc, p, &out, &err), KERR_INVAL);
    cJSON_Delete(p);
    p = parse("{\"op\":\"add\"}");
    cr_assert_eq(kjson_patch_apply(doc, p, &out, &err), KERR_INVAL);
    cJSON_Delete(p);
    assert_json(doc, "{\"a\":1,\"b\":{\"c\":2}}");
    cJSON_Delete(doc);
}

Test(kjson, merge_patch_apply_with_null_deletion)
{
    cJSON *doc = parse(etcd_json), *p, *out = NULL;
    struct kerr_info err;

    p = parse("{\"metadata\":{\"annotations\":{\"etcd-warden.io/hibernate\":null,"
              "\"new\":\"v\"},\"labels\":null},\"spec\":{\"replicas\":0,\"containers\":[]}}");
    cr_assert_eq(kjson_merge_apply(doc, p, &out, &err), KERR_OK, "%s", err.msg);
    assert_json(kjson_get(out, "metadata"),
                "{\"annotations\":{\"new\":\"v\"},\"generation\":7,\"name\":\"etcd-main\","
                "\"namespace\":\"shoot\"}");
    assert_json(kjson_get(out, "spec"),
                "{\"backup\":{\"enabled\":true},\"containers\":[],\"replicas\":0}");
    cJSON_Delete(out);
    cJSON_Delete(p);
    /* A non-object patch replaces the whole document. */
    p = parse("[1]");
    cr_assert_eq(kjson_merge_apply(doc, p, &out, &err), KERR_OK);
    assert_json(out, "[1]");
    cJSON_Delete(out);
    cJSON_Delete(p);
    cJSON_Delete(doc);
}

Test(kjson, merge_diff_round_trips)
{
    cJSON *from = parse("{\"a\":1,\"b\":{\"c\":2,\"d\":3},\"l\":[1]}");
    cJSON *to = parse("{\"b\":{\"d\":3,\"c\":4},\"l\":[1,2],\"e\":\"x\"}");
    cJSON *p = NULL, *back = NULL;

    cr_assert_eq(kjson_merge_diff(from, to, &p, NULL), KERR_OK);
    assert_json(p, "{\"a\":null,\"b\":{\"c\":4},\"e\":\"x\",\"l\":[1,2]}");
    cr_assert_eq(kjson_merge_apply(from, p, &back, NULL), KERR_OK);
    cr_assert(cJSON_Compare(back, to, 1));
    /* Inputs are not reordered. */
    cr_assert_str_eq(to->child->string, "b");
    cJSON_Delete(p);
    cJSON_Delete(back);
    cr_assert_eq(kjson_merge_diff(from, from, &p, NULL), KERR_OK);
    assert_json(p, "{}");
    cJSON_Delete(p);
    cJSON_Delete(from);
    cJSON_Delete(to);
}

Test(kjson, metav1_times)
{
    char t[KJSON_TIME_LEN + 1], mt[KJSON_MICROTIME_LEN + 1];
    struct timespec ts = { .tv_sec = 1700000000, .tv_nsec = 123456789 }, got;
    struct kerr_info err;

    cr_assert_eq(kjson_time_format(1700000000, t), KERR_OK);
    cr_assert_str_eq(t, "2023-11-14T22:13:20Z");
    cr_assert_eq(kjson_microtime_format(&ts, mt), KERR_OK);
    cr_assert_str_eq(mt, "2023-11-14T22:13:20.123456Z");
    cr_assert_eq(kjson_time_parse(mt, &got, &err), KERR_OK);
    cr_assert_eq(got.tv_sec, 1700000000);
    cr_assert_eq(got.tv_nsec, 123456000);
    cr_assert_eq(kjson_time_parse("2023-11-14T23:13:20.5+01:00", &got, &err), KERR_OK);
    cr_assert_eq(got.tv_sec, 1700000000);
    cr_assert_eq(got.tv_nsec, 500000000);
    cr_assert_eq(kjson_time_parse("2024-02-29T00:00:00-00:30", &got, &err), KERR_OK);
    cr_assert_eq(got.tv_sec, 1709166600);
    ts.tv_nsec = 1000000000;
    cr_assert_eq(kjson_microtime_format(&ts, mt), KERR_INVAL);
    cr_assert_eq(kjson_microtime_now(mt), KERR_OK);
    cr_assert_eq(kjson_time_parse(mt, &got, &err), KERR_OK);
    cr_assert_gt(got.tv_sec, 1700000000);
}

Test(kjson, metav1_time_rejects_malformed)
{
    static const char *const bad[] = {
        "2023-11-14 22:13:20Z",     "2023-11-14T22:13:20",
        "2023-02-29T00:00:00Z",     "2023-11-14T24:00:00Z",
        "2023-11-14T22:13:20.Z",    "2023-11-14T22:13:20.1234567890Z",
        "2023-11-14T22:13:20+0100", "2023-11-14T22:13:20Zjunk",
        "23-11-14T22:13:20Z",       ""
    };
    struct timespec got;
    struct kerr_info err;
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(kjson_time_parse(bad[i], &got, &err), KERR_PARSE, "%s", bad[i]);
    cr_assert_eq(kjson_time_parse(NULL, &got, &err), KERR_PARSE);
}

/* Escaped segments and keys differing only in case, as in label keys. */
Test(kjson, json_patch_escaped_and_case_sensitive_keys)
{
    cJSON *doc =
        parse("{\"l\":{\"a/b\":\"1\",\"A/B\":\"2\",\"t~x\":\"3\",\"k\":\"4\",\"K\":\"5\"}}");
    cJSON *p, *out = NULL;
    struct kerr_info err;

    p = parse("[{\"op\":\"remove\",\"path\":\"/l/A~1B\"},"
              "{\"op\":\"replace\",\"path\":\"/l/t~0x\",\"value\":\"r\"},"
              "{\"op\":\"add\",\"path\":\"/l/new~1key\",\"value\":\"n\"},"
              "{\"op\":\"add\",\"path\":\"/l/a~1b\",\"value\":\"a\"},"
              "{\"op\":\"remove\",\"path\":\"/l/K\"},"
              "{\"op\":\"move\",\"from\":\"/l/k\",\"path\":\"/l/m~1v\"},"
              "{\"op\":\"copy\",\"from\":\"/l/m~1v\",\"path\":\"/l/c~0p\"},"
              "{\"op\":\"test\",\"path\":\"/l/c~0p\",\"value\":\"4\"}]");
    cr_assert_eq(kjson_patch_apply(doc, p, &out, &err), KERR_OK, "%s", err.msg);
    assert_json(out, "{\"l\":{\"a/b\":\"a\",\"c~p\":\"4\",\"m/v\":\"4\",\"new/key\":\"n\","
                     "\"t~x\":\"r\"}}");
    cJSON_Delete(out);
    cJSON_Delete(p);
    p = parse("[{\"op\":\"replace\",\"path\":\"/l/a~1B\",\"value\":1}]");
    cr_assert_eq(kjson_patch_apply(doc, p, &out, &err), KERR_INVAL);
    cJSON_Delete(p);
    cJSON_Delete(doc);
}

Test(kjson, json_patch_arrays_and_root)
{
    cJSON *doc = parse("{\"a\":[1,2,3]}"), *p, *out = NULL;

    p = parse(
        "[{\"op\":\"add\",\"path\":\"/a/1\",\"value\":9},{\"op\":\"remove\",\"path\":\"/a/0\"},"
        "{\"op\":\"replace\",\"path\":\"/a/2\",\"value\":0}]");
    cr_assert_eq(kjson_patch_apply(doc, p, &out, NULL), KERR_OK);
    assert_json(out, "{\"a\":[9,2,0]}");
    cJSON_Delete(out);
    cJSON_Delete(p);
    p = parse("[{\"op\":\"add\",\"path\":\"/a/7\",\"value\":9}]");
    cr_assert_eq(kjson_patch_apply(doc, p, &out, NULL), KERR_INVAL);
    cJSON_Delete(p);
    p = parse("[{\"op\":\"replace\",\"path\":\"\",\"value\":{\"b\":true}}]");
    cr_assert_eq(kjson_patch_apply(doc, p, &out, NULL), KERR_OK);
    assert_json(out, "{\"b\":true}");
    cJSON_Delete(out);
    cJSON_Delete(p);
    cJSON_Delete(doc);
}
