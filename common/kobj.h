/*
 * kobj - what a cache needs to know about a Kubernetes object: its key
 * ("namespace/name", or "name" for cluster-scoped objects), a projection
 * that keeps only listed fields (KOBJ_META_PATHS: the metadata a controller
 * decides on), and ready-made index functions. They plug into common/store
 * (kobj_project_paths is a store_project_fn, the kobj_index_ functions are
 * store_index_fns) and common/informer.
 *
 * Ownership: objects passed in are BORROWED; results are written to the
 * caller's buffer or list, or OWNED by the caller (*out of the projection).
 * Thread safety: every function is pure and may run in any thread at once.
 */
#ifndef COMMON_KOBJ_H
#define COMMON_KOBJ_H

#include <stddef.h>

#include <cJSON.h>

#include "common/kerr.h"
#include "common/strlist.h"

#define KOBJ_KEY_MAX 320 /* buffer size for a key: 63 (namespace) + 1 + 253 (name) + NUL */

/*
 * Ready-made projection paths (kjson dotted form, see common/kjson.h),
 * NULL-terminated: name, namespace, uid, resourceVersion, generation,
 * labels, annotations, deletionTimestamp, ownerReferences and
 * status.lastOperation.
 */
extern const char *const KOBJ_META_PATHS[];

/*
 * The key of obj into out (n bytes, KOBJ_KEY_MAX is enough): "ns/name", or
 * "name" without a namespace. KERR_INVAL when metadata.name is missing or
 * empty, KERR_TOOBIG when out is too small.
 */
enum kerr kobj_key_of(const cJSON *obj, char *out, size_t n, struct kerr_info *err);

/*
 * Projection keeping the paths of ctx (a NULL-terminated array of kjson
 * dotted paths, e.g. KOBJ_META_PATHS): each path present in obj is copied
 * to the same place in *out, a new tree OWNED by the caller. Paths must go
 * through objects only (an array is kept or dropped whole). KERR_NOMEM.
 */
enum kerr kobj_project_paths(void *ctx, const cJSON *obj, cJSON **out);

/* ---- index functions: add obj's values to values ---- */

/* One value: metadata.namespace (none for cluster-scoped objects). ctx unused. */
enum kerr kobj_index_namespace(void *ctx, const cJSON *obj, struct strlist *values);

/*
 * One value: the value of label ctx (a const char *, e.g.
 * "app.kubernetes.io/part-of"), when the object carries it.
 */
enum kerr kobj_index_label(void *ctx, const cJSON *obj, struct strlist *values);

/* One value per ownerReference: its uid. ctx unused. */
enum kerr kobj_index_owner_uid(void *ctx, const cJSON *obj, struct strlist *values);

/*
 * The condition of obj's status.conditions whose type is type (conditions are keyed by type:
 * the first one), BORROWED from obj; NULL when there is none.
 */
const cJSON *kobj_condition(const cJSON *obj, const char *type);

#endif
