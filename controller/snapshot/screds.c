/* screds - object-store credentials (see screds.h). */
#include "controller/snapshot/screds.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/crypto.h"
#include "common/kjson.h"

#define FIELD_MAX (64 * 1024)

enum ftype { F_STR, F_BOOL };

struct field {
    const char *name;
    enum ftype type;
    size_t off; /* offset of the char * or bool in the struct */
    bool required;
};

static const struct field s3_fields[] = {
    { "accessKeyID", F_STR, offsetof(struct screds_s3, access_key), true },
    { "secretAccessKey", F_STR, offsetof(struct screds_s3, secret_key), true },
    { "region", F_STR, offsetof(struct screds_s3, region), true },
    { "endpoint", F_STR, offsetof(struct screds_s3, endpoint), false },
    { "s3ForcePathStyle", F_BOOL, offsetof(struct screds_s3, path_style), false },
    { "insecureSkipVerify", F_BOOL, offsetof(struct screds_s3, insecure), false },
    { "trustedCaCert", F_STR, offsetof(struct screds_s3, ca_pem), false },
    { "sseCustomerKey", F_STR, offsetof(struct screds_s3, sse_key), false },
    { "sseCustomerAlgorithm", F_STR, offsetof(struct screds_s3, sse_alg), false },
    { "bucketName", F_STR, offsetof(struct screds_s3, bucket), false },
    { NULL, F_STR, 0, false },
};

/* The generic S3 stores' credential files (etcd-backup-restore's ocsAuthOptions). */
static const struct field ocs_fields[] = {
    { "accessKeyID", F_STR, offsetof(struct screds_s3, access_key), true },
    { "secretAccessKey", F_STR, offsetof(struct screds_s3, secret_key), true },
    { "region", F_STR, offsetof(struct screds_s3, region), true },
    { "endpoint", F_STR, offsetof(struct screds_s3, endpoint), true },
    { "disableSSL", F_BOOL, offsetof(struct screds_s3, disable_ssl), false },
    { "insecureSkipVerify", F_BOOL, offsetof(struct screds_s3, insecure), false },
    { NULL, F_STR, 0, false },
};

static const struct field abs_fields[] = {
    { "storageAccount", F_STR, offsetof(struct screds_abs, account), true },
    { "storageKey", F_STR, offsetof(struct screds_abs, key_b64), true },
    { "domain", F_STR, offsetof(struct screds_abs, domain), false },
    { "emulatorEnabled", F_BOOL, offsetof(struct screds_abs, emulator), false },
    { NULL, F_STR, 0, false },
};

/* Go's strconv.ParseBool. */
static int parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True" };
    static const char *const no[] = { "0", "f", "F", "FALSE", "false", "False" };
    for (size_t i = 0; i < 6; i++) {
        if (strcmp(s, yes[i]) == 0 || strcmp(s, no[i]) == 0) {
            *out = strcmp(s, yes[i]) == 0;
            return 0;
        }
    }
    return -1;
}

static enum kerr set_field(void *obj, const struct field *f, const char *val, struct kerr_info *err)
{
    char *base = obj;
    if (f->type == F_BOOL) {
        if (parse_bool(val, (bool *)(void *)(base + f->off)) != 0) {
            return kerr_set(err, KERR_PARSE, "credential field %s: \"%.32s\" is not a boolean",
                            f->name, val);
        }
        return KERR_OK;
    }
    char **slot = (char **)(void *)(base + f->off);
    free(*slot);
    *slot = strdup(val);
    return *slot ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
}

/* Whole file into b (capped); ENOENT gives KERR_NOTFOUND. */
static enum kerr read_file(const char *path, struct buf *b, struct kerr_info *err)
{
    char chunk[4096];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return kerr_set(err, errno == ENOENT ? KERR_NOTFOUND : KERR_IO, "cannot open %s: %s", path,
                        errno == ENOENT ? "no such file" : "access failed");
    }
    enum kerr rc = KERR_OK;
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            rc = n < 0 ? kerr_set(err, KERR_IO, "cannot read %s", path) : KERR_OK;
            break;
        }
        if (buf_append(b, chunk, (size_t)n) != KERR_OK) {
            rc = kerr_set(err, KERR_TOOBIG, "%s is larger than %d bytes", path, FIELD_MAX);
            break;
        }
    }
    close(fd);
    return rc;
}

static enum kerr read_dir(const char *dir, const struct field *fields, void *obj,
                          struct kerr_info *err)
{
    enum kerr rc = KERR_OK;
    struct buf b;
    buf_init(&b, FIELD_MAX);
    for (const struct field *f = fields; f->name && rc == KERR_OK; f++) {
        char *path = buf_dupf(4096, "%s/%s", dir, f->name);
        buf_reset(&b);
        rc = path ? read_file(path, &b, err) : kerr_set(err, KERR_NOMEM, NULL);
        free(path);
        if (rc == KERR_NOTFOUND) {
            rc = KERR_OK;
            continue;
        }
        if (rc != KERR_OK) {
            break;
        }
        while (b.len > 0 && strchr(" \t\r\n", b.data[b.len - 1]) != NULL) {
            b.data[--b.len] = '\0';
        }
        if (memchr(buf_str(&b), '\0', b.len) != NULL) {
            rc = kerr_set(err, KERR_PARSE, "credential field %s contains a NUL byte", f->name);
            break;
        }
        rc = set_field(obj, f, buf_str(&b), err);
    }
    buf_release(&b);
    return rc;
}

static enum kerr parse_json(const char *text, size_t len, const struct field *fields, void *obj,
                            struct kerr_info *err)
{
    cJSON *root = NULL;
    struct kjson_limits lim = { FIELD_MAX * 4, 8 };
    enum kerr rc = kjson_parse(text, len, &lim, &root, NULL, err);
    if (rc != KERR_OK) {
        return kerr_wrap(err, "credentials JSON");
    }
    if (!cJSON_IsObject(root)) {
        rc = kerr_set(err, KERR_PARSE, "credentials JSON is not an object");
    }
    for (const struct field *f = fields; f->name && rc == KERR_OK; f++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, f->name);
        if (v == NULL || cJSON_IsNull(v)) {
            continue;
        }
        if (f->type == F_BOOL && cJSON_IsBool(v)) {
            *(bool *)(void *)((char *)obj + f->off) = cJSON_IsTrue(v);
        } else if (f->type == F_STR && cJSON_IsString(v)) {
            rc = set_field(obj, f, v->valuestring, err);
        } else {
            rc = kerr_set(err, KERR_PARSE, "credential field %s must be a JSON %s", f->name,
                          f->type == F_BOOL ? "boolean" : "string");
        }
    }
    cJSON_Delete(root);
    return rc;
}

static enum kerr check_required(const struct field *fields, const void *obj, struct kerr_info *err)
{
    for (const struct field *f = fields; f->name; f++) {
        if (!f->required || f->type != F_STR) {
            continue;
        }
        const char *v = *(char *const *)(const void *)((const char *)obj + f->off);
        if (v == NULL || v[0] == '\0') {
            return kerr_set(err, KERR_INVAL, "credential field %s is missing or empty", f->name);
        }
    }
    return KERR_OK;
}

static enum kerr read_any(enum screds_form form, const char *path, const struct field *fields,
                          void *obj, struct kerr_info *err)
{
    if (form == SCREDS_DIR) {
        return read_dir(path, fields, obj, err);
    }
    struct buf b;
    buf_init(&b, FIELD_MAX * 4);
    enum kerr rc = read_file(path, &b, err);
    if (rc == KERR_OK) {
        rc = parse_json(buf_str(&b), b.len, fields, obj, err);
    }
    buf_release(&b);
    return rc;
}

static enum kerr s3_validate(struct screds_s3 *c, struct kerr_info *err)
{
    enum kerr rc = check_required(s3_fields, c, err);
    if (rc != KERR_OK) {
        return rc;
    }
    if ((c->sse_key == NULL) != (c->sse_alg == NULL)) {
        return kerr_set(err, KERR_INVAL,
                        "sseCustomerKey and sseCustomerAlgorithm must be given together");
    }
    if (c->sse_alg && strcmp(c->sse_alg, "AES256") != 0) {
        return kerr_set(err, KERR_INVAL, "sseCustomerAlgorithm \"%.32s\" is not AES256",
                        c->sse_alg);
    }
    if (c->sse_key && strlen(c->sse_key) != 32) {
        return kerr_set(err, KERR_INVAL, "sseCustomerKey must be 32 bytes for AES256");
    }
    if (c->endpoint && strncmp(c->endpoint, "http://", 7) != 0 &&
        strncmp(c->endpoint, "https://", 8) != 0) {
        return kerr_set(err, KERR_INVAL, "endpoint \"%.64s\" is not an http(s) URL", c->endpoint);
    }
    return KERR_OK;
}

enum kerr screds_s3_parse_json(const char *text, size_t len, struct screds_s3 *out,
                               struct kerr_info *err)
{
    memset(out, 0, sizeof *out);
    enum kerr rc = parse_json(text, len, s3_fields, out, err);
    rc = rc ? rc : s3_validate(out, err);
    if (rc != KERR_OK) {
        screds_s3_release(out);
    }
    return rc;
}

enum kerr screds_s3_read(enum screds_form form, const char *path, struct screds_s3 *out,
                         struct kerr_info *err)
{
    memset(out, 0, sizeof *out);
    enum kerr rc = read_any(form, path, s3_fields, out, err);
    rc = rc ? rc : s3_validate(out, err);
    if (rc != KERR_OK) {
        screds_s3_release(out);
    }
    return rc;
}

enum kerr screds_s3_from_env(struct screds_s3 *out, struct kerr_info *err)
{
    const char *json = getenv("AWS_APPLICATION_CREDENTIALS_JSON");
    const char *dir = getenv("AWS_APPLICATION_CREDENTIALS");
    memset(out, 0, sizeof *out);
    if (json && json[0]) {
        return screds_s3_read(SCREDS_JSON, json, out, err);
    }
    if (dir && dir[0]) {
        return screds_s3_read(SCREDS_DIR, dir, out, err);
    }
    const char *ak = getenv("AWS_ACCESS_KEY_ID");
    const char *sk = getenv("AWS_SECRET_ACCESS_KEY");
    const char *region = getenv("AWS_REGION");
    if (!ak || !sk || !region) {
        return kerr_set(err, KERR_INVAL,
                        "no S3 credentials: set AWS_APPLICATION_CREDENTIALS (directory) or "
                        "AWS_APPLICATION_CREDENTIALS_JSON (file)");
    }
    out->access_key = strdup(ak);
    out->secret_key = strdup(sk);
    out->region = strdup(region);
    if (!out->access_key || !out->secret_key || !out->region) {
        screds_s3_release(out);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    return KERR_OK;
}

void screds_s3_release(struct screds_s3 *c)
{
    if (c == NULL) {
        return;
    }
    free(c->access_key);
    free(c->secret_key);
    free(c->region);
    free(c->endpoint);
    free(c->ca_pem);
    free(c->sse_key);
    free(c->sse_alg);
    free(c->bucket);
    memset(c, 0, sizeof *c);
}

static enum kerr abs_validate(struct screds_abs *c, struct kerr_info *err)
{
    enum kerr rc = check_required(abs_fields, c, err);
    if (rc != KERR_OK) {
        return rc;
    }
    rc = crypto_b64_decode(c->key_b64, strlen(c->key_b64), &c->key, &c->key_len, NULL);
    if (rc != KERR_OK || c->key_len == 0) {
        return kerr_set(err, KERR_PARSE, "credential field storageKey is not base64");
    }
    if (c->emulator && (c->domain == NULL || c->domain[0] == '\0')) {
        return kerr_set(err, KERR_INVAL, "emulatorEnabled needs domain (host:port)");
    }
    for (const char *p = c->account; *p; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'))) {
            return kerr_set(err, KERR_INVAL, "storageAccount must be lowercase letters and digits");
        }
    }
    return KERR_OK;
}

enum kerr screds_abs_parse_json(const char *text, size_t len, struct screds_abs *out,
                                struct kerr_info *err)
{
    memset(out, 0, sizeof *out);
    enum kerr rc = parse_json(text, len, abs_fields, out, err);
    rc = rc ? rc : abs_validate(out, err);
    if (rc != KERR_OK) {
        screds_abs_release(out);
    }
    return rc;
}

enum kerr screds_abs_read(enum screds_form form, const char *path, struct screds_abs *out,
                          struct kerr_info *err)
{
    memset(out, 0, sizeof *out);
    enum kerr rc = read_any(form, path, abs_fields, out, err);
    rc = rc ? rc : abs_validate(out, err);
    if (rc != KERR_OK) {
        screds_abs_release(out);
    }
    return rc;
}

enum kerr screds_abs_from_env(struct screds_abs *out, struct kerr_info *err)
{
    const char *json = getenv("AZURE_APPLICATION_CREDENTIALS_JSON");
    const char *dir = getenv("AZURE_APPLICATION_CREDENTIALS");
    memset(out, 0, sizeof *out);
    if (json && json[0]) {
        return screds_abs_read(SCREDS_JSON, json, out, err);
    }
    if (dir && dir[0]) {
        return screds_abs_read(SCREDS_DIR, dir, out, err);
    }
    return kerr_set(err, KERR_INVAL,
                    "no ABS credentials: set AZURE_APPLICATION_CREDENTIALS (directory) or "
                    "AZURE_APPLICATION_CREDENTIALS_JSON (file)");
}

void screds_abs_release(struct screds_abs *c)
{
    if (c == NULL) {
        return;
    }
    free(c->account);
    free(c->key_b64);
    free(c->key);
    free(c->domain);
    memset(c, 0, sizeof *c);
}

/*
 * A generic S3 store (ECS, OCS) as etcd-backup-restore's newGenericS3FromAuthOpt: path
 * style; an endpoint without a scheme is http:// with disableSSL, else https://.
 */
static enum kerr generic_finish(struct screds_s3 *c, const struct field *fields,
                                struct kerr_info *err)
{
    enum kerr rc = check_required(fields, c, err);
    c->path_style = true;
    if (rc == KERR_OK && strstr(c->endpoint, "://") == NULL) {
        char *u = buf_dupf(FIELD_MAX, "%s%s", c->disable_ssl ? "http://" : "https://", c->endpoint);
        rc = u ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
        if (u) {
            free(c->endpoint);
            c->endpoint = u;
        }
    }
    rc = rc ? rc : s3_validate(c, err);
    if (rc != KERR_OK) {
        screds_s3_release(c);
    }
    return rc;
}

/* Go's GetEnvVarToBool with its default: false when unset or not a boolean. */
static bool env_bool(const char *name)
{
    bool v = false;
    const char *s = getenv(name);
    return s && parse_bool(s, &v) == 0 && v;
}

/* The named variables into c's strings; KERR_INVAL naming the first one unset. */
static enum kerr env_strs(struct screds_s3 *c, const char *endpoint, const char *ak, const char *sk,
                          const char *region, struct kerr_info *err)
{
    const char *names[] = { endpoint, ak, sk, region };
    char **slots[] = { &c->endpoint, &c->access_key, &c->secret_key, &c->region };
    for (size_t i = 0; i < 4; i++) {
        const char *v = names[i] ? getenv(names[i]) : NULL;
        if (names[i] && (v == NULL || v[0] == '\0')) {
            return kerr_set(err, KERR_INVAL, "%s is not set", names[i]);
        }
        if (v && (*slots[i] = strdup(v)) == NULL) {
            return kerr_set(err, KERR_NOMEM, NULL);
        }
    }
    return KERR_OK;
}

enum kerr screds_ocs_from_env(struct screds_s3 *out, struct kerr_info *err)
{
    const char *json = getenv("OPENSHIFT_APPLICATION_CREDENTIALS_JSON");
    const char *dir = getenv("OPENSHIFT_APPLICATION_CREDENTIALS");
    enum kerr rc;
    memset(out, 0, sizeof *out);
    if (json && json[0]) {
        rc = read_any(SCREDS_JSON, json, ocs_fields, out, err);
    } else if (dir && dir[0]) {
        rc = read_any(SCREDS_DIR, dir, ocs_fields, out, err);
    } else if (getenv("OCS_ENDPOINT")) {
        rc = env_strs(out, "OCS_ENDPOINT", "OCS_ACCESS_KEY_ID", "OCS_SECRET_ACCESS_KEY",
                      "OCS_REGION", err);
        out->disable_ssl = env_bool("OCS_DISABLE_SSL");
        out->insecure = env_bool("OCS_INSECURE_SKIP_VERIFY");
    } else {
        rc = kerr_set(err, KERR_INVAL,
                      "no OCS credentials: set OPENSHIFT_APPLICATION_CREDENTIALS (directory) or "
                      "OPENSHIFT_APPLICATION_CREDENTIALS_JSON (file)");
    }
    if (rc != KERR_OK) {
        screds_s3_release(out);
        return rc;
    }
    return generic_finish(out, ocs_fields, err);
}

enum kerr screds_ecs_from_env(struct screds_s3 *out, struct kerr_info *err)
{
    memset(out, 0, sizeof *out);
    enum kerr rc =
        env_strs(out, "ECS_ENDPOINT", "ECS_ACCESS_KEY_ID", "ECS_SECRET_ACCESS_KEY", NULL, err);
    out->region = rc ? NULL : strdup("US-Standard");
    rc = rc ? rc : (out->region ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL));
    if (rc != KERR_OK) {
        screds_s3_release(out);
        return rc;
    }
    out->disable_ssl = env_bool("ECS_DISABLE_SSL");
    out->insecure = env_bool("ECS_INSECURE_SKIP_VERIFY");
    return generic_finish(out, ocs_fields, err);
}
