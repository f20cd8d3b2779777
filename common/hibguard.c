/* hibguard - see hibguard.h. */
#include "common/hibguard.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/crypto.h"
#include "common/kjson.h"
#include "common/ktime.h"

static bool str_is(const cJSON *obj, const char *path, const char *want)
{
    const char *s = kjson_get_str(obj, path);

    return s && want && strcmp(s, want) == 0;
}

enum kerr hibguard_cut_at(const cJSON *etcd, time_t *out, struct kerr_info *err)
{
    const char *s = kjson_get_str(etcd, "metadata.annotations[" HIBGUARD_ANN_CUT_AT "]");
    struct timespec ts;

    *out = 0;
    if (!s)
        return kerr_set(err, KERR_NOTFOUND, "annotation %s is absent", HIBGUARD_ANN_CUT_AT);
    if (ktime_parse(s, &ts, NULL) != KERR_OK)
        return kerr_set(err, KERR_PARSE, "annotation %s: \"%.64s\" is not an RFC 3339 time",
                        HIBGUARD_ANN_CUT_AT, s);
    *out = ts.tv_sec;
    return KERR_OK;
}

bool hibguard_task_counts(const cJSON *task, const char *ns, const char *etcd_name, time_t cut_at)
{
    struct timespec created;

    if (!task || !str_is(task, "metadata.namespace", ns) ||
        !str_is(task, "spec.etcdName", etcd_name) ||
        !str_is(task, "spec.config.onDemandSnapshot.type", "full") ||
        !str_is(task, "status.state", "Succeeded"))
        return false;
    if (ktime_parse(kjson_get_str(task, "metadata.creationTimestamp"), &created, NULL) != KERR_OK)
        return false;
    /* strictly after: a task of the cut's own second may predate the cut */
    return created.tv_sec > cut_at;
}

bool hibguard_phase_current(const char *phase)
{
    static const char *const current[] = { "CuttingTraffic", "FinalSnapshot", "Failed",
                                           "ScalingDown" };
    size_t i;

    for (i = 0; phase && i < sizeof(current) / sizeof(current[0]); i++) {
        if (strcmp(phase, current[i]) == 0)
            return true;
    }
    return false;
}

enum kerr hibguard_break_glass(const char *value, time_t *expires, const char **reason,
                               struct kerr_info *err)
{
    char when[64];
    size_t n = 0;
    struct timespec ts;

    *expires = 0;
    *reason = "";
    if (!value)
        return kerr_set(err, KERR_PARSE, "no value");
    while (value[n] && !isspace((unsigned char)value[n]))
        n++;
    if (n == 0 || n >= sizeof(when))
        return kerr_set(err, KERR_PARSE,
                        "the value must start with an RFC 3339 expiry, e.g. "
                        "\"2026-11-29T12:00:00Z bucket lost\"");
    memcpy(when, value, n);
    when[n] = '\0';
    if (ktime_parse(when, &ts, NULL) != KERR_OK)
        return kerr_set(err, KERR_PARSE,
                        "\"%.63s\" is not an RFC 3339 expiry: the value is \"<expiry> "
                        "<reason>\", e.g. \"2026-11-29T12:00:00Z bucket lost\"",
                        when);
    value += n;
    while (*value && isspace((unsigned char)*value))
        value++;
    if (!*value)
        return kerr_set(err, KERR_PARSE,
                        "the reason after the expiry is empty: say why, e.g. "
                        "\"%s bucket lost\"",
                        when);
    *expires = ts.tv_sec;
    *reason = value;
    return KERR_OK;
}

enum kerr hibguard_checked_parse(const char *value, char *uid, size_t size, long long *generation,
                                 struct kerr_info *err)
{
    const char *slash, *p;
    size_t n;
    long long g = 0;

    *generation = 0;
    if (size)
        uid[0] = '\0';
    if (!value || !(slash = strchr(value, '/')))
        return kerr_set(err, KERR_PARSE, "not \"<uid>/<generation>\"");
    n = (size_t)(slash - value);
    if (n == 0 || n >= size || n > 63)
        return kerr_set(err, KERR_PARSE, "the uid is empty or too long");
    for (p = value; p < slash; p++)
        if (isspace((unsigned char)*p) || !isprint((unsigned char)*p))
            return kerr_set(err, KERR_PARSE, "the uid has a blank or a control character");
    p = slash + 1;
    if (*p < '1' || *p > '9')
        return kerr_set(err, KERR_PARSE, "the generation is not a positive number");
    for (; *p; p++) {
        if (*p < '0' || *p > '9' || g > (INT64_MAX - 9) / 10)
            return kerr_set(err, KERR_PARSE, "the generation is not a positive number");
        g = g * 10 + (*p - '0');
    }
    memcpy(uid, value, n);
    uid[n] = '\0';
    *generation = g;
    return KERR_OK;
}

/* metadata.generation of sts when a positive integer, else 0. */
static long long generation_of(const cJSON *sts)
{
    int64_t g = 0;

    if (kjson_get_int64(sts, "metadata.generation", &g) != KERR_OK || g < 1)
        return 0;
    return (long long)g;
}

enum kerr hibguard_checked_format(const cJSON *sts, char *buf, size_t size, struct kerr_info *err)
{
    const char *uid = kjson_get_str(sts, "metadata.uid");
    long long g = generation_of(sts);
    int n;

    if (size)
        buf[0] = '\0';
    if (!uid || !*uid || strlen(uid) > 63 || strchr(uid, '/') || g < 1)
        return kerr_set(err, KERR_INVAL, "the StatefulSet has no usable uid and generation");
    n = snprintf(buf, size, "%s/%lld", uid, g);
    if (n < 0 || (size_t)n >= size) {
        if (size)
            buf[0] = '\0';
        return kerr_set(err, KERR_INVAL, "the stamp does not fit");
    }
    return KERR_OK;
}

bool hibguard_checked_matches(const char *value, const cJSON *sts)
{
    char uid[HIBGUARD_CHECKED_MAX];
    long long g = 0;

    if (hibguard_checked_parse(value, uid, sizeof(uid), &g, NULL) != KERR_OK)
        return false;
    return str_is(sts, "metadata.uid", uid) && generation_of(sts) == g;
}

enum kerr hibguard_store_stamp(const cJSON *etcd, char out[HIBGUARD_STORE_LEN + 1])
{
    static const char *const fields[] = { "provider", "container", "prefix", "endpointOverride" };
    const cJSON *store = kjson_get_obj(etcd, "spec.backup.store");
    char h[CRYPTO_SHA256_HEX_LEN + 1], *text;
    cJSON *key;
    size_t i;
    enum kerr rc;

    out[0] = '\0';
    if (!store)
        return KERR_NOTFOUND;
    if (!(key = cJSON_CreateArray()))
        return KERR_NOMEM;
    /* a list of the fields in a fixed order: no two stores spell the same text */
    for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(store, fields[i]));

        cJSON_AddItemToArray(key, v ? cJSON_CreateString(v) : cJSON_CreateNull());
    }
    text = cJSON_GetArraySize(key) == (int)i ? cJSON_PrintUnformatted(key) : NULL;
    cJSON_Delete(key);
    if (!text)
        return KERR_NOMEM;
    rc = crypto_sha256_hex(text, strlen(text), h, NULL);
    cJSON_free(text);
    if (rc != KERR_OK)
        return rc;
    snprintf(out, HIBGUARD_STORE_LEN + 1, "%.*s", HIBGUARD_STORE_LEN, h);
    return KERR_OK;
}
