/* Tests of common/leader: option validation, one election round against scripted API answers
 * (tests/support/mockapi), and the election thread's renew, step-down and release. */
#include "common/leader.h"

#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/k8s.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/log.h"
#include "tests/support/fakeclock.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimcli.h"
#include "tests/support/ksimfix.h"
#include "tests/support/mockfix.h"
#include "tests/support/testutil.h"

#define LEASE_PATH  "/apis/coordination.k8s.io/v1/namespaces/ns/leases/lock"
#define LEASES_PATH "/apis/coordination.k8s.io/v1/namespaces/ns/leases"
#define NOT_FOUND                                                                                \
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"NotFound\"," \
    "\"code\":404}"
#define CONFLICT                                                                                 \
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"Conflict\"," \
    "\"code\":409}"
#define LEASE(rv, holder, transitions, renew)                                                     \
    "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":"       \
    "\"lock\",\"namespace\":\"ns\",\"resourceVersion\":\"" rv "\"},\"spec\":{\"holderIdentity\":" \
    "\"" holder "\",\"leaseDurationSeconds\":15,\"acquireTime\":\"2020-01-01T00:00:00.000000Z\"," \
    "\"renewTime\":\"" renew "\",\"leaseTransitions\":" #transitions "}}"

static struct mockapi *m;
static struct k8s_client *c;
static struct kerr_info err;

struct calls {
    atomic_int started, stopped, new_leader;
    char leader[LE_IDENTITY_MAX + 1];
};

static void on_started(void *arg)
{
    atomic_fetch_add(&((struct calls *)arg)->started, 1);
}

static void on_stopped(void *arg)
{
    atomic_fetch_add(&((struct calls *)arg)->stopped, 1);
}

static void on_new_leader(void *arg, const char *id)
{
    struct calls *k = arg;

    snprintf(k->leader, sizeof(k->leader), "%s", id);
    atomic_fetch_add(&k->new_leader, 1);
}

static void start(void)
{
    struct k8s_client_opts o = { .request_timeout_ms = 3000 };

    log_set_level(LOG_ERROR);
    mockfix_start(&m, &c, NULL, &o);
}

static void stop(void)
{
    mockfix_stop(m, c);
}

static struct le_opts base_opts(struct calls *k)
{
    struct le_opts o = { .lease_namespace = "ns",
                         .lease_name = "lock",
                         .identity = "me",
                         .on_started_leading = on_started,
                         .on_stopped_leading = on_stopped,
                         .on_new_leader = on_new_leader,
                         .arg = k };

    return o;
}

static struct le *new_le(const struct le_opts *o)
{
    struct le *le = NULL;

    cr_assert_eq(le_new(c, o, &le, &err), KERR_OK, "%s", err.msg);
    return le;
}

/* One election round of le that works (KERR_OK); its outcome. */
static enum le_round round_ok(struct le *le)
{
    enum le_round r = LE_ROUND_FAILED;

    cr_assert_eq(le_try_acquire_or_renew(le, &r, &err), KERR_OK, "%s", err.msg);
    return r;
}

/* A fake clock at 1 s and the rl_clock on it. */
struct fake {
    struct fakeclock fc;
    struct rl_clock clock;
};

/* An elector with the base options (calls into k) on the fake clock f. */
static struct le *new_le_faked(struct fake *f, struct calls *k)
{
    struct le_opts o = base_opts(k);

    f->clock = fakeclock_init(&f->fc, 1000000000LL);
    o.clock = &f->clock;
    return new_le(&o);
}

/* An elector with a 1 s lease, a 400 ms renew deadline and 50 ms retries (calls into k),
 * scripted to find no lease and create it. */
/* An elector whose first round takes the lease (GET 404, POST 201), with the timing given. */
static struct le *new_le_timed(struct calls *k, long lease_ms, long renew_ms)
{
    struct le_opts o = base_opts(k);
    struct le *le;

    o.lease_duration_ms = lease_ms;
    o.renew_deadline_ms = renew_ms;
    o.retry_period_ms = 50;
    le = new_le(&o);
    mockapi_expect(m, "GET", LEASE_PATH, 404, NOT_FOUND);
    mockapi_expect(m, "POST", LEASES_PATH, 201, LEASE("1", "me", 0, "2030-01-01T00:00:00.000000Z"));
    return le;
}

static struct le *new_le_fast(struct calls *k)
{
    return new_le_timed(k, 1000, 400);
}

struct vcase {
    long lease, renew, retry;
    int no_identity, empty_identity, no_name, no_callback;
    enum kerr want;
    char words[32];
};

Test(leader, options_are_validated_like_client_go, .init = start, .fini = stop)
{
    static const struct vcase cases[] = {
        { 0, 0, 0, 0, 0, 0, 0, KERR_OK, "" },
        { 15000, 10000, 2000, 0, 0, 0, 0, KERR_OK, "" },
        { 2000, 1201, 1000, 0, 0, 0, 0, KERR_OK, "" },
        { 10000, 10000, 2000, 0, 0, 0, 0, KERR_INVAL, "greater than renewDeadline" },
        { 5000, 10000, 2000, 0, 0, 0, 0, KERR_INVAL, "greater than renewDeadline" },
        { 2000, 1200, 1000, 0, 0, 0, 0, KERR_INVAL, "retryPeriod*JitterFactor" },
        { -1, 0, 0, 0, 0, 0, 0, KERR_INVAL, "greater than zero" },
        { 0, -5, 0, 0, 0, 0, 0, KERR_INVAL, "greater than zero" },
        { 0, 0, -2, 0, 0, 0, 0, KERR_INVAL, "greater than zero" },
        { 0, 0, 0, 0, 1, 0, 0, KERR_INVAL, "identity is empty" },
        { 0, 0, 0, 0, 0, 1, 0, KERR_INVAL, "name and namespace" },
        { 0, 0, 0, 0, 0, 0, 1, KERR_INVAL, "on_started_leading" },
        { 0, 0, 0, 1, 0, 0, 0, KERR_OK, "" },
    };
    struct calls k = { 0 };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct vcase *v = &cases[i];
        struct le_opts o = base_opts(&k);
        struct le *le = NULL;
        enum kerr rc;

        o.lease_duration_ms = v->lease;
        o.renew_deadline_ms = v->renew;
        o.retry_period_ms = v->retry;
        o.identity = v->no_identity ? NULL : v->empty_identity ? "" : "me";
        o.lease_name = v->no_name ? NULL : "lock";
        o.on_started_leading = v->no_callback ? NULL : on_started;
        kerr_clear(&err);
        rc = le_new(c, &o, &le, &err);
        cr_expect_eq(rc, v->want, "case %zu: got %s (%s)", i, kerr_name(rc), err.msg);
        if (v->want != KERR_OK) {
            cr_expect_null(le, "case %zu", i);
            cr_expect_not_null(strstr(err.msg, v->words), "case %zu: message '%s'", i, err.msg);
        }
        le_free(le);
    }
}

Test(leader, default_identity_is_hostname_and_uuid, .init = start, .fini = stop)
{
    struct calls k = { 0 };
    struct le_opts o = base_opts(&k);
    char host[256] = "", want[300];
    struct le *a, *b;

    o.identity = NULL;
    a = new_le(&o);
    b = new_le(&o);
    cr_assert_eq(gethostname(host, sizeof(host) - 1), 0);
    snprintf(want, sizeof(want), "%s_", host);
    cr_assert_eq(strncmp(le_identity(a), want, strlen(want)), 0, "%s", le_identity(a));
    cr_assert_eq(strlen(le_identity(a)), strlen(want) + 36, "%s", le_identity(a));
    cr_assert_str_neq(le_identity(a), le_identity(b), "identities must be unique");
    le_free(a);
    le_free(b);
}

/* Script: Lease absent -> create it; return the new elector, leader after one round. */
static struct le *acquire_absent(struct calls *k, const struct le_opts *o)
{
    struct le *le = new_le(o);

    mockapi_expect(m, "GET", LEASE_PATH, 404, NOT_FOUND);
    mockapi_expect(m, "POST", LEASES_PATH, 201, LEASE("1", "me", 0, "2030-01-01T00:00:00.000000Z"));
    cr_assert_eq(round_ok(le), LE_ROUND_LEADER);
    (void)k;
    return le;
}

Test(leader, acquire_creates_the_lease_when_absent, .init = start, .fini = stop)
{
    struct calls k = { 0 };
    struct le_opts o = base_opts(&k);
    struct le *le = acquire_absent(&k, &o);
    cJSON *body = mockfix_body(m, 1, "POST", LEASES_PATH);

    cr_assert(le_is_leader(le));
    cr_assert_str_eq(kjson_get_str(body, "apiVersion"), "coordination.k8s.io/v1");
    cr_assert_str_eq(kjson_get_str(body, "kind"), "Lease");
    cr_assert_str_eq(kjson_get_str(body, "metadata.name"), "lock");
    cr_assert_str_eq(kjson_get_str(body, "metadata.namespace"), "ns");
    cr_assert_str_eq(kjson_get_str(body, "spec.holderIdentity"), "me");
    cr_assert_eq(jsonfix_int_at(body, "spec.leaseDurationSeconds"), 15);
    cr_assert_eq(jsonfix_int_at(body, "spec.leaseTransitions"), 0);
    jsonfix_assert_microtime(kjson_get_str(body, "spec.acquireTime"));
    jsonfix_assert_microtime(kjson_get_str(body, "spec.renewTime"));
    cr_assert_eq(mockapi_unexpected(m), 0);
    cJSON_Delete(body);
    le_free(le);
}

Test(leader, leader_renews_with_the_last_resource_version, .init = start, .fini = stop)
{
    struct calls k = { 0 };
    struct le_opts o = base_opts(&k);
    struct le *le = acquire_absent(&k, &o);
    cJSON *created = mockfix_body(m, 1, "POST", LEASES_PATH), *renewed;

    mockapi_expect(m, "PUT", LEASE_PATH, 200, LEASE("2", "me", 0, "2030-01-01T00:00:01.000000Z"));
    cr_assert_eq(round_ok(le), LE_ROUND_LEADER);
    cr_assert_eq(mockapi_request_count(m), 3, "a leader renews without a GET");
    renewed = mockfix_body(m, 2, "PUT", LEASE_PATH);
    cr_assert_str_eq(kjson_get_str(renewed, "metadata.resourceVersion"), "1");
    cr_assert_str_eq(kjson_get_str(renewed, "spec.holderIdentity"), "me");
    cr_assert_str_eq(kjson_get_str(renewed, "spec.acquireTime"),
                     kjson_get_str(created, "spec.acquireTime"), "a renewal keeps acquireTime");
    cr_assert_eq(jsonfix_int_at(renewed, "spec.leaseTransitions"), 0);
    jsonfix_assert_microtime(kjson_get_str(renewed, "spec.renewTime"));
    cr_assert(le_is_leader(le));
    cr_assert_eq(le_slowpath_count(le), 0);
    cJSON_Delete(created);
    cJSON_Delete(renewed);
    le_free(le);
}

Test(leader, failed_optimistic_renewal_falls_back_to_get, .init = start, .fini = stop)
{
    struct calls k = { 0 };
    struct le_opts o = base_opts(&k);
    struct le *le = acquire_absent(&k, &o);
    cJSON *put;

    mockapi_expect(m, "PUT", LEASE_PATH, 409, CONFLICT);
    mockapi_expect(m, "GET", LEASE_PATH, 200, LEASE("5", "me", 0, "2030-01-01T00:00:01.000000Z"));
    mockapi_expect(m, "PUT", LEASE_PATH, 200, LEASE("6", "me", 0, "2030-01-01T00:00:02.000000Z"));
    cr_assert_eq(round_ok(le), LE_ROUND_LEADER);
    cr_assert_eq(le_slowpath_count(le), 1);
    put = mockfix_body(m, 4, "PUT", LEASE_PATH);
    cr_assert_str_eq(kjson_get_str(put, "metadata.resourceVersion"), "5");
    cr_assert_eq(jsonfix_int_at(put, "spec.leaseTransitions"), 0, "renewing is not a transition");
    cJSON_Delete(put);
    le_free(le);
}

Test(leader, lease_held_by_another_is_respected, .init = start, .fini = stop)
{
    struct calls k = { 0 };
    struct le_opts o = base_opts(&k);
    struct le *le = new_le(&o);

    /* renewTime years ago: only the local observation time counts, so it is still held */
    mockapi_expect(m, "GET", LEASE_PATH, 200,
                   LEASE("7", "other", 3, "2001-01-01T00:00:00.000000Z"));
    cr_assert_eq(round_ok(le), LE_ROUND_HELD);
    cr_assert_not(le_is_leader(le));
    cr_assert_eq(mockapi_request_count(m), 1, "no write to a held lease");
    le_free(le);
}

Test(leader, expired_lease_is_taken_over, .init = start, .fini = stop)
{
    struct fake f;
    struct calls k = { 0 };
    struct le *le = new_le_faked(&f, &k);
    cJSON *put;

    mockapi_add(
        m, &(struct mockapi_spec){ .method = "GET",
                                   .target = LEASE_PATH,
                                   .body = LEASE("7", "other", 3, "2030-01-01T00:00:00.000000Z"),
                                   .times = 3 });
    cr_assert_eq(round_ok(le), LE_ROUND_HELD);
    fakeclock_advance(&f.fc, 14LL * 1000000000LL);
    cr_assert_eq(round_ok(le), LE_ROUND_HELD,
                 "15 s have not passed since the record was first seen");
    fakeclock_advance(&f.fc, 2LL * 1000000000LL);
    mockapi_expect(m, "PUT", LEASE_PATH, 200, LEASE("8", "me", 4, "2030-01-01T00:00:00.000000Z"));
    cr_assert_eq(round_ok(le), LE_ROUND_LEADER);
    cr_assert(le_is_leader(le));
    put = mockfix_body(m, 3, "PUT", LEASE_PATH);
    cr_assert_str_eq(kjson_get_str(put, "metadata.resourceVersion"), "7");
    cr_assert_str_eq(kjson_get_str(put, "spec.holderIdentity"), "me");
    cr_assert_eq(jsonfix_int_at(put, "spec.leaseTransitions"), 4);
    cr_assert_str_neq(kjson_get_str(put, "spec.acquireTime"), "2020-01-01T00:00:00.000000Z",
                      "a takeover sets a new acquireTime");
    jsonfix_assert_microtime(kjson_get_str(put, "spec.acquireTime"));
    cJSON_Delete(put);
    le_free(le);
}

Test(leader, a_changing_record_keeps_the_lease_valid, .init = start, .fini = stop)
{
    struct fake f;
    struct calls k = { 0 };
    struct le *le = new_le_faked(&f, &k);

    mockapi_expect(m, "GET", LEASE_PATH, 200,
                   LEASE("7", "other", 3, "2030-01-01T00:00:00.000000Z"));
    round_ok(le);
    fakeclock_advance(&f.fc, 10LL * 1000000000LL);
    mockapi_expect(m, "GET", LEASE_PATH, 200,
                   LEASE("9", "other", 3, "2030-01-01T00:00:10.000000Z"));
    round_ok(le);
    fakeclock_advance(&f.fc, 10LL * 1000000000LL);
    mockapi_expect(m, "GET", LEASE_PATH, 200,
                   LEASE("9", "other", 3, "2030-01-01T00:00:10.000000Z"));
    cr_assert_eq(round_ok(le), LE_ROUND_HELD,
                 "the holder renewed 10 s ago (local time): still valid");
    cr_assert_eq(mockapi_unexpected(m), 0);
    le_free(le);
}

Test(leader, conflict_on_update_loses_the_round, .init = start, .fini = stop)
{
    struct calls k = { 0 };
    struct le_opts o = base_opts(&k);
    struct le *le = new_le(&o);
    enum le_round r;

    mockapi_expect(m, "GET", LEASE_PATH, 200, LEASE("3", "", 2, "2030-01-01T00:00:00.000000Z"));
    mockapi_expect(m, "PUT", LEASE_PATH, 409, CONFLICT);
    cr_assert_eq(le_try_acquire_or_renew(le, &r, &err), KERR_CONFLICT);
    cr_assert_eq(r, LE_ROUND_FAILED);
    cr_assert_not(le_is_leader(le));
    cr_assert_eq(mockapi_request_count(m), 2, "a released lease is tried at once");
    le_free(le);
}

Test(leader, failing_renewals_step_down_after_the_deadline, .init = start, .fini = stop)
{
    struct calls k = { 0 };
    struct timespec t0, t1;
    struct le *le;
    long ms;

    le = new_le_fast(&k);
    mockapi_add(m, &(struct mockapi_spec){ .target = LEASE_PATH, .status = 500, .times = -1 });
    cr_assert_eq(le_start(le, &err), KERR_OK, "%s", err.msg);
    cr_assert(testutil_await_count(&k.started, 1, 30000), "never became leader");
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_assert(testutil_await_count(&k.stopped, 1, 30000), "did not step down");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    cr_assert(ms >= 300, "stepped down after %ld ms, before the renew deadline", ms);
    cr_assert_not(le_is_leader(le));
    cr_assert_str_eq(k.leader, "me");
    le_stop(le);
    cr_assert_eq(atomic_load(&k.started), 1);
    cr_assert_eq(atomic_load(&k.stopped), 1, "on_stopped_leading once");
    le_free(le);
}

/* Renewals that hang for 20 s each (a slow API server): the round is cut at the renew deadline
 * (400 ms), not after two requests of the client's timeout; then the elector never
 * campaigns again. */
Test(leader, a_renewal_round_ends_at_the_renew_deadline, .init = start, .fini = stop)
{
    struct calls k = { 0 };
    struct timespec t0, t1;
    struct le *le;
    size_t n;
    long ms;

    le = new_le_fast(&k);
    mockapi_add(m, &(struct mockapi_spec){
                       .target = LEASE_PATH, .status = 500, .delay_ms = 20000, .times = -1 });
    cr_assert_eq(le_start(le, &err), KERR_OK, "%s", err.msg);
    cr_assert(testutil_await_count(&k.started, 1, 30000), "never became leader");
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_assert(testutil_await_count(&k.stopped, 1, 15000), "did not step down");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    /* a round waiting for the answers would take 20 s or more */
    cr_assert(ms < 10000, "stepped down %ld ms after leading; the renew deadline is 400 ms", ms);
    n = mockapi_request_count(m);
    usleep(300 * 1000); /* six retry periods: a candidate would have asked again */
    cr_assert_eq(mockapi_request_count(m), n, "the elector campaigned again after losing");
    le_stop(le);
    cr_assert_eq(atomic_load(&k.started), 1);
    cr_assert_eq(atomic_load(&k.stopped), 1);
    le_free(le);
}

Test(leader, stop_releases_the_lease, .init = start, .fini = stop)
{
    struct calls k = { 0 };
    size_t n;
    struct le *le;
    cJSON *rel;

    /* renewals every 50 ms, each allowed 10 s: one slowed by a loaded machine does not end
     * the leadership before the stop this test is about */
    le = new_le_timed(&k, 15000, 10000);
    mockapi_add(m,
                &(struct mockapi_spec){ .method = "PUT",
                                        .target = LEASE_PATH,
                                        .body = LEASE("2", "me", 0, "2030-01-01T00:00:00.000000Z"),
                                        .times = -1 });
    cr_assert_eq(le_start(le, &err), KERR_OK, "%s", err.msg);
    cr_assert(testutil_await_count(&k.started, 1, 30000));
    cr_assert_eq(mockapi_wait_requests(m, 4, 30000), 0, "no renewal seen");
    cr_assert(le_is_leader(le));
    cr_assert_eq(atomic_load(&k.new_leader), 1);
    cr_assert_str_eq(k.leader, "me");
    le_stop(le);
    cr_assert_eq(atomic_load(&k.stopped), 1);
    cr_assert_not(le_is_leader(le));
    n = mockapi_request_count(m);
    rel = mockfix_body(m, n - 1, "PUT", LEASE_PATH);
    cr_assert_str_eq(kjson_get_str(rel, "spec.holderIdentity"), "");
    cr_assert_eq(jsonfix_int_at(rel, "spec.leaseDurationSeconds"), 1);
    cr_assert_eq(jsonfix_int_at(rel, "spec.leaseTransitions"), 0);
    cr_assert_str_eq(kjson_get_str(rel, "metadata.resourceVersion"), "2");
    cJSON_Delete(rel);
    le_free(le);
    cr_assert_eq(mockapi_request_count(m), n, "nothing after the release");
}

/* Against kube-sim (a stateful API server): two candidates, one leader, handover on release. */

static const struct k8s_resource LEASE_RES = { "coordination.k8s.io", "v1", "leases", 1 };

Test(leader, two_candidates_hand_over_on_release, .timeout = 60)
{
    struct ksim_harness *h;
    struct k8s_client *kc;
    struct calls ka = { 0 }, kb = { 0 };
    struct le_opts o = base_opts(&ka);
    struct le *a, *b;
    long long t0, took;
    cJSON *lease = NULL;
    int64_t transitions = -1;

    log_set_level(LOG_ERROR);
    h = ksimfix_start(NULL);
    kc = ksimcli_admin(h);
    o.lease_namespace = "default";
    o.lease_duration_ms = 4000;
    o.renew_deadline_ms = 3000;
    o.retry_period_ms = 100;
    o.identity = "a";
    cr_assert_eq(le_new(kc, &o, &a, &err), KERR_OK, "%s", err.msg);
    o.identity = "b";
    o.arg = &kb;
    cr_assert_eq(le_new(kc, &o, &b, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(le_start(a, &err), KERR_OK);
    cr_assert(testutil_await_count(&ka.started, 1, 10000), "a never led");
    cr_assert_eq(le_start(b, &err), KERR_OK);
    cr_assert(testutil_await_count(&kb.new_leader, 1, 10000), "b never saw the leader");
    cr_assert_str_eq(kb.leader, "a");
    cr_assert_eq(atomic_load(&kb.started), 0, "two leaders at once");
    cr_assert(le_is_leader(a));
    cr_assert_not(le_is_leader(b));
    t0 = ktime_mono_ms();
    le_stop(a);
    cr_assert(testutil_await_count(&kb.started, 1, 10000), "b never took over");
    took = ktime_mono_ms() - t0;
    cr_assert(took < 3000, "takeover after %lld ms: the release was not seen", took);
    cr_assert_eq(atomic_load(&ka.stopped), 1);
    cr_assert_str_eq(kb.leader, "b");
    cr_assert_eq(k8s_get(kc, &LEASE_RES, "default", "lock", NULL, &lease, &err), KERR_OK);
    cr_assert_str_eq(kjson_get_str(lease, "spec.holderIdentity"), "b");
    cr_assert_eq(kjson_get_int64(lease, "spec.leaseTransitions", &transitions), KERR_OK);
    cr_assert_eq(transitions, 1, "created by a (0), taken by b (1)");
    cJSON_Delete(lease);
    le_free(b);
    le_free(a);
    k8s_client_free(kc);
    ksim_harness_stop(h);
}
