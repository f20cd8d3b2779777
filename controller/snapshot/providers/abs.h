/*
 * abs - the Azure Blob Storage provider of ostore.
 *
 * Credentials from screds (storageAccount, storageKey, domain,
 * emulatorEnabled: http://<domain>/<account> as for Azurite). Requests are
 * signed with SharedKey (HMAC-SHA256 through OpenSSL over the canonical
 * headers and resource, x-ms-version 2021-10-04). Calls: List Blobs with
 * markers (include=immutabilitypolicy,tags: the x-etcd-snapshot-exclude=true
 * index tag excludes a blob; the policy's expiry is reported), Get Blob Properties, ranged Get
 * Blob, Put Blob (one part) or Put Block + Put Block List with If-None-Match: * (uncommitted blocks
 * are dropped by the service, so a failed upload leaves no blob), Copy Blob with If-None-Match: *
 * and x-ms-copy-status polling, Delete Blob (409 BlobImmutableDueTo* is the immutability refusal).
 * Content-MD5 is the checksum compared after a copy. 5xx are retried with backoff.
 * Extension in place (absimm.c): Get Container Properties, Get Blob Properties and Set Blob
 * Immutability Policy on a container with version-level immutability.
 *
 * Thread safety: one store per thread.
 */
#ifndef CONTROLLER_SNAPSHOT_PROVIDERS_ABS_H
#define CONTROLLER_SNAPSHOT_PROVIDERS_ABS_H

#include "controller/snapshot/ostore.h"

/* Open container (BORROWED) with credentials from the environment (screds_abs_from_env).
 * endpoint_override (BORROWED, NULL or "" for none) is --store-endpoint-override: the
 * container's URL is then <override>/<container> (url.JoinPath, as etcd-backup-restore),
 * whatever domain and emulatorEnabled say. *out OWNS the store (ostore_free). */
enum kerr abs_open(const char *container, const char *endpoint_override, struct ostore **out,
                   struct kerr_info *err);

#endif
