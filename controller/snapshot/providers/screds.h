/*
 * screds - object-store credentials, read exactly as etcd-backup-restore
 * reads them (shared/reference/etcd-druid.md section 7).
 *
 * S3:  $AWS_APPLICATION_CREDENTIALS_JSON (a JSON file), else
 *      $AWS_APPLICATION_CREDENTIALS (a directory, one file per field, as a
 *      mounted Secret): when the directory holds a file named *.json (the
 *      first by name), that file is read as the JSON form and the other files
 *      are ignored. Without either (or when the directory does not exist: a
 *      pod with ambient credentials and no Secret mounted), the AWS default
 *      chain's environment: $AWS_ACCESS_KEY_ID / $AWS_SECRET_ACCESS_KEY /
 *      $AWS_SESSION_TOKEN, else web identity from $AWS_ROLE_ARN /
 *      $AWS_WEB_IDENTITY_TOKEN_FILE / $AWS_ROLE_SESSION_NAME; the region from
 *      $AWS_REGION, else $AWS_DEFAULT_REGION.
 *      Fields: region (required); accessKeyID and secretAccessKey, or (web
 *      identity, used only without accessKeyID) roleARN and the token file
 *      (tokenPath in JSON, the file "token" in the directory); endpoint,
 *      s3ForcePathStyle, insecureSkipVerify, trustedCaCert (PEM text),
 *      sseCustomerKey, sseCustomerAlgorithm, bucketName,
 *      requestChecksumCalculation and responseChecksumValidation
 *      (when_supported or when_required, any case).
 * ABS: $AZURE_APPLICATION_CREDENTIALS_JSON or $AZURE_APPLICATION_CREDENTIALS
 *      (a *.json file in it wins, as for S3).
 *      Fields: storageAccount, storageKey (base64, required); domain,
 *      emulatorEnabled.
 *
 * In the JSON form booleans are JSON booleans and strings JSON strings (as
 * Go's json.Unmarshal wants); in the directory form a file holds the value
 * with trailing whitespace (a final newline) dropped, and booleans are
 * what Go's strconv.ParseBool accepts. Unknown keys and files are ignored.
 * Every malformed form is refused with a message naming the field.
 *
 * Ownership: the structs OWN their strings; release with *_release.
 * Thread safety: reentrant; reads the environment.
 */
#ifndef CONTROLLER_SNAPSHOT_PROVIDERS_SCREDS_H
#define CONTROLLER_SNAPSHOT_PROVIDERS_SCREDS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/kerr.h"

/* requestChecksumCalculation / responseChecksumValidation. */
enum screds_checksum { SCREDS_CS_UNSET, SCREDS_CS_WHEN_SUPPORTED, SCREDS_CS_WHEN_REQUIRED };

struct screds_s3 {
    char *access_key;    /* accessKeyID; NULL with web identity until STS answered */
    char *secret_key;    /* secretAccessKey */
    char *session_token; /* $AWS_SESSION_TOKEN or STS's; sent as x-amz-security-token */
    char *role_arn;      /* roleARN (web identity) */
    char *token_path;    /* the web identity token file (read at every STS call) */
    char *session_name;  /* $AWS_ROLE_SESSION_NAME, optional */
    char *req_checksum;  /* requestChecksumCalculation as given */
    char *resp_checksum; /* responseChecksumValidation as given */
    enum screds_checksum req_cs, resp_cs;
    char *region;
    char *endpoint;   /* optional, e.g. "http://127.0.0.1:4566" */
    char *ca_pem;     /* trustedCaCert, optional */
    char *sse_key;    /* sseCustomerKey (raw key, 32 bytes for AES256), optional */
    char *sse_alg;    /* sseCustomerAlgorithm, optional */
    char *bucket;     /* bucketName, optional */
    bool path_style;  /* s3ForcePathStyle */
    bool insecure;    /* insecureSkipVerify */
    bool disable_ssl; /* disableSSL (ECS, OCS): an endpoint without scheme is http:// */
};

struct screds_abs {
    char *account;      /* storageAccount */
    char *key_b64;      /* storageKey as given (base64) */
    unsigned char *key; /* the decoded key */
    size_t key_len;
    char *domain;  /* optional; default "blob.core.windows.net" */
    bool emulator; /* emulatorEnabled: http://<domain>/<account> */
};

/* Whether c names web identity (roleARN + token file) rather than static keys. */
bool screds_s3_web_identity(const struct screds_s3 *c);

/* 1 when s is a DNS label (1-63 of a-z, 0-9, '-', not at either end): a region is one. */
bool screds_dns_label(const char *s);

/* Which form a reader takes. */
enum screds_form { SCREDS_DIR, SCREDS_JSON };

/* Read S3 credentials from path in the given form and validate them. *out is
 * zeroed first and released on failure. */
enum kerr screds_s3_read(enum screds_form form, const char *path, struct screds_s3 *out,
                         struct kerr_info *err);

/* The same from JSON text (BORROWED, len bytes). */
enum kerr screds_s3_parse_json(const char *text, size_t len, struct screds_s3 *out,
                               struct kerr_info *err);

/* From the environment as described above. */
enum kerr screds_s3_from_env(struct screds_s3 *out, struct kerr_info *err);

void screds_s3_release(struct screds_s3 *c);

/* OCS (path-style S3): $OPENSHIFT_APPLICATION_CREDENTIALS_JSON (file), else
 * $OPENSHIFT_APPLICATION_CREDENTIALS (directory; a *.json file in it wins), else
 * $OCS_ENDPOINT, $OCS_ACCESS_KEY_ID, $OCS_SECRET_ACCESS_KEY, $OCS_REGION (+ $OCS_DISABLE_SSL,
 * $OCS_INSECURE_SKIP_VERIFY). Fields: endpoint, region, accessKeyID, secretAccessKey (required),
 * disableSSL, insecureSkipVerify. ECS (path-style S3, region US-Standard): $ECS_ENDPOINT,
 * $ECS_ACCESS_KEY_ID, $ECS_SECRET_ACCESS_KEY (required), $ECS_DISABLE_SSL,
 * $ECS_INSECURE_SKIP_VERIFY. An endpoint without scheme is http:// with disableSSL,
 * else https://. */
enum kerr screds_ocs_from_env(struct screds_s3 *out, struct kerr_info *err);
enum kerr screds_ecs_from_env(struct screds_s3 *out, struct kerr_info *err);

enum kerr screds_abs_read(enum screds_form form, const char *path, struct screds_abs *out,
                          struct kerr_info *err);
enum kerr screds_abs_parse_json(const char *text, size_t len, struct screds_abs *out,
                                struct kerr_info *err);
enum kerr screds_abs_from_env(struct screds_abs *out, struct kerr_info *err);
void screds_abs_release(struct screds_abs *c);

#endif
