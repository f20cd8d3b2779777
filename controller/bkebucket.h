/*
 * bkebucket - what the controller writes on a BackupBucket (controller/bke.h
 * has the flow): the finalizer BKE_FINALIZER while entries reference it, and
 * status {entryCount, observedGeneration, conditions [Ready]}: True/
 * EntriesKept, False/InvalidSpec (message invalid), or, deleted while
 * entries remain, False/EntriesRemain naming them; a Warning event
 * (InvalidSpec, DeletionBlocked) and a log line whenever a not-Ready status
 * is written. The finalizer is removed with the last entry, which lets a
 * deleted bucket go.
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef CONTROLLER_BKEBUCKET_H
#define CONTROLLER_BKEBUCKET_H

#include <cJSON.h>

#include "common/kerr.h"
#include "controller/bke.h"

/*
 * Keep the finalizer and the status of bucket (as read) for count entries
 * (names: their names, comma-separated, for the message); invalid (NULL:
 * valid) is why its spec does not validate. A bucket gone meanwhile is success.
 */
enum kerr bkebucket_sync(const struct bke_ctx *x, const cJSON *bucket, int count, const char *names,
                         const char *invalid, struct kerr_info *err);

#endif
