/*
 * bkebucket - what the controller writes on a BackupBucket (controller/entries/bke.h
 * has the flow): the finalizer BKE_FINALIZER while entries reference it, and
 * status {entryCount, observedGeneration, conditions [Ready]}: True/
 * EntriesKept, False/InvalidSpec (message invalid), False/SecretNotFound
 * (spec.secretRef names no Secret), or, deleted while entries remain,
 * False/EntriesRemain naming them; a Warning event (InvalidSpec,
 * SecretNotFound, DeletionBlocked) and a log line whenever a not-Ready status
 * is written. The finalizer is removed with the last entry, which lets a
 * deleted bucket go.
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef CONTROLLER_BKEBUCKET_H
#define CONTROLLER_BKEBUCKET_H

#include <stddef.h>

#include <cJSON.h>

#include "common/kerr.h"
#include "controller/entries/bke_ctx.h"

/* How often a bucket whose Secret is missing looks for it again (Secrets are not watched). */
#define BKEBUCKET_SECRET_RETRY_MS 30000L

/*
 * Keep the finalizer and the status of bucket (as read) for count entries
 * (names: their names, comma-separated, for the message); invalid (NULL:
 * valid) is why its spec does not validate. A bucket gone meanwhile is success.
 */
enum kerr bkebucket_sync(const struct bke_ctx *x, const cJSON *bucket, int count, const char *names,
                         const char *invalid, struct kerr_info *err);

/*
 * Does the Secret of bucket's spec.secretRef exist? why (n bytes) is "" when it does, else
 * says what is missing; KERR_OK either way, another code when it cannot be read. *secret: the
 * Secret as read (OWNS; NULL when none), so that one reconcile reads it once.
 */
enum kerr bkebucket_secret(const struct bke_ctx *x, const cJSON *bucket, char *why, size_t n,
                           cJSON **secret, struct kerr_info *err);

/* As bkebucket_sync, Ready False/SecretNotFound with message why (bkebucket_secret's). */
enum kerr bkebucket_sync_secret(const struct bke_ctx *x, const cJSON *bucket, int count,
                                const char *why, struct kerr_info *err);

#endif
