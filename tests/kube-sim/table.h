/*
 * table - server-side printing: the meta.k8s.io/v1 Table kubectl asks for
 * (Accept: application/json;as=Table;v=v1;g=meta.k8s.io) when it runs
 * `kubectl get`. Built-in kinds get kube-apiserver's columns (pods READY
 * STATUS RESTARTS, statefulsets READY, configmaps DATA, ...); custom
 * resources get their CRD's additionalPrinterColumns evaluated with the
 * JSONPath subset of jpath.h, or Name and Age.
 * Ages use apimachinery's duration.HumanDuration.
 *
 * Ownership: inputs are BORROWED; returned trees are OWNED by the caller.
 * Thread safety: reentrant.
 */
#ifndef KSIM_TABLE_H
#define KSIM_TABLE_H

#include <stddef.h>
#include <time.h>

#include <cJSON.h>

#include "tests/kube-sim/registry.h"

/* What a row carries in "object" (?includeObject=). */
enum ksim_table_include { KSIM_INCLUDE_NONE, KSIM_INCLUDE_METADATA, KSIM_INCLUDE_OBJECT };

/* True when an Accept header value asks for a Table (as=Table;g=meta.k8s.io). */
int ksim_table_wanted(const char *accept);

/* Parse ?includeObject= (NULL or unknown: Metadata). */
enum ksim_table_include ksim_table_include_of(const char *value);

/*
 * A Table of items (an array of objects of rt) at resourceVersion rv;
 * with_columns 0 omits columnDefinitions (watch events after the first).
 * Returns NULL without memory.
 */
cJSON *ksim_table_build(const struct ksim_rtype *rt, const cJSON *items, const char *rv,
                        enum ksim_table_include include, int with_columns);

/* duration.HumanDuration of seconds ("5s", "2m10s", "3h", "4d", ...). */
void ksim_table_human_duration(long long seconds, char *out, size_t size);

#endif
