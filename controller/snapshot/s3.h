/*
 * s3 - the S3 provider of ostore (AWS S3 and S3-compatible endpoints).
 *
 * Credentials and options from screds (endpoint, s3ForcePathStyle,
 * trustedCaCert, insecureSkipVerify, SSE-C). Requests are signed by
 * libcurl (CURLOPT_AWS_SIGV4, payload "UNSIGNED-PAYLOAD" over TLS or
 * loopback emulators; parts carry Content-MD5, which S3 checks). Calls:
 * ListObjectsV2 with continuation tokens; ListObjectVersions and
 * GetObjectTagging for the exclude rule of etcd-backup-restore (a key with
 * a delete marker whose oldest version is tagged
 * x-etcd-snapshot-exclude=true), skipped when the store has no versioning
 * API; a plain x-etcd-snapshot-exclude=true tag on the current version
 * also excludes it (stores without versions); HEAD / ranged GET; PutObject
 * (one part) or multipart upload (aborted on any failure) with
 * If-None-Match: *; CopyObject, or CreateMultipartUpload + UploadPartCopy
 * above the copy threshold (falling back to streaming when the store does
 * not implement it); DeleteObject (by version where known; 403 AccessDenied
 * is the immutability refusal). 5xx and 503 SlowDown are retried with
 * backoff (a few times); everything else fails at once.
 *
 * Thread safety: one store per thread (one curl handle, kept alive).
 */
#ifndef CONTROLLER_SNAPSHOT_S3_H
#define CONTROLLER_SNAPSHOT_S3_H

#include "controller/snapshot/ostore.h"

/* Open bucket (BORROWED) with credentials from the environment (screds_s3_from_env).
 * endpoint_override (BORROWED, NULL or "" for none) is --store-endpoint-override: it wins
 * over the credentials' endpoint, as in etcd-backup-restore (the region's AWS endpoint is
 * the default of both). *out OWNS the store (ostore_free). */
enum kerr s3_open(const char *bucket, const char *endpoint_override, struct ostore **out,
                  struct kerr_info *err);

#endif
