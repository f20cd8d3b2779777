/*
 * podval - the part of kube-apiserver's Pod validation (k8s.io/kubernetes
 * pkg/apis/core/validation ValidatePodSpec) that kube-sim enforces, on
 * Pods only (pod templates of workloads are not checked):
 *   spec.volumes[i].name: required, a DNS-1123 label, unique
 *     (`spec.volumes[1].name: Duplicate value: "x"`); a volume with an
 *     error is not one a mount can name;
 *   spec.containers[i] and spec.initContainers[i] volumeMounts[j]: name
 *     required and naming a valid volume (`spec.containers[0].volumeMounts[0].name:
 *     Not found: "x"`), mountPath required and unique within the container
 *     (`spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/a":
 *     must be unique`).
 * Errors are reported all together in kube-apiserver's order (volumes, then
 * containers, then init containers), as one 422 Invalid:
 * `Pod "p" is invalid: [<error>, <error>]`.
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef KSIM_PODVAL_H
#define KSIM_PODVAL_H

#include <stddef.h>

#include <cJSON.h>

#include "tests/kube-sim/apierr.h"
#include "tests/kube-sim/registry.h"

/* At most this many field errors are reported (more are counted, not kept). */
#define KSIM_PODVAL_MAX 16

/*
 * Check spec (a PodSpec; NULL or a non-object has nothing to check) whose
 * path is prefix ("spec"), storing at most max errors into errs. Returns
 * the number of errors found.
 */
size_t ksim_podval_spec(const cJSON *spec, const char *prefix, struct ksim_fielderr *errs,
                        size_t max);

/* The Pod obj of rt about to be stored: 0, or 422 Invalid into e. */
int ksim_podval_validate(const struct ksim_rtype *rt, const cJSON *obj, struct ksim_apierr *e);

#endif
