/*
 * webhook/wh_conns: which connections warden-webhook drops when its connection limit is near:
 * the least recently active of those without a request in progress, never one with a request
 * in progress, never the one just opened (issue 30; e2e attack12_conn_flood).
 */
#include "webhook/wh_conns.h"

#include <criterion/criterion.h>
#include <string.h>

struct rec {
    int fds[64];
    int n;
};

static void record(void *ctx, int fd)
{
    struct rec *r = ctx;

    if (r->n < 64)
        r->fds[r->n++] = fd;
}

/* A table of limit 10 with a reserve of 2: at most 8 open before one is dropped. */
static struct wh_conns *table(struct rec *r)
{
    struct wh_conns_opts o = { 10, 2, record, r };
    struct wh_conns *t = NULL;
    struct kerr_info err;

    memset(r, 0, sizeof(*r));
    cr_assert_eq(wh_conns_new(&o, &t, &err), KERR_OK, "%s", err.msg);
    return t;
}

Test(wh_conns, the_least_recently_active_idle_connections_go_first)
{
    struct wh_conns_stats st;
    struct rec r;
    struct wh_conns *t = table(&r);
    int fd;

    for (fd = 100; fd < 108; fd++)
        cr_assert_eq(wh_conns_open(t, fd), 0, "room for 8");
    /* 100 serves a request and completes it: now the most recently active */
    cr_assert_eq(wh_conns_busy(t, 100), 1, "its first request");
    wh_conns_idle(t, 100);
    cr_assert_eq(wh_conns_busy(t, 100), 0, "a later request is not the first");
    wh_conns_idle(t, 100);
    cr_assert_eq(wh_conns_open(t, 108), 1);
    cr_assert_eq(wh_conns_open(t, 109), 1);
    cr_assert_eq(r.n, 2);
    cr_expect_eq(r.fds[0], 101, "the oldest idle one, not 100 that served lately");
    cr_expect_eq(r.fds[1], 102);
    wh_conns_stats(t, &st);
    cr_expect_eq(st.open, 8);
    cr_expect_eq(st.dropped, 2);
    /* a dropped connection's request and close notices are no-ops until it is gone */
    cr_expect_eq(wh_conns_busy(t, 101), 0);
    wh_conns_close(t, 101);
    wh_conns_close(t, 102);
    wh_conns_stats(t, &st);
    cr_expect_eq(st.open, 8);
    wh_conns_free(t);
}

Test(wh_conns, a_connection_with_a_request_in_progress_is_never_dropped)
{
    struct wh_conns_stats st;
    struct rec r;
    struct wh_conns *t = table(&r);
    int fd;

    for (fd = 3; fd < 10; fd++) {
        cr_assert_eq(wh_conns_open(t, fd), 0);
        wh_conns_busy(t, fd);
    }
    cr_assert_eq(wh_conns_open(t, 10), 0);
    /* 8 open, 7 busy: the 9th and 10th find only the idle 10 and 11 to drop, never themselves */
    cr_assert_eq(wh_conns_open(t, 11), 1);
    cr_expect_eq(r.fds[0], 10);
    cr_assert_eq(wh_conns_open(t, 12), 1);
    cr_expect_eq(r.fds[1], 11);
    wh_conns_busy(t, 12);
    cr_assert_eq(wh_conns_open(t, 13), 0, "only busy ones are left: nothing to drop");
    wh_conns_stats(t, &st);
    cr_expect_eq(st.open, 9);
    cr_expect_eq(st.busy, 8);
    /* a completed request makes its connection a candidate again, the most recent one */
    wh_conns_idle(t, 3);
    cr_assert_eq(wh_conns_open(t, 14), 2);
    cr_expect_eq(r.fds[2], 13);
    cr_expect_eq(r.fds[3], 3);
    for (fd = 3; fd < 15; fd++)
        wh_conns_close(t, fd);
    wh_conns_stats(t, &st);
    cr_expect_eq(st.open, 0);
    cr_expect_eq(st.busy, 0);
    wh_conns_free(t);
}

Test(wh_conns, a_flood_of_idle_connections_leaves_room_for_a_new_one)
{
    struct wh_conns_opts o = { 1000, 0, record, NULL };
    struct wh_conns_stats st;
    struct wh_conns *t = NULL;
    struct kerr_info err;
    struct rec r;
    int fd;

    memset(&r, 0, sizeof(r));
    o.drop_ctx = &r;
    cr_assert_eq(wh_conns_new(&o, &t, &err), KERR_OK);
    /* 1250 idle connections, each dropped one closed at once, as libmicrohttpd does */
    for (fd = 5; fd < 1255; fd++) {
        wh_conns_open(t, fd);
        while (r.n > 0)
            wh_conns_close(t, r.fds[--r.n]);
    }
    wh_conns_stats(t, &st);
    cr_expect_eq(st.open, 1000 - 1000 / 16, "the reserve (limit / 16) stays free");
    cr_expect_eq(st.dropped, 1250 - st.open);
    /* the API server's connection: opened, then its request in progress */
    wh_conns_open(t, 2000);
    while (r.n > 0)
        wh_conns_close(t, r.fds[--r.n]);
    cr_expect_eq(wh_conns_busy(t, 2000), 1);
    for (fd = 3000; fd < 4000; fd++) {
        wh_conns_open(t, fd);
        while (r.n > 0) {
            cr_assert_neq(r.fds[r.n - 1], 2000, "the busy connection is never dropped");
            wh_conns_close(t, r.fds[--r.n]);
        }
    }
    wh_conns_free(t);
}

Test(wh_conns, an_untrackable_socket_is_the_callers_to_drop)
{
    struct rec r;
    struct wh_conns *t = table(&r);
    struct wh_conns_opts o = { 0, 0, NULL, NULL };
    struct wh_conns *none = NULL;
    struct kerr_info err;

    cr_expect_eq(wh_conns_open(t, -1), -1);
    cr_expect_eq(wh_conns_busy(t, 12345), 0, "unknown");
    wh_conns_idle(t, 12345);
    wh_conns_close(t, 12345);
    cr_expect_eq(wh_conns_new(&o, &none, &err), KERR_INVAL, "no limit");
    wh_conns_free(t);
    wh_conns_free(NULL);
}
