/*
 * delete - DELETE of one object and of a collection, as kube-apiserver's
 * generic registry does it: preconditions (uid, resourceVersion) give 409,
 * admission sees operation DELETE with the old object and the
 * DeleteOptions, propagationPolicy Orphan / Foreground adds the orphan /
 * foregroundDeletion finalizer for the garbage collector, and an object
 * with finalizers (or a Namespace with spec.finalizers) only gets its
 * deletionTimestamp (the answer is the object, 200) until the last
 * finalizer is removed; otherwise it is removed at once and the answer is a
 * Success Status naming it (Pods answer with the object, as they do in
 * kube-apiserver). Deleting a CRD stops serving its resource and deletes
 * its objects.
 *
 * Ownership: options are BORROWED; *out is OWNED by the caller.
 * Thread safety: reentrant.
 */
#ifndef KSIM_DELETE_H
#define KSIM_DELETE_H

#include <cJSON.h>

#include "tests/kube-sim/read.h"
#include "tests/kube-sim/write.h"

/*
 * Delete c->name. options is a DeleteOptions object or NULL; policy, when
 * not NULL, overrides its propagationPolicy (?propagationPolicy=). 200 and
 * *out, or the error code in e.
 */
int ksim_delete_one(const struct ksim_write_ctx *c, const cJSON *options, const char *policy,
                    cJSON **out, struct ksim_apierr *e);

/*
 * Delete every object of c->rt in c->ns (all namespaces when "") that f
 * selects. 200 and *out (a list of what was deleted), or the error code of
 * the first failure.
 */
int ksim_delete_collection(const struct ksim_write_ctx *c, const struct ksim_read_filter *f,
                           const cJSON *options, const char *policy, cJSON **out,
                           struct ksim_apierr *e);

#endif
