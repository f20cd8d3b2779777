/*
 * rneed - what each decision reads of an AdmissionReview (webhook/review.h,
 * enum review_need), as webhook/jscan schemas for the selective decoder: the
 * envelope and request fields always (userInfo: its username; options:
 * propagationPolicy and orphanDependents), and of the objects what the
 * decisions of one webhook read (review.h lists them). A field a decision
 * reads that its schema leaves out would read as absent: the decoders'
 * differential tests (wh_decdiff, whdiff) catch it.
 *
 * Ownership: the schemas are static, BORROWED for the life of the process.
 * Thread safety: read-only data.
 */
#ifndef WEBHOOK_RNEED_H
#define WEBHOOK_RNEED_H

#include "webhook/jscan.h"

/* The components endpoints (/webhooks/etcdcomponents, /webhooks/scaleguard). */
const struct jscan_keep *rneed_components(void);

/* The Etcd endpoint (/webhooks/etcd). */
const struct jscan_keep *rneed_etcd(void);

/* The mutating endpoint (/webhooks/etcd-mutate): the object, and oldObject's metadata. */
const struct jscan_keep *rneed_mutate(void);

/* The envelope and request fields, no object: to answer a review too large to decide. */
const struct jscan_keep *rneed_envelope(void);

/*
 * The envelope and request fields, and of the objects only metadata name, namespace and
 * labels: whether a review too large to decide is of an object the guard has business with
 * (webhook/wh_bigrev).
 */
const struct jscan_keep *rneed_labels(void);

#endif
