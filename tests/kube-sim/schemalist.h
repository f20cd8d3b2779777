/*
 * schemalist - the list-type invariants kube-apiserver checks on custom
 * resources after their schema (k8s.io/apiextensions-apiserver
 * pkg/apiserver/schema/listtype): an array with x-kubernetes-list-type: set
 * holds no value twice (each repeated value reported once, at its second
 * place: `spec.l[2]: Duplicate value: "a"`), one with list-type map only
 * objects (or nulls) whose x-kubernetes-list-map-keys tuple (a missing key
 * taking its default) appears once (every repeat reported:
 * `status.conditions[1]: Duplicate value: map[string]interface {}{"type":"Ready"}`).
 * Arrays longer than 1000 are not checked.
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef KSIM_SCHEMALIST_H
#define KSIM_SCHEMALIST_H

#include <stddef.h>

#include <cJSON.h>

#include "tests/kube-sim/apierr.h"

/*
 * Check obj (a whole resource) by schema, storing errors into errs from
 * index *n on (at most max in all; *n is advanced). Returns the number of
 * errors found, stored or not.
 */
size_t ksim_schemalist_check(const cJSON *schema, const cJSON *obj, struct ksim_fielderr *errs,
                             size_t max, size_t *n);

#endif
