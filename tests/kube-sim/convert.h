/*
 * convert - the one conversion kube-sim performs between API groups: core
 * v1 Events and events.k8s.io/v1 Events are the same objects in
 * kube-apiserver, so both resources share one store (in the core shape) and
 * are converted on the way in and out: regarding <-> involvedObject, note
 * <-> message, reportingController <-> reportingComponent, deprecatedSource
 * <-> source, deprecatedFirstTimestamp / deprecatedLastTimestamp /
 * deprecatedCount <-> firstTimestamp / lastTimestamp / count; the other
 * fields keep their names. Field selectors of events.k8s.io (regarding.name,
 * ...) are mapped the same way. A custom resource read from storage gets the
 * defaults of the served version's schema (schemadef.h), as kube-apiserver
 * applies them when it reads from etcd.
 *
 * Ownership: objects are converted in place. Thread safety: reentrant.
 */
#ifndef KSIM_CONVERT_H
#define KSIM_CONVERT_H

#include <stddef.h>

#include <cJSON.h>

#include "tests/kube-sim/registry.h"

/* True when rt is served from another resource's storage shape (events.k8s.io/v1 events). */
int ksim_convert_needed(const struct ksim_rtype *rt);

/* Storage shape (core v1 Event) to rt's shape, defaults of a CRD's schema applied. 0 or -1. */
int ksim_convert_out(const struct ksim_rtype *rt, cJSON *obj);

/* rt's shape to the storage shape. 0 or -1. */
int ksim_convert_in(const struct ksim_rtype *rt, cJSON *obj);

/* The storage field path for a field selector path of rt, into out. */
void ksim_convert_field(const struct ksim_rtype *rt, const char *path, char *out, size_t size);

#endif
