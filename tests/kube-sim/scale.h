/*
 * scale - writes through the scale subresource (autoscaling/v1 Scale), as
 * kubectl scale and HorizontalPodAutoscalers use it: the Scale view of the
 * object is replaced (PUT) or patched, admission sees kind
 * autoscaling/v1 Scale on resource <plural>, subResource "scale" (old and
 * new Scale objects, which carry no labels), and spec.replicas is written
 * back to the object (bumping its generation).
 *
 * Ownership: put is BORROWED; *out is OWNED by the caller.
 * Thread safety: reentrant.
 */
#ifndef KSIM_SCALE_H
#define KSIM_SCALE_H

#include <cJSON.h>

#include "tests/kube-sim/write.h"

/*
 * PUT the Scale put (non-NULL), or PATCH the current Scale with patch of
 * type. 200 and *out (the resulting Scale), or the error code in e.
 */
int ksim_scale_write(const struct ksim_write_ctx *c, const cJSON *put, enum ksim_patch_type type,
                     const cJSON *patch, cJSON **out, struct ksim_apierr *e);

#endif
