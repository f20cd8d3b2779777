/*
 * bkestop - the stop of a deleted BackupEntry's deletion Job (the finalizer and what it
 * guarantees: controller/entries/bkefin.h).
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef CONTROLLER_BKESTOP_H
#define CONTROLLER_BKESTOP_H

#include <cJSON.h>

#include "common/kerr.h"
#include "controller/entries/bke_ctx.h"

#define BKESTOP_POLL_MS 1000L /* a stopping Job looked at again */

/*
 * One step of the stop of cached (an entry with metadata.deletionTimestamp, read again from
 * the API server) of bucket (the BackupBucket object): delete its Job, or, once the Job is
 * gone, remove the finalizer. *requeue lowered to when it is to be looked at again.
 */
enum kerr bkestop_step(const struct bke_ctx *x, const cJSON *bucket, const cJSON *cached,
                       long *requeue, struct kerr_info *err);

/*
 * bkestop_step for every entry of entries (a JSON array, the bucket's) being deleted; the
 * first error is returned (into err), the others logged.
 */
enum kerr bkestop_run(const struct bke_ctx *x, const cJSON *bucket, const cJSON *entries,
                      long *requeue, struct kerr_info *err);

#endif
