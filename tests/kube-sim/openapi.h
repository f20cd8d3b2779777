/*
 * openapi - the slice of /openapi/v3 kubectl needs: the root index of group
 * versions and, per group version, a document with one PATCH operation per
 * kind carrying x-kubernetes-group-version-kind and the fieldValidation
 * query parameter. That is how kubectl 1.32 learns that the server
 * validates fields itself, so `kubectl create/apply` work without
 * --validate=false. No schemas are served: kube-sim accepts unknown fields
 * (fieldValidation=Strict is not enforced), and kubectl falls back to its
 * built-in strategic-merge metadata for `kubectl apply`. /openapi/v2 stays
 * 404, as kubectl only reads it when v3 is missing.
 *
 * Ownership: returned trees are OWNED by the caller (NULL when unknown).
 * Thread safety: reentrant.
 */
#ifndef KSIM_OPENAPI_H
#define KSIM_OPENAPI_H

#include <cJSON.h>

#include "tests/kube-sim/registry.h"

/* GET /openapi/v3 */
cJSON *ksim_openapi_root(struct ksim_reg *reg);

/* GET /openapi/v3/api/v1 (group "") and /openapi/v3/apis/G/V; NULL when not served. */
cJSON *ksim_openapi_gv(struct ksim_reg *reg, const char *group, const char *version);

#endif
