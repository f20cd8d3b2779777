/*
 * leader - leader election on a coordination.k8s.io/v1 Lease, with the
 * semantics of client-go's tools/leaderelection (LeaseLock).
 *
 * One round (le_try_acquire_or_renew) is client-go's tryAcquireOrRenew:
 * a leader first renews optimistically with the Lease it last read or wrote;
 * otherwise GET the Lease and create it when absent; when it is held by
 * another identity whose record was last seen to change less than its
 * leaseDurationSeconds ago - judged by the LOCAL time of that observation,
 * never the remote renewTime, so clock skew does not matter - give up this
 * round; else UPDATE it with the resourceVersion just read (a 409 means
 * another candidate won the race) with holderIdentity, leaseDurationSeconds,
 * renewTime (MicroTime, now), and on a takeover acquireTime now and
 * leaseTransitions + 1.
 *
 * The election thread (le_start) tries to acquire every retry period (with
 * client-go's jitter factor 1.2), calls on_started_leading when it wins,
 * renews every retry period, and steps down - on_stopped_leading - when it
 * has not renewed for renew_deadline or sees another holder. Each renewal
 * round is bounded by the renew deadline (every request of the round is cut
 * when renew_deadline has passed since the last renewal), so the step-down
 * comes at the deadline, not a request timeout later. After a step-down the
 * thread ends, as client-go's Run returns: it never takes the Lease again
 * (the process is expected to exit; le_stop then only joins the thread).
 * on_new_leader reports every change of the observed holder, this process
 * included. le_stop() releases a held Lease (client-go ReleaseOnCancel:
 * holderIdentity "", leaseDurationSeconds 1, renewTime/acquireTime now,
 * leaseTransitions kept) so a successor does not wait for it to expire.
 *
 * Give the election its own struct k8s_client with request_timeout_ms well
 * below renew_deadline: a request stuck longer delays the step-down callback
 * (le_is_leader() still turns false at the deadline).
 *
 * Thread safety: le_is_leader, le_identity and le_slowpath_count may be
 * called from any thread. Callbacks run on the election thread and must
 * return promptly (start work elsewhere); they must not call le_stop/le_free.
 * le_try_acquire_or_renew is for a caller that runs no election thread (tests,
 * one-shot tools). le_new/le_start/le_stop/le_free belong to one owner thread.
 */
#ifndef COMMON_LEADER_H
#define COMMON_LEADER_H

#include <stdint.h>

#include "common/kerr.h"
#include "common/ratelimit.h"

struct k8s_client; /* common/k8s.h */

#define LE_DEFAULT_LEASE_DURATION_MS 15000L
#define LE_DEFAULT_RENEW_DEADLINE_MS 10000L
#define LE_DEFAULT_RETRY_PERIOD_MS   2000L
#define LE_IDENTITY_MAX              256

/* Callbacks; arg is le_opts.arg. */
typedef void (*le_leading_fn)(void *arg);
typedef void (*le_new_leader_fn)(void *arg, const char *identity /* BORROWED for the call */);

struct le_opts {
    const char *lease_namespace; /* required; BORROWED, copied */
    const char *lease_name;      /* required; BORROWED, copied */
    const char *identity;        /* BORROWED, copied; NULL = "<hostname>_<uuid>"; "" is invalid */
    long lease_duration_ms;      /* 0 = 15 s; written rounded up to whole seconds */
    long renew_deadline_ms;      /* 0 = 10 s */
    long retry_period_ms;        /* 0 = 2 s */
    int keep_on_stop;            /* 1: le_stop() does not release the Lease */
    le_leading_fn on_started_leading; /* required */
    le_leading_fn on_stopped_leading; /* required */
    le_new_leader_fn on_new_leader;   /* optional */
    void *arg;                        /* BORROWED, passed to the callbacks */
    const struct rl_clock *clock;     /* BORROWED, optional: monotonic time for every
                                         decision (NULL = CLOCK_MONOTONIC); the thread's
                                         waits and the MicroTime strings use real time */
};

/* What one round found. */
enum le_round {
    LE_ROUND_LEADER, /* this identity holds the Lease now */
    LE_ROUND_HELD,   /* another identity holds a Lease that has not expired */
    LE_ROUND_FAILED, /* the API call failed (409 race, network, ...); err says why */
};

struct le;

/*
 * Validate opts as client-go does (lease_duration > renew_deadline >
 * 1.2 * retry_period, all > 0, identity not empty, both leading callbacks
 * set, name and namespace set) and create an elector using client
 * (BORROWED; must outlive it). On KERR_OK *out OWNS it (le_free).
 * KERR_INVAL with a message naming the broken rule.
 */
enum kerr le_new(struct k8s_client *client, const struct le_opts *opts, struct le **out,
                 struct kerr_info *err);

/* Start the election thread. KERR_INVAL when already started, KERR_INTERNAL. */
enum kerr le_start(struct le *le, struct kerr_info *err);

/*
 * Stop the election thread (waits for its current API call), release the
 * Lease if held (unless keep_on_stop) and call on_stopped_leading if it was
 * leading. Idempotent; no-op when never started.
 */
void le_stop(struct le *le);

/* le_stop(), then free. NULL is a no-op. */
void le_free(struct le *le);

/*
 * True while this process holds the Lease and its last successful renewal
 * is younger than renew_deadline.
 */
int le_is_leader(struct le *le);

/* The identity written into the Lease. BORROWED, valid until le_free. */
const char *le_identity(const struct le *le);

/* Rounds where a leader's optimistic renewal failed and it re-read the Lease. */
uint64_t le_slowpath_count(struct le *le);

/*
 * One round of tryAcquireOrRenew (see the top of this file); *out says what
 * it found. Only when the election thread is not running. KERR_OK for
 * LE_ROUND_LEADER and LE_ROUND_HELD; the API error for LE_ROUND_FAILED.
 */
enum kerr le_try_acquire_or_renew(struct le *le, enum le_round *out, struct kerr_info *err);

/*
 * Release the Lease now if this identity holds it (see the top of this file).
 * Only when the election thread is not running. KERR_OK also when not leading.
 */
enum kerr le_release(struct le *le, struct kerr_info *err);

#endif
