/*
 * bigrev - a review too large to decide (its tree would pass REVIEW_PARSE_BUDGET): whether its
 * object is one the guard has no business with, proven from the little that is parsed of it
 * (review_req_decode_sel with REVIEW_NEED_LABELS: the envelope, and of the objects only their
 * name, namespace and labels).
 *
 * The components endpoints route every namespace's ConfigMaps (CREATE, UPDATE), PVCs and
 * StatefulSets (CREATE, UPDATE, DELETE) to warden-webhook, without an objectSelector. Of those
 * the guard judges only what belongs to an Etcd of the same namespace: its ConfigMap
 * <etcd>-config, its components (etcd-druid's labels), its StatefulSet (labels, owner or the
 * Etcd's name) and its members' claims (labels, owner or name). So a review too large to
 * parse is proven none of the guard's business, and allowed, when:
 *   1. it is of one of those three kinds and its namespace holds no Etcd (the Etcd cache
 *      holds none there and a LIST of the namespace's Etcds finds none: lookup etcd_any);
 *   2. it is of a ConfigMap that neither object labels as etcd-druid's
 *      (LOOKUP_LABEL_MANAGED_BY), and that no name of it (the request's, either object's)
 *      is "<etcd>-config" for an Etcd the namespace holds (not found, as the API server
 *      says it: a miss of the cache nobody confirmed proves nothing).
 * Anything else is not proven: the caller refuses the review as too large (fail closed: an
 * Etcd's ConfigMap, StatefulSet or claim over the budget stays refused, and so does every
 * review when a lookup cannot answer).
 *
 * Thread safety: reentrant, as struct lookup allows.
 */
#ifndef WEBHOOK_BIGREV_H
#define WEBHOOK_BIGREV_H

#include <stddef.h>

#include "webhook/lookup.h"
#include "webhook/review.h"

/*
 * 1 when req (BORROWED, decoded with REVIEW_NEED_LABELS or more) is proven to be of an object
 * the guard has no business with, as above: why (size bytes) then says how; 0 when it is not
 * proven (why says what is missing, for the log). lk BORROWED.
 */
int bigrev_unguarded(const struct lookup *lk, const struct review_req *req, char *why, size_t size);

#endif
