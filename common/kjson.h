/*
 * kjson - JSON helpers on cJSON for Kubernetes objects.
 *
 * Paths. A path names a node below a root, in one of two forms:
 *   - a string of segments separated by '.', where a segment may be put in
 *     brackets to hold dots and slashes:
 *         "metadata.name"
 *         "metadata.labels[app.kubernetes.io/part-of]"
 *         "spec.template.spec.containers[0].image"   (or "...containers.0.image")
 *     A bracketed segment ends at the first ']'; keys containing ']' need
 *     the second form. NULL or "" is the root itself.
 *   - a NULL-terminated array of raw segments (the "v" functions), taken
 *     literally: { "metadata", "annotations", "a.b/c[d]", NULL }.
 * A segment applied to an array is a decimal index; applied to an object it
 * is a key (case-sensitive). The dotted form never escapes anything else.
 *
 * Also: typed getters and setters, parsing with an explicit length and
 * size/depth caps (KERR_PARSE with the byte offset), deterministic printing,
 * and paths as JSON Pointers. JSON Patch and merge patch are
 * common/jpatch.h; metav1 Time / MicroTime strings are common/ktime.h.
 *
 * Numbers: cJSON keeps numbers as double, so integers are exact up to 2^53.
 *
 * Thread safety: functions are reentrant; a cJSON tree must not be used by
 * two threads when one of them modifies it. kjson never calls
 * cJSON_GetErrorPtr.
 */
#ifndef COMMON_KJSON_H
#define COMMON_KJSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "common/buf.h"
#include "common/kerr.h"

/* Default caps of kjson_parse. */
#define KJSON_DEFAULT_MAX_BYTES (16u * 1024u * 1024u)
#define KJSON_DEFAULT_MAX_DEPTH 128u

/* ---- lookups (all results BORROWED from root; NULL when absent or of another type) ---- */

/* The node at path, or NULL. */
const cJSON *kjson_get(const cJSON *root, const char *path);
const cJSON *kjson_getv(const cJSON *root, const char *const *segs);

/* True when path names a node (of any type, null included). */
bool kjson_has(const cJSON *root, const char *path);

/* The string at path, or NULL when absent or not a string. */
const char *kjson_get_str(const cJSON *root, const char *path);

/* The object / array at path, or NULL when absent or of another type. */
const cJSON *kjson_get_obj(const cJSON *root, const char *path);
const cJSON *kjson_get_arr(const cJSON *root, const char *path);

/*
 * The integer at path: KERR_NOTFOUND when absent, KERR_INVAL when not a
 * number, not integral or out of int64 range. *out is 0 unless KERR_OK.
 */
enum kerr kjson_get_int64(const cJSON *root, const char *path, int64_t *out);

/* A count at path: def when absent, -1 when negative or not an integer. */
int64_t kjson_get_count(const cJSON *root, const char *path, int64_t def);

/* The boolean at path: KERR_NOTFOUND when absent, KERR_INVAL when not a bool. */
enum kerr kjson_get_bool(const cJSON *root, const char *path, bool *out);

/* ---- setters: create missing intermediate objects, replace an existing leaf ---- */

/*
 * Put value at path. TAKES value (it is deleted on failure too). Missing
 * parents are created as objects; an existing parent that is neither an
 * object nor an array, an array index past the end (== size appends), or
 * a bad path is KERR_INVAL. root must be an object or an array.
 */
enum kerr kjson_set(cJSON *root, const char *path, cJSON *value, struct kerr_info *err);
enum kerr kjson_setv(cJSON *root, const char *const *segs, cJSON *value, struct kerr_info *err);

/* Typed shorthands of kjson_set (s is copied). */
enum kerr kjson_set_str(cJSON *root, const char *path, const char *s, struct kerr_info *err);
enum kerr kjson_set_int(cJSON *root, const char *path, int64_t v, struct kerr_info *err);
enum kerr kjson_set_bool(cJSON *root, const char *path, bool v, struct kerr_info *err);

/* Delete the node at path: KERR_OK, or KERR_NOTFOUND when it does not exist. */
enum kerr kjson_delete(cJSON *root, const char *path);
enum kerr kjson_deletev(cJSON *root, const char *const *segs);

/* ---- parsing and printing ---- */

/* Caps for kjson_parse; a 0 field takes the default. */
struct kjson_limits {
    size_t max_bytes;   /* input larger than this: KERR_TOOBIG */
    unsigned max_depth; /* nesting of arrays/objects deeper than this: KERR_PARSE */
};

/*
 * Parse exactly len bytes of data (BORROWED, need not be NUL-terminated);
 * only whitespace may follow the value. lim may be NULL (defaults). On
 * KERR_OK *out OWNS the tree (cJSON_Delete). On KERR_PARSE the message
 * holds the byte offset of the error, also stored in *err_offset when not
 * NULL.
 */
enum kerr kjson_parse(const char *data, size_t len, const struct kjson_limits *lim, cJSON **out,
                      size_t *err_offset, struct kerr_info *err);

/* Compact text of v. On KERR_OK *out OWNS it (free()); *len (optional) its length. */
enum kerr kjson_print(const cJSON *v, char **out, size_t *len, struct kerr_info *err);

/* As kjson_print with every object's keys sorted (byte order), recursively: equal
 * documents give equal bytes. v itself is not modified. */
enum kerr kjson_print_sorted(const cJSON *v, char **out, size_t *len, struct kerr_info *err);

/* ---- paths as JSON Pointers (RFC 6901, see common/jpatch.h) ---- */

/* The pointer of a dotted path ("metadata.labels[a/b]" -> "/metadata/labels/a~1b").
 * On KERR_OK *out OWNS it (free()). */
enum kerr kjson_path_to_ptr(const char *path, char **out, struct kerr_info *err);

/* The pointer of a segment array. On KERR_OK *out OWNS it (free()). */
enum kerr kjson_segs_to_ptr(const char *const *segs, char **out, struct kerr_info *err);

#endif
