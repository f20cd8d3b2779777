/*
 * etcdimm - the immutability rules of etcd-druid's Etcd CRD on the fields
 * that name an etcd cluster's members and their volumes, on /webhooks/etcd:
 * spec.volumeClaimTemplate (the members' claim names: a new one moves every
 * member onto new, empty claims), spec.storageClass and
 * spec.memberNamePrefix. The chart's Etcd CRD carries the same rules; this
 * webhook holds them where the API server evaluates no transition rule (or
 * the Etcd CRD installed lacks them).
 *
 * Each field has two rules in etcd-druid's CRD: on the field, `self ==
 * oldSelf` (run only when the field is on both sides), and on spec,
 * `has(oldSelf.F) == has(self.F)` (set or removed). An Etcd UPDATE that
 * breaks any of them is refused as kube-apiserver refuses it: 422 Invalid,
 * one FieldValueInvalid cause per broken rule (field "spec", value
 * "object", for a set or removed field; field "spec.F", value "string", for a
 * changed one) in status.details naming the Etcd, and the message
 * `Etcd.druid.gardener.cloud "<name>" is invalid: <cause>` (several causes:
 * `[<cause>, <cause>]`, as an aggregate of field errors prints). Everything
 * else is allowed: a CREATE, a Scale, an Etcd without spec on either side.
 * Pure function, reentrant.
 */
#ifndef WEBHOOK_ETCDIMM_H
#define WEBHOOK_ETCDIMM_H

#include "common/kerr.h"
#include "webhook/review.h"

/*
 * Decide req (BORROWED; a request of /webhooks/etcd) into resp (initialised
 * by the caller). Returns KERR_OK, or KERR_NOMEM / KERR_TOOBIG when the
 * answer could not be built.
 */
enum kerr etcdimm_decide(const struct review_req *req, struct review_resp *resp,
                         struct kerr_info *err);

#endif
