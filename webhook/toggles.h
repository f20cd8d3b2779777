/*
 * toggles - the etcd-warden.io annotations and labels of an Etcd, checked on
 * /webhooks/etcd: the toggles a user sets get a clear answer instead of
 * being ignored, and the state warden-controller records (the facts the
 * scale-down guard decides from) is warden-controller's alone.
 *
 * Toggles (anyone; each value checked when the request sets or changes it):
 *   - etcd-warden.io/hibernate: "true" or "false";
 *   - etcd-warden.io/allow-scale-down-without-snapshot: "<RFC 3339 expiry>
 *     <reason>" (common/hibguard.h), the expiry in the future and at most
 *     HIBGUARD_BREAK_GLASS_MAX_S ahead, the reason not blank;
 *   - etcd-warden.io/immutability-retention-type: "bucket";
 *   - the labels etcd-warden.io/restoring (removed by hand to end a restore:
 *     alone, see toggles_keeps_restoring) and
 *     etcd-warden.io/allow-delete-while-restoring.
 * State (TOGGLES_STATE_KEYS): set, changed or removed by warden-controller's
 * identities (protect_config.controllers) only. On CREATE by anyone else
 * the mutating webhook strips them (toggles_strip_patch) and this check
 * refuses what is left, except etcd-warden.io/status-backup-exists (the
 * mark that the Etcd is re-created from a backup, docs/status-backup-and-
 * restore.md) and, beside it, etcd-warden.io/suspend-added.
 * On a restoring Etcd (etcd-warden.io/restoring on the stored object),
 * removing druid.gardener.cloud/suspend-etcd-spec-reconcile is
 * warden-controller's alone too.
 * Any other etcd-warden.io/ annotation or label key that a request adds is
 * refused with the list of the known ones.
 * Allowed with an AdmissionReview warning: a value of
 * druid.gardener.cloud/disable-etcd-component-protection or
 * disable-etcd-runtime-component-creation that reads as "off" ("false",
 * "no", "0"): their presence turns protection off whatever the value.
 * Values stored before a rule are not disrupted (only what a request sets
 * or changes is checked). Refusals are 403 / Forbidden.
 *
 * Pure functions. Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef WEBHOOK_TOGGLES_H
#define WEBHOOK_TOGGLES_H

#include <cJSON.h>

#include "common/kerr.h"
#include "webhook/protect.h"
#include "webhook/review.h"

/* The state annotations, for messages and docs (comma separated). */
#define TOGGLES_STATE_KEYS                                                 \
    "etcd-warden.io/traffic-cut-at, etcd-warden.io/hibernation-phase, "    \
    "etcd-warden.io/final-snapshot-checked, "                              \
    "etcd-warden.io/final-snapshot-store, "                                \
    "etcd-warden.io/hibernation-condition, etcd-warden.io/suspend-added, " \
    "etcd-warden.io/restore-progress, etcd-warden.io/status-backup-exists"

/* True when key is one of the state annotations. */
int toggles_is_state(const char *key);

/*
 * The rule for req (an Etcd review) with cfg's controller identities. When
 * it refuses, resp is denied; otherwise resp is left as it was, warnings
 * added. KERR_NOMEM / KERR_TOOBIG when the answer could not be built.
 */
enum kerr toggles_decide(const struct protect_config *cfg, const struct review_req *req,
                         struct review_resp *resp, struct kerr_info *err);

/*
 * True when req, an UPDATE by someone other than cfg's controllers, removes
 * the restoring label from a restoring Etcd together with other changes
 * (restore_removal): a writer that replaces the Etcd's labels whole, as
 * gardenlet's reconcile does, would otherwise end the restore it knows
 * nothing of. The mutating webhook puts the label back (with a warning);
 * toggles_decide refuses what still arrives without it.
 */
int toggles_keeps_restoring(const struct protect_config *cfg, const struct review_req *req);

/*
 * For the mutating webhook, on an Etcd CREATE by anyone but the
 * controller: append to patch (a JSON Patch array) a "remove" of each state
 * annotation of obj that toggles_decide would refuse, and a warning to
 * resp naming it. *removed counts them. KERR_NOMEM on failure.
 */
enum kerr toggles_strip_patch(const struct protect_config *cfg, const struct review_req *req,
                              const cJSON *obj, cJSON *patch, int *removed,
                              struct review_resp *resp, struct kerr_info *err);

#endif
