/*
 * gcsjson - the GCS JSON API answers warden-snapshot reads: object resources
 * (objects#resource), listings (objects#list: items and nextPageToken) and
 * error answers ({"error":{"code","message","errors":[{"reason"}]}}).
 *
 * Of an object: name (key), generation (version_id), size, md5Hash (base64;
 * composite objects have none), etag, updated (mtime),
 * retentionExpirationTime (immutable_until, Bucket Lock), and the custom
 * metadata x-etcd-snapshot-exclude=true (excluded), GCS_COPY_MARK=true
 * (own_copy) and GCS_SHA256 (sha256, 64 hex digits or nothing). Untrusted input: every malformed
 * answer is KERR_PARSE.
 *
 * Ownership: outputs are OWNED by the caller (ostore_obj_release,
 * ostore_list_release, free). Thread safety: reentrant.
 */
#ifndef CONTROLLER_SNAPSHOT_PROVIDERS_GCSJSON_H
#define CONTROLLER_SNAPSHOT_PROVIDERS_GCSJSON_H

#include <stddef.h>

#include "common/kerr.h"
#include "controller/snapshot/ostore.h"

#define GCS_COPY_MARK "etcd-warden-copy"
#define GCS_SHA256    "etcd-warden-sha256" /* the verified SHA-256 (ostore.h) */

/* One object resource from text (BORROWED, len bytes) into *out. */
enum kerr gcsjson_object(const char *text, size_t len, struct ostore_obj *out,
                         struct kerr_info *err);

/* One listing page: its objects appended to *out, *next the page token (OWNED) or NULL. */
enum kerr gcsjson_list(const char *text, size_t len, struct ostore_list *out, char **next,
                       struct kerr_info *err);

/* The reason and message of an error answer ("" where absent or not JSON). */
void gcsjson_error(const char *text, size_t len, char reason[64], char msg[256]);

#endif
