/*
 * ctrl - what a cluster does on its own, kube-controller-manager's part:
 *   - garbage collector: dependents whose owners (ownerReferences by uid)
 *     are all gone are deleted (background); dangling references next to a
 *     live owner are removed; an owner deleted with propagationPolicy
 *     Foreground keeps its foregroundDeletion finalizer until no dependent
 *     with blockOwnerDeletion is left (its dependents are deleted first);
 *     Orphan removes the owner's references from its dependents, then the
 *     orphan finalizer;
 *   - namespace controller: a terminating Namespace has its content deleted,
 *     then goes once empty;
 *   - StatefulSet controller: status.replicas, readyReplicas,
 *     currentReplicas, updatedReplicas and availableReplicas follow
 *     spec.replicas (and observedGeneration the generation) after a
 *     configurable delay.
 * Every change is made through the write / delete paths with the
 * controller's service-account identity (system:serviceaccount:kube-system:
 * generic-garbage-collector, namespace-controller, statefulset-controller),
 * so admission webhooks see them as they would in a cluster.
 *
 * Ownership: ksim_ctrl_start returns a handle the caller OWNS
 * (ksim_ctrl_stop). Thread safety: one background thread; start and stop
 * from the same thread.
 */
#ifndef KSIM_CTRL_H
#define KSIM_CTRL_H

#include "common/kerr.h"
#include "tests/kube-sim/api.h"

struct ksim_ctrl;

/* Start the controllers' thread. On KERR_OK *out OWNS the handle. */
enum kerr ksim_ctrl_start(struct ksim_api *api, struct ksim_ctrl **out, struct kerr_info *err);

/* Run one pass of every controller now (tests). */
void ksim_ctrl_sync(struct ksim_ctrl *c);

/* Stop the thread and free the handle. NULL is a no-op. */
void ksim_ctrl_stop(struct ksim_ctrl *c);

#endif
