/*
 * whdiff - the differential check of the review decoders (webhook/wh_decdiff)
 * as a Criterion assertion, for the table tests of the decisions: every
 * review those tests build is also answered by both decoders, which must
 * agree byte for byte.
 */
#ifndef TESTS_SUPPORT_WHDIFF_H
#define TESTS_SUPPORT_WHDIFF_H

#include <stdbool.h>

#include <cJSON.h>

#include "webhook/lookup.h"
#include "webhook/protect.h"
#include "webhook/wh_dispatch.h"

/*
 * Answer body (NUL-terminated) for webhook h with both decoders; the
 * lookups are copies of mem (NULL: no parents), so mem's call count is not
 * changed. cfg may be NULL except for WH_HOOK_COMPONENTS. Asserts.
 */
void whdiff_same(const struct protect_config *cfg, const struct lookup_mem *mem, enum wh_hook h,
                 const char *body);

/*
 * whdiff_same, then body answered by d (initialised on mem's lookups) for webhook h: the
 * AdmissionReview parsed (OWNED by the caller), with response.allowed into *allowed.
 * Asserts.
 */
cJSON *whdiff_answer(struct wh_dispatch *d, const struct protect_config *cfg,
                     const struct lookup_mem *mem, enum wh_hook h, const char *body, bool *allowed);

#endif
