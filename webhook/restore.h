/*
 * restore - the validating rules for Etcd objects (/webhooks/etcd): the
 * restoring rules of KubeDirector's kdcluster webhook mapped onto Etcd and
 * the names of etcd-warden.
 *
 * While the stored (old) Etcd carries the label etcd-warden.io/restoring:
 *   - DELETE is refused unless the stored object also carries
 *     etcd-warden.io/allow-delete-while-restoring;
 *   - an UPDATE that changes spec is refused (metadata-only edits pass);
 *   - an UPDATE that removes the restoring label is allowed only when the
 *     new object is valid: spec.replicas, spec.etcd and spec.backup present,
 *     and spec.backup.store.prefix present when a store is set.
 * Everything else is allowed. Refusals are 403 / Forbidden with
 * KubeDirector's message form: "\n" followed by the reasons, one per line.
 * Status-subresource writes are not sent here (the webhook configuration
 * lists only the main resource).
 *
 * Pure functions, reentrant.
 */
#ifndef WEBHOOK_RESTORE_H
#define WEBHOOK_RESTORE_H

#include <cJSON.h>

#include "common/buf.h"
#include "common/kerr.h"
#include "webhook/lookup.h"
#include "webhook/review.h"

/*
 * Decide req (BORROWED; an Etcd CREATE/UPDATE/DELETE) into resp. An
 * unusable oldObject / object is answered with 400. Returns KERR_OK, or
 * KERR_NOMEM / KERR_TOOBIG when the answer could not be built.
 */
/*
 * Decide req (BORROWED; an UPDATE of an Etcd's scale subresource, etcds/scale:
 * `kubectl scale etcd`) into resp: a change of spec.replicas of a restoring
 * Etcd (looked up through lk, BORROWED) is refused as a patch of its spec is;
 * an Etcd the lookup cannot confirm is answered 500 (fail closed). Returns
 * as restore_decide.
 */
enum kerr restore_decide_scale(const struct lookup *lk, const struct review_req *req,
                               struct review_resp *resp, struct kerr_info *err);

enum kerr restore_decide(const struct review_req *req, struct review_resp *resp,
                         struct kerr_info *err);

/*
 * Append to problems (one line per problem, each ended by '\n') why etcd
 * (BORROWED) may not leave the restoring state. Nothing appended means it
 * may. KERR_NOMEM / KERR_TOOBIG from the buffer.
 */
enum kerr restore_check_valid(const cJSON *etcd, struct buf *problems);

/* What an UPDATE does to the restoring label (restore_removal). */
enum restore_removal {
    RESTORE_REMOVAL_NONE,       /* not an UPDATE removing the label from a restoring Etcd */
    RESTORE_REMOVAL_ALONE,      /* the label removed and nothing else changed */
    RESTORE_REMOVAL_WITH_OTHERS /* removed together with other changes */
};

/*
 * For req (BORROWED; an Etcd review): whether it removes the restoring label
 * from a restoring Etcd, and if so whether alone. Alone means that old and
 * new object have equal metadata (finalizers, ownerReferences, annotations
 * and the rest) but for etcd-warden.io/restoring and
 * etcd-warden.io/allow-delete-while-restoring in the labels and what the
 * API server writes itself (resourceVersion, generation, managedFields); a
 * spec change of a restoring Etcd is refused anyway:
 * `kubectl label etcd NAME etcd-warden.io/restoring-`, the removal by hand
 * that ends a restore. A write that carries other changes with it (a
 * controller writing the Etcd's labels whole, as gardenlet's reconcile
 * does, along with its timestamp annotation) is RESTORE_REMOVAL_WITH_OTHERS;
 * so is any request whose objects cannot be compared (out of memory).
 */
enum restore_removal restore_removal(const struct review_req *req);

/*
 * Deep equality of two JSON values (NULL equals NULL and JSON null).
 * Object member order does not matter; numbers compare as doubles. Runs in
 * O(n log n) on objects whatever their size.
 */
int restore_json_equal(const cJSON *a, const cJSON *b);

#endif
