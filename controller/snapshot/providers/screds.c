/* screds - object-store credentials (see screds.h). */
#include "controller/snapshot/providers/screds.h"
#include "controller/snapshot/providers/scredsfile.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/crypto.h"

static const struct scredsfile_field s3_fields[] = {
    /* either these two or roleARN + the token file: checked in s3_validate */
    { "accessKeyID", SCREDSFILE_STR, offsetof(struct screds_s3, access_key), false, 0 },
    { "secretAccessKey", SCREDSFILE_STR, offsetof(struct screds_s3, secret_key), false, 0 },
    { "roleARN", SCREDSFILE_STR, offsetof(struct screds_s3, role_arn), false, 0 },
    { "tokenPath", SCREDSFILE_STR, offsetof(struct screds_s3, token_path), false,
      SCREDSFILE_IN_JSON },
    { "token", SCREDSFILE_PATH, offsetof(struct screds_s3, token_path), false, SCREDSFILE_IN_DIR },
    { "requestChecksumCalculation", SCREDSFILE_STR, offsetof(struct screds_s3, req_checksum), false,
      0 },
    { "responseChecksumValidation", SCREDSFILE_STR, offsetof(struct screds_s3, resp_checksum),
      false, 0 },
    { "region", SCREDSFILE_STR, offsetof(struct screds_s3, region), true, 0 },
    { "endpoint", SCREDSFILE_STR, offsetof(struct screds_s3, endpoint), false, 0 },
    { "s3ForcePathStyle", SCREDSFILE_BOOL, offsetof(struct screds_s3, path_style), false, 0 },
    { "insecureSkipVerify", SCREDSFILE_BOOL, offsetof(struct screds_s3, insecure), false, 0 },
    { "trustedCaCert", SCREDSFILE_STR, offsetof(struct screds_s3, ca_pem), false, 0 },
    { "sseCustomerKey", SCREDSFILE_STR, offsetof(struct screds_s3, sse_key), false, 0 },
    { "sseCustomerAlgorithm", SCREDSFILE_STR, offsetof(struct screds_s3, sse_alg), false, 0 },
    { "bucketName", SCREDSFILE_STR, offsetof(struct screds_s3, bucket), false, 0 },
    { NULL, SCREDSFILE_STR, 0, false, 0 },
};

/* The generic S3 stores' credential files (etcd-backup-restore's ocsAuthOptions). */
static const struct scredsfile_field ocs_fields[] = {
    { "accessKeyID", SCREDSFILE_STR, offsetof(struct screds_s3, access_key), true, 0 },
    { "secretAccessKey", SCREDSFILE_STR, offsetof(struct screds_s3, secret_key), true, 0 },
    { "region", SCREDSFILE_STR, offsetof(struct screds_s3, region), true, 0 },
    { "endpoint", SCREDSFILE_STR, offsetof(struct screds_s3, endpoint), true, 0 },
    { "disableSSL", SCREDSFILE_BOOL, offsetof(struct screds_s3, disable_ssl), false, 0 },
    { "insecureSkipVerify", SCREDSFILE_BOOL, offsetof(struct screds_s3, insecure), false, 0 },
    { NULL, SCREDSFILE_STR, 0, false, 0 },
};

static const struct scredsfile_field abs_fields[] = {
    { "storageAccount", SCREDSFILE_STR, offsetof(struct screds_abs, account), true, 0 },
    { "storageKey", SCREDSFILE_STR, offsetof(struct screds_abs, key_b64), true, 0 },
    { "domain", SCREDSFILE_STR, offsetof(struct screds_abs, domain), false, 0 },
    { "emulatorEnabled", SCREDSFILE_BOOL, offsetof(struct screds_abs, emulator), false, 0 },
    { NULL, SCREDSFILE_STR, 0, false, 0 },
};

bool screds_dns_label(const char *s)
{
    size_t n = s ? strlen(s) : 0;

    if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return false;
    return true;
}

/*
 * tokenPath only inside dir, the mounted credentials directory: resolved (symbolic links
 * too, as a Secret volume's are) to a file under dir's own resolution.
 */
static enum kerr token_inside(const char *dir, const char *token, struct kerr_info *err)
{
    char *d = realpath(dir, NULL), *t = realpath(token, NULL);
    size_t n = d ? strlen(d) : 0;
    bool ok = d && t && strncmp(t, d, n) == 0 && (t[n] == '/' || (n == 1 && d[0] == '/'));

    free(d);
    free(t);
    if (!ok)
        return kerr_set(err, KERR_INVAL,
                        "credential field tokenPath \"%.128s\" is not a file inside the "
                        "credentials directory %.128s: the web identity token is read from the "
                        "mounted credentials only",
                        token, dir);
    return KERR_OK;
}

bool screds_s3_web_identity(const struct screds_s3 *c)
{
    return c->role_arn && c->role_arn[0] && c->token_path && c->token_path[0];
}

/* requestChecksumCalculation / responseChecksumValidation as the AWS SDK's config reads
 * them: when_supported or when_required, in any case. */
static enum kerr checksum_mode(const char *name, const char *v, enum screds_checksum *out,
                               struct kerr_info *err)
{
    if (v == NULL) {
        *out = SCREDS_CS_UNSET;
    } else if (strcasecmp(v, "when_supported") == 0) {
        *out = SCREDS_CS_WHEN_SUPPORTED;
    } else if (strcasecmp(v, "when_required") == 0) {
        *out = SCREDS_CS_WHEN_REQUIRED;
    } else {
        return kerr_set(err, KERR_INVAL,
                        "credential field %s: invalid value \"%.32s\", must be WHEN_SUPPORTED or "
                        "WHEN_REQUIRED",
                        name, v);
    }
    return KERR_OK;
}

static enum kerr s3_validate(struct screds_s3 *c, struct kerr_info *err)
{
    enum kerr rc = scredsfile_check_required(s3_fields, c, err);
    if (rc != KERR_OK) {
        return rc;
    }
    /* etcd-backup-restore: static keys when accessKeyID is set, else web identity */
    if (c->access_key && c->access_key[0]) {
        if (c->secret_key == NULL || c->secret_key[0] == '\0') {
            return kerr_set(err, KERR_INVAL,
                            "credential field secretAccessKey is missing or empty");
        }
    } else if (!screds_s3_web_identity(c)) {
        return kerr_set(err, KERR_INVAL,
                        "credential field accessKeyID is missing or empty: set accessKeyID and "
                        "secretAccessKey, or roleARN and token (web identity)");
    }
    rc = checksum_mode("requestChecksumCalculation", c->req_checksum, &c->req_cs, err);
    rc = rc ? rc : checksum_mode("responseChecksumValidation", c->resp_checksum, &c->resp_cs, err);
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
    /* the region names a host (sts.<region>.amazonaws.com, s3.<region>.amazonaws.com) */
    if ((screds_s3_web_identity(c) || !c->endpoint || !c->endpoint[0]) &&
        !screds_dns_label(c->region)) {
        return kerr_set(err, KERR_INVAL,
                        "credential field region \"%.64s\" is not a DNS label (lower-case "
                        "letters, digits and '-', e.g. eu-west-1): it is part of a host name",
                        c->region ? c->region : "");
    }
    return KERR_OK;
}

enum kerr screds_s3_parse_json(const char *text, size_t len, struct screds_s3 *out,
                               struct kerr_info *err)
{
    memset(out, 0, sizeof *out);
    enum kerr rc = scredsfile_parse_json(text, len, s3_fields, out, err);
    rc = rc ? rc : s3_validate(out, err);
    if (rc == KERR_OK && out->token_path) {
        rc = kerr_set(err, KERR_INVAL,
                      "credential field tokenPath: a token is read only from a credentials "
                      "directory");
    }
    if (rc != KERR_OK) {
        screds_s3_release(out);
    }
    return rc;
}

enum kerr screds_s3_read(enum screds_form form, const char *path, struct screds_s3 *out,
                         struct kerr_info *err)
{
    memset(out, 0, sizeof *out);
    enum kerr rc = scredsfile_read(form == SCREDS_DIR, path, s3_fields, out, err);
    rc = rc ? rc : s3_validate(out, err);
    if (rc == KERR_OK && out->token_path) {
        char *copy = strdup(path);
        rc = copy ? token_inside(form == SCREDS_DIR ? path : dirname(copy), out->token_path, err)
                  : kerr_set(err, KERR_NOMEM, NULL);
        free(copy);
    }
    if (rc != KERR_OK) {
        screds_s3_release(out);
    }
    return rc;
}

/* A set, non-empty environment variable, else NULL. */
static const char *env_str(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] ? v : NULL;
}

/* The AWS default chain's environment: static keys (with the session token), else web
 * identity; the region from AWS_REGION, else AWS_DEFAULT_REGION. */
static enum kerr s3_env_chain(struct screds_s3 *out, const char *dir, struct kerr_info *err)
{
    const char *region =
        env_str("AWS_REGION") ? env_str("AWS_REGION") : env_str("AWS_DEFAULT_REGION");
    const char *ak = env_str("AWS_ACCESS_KEY_ID");
    const char *vals[6] = { NULL };
    char **slots[6] = { &out->region,        &out->access_key, &out->secret_key,
                        &out->session_token, &out->role_arn,   &out->token_path };
    vals[0] = region;
    if (ak && env_str("AWS_SECRET_ACCESS_KEY")) {
        vals[1] = ak;
        vals[2] = env_str("AWS_SECRET_ACCESS_KEY");
        vals[3] = env_str("AWS_SESSION_TOKEN");
    } else if (env_str("AWS_ROLE_ARN") && env_str("AWS_WEB_IDENTITY_TOKEN_FILE")) {
        vals[4] = env_str("AWS_ROLE_ARN");
        vals[5] = env_str("AWS_WEB_IDENTITY_TOKEN_FILE");
    }
    if (!region || (!vals[1] && !vals[4])) {
        return kerr_set(err, KERR_INVAL,
                        "no S3 credentials: set AWS_APPLICATION_CREDENTIALS (directory%s%s%s) or "
                        "AWS_APPLICATION_CREDENTIALS_JSON (file), or AWS_REGION with "
                        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or with AWS_ROLE_ARN and "
                        "AWS_WEB_IDENTITY_TOKEN_FILE",
                        dir ? ": " : "", dir ? dir : "", dir ? " does not exist" : "");
    }
    for (size_t i = 0; i < 6; i++) {
        if (vals[i] && (*slots[i] = strdup(vals[i])) == NULL) {
            return kerr_set(err, KERR_NOMEM, NULL);
        }
    }
    const char *name = env_str("AWS_ROLE_SESSION_NAME");
    if (name && (out->session_name = strdup(name)) == NULL) {
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    return KERR_OK;
}

enum kerr screds_s3_from_env(struct screds_s3 *out, struct kerr_info *err)
{
    const char *json = getenv("AWS_APPLICATION_CREDENTIALS_JSON");
    const char *dir = getenv("AWS_APPLICATION_CREDENTIALS");
    struct stat st;
    memset(out, 0, sizeof *out);
    if (json && json[0]) {
        return screds_s3_read(SCREDS_JSON, json, out, err);
    }
    /* etcd-druid sets the directory even without a Secret to mount (ambient credentials):
     * a directory that does not exist leaves the choice to the environment */
    if (dir && dir[0] && (stat(dir, &st) == 0 || errno != ENOENT)) {
        return screds_s3_read(SCREDS_DIR, dir, out, err);
    }
    enum kerr rc = s3_env_chain(out, dir && dir[0] ? dir : NULL, err);
    rc = rc ? rc : s3_validate(out, err);
    if (rc != KERR_OK) {
        screds_s3_release(out);
    }
    return rc;
}

void screds_s3_release(struct screds_s3 *c)
{
    if (c == NULL) {
        return;
    }
    free(c->access_key);
    free(c->secret_key);
    free(c->session_token);
    free(c->role_arn);
    free(c->token_path);
    free(c->session_name);
    free(c->req_checksum);
    free(c->resp_checksum);
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
    enum kerr rc = scredsfile_check_required(abs_fields, c, err);
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
    enum kerr rc = scredsfile_parse_json(text, len, abs_fields, out, err);
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
    enum kerr rc = scredsfile_read(form == SCREDS_DIR, path, abs_fields, out, err);
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
static enum kerr generic_finish(struct screds_s3 *c, const struct scredsfile_field *fields,
                                struct kerr_info *err)
{
    enum kerr rc = scredsfile_check_required(fields, c, err);
    c->path_style = true;
    if (rc == KERR_OK && strstr(c->endpoint, "://") == NULL) {
        char *u =
            buf_dupf(SCREDSFILE_MAX, "%s%s", c->disable_ssl ? "http://" : "https://", c->endpoint);
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
    return s && scredsfile_parse_bool(s, &v) == 0 && v;
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
        rc = scredsfile_read(false, json, ocs_fields, out, err);
    } else if (dir && dir[0]) {
        rc = scredsfile_read(true, dir, ocs_fields, out, err);
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
