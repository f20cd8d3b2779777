/*
 * guardfix - the guard's decision harness for table tests: a review answered by
 * warden-webhook's dispatcher over in-memory lookups, with the identities etcd-druid and
 * warden-controller have in the chart.
 */
#ifndef TESTS_SUPPORT_GUARDFIX_H
#define TESTS_SUPPORT_GUARDFIX_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <time.h>

#include "webhook/lookup.h"
#include "webhook/protect.h"
#include "webhook/wh_dispatch.h"

#define GUARDFIX_DRUID  "system:serviceaccount:druid:etcd-druid"
#define GUARDFIX_WARDEN "system:serviceaccount:warden:warden-controller"
#define GUARDFIX_PERSON "alice@example.com"

/* 2026-11-18, the clock of guardfix_config. */
#define GUARDFIX_NOW 1795000000

/* etcd-druid and warden-controller as reconcilers, warden-controller as the controller, the
 * clock fixed at GUARDFIX_NOW. cfg refers to static tables only. */
void guardfix_config(struct protect_config *cfg);

/*
 * Answer body (NUL-terminated) through webhook h with the lookups lk (bound to mem, then
 * changed as the test needs). diff: also answer it with both review decoders, which must agree
 * (whdiff_same, on mem). Asserts the dispatcher answered 200; the parsed AdmissionReview is
 * returned and the caller OWNS it.
 */
cJSON *guardfix_dispatch(const struct protect_config *cfg, const struct lookup_mem *mem,
                         const struct lookup *lk, enum wh_hook h, bool diff, const char *body);

/* StatefulSet shoot/etcd-main (uid uid-sts, generation 7) with labels (JSON text) and
 * spec.replicas. The caller OWNS it. */
cJSON *guardfix_sts(const char *labels, int replicas);

/*
 * An AdmissionReview of StatefulSet shoot/etcd-main: op by user, with object and old_object
 * (both consumed; NULL: JSON null). The caller OWNS it and may add to its request.
 */
cJSON *guardfix_sts_review(const char *op, const char *user, cJSON *object, cJSON *old_object);

/* Expect doc's response.allowed to be allowed and its status message to contain message
 * (NULL or "": any message or none). */
void guardfix_expect(const cJSON *doc, const char *title, int allowed, const char *message);

#endif
