#include "tests/support/jsonfix.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/kjson.h"
#include "common/ktime.h"

const char jsonfix_etcd[] =
    "{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"Etcd\","
    "\"metadata\":{\"name\":\"etcd-main\",\"namespace\":\"shoot\",\"generation\":7,"
    "\"labels\":{\"app.kubernetes.io/part-of\":\"etcd-main\",\"a[b\":\"x\"},"
    "\"annotations\":{\"etcd-warden.io/hibernate\":\"true\"}},"
    "\"spec\":{\"replicas\":3,\"backup\":{\"enabled\":true},"
    "\"containers\":[{\"name\":\"etcd\"},{\"name\":\"backup-restore\"}]}}";

cJSON *jsonfix_parse(const char *text)
{
    cJSON *v = NULL;
    struct kerr_info err;

    cr_assert_eq(kjson_parse(text, strlen(text), NULL, &v, NULL, &err), KERR_OK,
                 "bad test JSON (%s): %s", err.msg, text);
    return v;
}

void jsonfix_assert_sorted(const cJSON *v, const char *want)
{
    char *text = NULL;

    cr_assert_eq(kjson_print_sorted(v, &text, NULL, NULL), KERR_OK);
    cr_assert_str_eq(text, want);
    free(text);
}

const char *jsonfix_str(const cJSON *j, const char *path)
{
    const char *s = kjson_get_str(j, path);

    return s ? s : "";
}

int64_t jsonfix_int(const cJSON *j, const char *path)
{
    int64_t v = -1;

    if (kjson_get_int64(j, path, &v) != KERR_OK)
        return -1;
    return v;
}

int64_t jsonfix_int_at(const cJSON *j, const char *path)
{
    int64_t v = -1;

    cr_assert_eq(kjson_get_int64(j, path, &v), KERR_OK, "%s missing", path);
    return v;
}

void jsonfix_assert_microtime(const char *s)
{
    struct timespec ts;

    cr_assert_not_null(s);
    cr_assert_eq(strlen(s), KTIME_MICROTIME_LEN, "not a MicroTime: %s", s);
    cr_assert_eq(s[19], '.', "no microseconds: %s", s);
    cr_assert_eq(ktime_parse(s, &ts, NULL), KERR_OK, "%s", s);
}

const char *jsonfix_names(const cJSON *items, char *out, size_t size)
{
    const cJSON *it;
    size_t len = 0;

    cr_assert_gt(size, 0);
    out[0] = '\0';
    cJSON_ArrayForEach (it, items) {
        len += (size_t)snprintf(out + len, size - len, "%s%s", len ? "," : "",
                                jsonfix_str(it, "metadata.name"));
        cr_assert_lt(len, size, "names do not fit in %zu bytes", size);
    }
    return out;
}
