/*
 * s3 - the S3 provider of ostore (AWS S3 and S3-compatible endpoints).
 *
 * Credentials and options from screds (endpoint, s3ForcePathStyle,
 * trustedCaCert, insecureSkipVerify, SSE-C). Requests are signed by
 * libcurl (CURLOPT_AWS_SIGV4, payload "UNSIGNED-PAYLOAD" over TLS or
 * loopback emulators; parts carry Content-MD5, which S3 checks). Listing
 * exactly as etcd-backup-restore lists: GetBucketVersioning; when Enabled,
 * ListObjectVersions and every key at its oldest version, keys under a
 * delete marker included unless that version is tagged
 * x-etcd-snapshot-exclude=true (GetObjectTagging), and GetObjectRetention
 * of full snapshots for their retain-until date; otherwise ListObjectsV2
 * with continuation tokens, tags not read (upstream ignores them there).
 * HEAD / ranged GET (by version where known); PutObject
 * (one part) or multipart upload (aborted on any failure) with
 * If-None-Match: *; CopyObject, or CreateMultipartUpload + UploadPartCopy
 * above the copy threshold (falling back to streaming when the store does
 * not implement it); DeleteObject (by version where known; a 403 is the
 * immutability refusal only when Object Lock says so: s3lock.c);
 * PutObjectTagging + a delete marker to exclude. 5xx and 503 SlowDown are retried with
 * backoff (a few times); everything else fails at once.
 *
 * Thread safety: one store per thread (one curl handle, kept alive).
 */
#ifndef CONTROLLER_SNAPSHOT_PROVIDERS_S3_H
#define CONTROLLER_SNAPSHOT_PROVIDERS_S3_H

#include "controller/snapshot/ostore.h"
#include "controller/snapshot/providers/screds.h"

/* Open bucket (BORROWED) with credentials from the environment (screds_s3_from_env).
 * endpoint_override (BORROWED, NULL or "" for none) is --store-endpoint-override: it wins
 * over the credentials' endpoint, as in etcd-backup-restore (the region's AWS endpoint is
 * the default of both). *out OWNS the store (ostore_free). */
enum kerr s3_open(const char *bucket, const char *endpoint_override, struct ostore **out,
                  struct kerr_info *err);

/* The same with the credentials from creds (screds_ecs_from_env, screds_ocs_from_env: the
 * generic S3 stores). */
enum kerr s3_open_with(const char *bucket, const char *endpoint_override,
                       enum kerr (*creds)(struct screds_s3 *, struct kerr_info *),
                       struct ostore **out, struct kerr_info *err);

#endif
