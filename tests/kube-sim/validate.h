/*
 * validate - the object-metadata rules kube-apiserver applies on every
 * create and update (k8s.io/apimachinery pkg/api/validation ValidateObjectMeta
 * and pkg/util/validation), with its messages:
 *   metadata.name: a DNS-1123 subdomain (253 characters, no limit per
 *     dot-separated part); Namespaces a DNS-1123 label, Services a DNS-1035
 *     label (63); RBAC kinds only "no '/', not . or .."; CronJobs at most 52
 *     characters (63 minus the 11 the CronJob controller appends for a Job);
 *   metadata.labels: keys qualified names (an optional DNS-1123 subdomain
 *     prefix + '/' + a name of at most 63 of [A-Za-z0-9-_.], alphanumeric at
 *     both ends), values at most 63 of the same syntax or empty;
 *   metadata.annotations: keys qualified names (checked lower-cased), keys
 *     and values together at most 256 KiB.
 * A violation is a 422 Invalid naming the first bad field as kube-apiserver
 * does: `<Kind>.<group> "<name>" is invalid: metadata.labels: Invalid value:
 * "<value>": must be no more than 63 bytes`.
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef KSIM_VALIDATE_H
#define KSIM_VALIDATE_H

#include <stddef.h>

#include <cJSON.h>

#include "tests/kube-sim/apierr.h"
#include "tests/kube-sim/registry.h"

#define KSIM_ANNOTATIONS_MAX  (256 * 1024)
#define KSIM_CRONJOB_NAME_MAX 52

/* Each checks s and returns 1 when valid, else 0 with kube-apiserver's message in why. */
int ksim_valid_subdomain(const char *s, char *why, size_t n);
int ksim_valid_dns1123_label(const char *s, char *why, size_t n);
int ksim_valid_dns1035_label(const char *s, char *why, size_t n);
int ksim_valid_qualified_name(const char *s, char *why, size_t n);
int ksim_valid_label_value(const char *s, char *why, size_t n);

/* metadata.name of a new object of rt: 0, or 422 into e. */
int ksim_validate_name(const struct ksim_rtype *rt, const char *name, struct ksim_apierr *e);

/* The name (CronJob limit), labels and annotations of obj about to be stored: 0, or 422 into e. */
int ksim_validate_meta(const struct ksim_rtype *rt, const cJSON *obj, struct ksim_apierr *e);

#endif
