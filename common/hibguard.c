/* hibguard - see hibguard.h. */
#include "common/hibguard.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

/* True when the count at path of sts is absent or 0 (anything else: pods, or not a count). */
static bool no_pods(const cJSON *sts, const char *path)
{
    int64_t n = -1;
    enum kerr rc = kjson_get_int64(sts, path, &n);

    return rc == KERR_NOTFOUND || (rc == KERR_OK && n == 0);
}

/*
 * The StatefulSet is asleep as the stamp value says: 0 with the stamp's generation into
 * *stamp_gen and sts's into *now; -1 when it is not (other uid, replicas, pods counted, a
 * generation other than the stamp's or the next, anything malformed).
 */
static int asleep(const char *value, const cJSON *sts, long long *stamp_gen, long long *now)
{
    char uid[HIBGUARD_CHECKED_MAX];
    int64_t replicas = -1;

    *stamp_gen = 0;
    *now = generation_of(sts);
    if (hibguard_checked_parse(value, uid, sizeof(uid), stamp_gen, NULL) != KERR_OK ||
        !str_is(sts, "metadata.uid", uid) ||
        kjson_get_int64(sts, "spec.replicas", &replicas) != KERR_OK || replicas != 0 ||
        !no_pods(sts, "status.replicas") || !no_pods(sts, "status.readyReplicas"))
        return -1;
    return *now == *stamp_gen || (*stamp_gen < INT64_MAX && *now == *stamp_gen + 1) ? 0 : -1;
}

bool hibguard_checked_slept(const char *value, const cJSON *sts)
{
    long long g, now;

    return asleep(value, sts, &g, &now) == 0;
}

bool hibguard_checked_next(const char *value, const cJSON *sts)
{
    long long g, now;

    return asleep(value, sts, &g, &now) == 0 && now == g + 1;
}

/* The first HIBGUARD_STORE_LEN hex digits of the sha256 of the JSON text of v into out. */
static enum kerr digest_of(const cJSON *v, char out[HIBGUARD_STORE_LEN + 1])
{
    char h[CRYPTO_SHA256_HEX_LEN + 1], *text = cJSON_PrintUnformatted(v);
    enum kerr rc;

    out[0] = '\0';
    if (!text)
        return KERR_NOMEM;
    rc = crypto_sha256_hex(text, strlen(text), h, NULL);
    cJSON_free(text);
    if (rc != KERR_OK)
        return rc;
    snprintf(out, HIBGUARD_STORE_LEN + 1, "%.*s", HIBGUARD_STORE_LEN, h);
    return KERR_OK;
}

enum kerr hibguard_store_digest(const cJSON *etcd, char out[HIBGUARD_STORE_LEN + 1])
{
    static const char *const fields[] = { "provider", "container", "prefix", "endpointOverride" };
    const cJSON *store = kjson_get_obj(etcd, "spec.backup.store");
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
    rc = cJSON_GetArraySize(key) == (int)i ? digest_of(key, out) : KERR_NOMEM;
    cJSON_Delete(key);
    return rc;
}

/* The keys of a backup Secret that only prove who asks, never say where it writes. */
static const char *const secret_only[] = { "secretAccessKey", "accessKeySecret", "storageKey",
                                           "password", "applicationCredentialSecret" };

static bool is_secret_only(const char *key)
{
    for (size_t i = 0; i < sizeof(secret_only) / sizeof(secret_only[0]); i++)
        if (strcmp(key, secret_only[i]) == 0)
            return true;
    return false;
}

static int by_key(const void *a, const void *b)
{
    return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

enum kerr hibguard_secret_digest(const cJSON *secret, char out[HIBGUARD_STORE_LEN + 1])
{
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(secret, "data"), *e;
    const cJSON **keys = NULL;
    cJSON *list, *pair;
    size_t n = 0, i;
    enum kerr rc = KERR_NOMEM;

    out[0] = '\0';
    if (!(list = cJSON_CreateArray()))
        return KERR_NOMEM;
    if (cJSON_IsObject(data)) {
        cJSON_ArrayForEach (e, data)
            n++;
        if (n && !(keys = calloc(n, sizeof(*keys))))
            goto out;
        n = 0;
        cJSON_ArrayForEach (e, data)
            if (e->string && !is_secret_only(e->string))
                keys[n++] = e;
        if (n > 1)
            qsort(keys, n, sizeof(*keys), by_key);
    }
    /* [[key, value], ...] by key: the values as stored (base64), whatever their type */
    for (i = 0; i < n; i++) {
        if (!(pair = cJSON_CreateArray()) || !cJSON_AddItemToArray(list, pair) ||
            !cJSON_AddItemToArray(pair, cJSON_CreateString(keys[i]->string)) ||
            !cJSON_AddItemToArray(pair, cJSON_Duplicate(keys[i], 1)) ||
            cJSON_GetArraySize(pair) != 2)
            goto out;
    }
    rc = digest_of(list, out);
out:
    free(keys);
    cJSON_Delete(list);
    return rc;
}

enum kerr hibguard_secret_ref(const cJSON *etcd, const char **name)
{
    const cJSON *ref = kjson_get(etcd, "spec.backup.store.secretRef");
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ref, "name"));
    size_t n = v ? strlen(v) : 0;

    *name = NULL;
    if (!ref || cJSON_IsNull(ref))
        return KERR_NOTFOUND;
    if (n == 0 || n > HIBGUARD_SECRET_NAME_MAX)
        return KERR_INVAL;
    /* a DNS subdomain's letters, beginning and ending with a letter or digit */
    for (size_t i = 0; i < n; i++)
        if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= '0' && v[i] <= '9') ||
              ((v[i] == '-' || v[i] == '.') && i > 0 && i + 1 < n)))
            return KERR_INVAL;
    *name = v;
    return KERR_OK;
}

enum kerr hibguard_stamp_join(const char *store, const char *secret_ref, const cJSON *secret,
                              char out[HIBGUARD_STAMP_MAX])
{
    char digest[HIBGUARD_STORE_LEN + 1] = "-";
    enum kerr rc;

    out[0] = '\0';
    if (!store || strlen(store) != HIBGUARD_STORE_LEN ||
        (secret_ref && (!*secret_ref || strlen(secret_ref) > HIBGUARD_SECRET_NAME_MAX ||
                        strchr(secret_ref, '/'))))
        return KERR_INVAL;
    if (secret_ref && secret && (rc = hibguard_secret_digest(secret, digest)) != KERR_OK)
        return rc;
    snprintf(out, HIBGUARD_STAMP_MAX, "%s/%s/%s", store, secret_ref ? secret_ref : "-", digest);
    return KERR_OK;
}

enum kerr hibguard_store_stamp(const cJSON *etcd, const cJSON *secret, char out[HIBGUARD_STAMP_MAX])
{
    char store[HIBGUARD_STORE_LEN + 1];
    const char *ref = NULL;
    enum kerr rc;

    out[0] = '\0';
    if ((rc = hibguard_store_digest(etcd, store)) != KERR_OK)
        return rc;
    rc = hibguard_secret_ref(etcd, &ref);
    if (rc != KERR_OK && rc != KERR_NOTFOUND)
        return rc;
    return hibguard_stamp_join(store, ref, secret, out);
}
