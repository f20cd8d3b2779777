/*
 * ctl_lane - a lane: a work queue and a pool of workers of its own, apart
 * from the queue of the other keys, for the key kinds a capability marks
 * as making long calls (struct ctl_key.lane_workers, controller/core/ctl_cap.h;
 * the EtcdOpsTask executor's sidecar calls, --ops-task-workers), as
 * etcd-druid runs its task controller with its own workers. A call that
 * takes the whole of its timeout holds one of these workers only: the
 * other flows go on.
 *
 * It also holds the cancel flag of the lane's long calls (ctl_lane_cancel_flag,
 * ctl.h's ctl_cancel_flag): ctl_lane_cancel ends every call in flight that
 * polls it, for a process that lost its leader-election Lease.
 *
 * Ownership: struct ctl_lane (ctl_lane_new / ctl_lane_free) OWNS its
 * queue and pool; arg of the process callback is BORROWED.
 * Thread safety: ctl_lane_add, ctl_lane_cancel and ctl_lane_cancel_flag
 * from any thread; new, start, stop and free from one owner.
 */
#ifndef CONTROLLER_CTL_LANE_H
#define CONTROLLER_CTL_LANE_H

#include <stdatomic.h>

#include "common/kerr.h"
#include "common/wqpool.h"

struct ctl_lane;

/* A queue named name (BORROWED, copied) for n workers (>= 1). *out OWNS it. */
enum kerr ctl_lane_new(const char *name, int n, struct ctl_lane **out, struct kerr_info *err);

/* Queue key (BORROWED) now (after_ms <= 0) or after after_ms. Ignored after the stop. */
void ctl_lane_add(struct ctl_lane *x, const char *key, long after_ms);

/* Start the workers on process(arg, key, &after_ms). KERR_INVAL when started already. */
enum kerr ctl_lane_start(struct ctl_lane *x, wqpool_process_fn process, void *arg,
                         struct kerr_info *err);

/*
 * End every sidecar call in flight and every later one (KERR_CANCELLED), and
 * take no more keys (the keys in hand end with their calls). Idempotent.
 */
void ctl_lane_cancel(struct ctl_lane *x);

/* The flag ctl_lane_cancel sets, for the long calls (otask_env.cancel). BORROWED. */
const atomic_int *ctl_lane_cancel_flag(struct ctl_lane *x);

/*
 * Stop taking keys, let the keys in hand finish for at most drain_ms, then
 * cancel the calls still in flight and join the workers. Idempotent.
 */
void ctl_lane_stop(struct ctl_lane *x, long drain_ms);

/* Stop and free. NULL is a no-op. */
void ctl_lane_free(struct ctl_lane *x);

#endif
