/*
 * etcdrepl - the rule of etcd-druid's Etcd CRD on spec.replicas, on
 * /webhooks/etcd: "Replicas can either be increased or be downscaled to 0."
 * (x-kubernetes-validations `self==0 ? true : self < oldSelf ? false : true`).
 * The chart's Etcd CRD carries the same rule; this webhook holds it where the
 * API server evaluates none (or the Etcd CRD installed lacks it), so that no
 * Etcd asks etcd-druid for a partial scale-down of its StatefulSet.
 *
 * An UPDATE of an Etcd, or of its scale subresource (etcds/scale, a Scale:
 * spec.replicas absent is 0), that lowers spec.replicas to a value above 0 is
 * refused as the API server refuses it where the CRD carries the rule: 422
 * Invalid, message `Etcd.druid.gardener.cloud "<name>" is invalid:
 * spec.replicas: Invalid value: "integer": <ETCDREPL_MESSAGE>`, and
 * status.details naming the Etcd with one FieldValueInvalid cause on
 * spec.replicas (kubectl prints `The Etcd "<name>" is invalid: ...`). An Etcd without spec.replicas
 * on either side is not judged (a transition rule runs on a field present in both). Everything else
 * is allowed. Pure function, reentrant.
 */
#ifndef WEBHOOK_ETCDREPL_H
#define WEBHOOK_ETCDREPL_H

#include "common/kerr.h"
#include "webhook/review.h"

/* etcd-druid's message, verbatim. */
#define ETCDREPL_MESSAGE "Replicas can either be increased or be downscaled to 0."

/*
 * The field error's detail as kube-apiserver words a failed CEL rule: the
 * value shown is the schema type of the field ("integer"), then the rule's
 * message.
 */
#define ETCDREPL_DETAIL "Invalid value: \"integer\": " ETCDREPL_MESSAGE

/*
 * Decide req (BORROWED; a request of /webhooks/etcd) into resp (initialised
 * by the caller). Returns KERR_OK, or KERR_NOMEM / KERR_TOOBIG when the
 * answer could not be built.
 */
enum kerr etcdrepl_decide(const struct review_req *req, struct review_resp *resp,
                          struct kerr_info *err);

#endif
