/*
 * openapi - the slice of /openapi/v3 kubectl needs: the root index of group
 * versions and, per group version, a document with one PATCH operation per
 * kind carrying x-kubernetes-group-version-kind and the fieldValidation
 * query parameter. That is how kubectl 1.32 learns that the server
 * validates fields itself, so `kubectl create/apply` work without
 * --validate=false. Its components.schemas are what kube-apiserver
 * publishes for each kind (oaschema.h): custom resources with their CRD's
 * schema, so `kubectl explain` prints their fields and descriptions;
 * built-in kinds with their standard fields only.
 *
 * /openapi/v2 is a Swagger 2.0 document without paths or definitions, in
 * protobuf (gnostic's openapi_v2.Document, what kubectl asks for) or JSON.
 * kubectl reads it to validate what it cannot leave to the server: the
 * items of a `kind: List` (v1 List supports no fieldValidation), which it
 * then sends one by one; with no definitions it finds nothing to check.
 *
 * Ownership: returned trees are OWNED by the caller (NULL when unknown).
 * Thread safety: reentrant.
 */
#ifndef KSIM_OPENAPI_H
#define KSIM_OPENAPI_H

#include <cJSON.h>

#include "tests/kube-sim/api.h"
#include "tests/kube-sim/registry.h"

/* Length of a document's hash (SHA-512 in upper-case hex), without the NUL. */
#define KSIM_OPENAPI_HASH_LEN 128

/* GET /openapi/v3: every group version's serverRelativeURL, with the hash of its document. */
cJSON *ksim_openapi_root(struct ksim_reg *reg);

/* GET /openapi/v3/api/v1 (group "") and /openapi/v3/apis/G/V; NULL when not served. */
cJSON *ksim_openapi_gv(struct ksim_reg *reg, const char *group, const char *version);

/*
 * The document of a group version printed as served (OWNED, free()), and
 * its hash into hash; NULL when not served or out of memory.
 */
char *ksim_openapi_gv_text(struct ksim_reg *reg, const char *group, const char *version,
                           char hash[KSIM_OPENAPI_HASH_LEN + 1]);

/*
 * Serve GET /openapi/... (segs: the n path segments; hash: the query's
 * hash parameter or NULL) into resp: the documents above or 404. As
 * kube-apiserver: a group version's document carries its hash as ETag; asked
 * for with its current hash it is cacheable for a year (Cache-Control:
 * public, immutable), with an outdated one the answer is a 301 to the
 * current URL; 406 when the Accept header takes no JSON.
 */
void ksim_openapi_serve(struct ksim_reg *reg, const char *accept, const char *hash,
                        char segs[][254], size_t n, struct ksim_resp *resp);

/*
 * GET /openapi/v2 for a request's Accept header (NULL: JSON): *body (OWNED,
 * free()) of *len bytes, *ctype its static content type. 0, or -1 when out
 * of memory.
 */
int ksim_openapi_v2(const char *accept, char **body, size_t *len, const char **ctype);

#endif
