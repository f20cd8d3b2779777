/*
 * wh_decdiff - the differential check of the two review decoders: one body
 * answered by wh_dispatch_review with whole trees (review_req_decode_tree)
 * and with the selective decoder (review_req_decode_sel) must give the same
 * HTTP status and the same answer, byte for byte, and the same number of
 * parent lookups. Used by the differential test, the tests of the decisions
 * and the differential fuzz target.
 *
 * wh_decdiff_fixture runs the check for every webhook against a fixed set of
 * parents (two Etcds, two StatefulSets), once with working lookups and once
 * with failing ones.
 *
 * Thread safety: reentrant; the fixture's parents are parsed once, on the
 * first call (not synchronised: call it first from one thread).
 */
#ifndef WEBHOOK_WH_DECDIFF_H
#define WEBHOOK_WH_DECDIFF_H

#include <stddef.h>

#include "common/kerr.h"
#include "webhook/lookup.h"
#include "webhook/protect.h"
#include "webhook/wh_dispatch.h"

/*
 * Answer body (BORROWED) for webhook h with both decoders. lk_tree and
 * lk_sel are the lookups of each run (separate, so counting fakes count
 * each run; they may be the same). KERR_OK when the answers are identical;
 * KERR_INVAL with err->msg saying how they differ; KERR_NOMEM.
 */
enum kerr wh_decdiff_check(const struct protect_config *cfg, const struct lookup *lk_tree,
                           const struct lookup *lk_sel, enum wh_hook h, const char *body,
                           size_t len, struct kerr_info *err);

/* wh_decdiff_check of body for every webhook, with the fixed parents; see above. */
enum kerr wh_decdiff_fixture(const char *body, size_t len, struct kerr_info *err);

#endif
