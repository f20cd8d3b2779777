/*
 * kinds - what kube-apiserver does for particular built-in kinds: defaulting
 * (the fields a fresh object gets from the API server's defaulters), the
 * status of a newly created object, the server-maintained state of
 * Namespaces and CustomResourceDefinitions, and the validations kube-sim
 * enforces because tests rely on being refused (replica counts, selectors,
 * webhook configurations, CRDs, the volumes of Pods: podval.h).
 *
 * Errors come back as struct ksim_apierr with kube-apiserver's wording.
 * Ownership: objects are modified in place and stay OWNED by the caller.
 * Thread safety: all functions are reentrant.
 */
#ifndef KSIM_KINDS_H
#define KSIM_KINDS_H

#include <cJSON.h>

#include "tests/kube-sim/apierr.h"
#include "tests/kube-sim/registry.h"

/* Apply the kind's defaults to obj (create and update). 0, or -1 without memory. */
int ksim_kinds_default(const struct ksim_rtype *rt, cJSON *obj);

/* Replace obj's status with what a just-created object of the kind reports. 0 or -1. */
int ksim_kinds_initial_status(const struct ksim_rtype *rt, cJSON *obj);

/*
 * Server-maintained fields after every write: the kubernetes.io/metadata.name
 * label of a Namespace, the status of a CRD (NamesAccepted, Established,
 * acceptedNames, storedVersions). 0 or -1.
 */
int ksim_kinds_maintain(const struct ksim_rtype *rt, cJSON *obj);

/* Validate obj (0, or the HTTP code of the error in e; 422 Invalid mostly). */
int ksim_kinds_validate(const struct ksim_rtype *rt, const cJSON *obj, struct ksim_apierr *e);

#endif
