/*
 * schemadef - kube-apiserver's defaulting of custom resources
 * (k8s.io/apiextensions-apiserver pkg/apiserver/schema/defaulting) and the
 * removal of nulls it does before (PruneNonNullableNullsWithoutDefaults).
 *
 * Defaulting walks the object with its CRD version's structural schema:
 * in every object that exists, a property with a non-null `default` that is
 * absent, or null while not nullable, gets a copy of the default; then each
 * property (and every key under additionalProperties, every element under
 * items) is defaulted in turn, defaults included. A default is never created
 * where its parent object is missing. Before that, a null held by a
 * property that is neither nullable nor defaulted is removed.
 *
 * kube-apiserver does both when it decodes a request (after pruning), again
 * on the object a mutating webhook returns, and defaults when it reads from
 * storage (the result is not written back): ksim_prune_obj and
 * ksim_convert_out call in here.
 *
 * Ownership: schemas BORROWED, objects changed in place.
 * Thread safety: reentrant.
 */
#ifndef KSIM_SCHEMADEF_H
#define KSIM_SCHEMADEF_H

#include <cJSON.h>

/* Remove the nulls of non-nullable, non-defaulted properties from x (by schema). */
void ksim_schemadef_prune_nulls(const cJSON *schema, cJSON *x);

/* Apply the defaults of schema to x. 0, or -1 when out of memory (x is then partly defaulted). */
int ksim_schemadef_default(const cJSON *schema, cJSON *x);

#endif
