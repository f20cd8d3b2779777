/*
 * admit - dynamic admission control as kube-apiserver runs it: for every
 * write, the matching MutatingWebhookConfiguration webhooks (in order,
 * their JSON patches applied) and then the matching
 * ValidatingWebhookConfiguration webhooks (concurrently) are called with an
 * AdmissionReview.
 *
 * Matching: rules (operations, apiGroups, apiVersions, resources including
 * "*", "pods/ *", "* /status" (without the spaces) for subresources, scope), matchPolicy
 * (Equivalent also matches other served versions of the resource),
 * namespaceSelector (on the namespace's labels; a Namespace object is
 * matched on its own labels; other cluster-scoped objects always match),
 * objectSelector (old or new object labels). Webhook configurations
 * themselves are never sent to webhooks.
 *
 * Outcome, with kube-apiserver's wording: a denial becomes the webhook's
 * Status with code >= 400 and the message `admission webhook "<name>"
 * denied the request: <message>`; a call that fails or times out follows
 * failurePolicy (Fail: 500 `failed calling webhook "<name>": ...`, Ignore:
 * skipped); dryRun requests are refused for webhooks whose sideEffects are
 * not None/NoneOnDryRun; warnings become Warning headers.
 *
 * Ownership: attributes are BORROWED; *obj of ksim_admit_mutate is replaced
 * in place (the old tree freed) when a webhook patches it.
 * Thread safety: reentrant; validating webhooks run on helper threads.
 */
#ifndef KSIM_ADMIT_H
#define KSIM_ADMIT_H

#include <cJSON.h>

#include "tests/kube-sim/api.h"

/* What is being admitted. */
struct ksim_admit_attrs {
    const struct ksim_rtype *rt; /* the resource of the request */
    const char *sub;             /* "", "status", "scale" */
    const char *operation;       /* "CREATE", "UPDATE", "DELETE" */
    const char *ns;              /* "" for cluster scope */
    const char *name;            /* "" when generateName is pending */
    const cJSON *old;            /* UPDATE / DELETE: the current object (or Scale), else NULL */
    const cJSON *options;        /* CreateOptions / UpdateOptions / DeleteOptions */
    const struct ksim_user *user;
    int dry_run;
    int scale_kind; /* the object is an autoscaling/v1 Scale */
};

/*
 * Run the mutating webhooks. *obj (CREATE/UPDATE: the object, DELETE: NULL)
 * may be replaced by the patched object. 0, or the HTTP code of the
 * rejection in e. Warnings go to resp (may be NULL).
 */
int ksim_admit_mutate(struct ksim_api *api, const struct ksim_admit_attrs *a, cJSON **obj,
                      struct ksim_resp *resp, struct ksim_apierr *e);

/* Run the validating webhooks on obj (NULL for DELETE). 0, or the HTTP code in e. */
int ksim_admit_validate(struct ksim_api *api, const struct ksim_admit_attrs *a, const cJSON *obj,
                        struct ksim_resp *resp, struct ksim_apierr *e);

/*
 * Does webhook (one entry of a configuration's webhooks, BORROWED) match
 * the request? ns_labels are the labels of the request's namespace (NULL
 * when the selector does not apply). 1 match, 0 no match (malformed
 * selectors match nothing).
 */
int ksim_admit_matches(struct ksim_api *api, const cJSON *webhook, const struct ksim_admit_attrs *a,
                       const cJSON *obj, const cJSON *ns_labels);

#endif
