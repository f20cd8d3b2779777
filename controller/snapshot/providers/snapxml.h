/*
 * snapxml - decoders of the XML answers of S3 and Azure Blob Storage, on
 * expat (no network, no entity expansion, size-capped input). Element
 * names are matched by local name, so namespaced and plain answers both
 * decode. Every decoder takes the body as (BORROWED) bytes and returns
 * KERR_PARSE with a message for anything that is not the expected
 * document.
 *
 * Thread safety: reentrant (one expat parser per call).
 */
#ifndef CONTROLLER_SNAPSHOT_PROVIDERS_SNAPXML_H
#define CONTROLLER_SNAPSHOT_PROVIDERS_SNAPXML_H

#include <stdbool.h>
#include <stddef.h>

#include "controller/snapshot/ostore.h"

#define SNAPXML_MAX_BODY (16u * 1024u * 1024u)

/* One page of a listing: objects appended to the list, and where to go on. */
struct snapxml_page {
    bool truncated;
    char *next; /* OWNS (free()): continuation token / NextMarker / NextKeyMarker; or NULL */
    char *next_version; /* OWNS: NextVersionIdMarker (versions listing), or NULL */
};

void snapxml_page_release(struct snapxml_page *p);

/* S3 ListObjectsV2 (ListBucketResult): Contents -> key, size, mtime, etag, md5 (when the
 * ETag is a plain MD5). */
enum kerr snapxml_s3_list(const char *xml, size_t len, struct ostore_list *out,
                          struct snapxml_page *page, struct kerr_info *err);

/* S3 ListObjectVersions (ListVersionsResult): every Version and DeleteMarker as an object
 * with version_id; delete markers have size -1 and etag "delete-marker". */
enum kerr snapxml_s3_versions(const char *xml, size_t len, struct ostore_list *out,
                              struct snapxml_page *page, struct kerr_info *err);

/* S3 GetObjectTagging (Tagging/TagSet/Tag): *excluded when x-etcd-snapshot-exclude=true. */
enum kerr snapxml_s3_tagging(const char *xml, size_t len, bool *excluded, struct kerr_info *err);

/* The text of the first element named name anywhere in the document (UploadId, ETag,
 * ...). On KERR_OK *out OWNS it (free()); KERR_NOTFOUND when absent. */
enum kerr snapxml_find(const char *xml, size_t len, const char *name, char **out,
                       struct kerr_info *err);

/* An S3 or ABS <Error><Code>..</Code><Message>..</Message></Error> into the buffers
 * ("" when absent). Never fails. */
void snapxml_error(const char *xml, size_t len, char *code, size_t code_n, char *msg, size_t msg_n);

/* ABS List Blobs (EnumerationResults/Blobs/Blob): name, Content-Length, Last-Modified,
 * Content-MD5 (as hex), Etag, and the x-etcd-snapshot-exclude index tag; page->next is
 * NextMarker. */
enum kerr snapxml_abs_list(const char *xml, size_t len, struct ostore_list *out,
                           struct snapxml_page *page, struct kerr_info *err);

/* Base64 Content-MD5 to 32 hex digits; -1 when it is not a 16-byte base64 value. */
int snapxml_md5_b64_to_hex(const char *b64, char hex[33]);

#endif
