#include "common/kjson.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/jsonfix.h"

Test(kjson, getters_with_dotted_and_bracketed_keys)
{
    cJSON *o = jsonfix_parse(jsonfix_etcd);
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
    cJSON *o = jsonfix_parse("{\"a\":1.5,\"b\":-9007199254740992,\"c\":1e19,\"d\":-0}");
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
    cJSON *o = jsonfix_parse("{\"metadata\":{\"name\":\"x\",\"uid\":\"u\"}}");
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
    jsonfix_assert_sorted(
        o, "{\"metadata\":{\"annotations\":{\"x/y[z]\":\"v\"},\"labels\":"
           "{\"app.kubernetes.io/part-of\":\"main\"},\"name\":\"y\",\"uid\":\"u\"},"
           "\"spec\":{\"backup\":{\"enabled\":false},\"replicas\":3},\"status\":{}}");
    cJSON_Delete(o);
}

Test(kjson, setters_refuse_bad_parents)
{
    cJSON *o = jsonfix_parse("{\"a\":\"s\",\"l\":[1,2]}");
    struct kerr_info err;

    cr_assert_eq(kjson_set_str(o, "a.b", "x", &err), KERR_INVAL);
    cr_assert_eq(kjson_set_str(o, "", "x", &err), KERR_INVAL);
    cr_assert_eq(kjson_set_str(o, "x..y", "x", &err), KERR_INVAL);
    cr_assert_eq(kjson_set_int(o, "l[5]", 1, &err), KERR_INVAL);
    cr_assert_eq(kjson_set_int(o, "l[3].x", 1, &err), KERR_INVAL);
    cr_assert_eq(kjson_set_int(o, "l[1]", 9, &err), KERR_OK);
    cr_assert_eq(kjson_set_int(o, "l[2]", 7, &err), KERR_OK);
    cr_assert_eq(kjson_set(o, "x", NULL, &err), KERR_NOMEM);
    jsonfix_assert_sorted(o, "{\"a\":\"s\",\"l\":[1,9,7]}");
    cJSON_Delete(o);
}

Test(kjson, delete_paths)
{
    cJSON *o = jsonfix_parse(jsonfix_etcd);
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
    cJSON *a = jsonfix_parse("{\"b\":{\"y\":1,\"x\":[{\"d\":1,\"c\":2}]},\"a\":\"s\"}");
    cJSON *b = jsonfix_parse("{\"a\":\"s\",\"b\":{\"x\":[{\"c\":2,\"d\":1}],\"y\":1}}");
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

Test(kjson, paths_to_json_pointers)
{
    static const char *const segs[] = { "metadata", "labels", "a~b/c", NULL };
    char *p = NULL;

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
