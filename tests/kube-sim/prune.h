/*
 * prune - kube-apiserver's pruning of custom resources and its
 * fieldValidation for them.
 *
 * A custom resource whose CRD version has a structural schema
 * (spec.versions[].schema.openAPIV3Schema) loses, on every create, update
 * and patch (status and scale included, and again after mutating
 * admission), each field the schema does not declare:
 *   - an object keeps its declared properties, or every key when the schema
 *     has additionalProperties (each pruned by that schema);
 *   - x-kubernetes-preserve-unknown-fields: true keeps unknown keys (the
 *     declared ones are still pruned by their schemas, nested too);
 *   - array elements are pruned by items;
 *   - the object's root, and every x-kubernetes-embedded-resource, keeps
 *     apiVersion and kind (strings) and metadata whatever the schema says:
 *     metadata is not pruned by the schema.
 *
 * fieldValidation (what kubectl --validate sends): Strict turns unknown
 * fields of the request into 400 BadRequest, worded as kube-apiserver's
 * decoder: `Etcd in version "v1alpha1" cannot be handled as a Etcd: strict
 * decoding error: unknown field "spec.foo"`; Warn (the default) answers one
 * Warning `unknown field "spec.foo"` per field; Ignore says nothing.
 * Unknown fields are found in the body of a create, an update, a JSON
 * merge patch and an apply patch (a JSON Patch is not inspected).
 *
 * Ownership: schemas and requests are BORROWED; objects are changed in
 * place. Thread safety: reentrant.
 */
#ifndef KSIM_PRUNE_H
#define KSIM_PRUNE_H

#include <cJSON.h>

#include "common/strlist.h"
#include "tests/kube-sim/api.h"
#include "tests/kube-sim/apierr.h"
#include "tests/kube-sim/patch.h"
#include "tests/kube-sim/registry.h"

/*
 * Remove from obj, the root of a resource, every field schema does not
 * declare (rules above). When paths is not NULL it receives the path of
 * each removed field ("spec.a.b", "spec.list[2].c"), in document order.
 * 0, or -1 when out of memory.
 */
int ksim_prune(const cJSON *schema, cJSON *obj, struct strlist *paths);

/* The pruning schema of rt (a CRD version's openAPIV3Schema), or NULL: nothing is pruned. */
const cJSON *ksim_prune_schema(const struct ksim_rtype *rt);

/*
 * Decode obj as a resource of rt the way kube-apiserver does (no-op without
 * a schema): prune it, drop the nulls of non-nullable fields without a
 * default, apply the defaults (schemadef.h). 0, or -1 when out of memory.
 */
int ksim_prune_obj(const struct ksim_rtype *rt, cJSON *obj);

/*
 * The fieldValidation of a write request with body (BORROWED; a POST or PUT
 * object, or a patch of type ptype, KSIM_PATCH_UNKNOWN for POST/PUT): 0,
 * with a Warning in resp per unknown field under Warn; 400 in e for
 * unknown fields under Strict or for an unknown fieldValidation value.
 */
int ksim_prune_validate(const struct ksim_rtype *rt, const struct ksim_req *req,
                        enum ksim_patch_type ptype, const cJSON *body, struct ksim_resp *resp,
                        struct ksim_apierr *e);

#endif
