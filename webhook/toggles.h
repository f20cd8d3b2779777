/*
 * toggles - the annotations a user sets on an Etcd to drive etcd-warden,
 * checked on /webhooks/etcd so that a careless value gets a clear answer
 * instead of being ignored:
 *   - etcd-warden.io/hibernate: "true" hibernates, "false" (or no
 *     annotation) wakes up; any other value ("yes", "True") is refused;
 *   - etcd-warden.io/allow-scale-down-without-snapshot: the value is the
 *     reason recorded in the Warning event; an empty (or blank) reason is
 *     refused.
 * Only a value the request sets or changes is checked (CREATE, or an
 * UPDATE whose old object held another value), so objects stored before
 * the rule are not disrupted. Refusals are 403 / Forbidden.
 *
 * Pure functions. Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef WEBHOOK_TOGGLES_H
#define WEBHOOK_TOGGLES_H

#include "common/kerr.h"
#include "webhook/review.h"

/*
 * The rule for req (an Etcd review). When it refuses, resp is denied;
 * otherwise resp is left as it was. KERR_NOMEM / KERR_TOOBIG when the
 * answer could not be built.
 */
enum kerr toggles_decide(const struct review_req *req, struct review_resp *resp,
                         struct kerr_info *err);

#endif
