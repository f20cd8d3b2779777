/*
 * jpatch - JSON Pointer (RFC 6901), JSON Patch (RFC 6902) and JSON merge
 * patch (RFC 7386) on cJSON trees.
 *
 * Pointers are written escaped ('~' as "~0", '/' as "~1"):
 * "/metadata/labels/etcd-warden.io~1restoring". Object keys compare
 * case-sensitively. Application is done by the vendored cJSON_Utils
 * (common/third_party/cjson_utils), always on a copy of the document, so
 * a patch that fails leaves nothing half-applied. kjson_path_to_ptr
 * (common/kjson.h) turns a kjson path into a pointer.
 *
 * Thread safety: functions are reentrant; a cJSON tree must not be used by
 * two threads when one of them modifies it.
 */
#ifndef COMMON_JPATCH_H
#define COMMON_JPATCH_H

#include <stddef.h>

#include <cJSON.h>

#include "common/buf.h"
#include "common/kerr.h"

/* ---- JSON Pointer ---- */

/* Append "/" and seg with '~' -> "~0" and '/' -> "~1" to b (BORROWED). */
enum kerr jpatch_ptr_append(struct buf *b, const char *seg) __attribute__((warn_unused_result));

/* As jpatch_ptr_append for the n bytes at seg (need not be NUL-terminated). */
enum kerr jpatch_ptr_append_n(struct buf *b, const char *seg, size_t n)
    __attribute__((warn_unused_result));

/* ---- JSON Patch builders ---- */

/*
 * Append {"op":...,"path":ptr,"value":value} to patch (a cJSON array,
 * BORROWED). ptr is an escaped JSON Pointer. value is TAKEN (deleted on
 * failure too). KERR_INVAL when patch is not an array or ptr or value is
 * missing; KERR_NOMEM.
 */
enum kerr jpatch_add(cJSON *patch, const char *ptr, cJSON *value, struct kerr_info *err);
enum kerr jpatch_replace(cJSON *patch, const char *ptr, cJSON *value, struct kerr_info *err);
enum kerr jpatch_test(cJSON *patch, const char *ptr, cJSON *value, struct kerr_info *err);

/* Append {"op":"remove","path":ptr}. */
enum kerr jpatch_remove(cJSON *patch, const char *ptr, struct kerr_info *err);

/* ---- JSON Patch application ---- */

/*
 * Apply the JSON Patch patch (BORROWED, an array) to a copy of doc
 * (BORROWED, not modified); all or nothing. On KERR_OK *out OWNS the
 * patched document (cJSON_Delete). Errors: KERR_CONFLICT when a "test"
 * operation fails; KERR_INVAL for a malformed patch or a path that does not
 * exist; KERR_NOMEM. The message names the failing operation's index, op
 * and path.
 */
enum kerr jpatch_apply(const cJSON *doc, const cJSON *patch, cJSON **out, struct kerr_info *err);

/* ---- merge patch ---- */

/* Apply the merge patch to a copy of doc (both BORROWED); null values delete keys.
 * On KERR_OK *out OWNS the result. */
enum kerr jpatch_merge_apply(const cJSON *doc, const cJSON *patch, cJSON **out,
                             struct kerr_info *err);

/* The merge patch that turns from into to (both BORROWED, not modified).
 * Equal documents give {}. On KERR_OK *out OWNS it. */
enum kerr jpatch_merge_diff(const cJSON *from, const cJSON *to, cJSON **out, struct kerr_info *err);

#endif
