/*
 * gcs - the Google Cloud Storage provider of ostore, through the GCS JSON API.
 *
 * Credentials: $GOOGLE_APPLICATION_CREDENTIALS, a service-account key file
 * (gcsauth.h), as etcd-backup-restore's Google SDK reads it. Endpoint, as
 * etcd-backup-restore: --store-endpoint-override, else the file
 * storageAPIEndpoint beside the credentials file, else
 * $GOOGLE_STORAGE_API_ENDPOINT, else https://storage.googleapis.com (a
 * trailing /storage/v1 is dropped). An http:// endpoint is an emulator:
 * without credentials its requests go unauthenticated.
 *
 * Calls: objects.list (prefix, pageToken), objects.get (metadata, and
 * alt=media with Range), a resumable upload created with
 * ifGenerationMatch=0 (create-only) sent in parts with Content-Range,
 * objects.rewrite with ifGenerationMatch=0 and sourceGeneration (repeated
 * with rewriteToken until done), objects.delete by generation, and
 * objects.patch of the custom metadata x-etcd-snapshot-exclude=true
 * (etcd-backup-restore skips an object so marked). Bucket Lock: an
 * object's retentionExpirationTime is its immutable-until date; a delete
 * refused with 403 retentionPolicyNotMet is the immutability refusal. The
 * retention is the bucket's, so there is no per-object extend. The mark of
 * warden-snapshot's own objects is the custom metadata etcd-warden-copy=true.
 * The md5Hash is the checksum compared after a copy. 5xx are retried.
 *
 * Thread safety: one store per thread.
 */
#ifndef CONTROLLER_SNAPSHOT_PROVIDERS_GCS_H
#define CONTROLLER_SNAPSHOT_PROVIDERS_GCS_H

#include "controller/snapshot/ostore.h"

#define GCS_COPY_MARK        "etcd-warden-copy"
#define GCS_DEFAULT_ENDPOINT "https://storage.googleapis.com"

/* Open bucket (BORROWED) as described above; endpoint_override BORROWED, NULL or "" for
 * none. *out OWNS the store (ostore_free). */
enum kerr gcs_open(const char *bucket, const char *endpoint_override, struct ostore **out,
                   struct kerr_info *err);

#endif
