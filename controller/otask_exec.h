/*
 * otask_exec - where the EtcdOpsTask executor runs: a work queue and a pool
 * of workers of its own (--ops-task-workers), apart from the queue of the
 * Etcd flows, as etcd-druid runs its task controller with its own workers.
 * A sidecar call that takes the whole of its timeout holds one of these
 * workers only: hibernation, wake-up, restore and the other flows go on.
 *
 * It also holds the cancel flag of the executor's sidecar calls
 * (otask_env.cancel): otask_exec_cancel ends every call in flight within
 * SIDECAR_POLL_MS, for a process that lost its leader-election Lease.
 *
 * Ownership: struct otask_exec (otask_exec_new / otask_exec_free) OWNS its
 * queue and pool; arg of the process callback is BORROWED.
 * Thread safety: otask_exec_add, otask_exec_cancel and otask_exec_cancel_flag
 * from any thread; new, start, stop and free from one owner.
 */
#ifndef CONTROLLER_OTASK_EXEC_H
#define CONTROLLER_OTASK_EXEC_H

#include <stdatomic.h>

#include "common/kerr.h"
#include "common/wqpool.h"

struct otask_exec;

/* A queue named name (BORROWED, copied) for n workers (>= 1). *out OWNS it. */
enum kerr otask_exec_new(const char *name, int n, struct otask_exec **out, struct kerr_info *err);

/* Queue key (BORROWED) now (after_ms <= 0) or after after_ms. Ignored after the stop. */
void otask_exec_add(struct otask_exec *x, const char *key, long after_ms);

/* Start the workers on process(arg, key, &after_ms). KERR_INVAL when started already. */
enum kerr otask_exec_start(struct otask_exec *x, wqpool_process_fn process, void *arg,
                           struct kerr_info *err);

/*
 * End every sidecar call in flight and every later one (KERR_CANCELLED), and
 * take no more keys (the keys in hand end with their calls). Idempotent.
 */
void otask_exec_cancel(struct otask_exec *x);

/* The flag otask_exec_cancel sets, for otask_env.cancel. BORROWED. */
const atomic_int *otask_exec_cancel_flag(struct otask_exec *x);

/*
 * Stop taking keys, let the keys in hand finish for at most drain_ms, then
 * cancel the calls still in flight and join the workers. Idempotent.
 */
void otask_exec_stop(struct otask_exec *x, long drain_ms);

/* Stop and free. NULL is a no-op. */
void otask_exec_free(struct otask_exec *x);

#endif
