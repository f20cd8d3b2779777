/*
 * schemaval - kube-apiserver's validation of custom resources by their CRD
 * version's OpenAPI schema (k8s.io/kube-openapi pkg/validation/validate, as
 * k8s.io/apiextensions-apiserver turns its results into field errors), with
 * its messages:
 *   spec.x: Required value
 *   spec.x: Unsupported value: "Keep": supported values: "Delete", "Retain"
 *   spec.x: Invalid value: "string": spec.x in body must be of type integer: "string"
 *   spec.x: Invalid value: "abc": spec.x in body should match '^[a-z]+$'
 *   spec.x: Invalid value: 0: spec.x in body should be greater than or equal to 1
 *   spec.x: Invalid value: "": spec.x in body should be at least 1 chars long
 *   spec.x: Too long: may not be more than 63 bytes
 *   spec.x: Too many: 4: must have at most 3 items
 *   spec.x: Invalid value: "x": spec.x in body must be of type date-time: "x"
 *   <nil>: Invalid value: "": "spec.x" must validate at least one schema (anyOf)
 * Per value, in kube-openapi's order: type (with nullable and format),
 * anyOf/oneOf/allOf/not, maxLength/minLength/pattern (the first failing),
 * format, multipleOf/minimum/maximum (integers compare as int64), items then
 * minItems/maxItems/uniqueItems, enum, and for objects min/maxProperties
 * (which end the object's checks), additionalProperties, properties (in
 * schema order), required. Paths are "spec.list[0].name". Patterns run on
 * POSIX regexps (goregex.h); one kube-sim cannot translate is not checked.
 * The list-type invariants follow (schemalist.h). x-kubernetes-validations
 * (CEL) are not checked.
 *
 * Updates are ratcheted as kube-apiserver 1.32 does (CRDValidationRatcheting,
 * on by default; kube-openapi's ratchetingSchemaValidator): a value equal to
 * its old one, found through the same property names from the root, is not
 * validated, so an update may keep what a stricter CRD now refuses. Array
 * elements are not correlated (they are validated whenever their array
 * changed); the list-type invariants are not ratcheted.
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef KSIM_SCHEMAVAL_H
#define KSIM_SCHEMAVAL_H

#include <stddef.h>

#include <cJSON.h>

#include "tests/kube-sim/apierr.h"
#include "tests/kube-sim/registry.h"

#define KSIM_SCHEMAVAL_MAX 32 /* field errors reported at most */

/*
 * Validate obj (a whole resource) by schema into errs (max entries), old
 * the object an update replaces (NULL on create): the number of errors
 * found (also those beyond max, which are not stored).
 */
size_t ksim_schemaval_check(const cJSON *schema, const cJSON *obj, const cJSON *old,
                            struct ksim_fielderr *errs, size_t max);

/*
 * Validate obj about to be stored as a resource of rt (no-op for kinds
 * without a schema), old the object it replaces or NULL: 0, or 422 Invalid
 * in e naming every error as kube-apiserver does (500 when out of memory).
 */
int ksim_schemaval_obj(const struct ksim_rtype *rt, const cJSON *obj, const cJSON *old,
                       struct ksim_apierr *e);

#endif
