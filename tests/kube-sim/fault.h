/*
 * fault - fault injection for resilience tests: added latency, a share of
 * 500 InternalError and 429 TooManyRequests answers (optionally only for
 * requests whose "METHOD /path" contains a given text), watch streams cut
 * after a maximum duration, and one-shot actions (cut every open watch,
 * expire all watch history so resourceVersions and continue tokens get 410).
 *
 * Configured by kube-sim's --fault-* flags and at run time through
 * POST /kube-sim/faults (system:masters only) with a JSON body:
 *   {"latencyMs":100,"errorRate":0.2,"throttleRate":0.1,"match":"PATCH /apis/apps",
 *    "watchMaxMs":5000,"cutWatches":true,"expireHistory":true}
 * GET /kube-sim/faults returns the current settings. Absent fields keep
 * their values; {"reset":true} clears everything.
 *
 * Ownership: ksim_fault_new returns an object the caller OWNS.
 * Thread safety: all functions may be called from any thread.
 */
#ifndef KSIM_FAULT_H
#define KSIM_FAULT_H

#include <cJSON.h>

#include "common/kerr.h"
#include "tests/kube-sim/store.h"

struct ksim_fault_cfg {
    long latency_ms;      /* added to every API request */
    double error_rate;    /* share of requests answered 500 */
    double throttle_rate; /* share of requests answered 429 with Retry-After: 1 */
    long watch_max_ms;    /* watches end after this long (0 = no limit) */
    char match[256];      /* only requests whose "METHOD /path" contains this ("" = all) */
};

/* The seed of the draws that decide which requests fail (fixed, so no run draws its own). */
#define KSIM_FAULT_SEED 1u

struct ksim_fault;

/* A fault injector with cfg (NULL = none). On KERR_OK *out OWNS it. */
enum kerr ksim_fault_new(const struct ksim_fault_cfg *cfg, struct ksim_fault **out,
                         struct kerr_info *err);

/* NULL is a no-op. */
void ksim_fault_free(struct ksim_fault *f);

/* Copy of the current settings. */
void ksim_fault_get(struct ksim_fault *f, struct ksim_fault_cfg *out);

/*
 * Before serving an API request: sleep for the latency, then decide whether
 * to fail it. Returns 0 (serve it), 500 or 429.
 */
int ksim_fault_before(struct ksim_fault *f, const char *method, const char *path);

/* The duration a new watch may run: min(requested, watch_max_ms). */
long ksim_fault_watch_ms(struct ksim_fault *f, long requested_ms);

/*
 * Apply a JSON settings document (BORROWED) as described above, performing
 * its one-shot actions on store. KERR_INVAL for malformed values. *out
 * (optional) OWNS the resulting settings as JSON.
 */
enum kerr ksim_fault_configure(struct ksim_fault *f, struct ksim_store *store, const cJSON *doc,
                               cJSON **out, struct kerr_info *err);

#endif
