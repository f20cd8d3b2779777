/*
 * patch - the four PATCH content types of kube-apiserver:
 *   application/json-patch+json            RFC 6902 (common/kjson)
 *   application/merge-patch+json           RFC 7386 (common/kjson)
 *   application/strategic-merge-patch+json built-in kinds only: merge with the
 *                                          patchMergeKey of well-known lists
 *                                          (containers by name, ports by
 *                                          containerPort/port, conditions by
 *                                          type, ownerReferences by uid, ...)
 *                                          and the $patch, $retainKeys,
 *                                          $setElementOrder and
 *                                          $deleteFromPrimitiveList directives
 *   application/apply-patch+yaml           server-side apply, JSON body: the
 *                                          applied configuration is merged
 *                                          into the live object (strategic for
 *                                          built-ins), without field ownership
 *
 * Errors carry kube-apiserver's codes: 415 for an unknown or unsupported
 * type, 400 for an undecodable patch, 422 when a JSON patch does not apply.
 *
 * Ownership: inputs are BORROWED; results are new trees the caller OWNS.
 * Thread safety: reentrant.
 */
#ifndef KSIM_PATCH_H
#define KSIM_PATCH_H

#include <stddef.h>

#include <cJSON.h>

#include "tests/kube-sim/apierr.h"

enum ksim_patch_type {
    KSIM_PATCH_JSON,
    KSIM_PATCH_MERGE,
    KSIM_PATCH_STRATEGIC,
    KSIM_PATCH_APPLY,
    KSIM_PATCH_UNKNOWN,
};

/* The patch type of a Content-Type header value (parameters ignored). */
enum ksim_patch_type ksim_patch_type_of(const char *content_type);

/*
 * Check that type is acceptable for a resource (custom resources refuse
 * strategic merge). 0, or 415 in e with kube-apiserver's message.
 */
int ksim_patch_check_type(enum ksim_patch_type type, int custom, struct ksim_apierr *e);

/*
 * Parse body (len bytes) for type. 0 and *out OWNS the patch document, or
 * 400 in e.
 */
int ksim_patch_parse(enum ksim_patch_type type, const char *body, size_t len, cJSON **out,
                     struct ksim_apierr *e);

/*
 * Apply patch to doc (both BORROWED). custom selects plain merge for
 * strategic/apply. 0 and *out OWNS the result, or the HTTP code in e.
 */
int ksim_patch_apply(enum ksim_patch_type type, int custom, const cJSON *doc, const cJSON *patch,
                     cJSON **out, struct ksim_apierr *e);

/* Strategic merge of patch into a copy of doc (exposed for tests). NULL without memory. */
cJSON *ksim_patch_strategic(const cJSON *doc, const cJSON *patch);

#endif
