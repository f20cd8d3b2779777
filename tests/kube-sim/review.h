/*
 * review - the create-only review resources kubectl's `auth` commands use:
 * authentication.k8s.io/v1 SelfSubjectReview (`kubectl auth whoami`: the
 * caller's user name, uid and groups) and authorization.k8s.io/v1
 * SelfSubjectAccessReview / SubjectAccessReview (`kubectl auth can-i`:
 * always allowed, as kube-sim has no RBAC). They are answered and never
 * stored, as in kube-apiserver.
 *
 * Ownership: the body is TAKEN; *out is OWNED by the caller.
 * Thread safety: reentrant.
 */
#ifndef KSIM_REVIEW_H
#define KSIM_REVIEW_H

#include <cJSON.h>

#include "tests/kube-sim/api.h"

/* True when rt is one of the review resources. */
int ksim_review_is(const struct ksim_rtype *rt);

/* Answer a POST of body (TAKEN) by user. 201 and *out, or an error code in e. */
int ksim_review_answer(const struct ksim_rtype *rt, const struct ksim_user *user, cJSON *body,
                       cJSON **out, struct ksim_apierr *e);

#endif
