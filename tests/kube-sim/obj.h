/*
 * obj - object semantics shared by every kind: what kube-apiserver's generic
 * registry does to an object on create and update (uid, creationTimestamp,
 * generateName, generation, status-subresource separation, finalizers,
 * immutable metadata), name validation, built-in defaulting and the few
 * validations kube-sim enforces, and the autoscaling/v1 Scale view.
 *
 * Errors are reported as struct ksim_apierr (422 Invalid and friends) with
 * kube-apiserver's wording.
 *
 * Ownership: objects passed as cJSON * are modified in place and stay
 * OWNED by the caller; results marked OWNS are new trees for the caller.
 * Thread safety: all functions are reentrant.
 */
#ifndef KSIM_OBJ_H
#define KSIM_OBJ_H

#include <stdint.h>

#include <cJSON.h>

#include "tests/kube-sim/apierr.h"
#include "tests/kube-sim/registry.h"

/* metav1.Time of now ("2006-01-02T15:04:05Z"). */
void ksim_obj_now(char out[21]);

/* The metadata object of obj, created when missing; NULL only without memory. BORROWED. */
cJSON *ksim_obj_meta(cJSON *obj);

/* metadata.<field> as a string, or NULL. BORROWED. */
const char *ksim_obj_meta_str(const cJSON *obj, const char *field);

/* Set (value non-NULL) or delete (NULL) metadata.<field> as a string. 0 or -1 (no memory). */
int ksim_obj_set_meta_str(cJSON *obj, const char *field, const char *value);

/* metadata.labels (an object) or NULL. BORROWED. */
const cJSON *ksim_obj_labels(const cJSON *obj);

/* True when metadata.finalizers contains name. */
int ksim_obj_has_finalizer(const cJSON *obj, const char *name);

/* Number of metadata.finalizers. */
int ksim_obj_finalizer_count(const cJSON *obj);

/* Add name to metadata.finalizers (no duplicate) / remove every occurrence. 0 or -1. */
int ksim_obj_add_finalizer(cJSON *obj, const char *name);
void ksim_obj_remove_finalizer(cJSON *obj, const char *name);

/* Replace name's trailing 5 characters source: name = prefix + 5 random [a-z0-9] chars. */
int ksim_obj_generate_name(const char *prefix, char *out, size_t size);

/*
 * Prepare a new object as the registry's BeforeCreate does: uid,
 * creationTimestamp, generation 1 (when tracked), no resourceVersion,
 * deletionTimestamp or status for types with a status subresource (the
 * status a fresh object of the kind has instead), defaults for built-ins.
 * 0, or -1 without memory.
 */
int ksim_obj_prepare_create(const struct ksim_rtype *rt, cJSON *obj);

/*
 * Prepare obj (the proposed new state) against old (BORROWED) as
 * BeforeUpdate does. sub is "" for the main resource or "status": the main
 * resource keeps old's status, /status keeps everything but status.
 * uid and creationTimestamp come from old, generation is bumped when
 * anything but metadata and status changed. Returns 0 or the HTTP code of
 * the error in e (422 for a changed uid or a finalizer added while deleting).
 */
int ksim_obj_prepare_update(const struct ksim_rtype *rt, const char *sub, const cJSON *old,
                            cJSON *obj, struct ksim_apierr *e);

/* True when a and b differ in something other than resourceVersion and managedFields. */
int ksim_obj_changed(const cJSON *a, const cJSON *b);

/* The object's replica count at rt's scale spec path (default 1 when absent). */
long ksim_obj_spec_replicas(const struct ksim_rtype *rt, const cJSON *obj);

/*
 * The autoscaling/v1 Scale of obj. On 0 *out OWNS it; -1 without memory or
 * when rt has no scale subresource.
 */
int ksim_obj_scale_of(const struct ksim_rtype *rt, const cJSON *obj, cJSON **out);

/*
 * Write scale.spec.replicas into obj (at rt's spec path). 0, or the HTTP
 * code of the error in e (422 for a missing or negative replicas).
 */
int ksim_obj_scale_apply(const struct ksim_rtype *rt, const cJSON *scale, cJSON *obj,
                         const char *name, struct ksim_apierr *e);

/* Value at a simple ".a.b.c" path (CRD scale paths); BORROWED or NULL. */
const cJSON *ksim_obj_at_dotpath(const cJSON *obj, const char *path);

/* Put value (TAKEN) at a simple ".a.b.c" path, creating objects. 0 or -1. */
int ksim_obj_set_dotpath(cJSON *obj, const char *path, cJSON *value);

#endif
