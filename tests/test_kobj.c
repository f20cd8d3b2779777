/* Tests of common/kobj: object keys, projection by paths and the ready-made index functions. */
#include "common/kobj.h"

#include <criterion/criterion.h>
#include <string.h>

#include "common/kjson.h"

static cJSON *parse(const char *s)
{
    cJSON *j = cJSON_ParseWithLengthOpts(s, strlen(s), NULL, 0);

    cr_assert_not_null(j, "bad test JSON: %s", s);
    return j;
}

Test(kobj, key_of)
{
    char key[KOBJ_KEY_MAX], small[4];
    cJSON *o = parse("{\"metadata\":{\"name\":\"etcd-main\",\"namespace\":\"ns1\"}}");
    cJSON *c = parse("{\"metadata\":{\"name\":\"cluster-wide\",\"namespace\":\"\"}}");
    cJSON *none = parse("{\"metadata\":{\"name\":\"\"}}");
    struct kerr_info err;

    cr_assert_eq(kobj_key_of(o, key, sizeof(key), NULL), KERR_OK);
    cr_assert_str_eq(key, "ns1/etcd-main");
    cr_assert_eq(kobj_key_of(c, key, sizeof(key), NULL), KERR_OK);
    cr_assert_str_eq(key, "cluster-wide", "an empty namespace is cluster scope");
    cr_assert_eq(kobj_key_of(none, key, sizeof(key), &err), KERR_INVAL);
    cr_assert_str_eq(key, "", "out is cleared on failure");
    cr_assert_not_null(strstr(err.msg, "metadata.name"), "%s", err.msg);
    cr_assert_eq(kobj_key_of(o, small, sizeof(small), NULL), KERR_TOOBIG);
    cJSON_Delete(o);
    cJSON_Delete(c);
    cJSON_Delete(none);
}

Test(kobj, project_paths_copies_what_is_listed)
{
    static const char *const paths[] = { "metadata.name", "metadata.annotations[a.io/x]",
                                         "status.lastOperation", "spec.absent", NULL };
    cJSON *o = parse("{\"metadata\":{\"name\":\"e\",\"namespace\":\"ns\","
                     "\"annotations\":{\"a.io/x\":\"1\",\"other\":\"2\"}},"
                     "\"spec\":{\"replicas\":3},"
                     "\"status\":{\"ready\":true,\"lastOperation\":{\"state\":\"Succeeded\"}}}");
    cJSON *got = NULL, *want;

    cr_assert_eq(kobj_project_paths((void *)paths, o, &got), KERR_OK);
    want = parse("{\"metadata\":{\"name\":\"e\",\"annotations\":{\"a.io/x\":\"1\"}},"
                 "\"status\":{\"lastOperation\":{\"state\":\"Succeeded\"}}}");
    cr_assert(cJSON_Compare(got, want, 1), "the projection differs from the listed paths");
    cJSON_Delete(want);
    cJSON_Delete(got);
    cr_assert_eq(kobj_project_paths(NULL, o, &got), KERR_OK, "no paths: an empty object");
    cr_assert_eq(cJSON_GetArraySize(got), 0);
    cJSON_Delete(got);
    cJSON_Delete(o);
}

Test(kobj, meta_paths_keep_the_metadata_a_controller_needs)
{
    cJSON *o = parse("{\"apiVersion\":\"v1\",\"kind\":\"Etcd\",\"metadata\":{\"name\":\"e\","
                     "\"namespace\":\"ns\",\"uid\":\"u\",\"resourceVersion\":\"7\","
                     "\"generation\":2,\"labels\":{\"l\":\"1\"},\"annotations\":{\"a\":\"1\"},"
                     "\"deletionTimestamp\":\"2024-01-01T00:00:00Z\","
                     "\"ownerReferences\":[{\"uid\":\"o\"}],\"managedFields\":[{}]},"
                     "\"spec\":{\"replicas\":3},\"status\":{\"lastOperation\":{\"state\":\"x\"},"
                     "\"ready\":true}}");
    cJSON *got = NULL;
    int64_t gen = 0;

    cr_assert_eq(kobj_project_paths((void *)KOBJ_META_PATHS, o, &got), KERR_OK);
    cr_assert_str_eq(kjson_get_str(got, "metadata.name"), "e");
    cr_assert_str_eq(kjson_get_str(got, "metadata.namespace"), "ns");
    cr_assert_str_eq(kjson_get_str(got, "metadata.uid"), "u");
    cr_assert_str_eq(kjson_get_str(got, "metadata.resourceVersion"), "7");
    cr_assert_eq(kjson_get_int64(got, "metadata.generation", &gen), KERR_OK);
    cr_assert_eq(gen, 2);
    cr_assert_str_eq(kjson_get_str(got, "metadata.labels.l"), "1");
    cr_assert_str_eq(kjson_get_str(got, "metadata.annotations.a"), "1");
    cr_assert_not_null(kjson_get_str(got, "metadata.deletionTimestamp"));
    cr_assert_str_eq(kjson_get_str(got, "metadata.ownerReferences[0].uid"), "o");
    cr_assert_str_eq(kjson_get_str(got, "status.lastOperation.state"), "x");
    cr_assert_null(kjson_get(got, "metadata.managedFields"));
    cr_assert_null(kjson_get(got, "spec"));
    cr_assert_null(kjson_get(got, "status.ready"));
    cr_assert_null(kjson_get(got, "kind"));
    cJSON_Delete(got);
    cJSON_Delete(o);
}

Test(kobj, index_functions)
{
    cJSON *o =
        parse("{\"metadata\":{\"name\":\"e\",\"namespace\":\"ns\","
              "\"labels\":{\"app.kubernetes.io/part-of\":\"etcd-main\",\"n\":1},"
              "\"ownerReferences\":[{\"uid\":\"u1\"},{\"name\":\"no-uid\"},{\"uid\":\"u2\"}]}}");
    cJSON *bare = parse("{\"metadata\":{\"name\":\"c\"}}");
    struct strlist v;

    strlist_init(&v);
    cr_assert_eq(kobj_index_namespace(NULL, o, &v), KERR_OK);
    cr_assert_eq(v.n, 1);
    cr_assert_str_eq(v.v[0], "ns");
    cr_assert_eq(kobj_index_namespace(NULL, bare, &v), KERR_OK);
    cr_assert_eq(v.n, 1, "cluster-scoped: no value");
    strlist_release(&v);

    cr_assert_eq(kobj_index_label((void *)"app.kubernetes.io/part-of", o, &v), KERR_OK);
    cr_assert_eq(v.n, 1);
    cr_assert_str_eq(v.v[0], "etcd-main");
    cr_assert_eq(kobj_index_label((void *)"n", o, &v), KERR_OK);
    cr_assert_eq(v.n, 1, "a non-string label value is no value");
    cr_assert_eq(kobj_index_label((void *)"absent", bare, &v), KERR_OK);
    cr_assert_eq(v.n, 1);
    strlist_release(&v);

    cr_assert_eq(kobj_index_owner_uid(NULL, o, &v), KERR_OK);
    cr_assert_eq(v.n, 2);
    cr_assert_str_eq(v.v[0], "u1");
    cr_assert_str_eq(v.v[1], "u2");
    cr_assert_eq(kobj_index_owner_uid(NULL, bare, &v), KERR_OK);
    cr_assert_eq(v.n, 2);
    strlist_release(&v);
    cJSON_Delete(o);
    cJSON_Delete(bare);
}

Test(kobj, condition_by_type)
{
    cJSON *o = cJSON_Parse("{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"},"
                           "{\"status\":\"False\"},{\"type\":\"Stuck\",\"status\":\"False\"}]}}");
    cJSON *bare = cJSON_Parse("{\"status\":{\"conditions\":{\"type\":\"Ready\"}}}");

    cr_assert_str_eq(kjson_get_str(kobj_condition(o, "Ready"), "status"), "True");
    cr_assert_str_eq(kjson_get_str(kobj_condition(o, "Stuck"), "status"), "False");
    cr_assert_null(kobj_condition(o, "Absent"));
    cr_assert_null(kobj_condition(bare, "Ready"), "conditions that are no list hold none");
    cr_assert_null(kobj_condition(NULL, "Ready"));
    cJSON_Delete(o);
    cJSON_Delete(bare);
}
