/*
 * leader - see leader.h.
 *
 * State written by the election thread (or by the caller of the one-round
 * functions) and read by no one else: the Lease last read or written (for
 * its resourceVersion), the spec last observed and the local clock time it
 * was observed to change, and the holder last reported. Other threads only
 * read the atomics leading / renewed_at / slowpath.
 */
#include "common/leader.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "common/buf.h"
#include "common/crypto.h"
#include "common/k8s.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/log.h"

#define JITTER 1.2 /* client-go JitterFactor */

static const struct k8s_resource LEASES = { "coordination.k8s.io", "v1", "leases", 1 };

/* A LeaderElectionRecord to write into spec. Strings BORROWED. */
struct le_record {
    const char *holder;
    long duration_s;
    const char *acquire;
    const char *renew;
    int64_t transitions;
};

struct le {
    struct k8s_client *client;
    char *ns, *name, *identity, *ref; /* ref: "ns/name" for logs */
    int64_t lease_ns, renew_ns, retry_ns;
    long lease_s;
    bool keep_on_stop;
    le_leading_fn started, stopped;
    le_new_leader_fn new_leader;
    void *arg;
    struct rl_clock clock;
    atomic_int leading;
    _Atomic int64_t renewed_at;
    _Atomic uint64_t slowpath;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop, running;
    pthread_t th;
    cJSON *lease;        /* last Lease read or written */
    cJSON *observed;     /* spec last observed */
    int64_t observed_at; /* clock time it was observed to change */
    char *reported;      /* holder last given to on_new_leader */
    int64_t deadline_ms; /* ktime_mono_ms() bound of every request of a round; 0: none */
    unsigned seed;
};

static int64_t clock_now(struct le *le)
{
    return le->clock.now(le->clock.arg);
}

/* ---- options ---- */

static enum kerr check_opts(const struct le_opts *o, long lease, long renew, long retry,
                            struct kerr_info *err)
{
    if (!o->lease_namespace || !*o->lease_namespace || !o->lease_name || !*o->lease_name)
        return kerr_set(err, KERR_INVAL, "leader election: lease name and namespace are required");
    if (o->identity && !*o->identity)
        return kerr_set(err, KERR_INVAL, "leader election: identity is empty");
    if (o->identity && strlen(o->identity) > LE_IDENTITY_MAX)
        return kerr_set(err, KERR_INVAL, "leader election: identity longer than %d bytes",
                        LE_IDENTITY_MAX);
    if (lease <= 0 || renew <= 0 || retry <= 0)
        return kerr_set(err, KERR_INVAL,
                        "leader election: leaseDuration, renewDeadline and retryPeriod must be "
                        "greater than zero");
    if (lease <= renew)
        return kerr_set(err, KERR_INVAL,
                        "leader election: leaseDuration (%ld ms) must be greater than "
                        "renewDeadline (%ld ms)",
                        lease, renew);
    if ((double)renew <= JITTER * (double)retry)
        return kerr_set(err, KERR_INVAL,
                        "leader election: renewDeadline (%ld ms) must be greater than "
                        "retryPeriod*JitterFactor (%ld ms * 1.2)",
                        renew, retry);
    if (!o->on_started_leading || !o->on_stopped_leading)
        return kerr_set(err, KERR_INVAL,
                        "leader election: on_started_leading and on_stopped_leading are required");
    if (o->clock && !o->clock->now)
        return kerr_set(err, KERR_INVAL, "leader election: clock without now()");
    return KERR_OK;
}

/* "<hostname>_<random uuid v4>", as controller-runtime's default identity. */
static enum kerr default_identity(char **out, struct kerr_info *err)
{
    char host[256] = "";
    char uuid[CRYPTO_UUID_LEN + 1];
    char id[sizeof(host) + sizeof(uuid) + 1];
    enum kerr rc;

    if (gethostname(host, sizeof(host) - 1) != 0 || !host[0])
        snprintf(host, sizeof(host), "localhost");
    rc = crypto_uuid4(uuid, err);
    if (rc != KERR_OK)
        return kerr_wrap(err, "leader election: identity");
    snprintf(id, sizeof(id), "%s_%s", host, uuid);
    *out = strdup(id);
    return *out ? KERR_OK : kerr_set(err, KERR_NOMEM, "leader election: out of memory");
}

static enum kerr copy_names(struct le *le, const struct le_opts *o, struct kerr_info *err)
{
    enum kerr rc = KERR_OK;

    le->ns = strdup(o->lease_namespace);
    le->name = strdup(o->lease_name);
    le->ref = buf_dupf(strlen(o->lease_namespace) + 1 + strlen(o->lease_name), "%s/%s",
                       o->lease_namespace, o->lease_name);
    if (o->identity)
        le->identity = strdup(o->identity);
    else
        rc = default_identity(&le->identity, err);
    if (rc != KERR_OK)
        return rc;
    if (!le->ns || !le->name || !le->ref || !le->identity)
        return kerr_set(err, KERR_NOMEM, "leader election: out of memory");
    return KERR_OK;
}

enum kerr le_new(struct k8s_client *client, const struct le_opts *opts, struct le **out,
                 struct kerr_info *err)
{
    long lease = opts->lease_duration_ms ? opts->lease_duration_ms : LE_DEFAULT_LEASE_DURATION_MS;
    long renew = opts->renew_deadline_ms ? opts->renew_deadline_ms : LE_DEFAULT_RENEW_DEADLINE_MS;
    long retry = opts->retry_period_ms ? opts->retry_period_ms : LE_DEFAULT_RETRY_PERIOD_MS;
    pthread_condattr_t ca;
    struct le *le;
    enum kerr rc;

    *out = NULL;
    rc = check_opts(opts, lease, renew, retry, err);
    if (rc != KERR_OK)
        return rc;
    le = calloc(1, sizeof(*le));
    if (!le)
        return kerr_set(err, KERR_NOMEM, "leader election: out of memory");
    le->client = client;
    le->lease_ns = lease * KTIME_NS_PER_MS;
    le->renew_ns = renew * KTIME_NS_PER_MS;
    le->retry_ns = retry * KTIME_NS_PER_MS;
    le->lease_s = (lease + 999) / 1000;
    le->keep_on_stop = opts->keep_on_stop != 0;
    le->started = opts->on_started_leading;
    le->stopped = opts->on_stopped_leading;
    le->new_leader = opts->on_new_leader;
    le->arg = opts->arg;
    le->clock = opts->clock ? *opts->clock : rl_real_clock;
    le->seed = (unsigned)ktime_mono_ns() ^ (unsigned)getpid();
    pthread_mutex_init(&le->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&le->cv, &ca);
    pthread_condattr_destroy(&ca);
    rc = copy_names(le, opts, err);
    if (rc != KERR_OK) {
        le_free(le);
        return rc;
    }
    *out = le;
    return KERR_OK;
}

void le_free(struct le *le)
{
    if (!le)
        return;
    le_stop(le);
    cJSON_Delete(le->lease);
    cJSON_Delete(le->observed);
    free(le->reported);
    free(le->ns);
    free(le->name);
    free(le->identity);
    free(le->ref);
    pthread_cond_destroy(&le->cv);
    pthread_mutex_destroy(&le->mu);
    free(le);
}

const char *le_identity(const struct le *le)
{
    return le->identity;
}

uint64_t le_slowpath_count(struct le *le)
{
    return atomic_load(&le->slowpath);
}

int le_is_leader(struct le *le)
{
    return atomic_load(&le->leading) && clock_now(le) - atomic_load(&le->renewed_at) < le->renew_ns;
}

/* ---- one round ---- */

static const char *observed_holder(const struct le *le)
{
    return le->observed ? kjson_get_str(le->observed, "holderIdentity") : NULL;
}

static bool observed_self(const struct le *le)
{
    const char *h = observed_holder(le);

    return h && strcmp(h, le->identity) == 0;
}

static int64_t observed_transitions(const struct le *le)
{
    int64_t n = 0;

    if (le->observed)
        (void)kjson_get_int64(le->observed, "leaseTransitions", &n);
    return n;
}

/* The observed record is valid until observed_at + its leaseDurationSeconds (client-go). */
static bool lease_valid(const struct le *le, int64_t now)
{
    int64_t d = 0;

    if (!le->observed)
        return false;
    (void)kjson_get_int64(le->observed, "leaseDurationSeconds", &d);
    return le->observed_at + d * KTIME_NS_PER_SEC > now;
}

/* Remember spec (BORROWED; NULL = empty) and note the time when it differs from the last. */
static enum kerr observe(struct le *le, const cJSON *spec, int64_t now)
{
    static const cJSON empty = { .type = cJSON_Object };
    cJSON *copy;

    if (!spec)
        spec = &empty;
    if (le->observed && cJSON_Compare(le->observed, spec, 1))
        return KERR_OK;
    copy = cJSON_Duplicate(spec, 1);
    if (!copy)
        return KERR_NOMEM;
    cJSON_Delete(le->observed);
    le->observed = copy;
    le->observed_at = now;
    return KERR_OK;
}

static enum kerr apply_record(cJSON *obj, const struct le_record *r, struct kerr_info *err)
{
    enum kerr rc;

    rc = kjson_set_str(obj, "spec.holderIdentity", r->holder, err);
    if (rc == KERR_OK)
        rc = kjson_set_int(obj, "spec.leaseDurationSeconds", r->duration_s, err);
    if (rc == KERR_OK)
        rc = kjson_set_str(obj, "spec.acquireTime", r->acquire, err);
    if (rc == KERR_OK)
        rc = kjson_set_str(obj, "spec.renewTime", r->renew, err);
    if (rc == KERR_OK)
        rc = kjson_set_int(obj, "spec.leaseTransitions", r->transitions, err);
    return rc;
}

/*
 * Write r into body (TAKES) and create or update the Lease with it. On
 * KERR_OK the answer becomes le->lease and r the observed record.
 */
static enum kerr write_lease(struct le *le, cJSON *body, const struct le_record *r, bool create,
                             int64_t now, struct kerr_info *err)
{
    struct k8s_write_opts wo = { .deadline_ms = le->deadline_ms };
    cJSON *got = NULL;
    enum kerr rc;

    if (!body) {
        rc = kerr_set(err, KERR_NOMEM, "leader election: out of memory");
        goto out;
    }
    rc = apply_record(body, r, err);
    if (rc != KERR_OK)
        goto out;
    if (create)
        rc = k8s_create(le->client, &LEASES, le->ns, body, &wo, &got, err);
    else
        rc = k8s_update(le->client, &LEASES, le->ns, le->name, body, &wo, &got, err);
    if (rc != KERR_OK)
        goto out;
    rc = observe(le, kjson_get_obj(body, "spec"), now);
    if (rc != KERR_OK) {
        rc = kerr_set(err, rc, "leader election: out of memory");
        goto out;
    }
    le->observed_at = now;
    cJSON_Delete(le->lease);
    le->lease = got;
    got = NULL;
out:
    cJSON_Delete(body);
    cJSON_Delete(got);
    return rc;
}

static void became_leader(struct le *le, int64_t now)
{
    atomic_store(&le->renewed_at, now);
    atomic_store(&le->leading, 1);
}

static cJSON *new_lease_object(const struct le *le)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *md;

    if (!o || !cJSON_AddStringToObject(o, "apiVersion", "coordination.k8s.io/v1") ||
        !cJSON_AddStringToObject(o, "kind", "Lease") ||
        !(md = cJSON_AddObjectToObject(o, "metadata")) ||
        !cJSON_AddStringToObject(md, "name", le->name) ||
        !cJSON_AddStringToObject(md, "namespace", le->ns) || !cJSON_AddObjectToObject(o, "spec")) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* A leader's optimistic renewal with the Lease it wrote last (client-go fast path). */
static enum kerr renew_fast(struct le *le, const char *ts, int64_t now, struct kerr_info *err)
{
    const char *acq = kjson_get_str(le->observed, "acquireTime");
    struct le_record r = { le->identity, le->lease_s, acq ? acq : ts, ts,
                           observed_transitions(le) };

    return write_lease(le, cJSON_Duplicate(le->lease, 1), &r, false, now, err);
}

/* Slow path on the Lease just read: give up when validly held by another, else take or renew. */
static enum kerr take_or_renew(struct le *le, const cJSON *cur, const char *ts, int64_t now,
                               enum le_round *out, struct kerr_info *err)
{
    struct le_record r = { le->identity, le->lease_s, ts, ts, 0 };
    const char *holder, *acq;
    enum kerr rc;

    if (observe(le, kjson_get_obj(cur, "spec"), now) != KERR_OK)
        return kerr_set(err, KERR_NOMEM, "leader election: out of memory");
    holder = observed_holder(le);
    if (holder && *holder && !observed_self(le) && lease_valid(le, now)) {
        atomic_store(&le->leading, 0);
        *out = LE_ROUND_HELD;
        return KERR_OK;
    }
    r.transitions = observed_transitions(le);
    if (observed_self(le)) {
        acq = kjson_get_str(le->observed, "acquireTime");
        r.acquire = acq ? acq : ts;
    } else {
        r.transitions++;
    }
    rc = write_lease(le, cJSON_Duplicate(cur, 1), &r, false, now, err);
    if (rc == KERR_OK) {
        became_leader(le, now);
        *out = LE_ROUND_LEADER;
    }
    return rc;
}

enum kerr le_try_acquire_or_renew(struct le *le, enum le_round *out, struct kerr_info *err)
{
    char ts[KTIME_MICROTIME_LEN + 1];
    int64_t now = clock_now(le);
    struct le_record r = { le->identity, le->lease_s, ts, ts, 0 };
    cJSON *cur = NULL;
    enum kerr rc;

    *out = LE_ROUND_FAILED;
    if (ktime_microtime_now(ts) != KERR_OK)
        return kerr_set(err, KERR_INTERNAL, "leader election: reading the clock");
    if (observed_self(le) && le->lease && lease_valid(le, now)) {
        if (renew_fast(le, ts, now, err) == KERR_OK) {
            became_leader(le, now);
            *out = LE_ROUND_LEADER;
            return KERR_OK;
        }
        atomic_fetch_add(&le->slowpath, 1);
        log_debug("optimistic lease renewal failed", "lease", le->ref, "error",
                  err ? err->msg : "");
    }
    rc = k8s_get_until(le->client, &LEASES, le->ns, le->name, NULL, le->deadline_ms, &cur, err);
    if (rc == KERR_NOTFOUND) {
        rc = write_lease(le, new_lease_object(le), &r, true, now, err);
        if (rc == KERR_OK) {
            became_leader(le, now);
            *out = LE_ROUND_LEADER;
        }
        return rc;
    }
    if (rc == KERR_OK)
        rc = take_or_renew(le, cur, ts, now, out, err);
    cJSON_Delete(cur);
    return rc;
}

enum kerr le_release(struct le *le, struct kerr_info *err)
{
    char ts[KTIME_MICROTIME_LEN + 1];
    struct le_record r = { "", 1, ts, ts, 0 };
    enum kerr rc;

    atomic_store(&le->leading, 0);
    if (!observed_self(le) || !le->lease)
        return KERR_OK;
    if (ktime_microtime_now(ts) != KERR_OK)
        return kerr_set(err, KERR_INTERNAL, "leader election: reading the clock");
    r.transitions = observed_transitions(le);
    rc = write_lease(le, cJSON_Duplicate(le->lease, 1), &r, false, clock_now(le), err);
    if (rc == KERR_OK)
        log_info("released leader lease", "lease", le->ref, "identity", le->identity);
    return rc;
}

/* ---- the election thread ---- */

/* Wait ns of real time or until le_stop; true when stopping. */
static bool wait_stop(struct le *le, int64_t ns)
{
    struct timespec ts = ktime_ts_of_ns(ktime_mono_ns() + ns);
    bool stop;

    pthread_mutex_lock(&le->mu);
    while (!le->stop && pthread_cond_timedwait(&le->cv, &le->mu, &ts) != ETIMEDOUT)
        ;
    stop = le->stop;
    pthread_mutex_unlock(&le->mu);
    return stop;
}

static void report_leader(struct le *le)
{
    const char *h = observed_holder(le);
    char *copy;

    if (!h || !*h || (le->reported && strcmp(le->reported, h) == 0))
        return;
    copy = strdup(h);
    if (!copy)
        return;
    free(le->reported);
    le->reported = copy;
    log_info("new leader observed", "lease", le->ref, "leader", copy);
    if (le->new_leader)
        le->new_leader(le->arg, copy);
}

/* Candidate: try every retry period with jitter. True once leading, false when stopping. */
static bool acquire(struct le *le)
{
    struct kerr_info err;
    enum le_round r;
    double j;

    log_info("attempting to acquire leader lease", "lease", le->ref, "identity", le->identity);
    for (;;) {
        kerr_clear(&err);
        (void)le_try_acquire_or_renew(le, &r, &err);
        report_leader(le);
        if (r == LE_ROUND_LEADER) {
            log_info("successfully acquired lease", "lease", le->ref, "identity", le->identity);
            return true;
        }
        if (r == LE_ROUND_FAILED)
            log_warn("error acquiring leader lease", "lease", le->ref, "error", err.msg);
        j = (double)rand_r(&le->seed) / RAND_MAX * JITTER;
        if (wait_stop(le, le->retry_ns + (int64_t)(j * (double)le->retry_ns)))
            return false;
    }
}

/*
 * One renewal round bounded by the renew deadline, as client-go runs
 * tryAcquireOrRenew under a context that ends renewDeadline after the last
 * renewal: no request of the round outlives it.
 */
static void renew_round(struct le *le, enum le_round *r, struct kerr_info *err)
{
    int64_t left_ns = atomic_load(&le->renewed_at) + le->renew_ns - clock_now(le);

    *r = LE_ROUND_FAILED;
    if (left_ns <= 0) {
        kerr_set(err, KERR_TIMEOUT, "leader election: renew deadline passed");
        return;
    }
    le->deadline_ms = ktime_mono_ms() + (left_ns + KTIME_NS_PER_MS - 1) / KTIME_NS_PER_MS;
    (void)le_try_acquire_or_renew(le, r, err);
    le->deadline_ms = 0;
}

/* Leader: renew every retry period until lost, past the deadline, or stopping. */
static void lead(struct le *le)
{
    struct kerr_info err;
    enum le_round r;
    bool stopping;

    le->started(le->arg);
    while (!(stopping = wait_stop(le, le->retry_ns))) {
        kerr_clear(&err);
        renew_round(le, &r, &err);
        report_leader(le);
        if (r == LE_ROUND_LEADER)
            continue;
        if (r == LE_ROUND_HELD) {
            log_error("leader lease taken by another holder", "lease", le->ref);
            break;
        }
        if (clock_now(le) - atomic_load(&le->renewed_at) >= le->renew_ns) {
            log_error("failed to renew leader lease within the renew deadline", "lease", le->ref,
                      "error", err.msg);
            break;
        }
        log_warn("error renewing leader lease", "lease", le->ref, "error", err.msg);
    }
    atomic_store(&le->leading, 0);
    if (stopping && !le->keep_on_stop && le_release(le, &err) != KERR_OK)
        log_warn("failed to release leader lease", "lease", le->ref, "error", err.msg);
    log_info("stopped leading", "lease", le->ref, "identity", le->identity);
    le->stopped(le->arg);
}

static bool stopping(struct le *le)
{
    bool stop;

    pthread_mutex_lock(&le->mu);
    stop = le->stop;
    pthread_mutex_unlock(&le->mu);
    return stop;
}

/* Acquire, lead until lost or stopped, then end: a lost Lease is never taken again. */
static void *run(void *p)
{
    struct le *le = p;

    if (!stopping(le) && acquire(le))
        lead(le);
    return NULL;
}

enum kerr le_start(struct le *le, struct kerr_info *err)
{
    int e;

    pthread_mutex_lock(&le->mu);
    if (le->running) {
        pthread_mutex_unlock(&le->mu);
        return kerr_set(err, KERR_INVAL, "leader election: already started");
    }
    le->stop = false;
    e = pthread_create(&le->th, NULL, run, le);
    le->running = e == 0;
    pthread_mutex_unlock(&le->mu);
    if (e != 0)
        return kerr_set(err, KERR_INTERNAL, "leader election: starting the thread failed (%d)", e);
    return KERR_OK;
}

void le_stop(struct le *le)
{
    pthread_mutex_lock(&le->mu);
    if (!le->running) {
        pthread_mutex_unlock(&le->mu);
        return;
    }
    le->stop = true;
    pthread_cond_broadcast(&le->cv);
    pthread_mutex_unlock(&le->mu);
    pthread_join(le->th, NULL);
    pthread_mutex_lock(&le->mu);
    le->running = false;
    pthread_mutex_unlock(&le->mu);
}
