/*
 * lsel - a Kubernetes label selector (metav1.LabelSelector: matchLabels and
 * matchExpressions with In, NotIn, Exists, DoesNotExist) matched against an
 * object's labels, as the API server matches it: every requirement must
 * hold; an empty selector ({}) matches everything.
 *
 * Fail closed: a selector that is not one (not an object, an unknown
 * operator, values missing for In/NotIn or given for Exists/DoesNotExist, a
 * value that is not a string) is KERR_INVAL with the reason in err, never
 * "matches".
 *
 * Pure functions. Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef COMMON_LSEL_H
#define COMMON_LSEL_H

#include <cJSON.h>

#include "common/kerr.h"

/*
 * Does sel (a LabelSelector object) select labels (an object of strings, NULL: no labels)?
 * *match 1 or 0 on KERR_OK; KERR_INVAL (reason in err) when sel is no valid selector.
 */
enum kerr lsel_match(const cJSON *sel, const cJSON *labels, int *match, struct kerr_info *err);

/* KERR_OK when sel is a valid selector, else KERR_INVAL with the field in err. */
enum kerr lsel_validate(const cJSON *sel, struct kerr_info *err);

#endif
