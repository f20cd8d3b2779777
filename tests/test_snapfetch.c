/* snapfetch against in-memory stores: pieces handed over in order with their bytes, read in
 * parallel by the fetchers, never more than the slots held, errors handed over at their
 * piece, misses left to the caller, and a consumer that stops early stops the fetchers. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include "controller/snapshot/snapfetch.h"

#define FETCHERS 3
#define SLOTS    4
#define PIECE    1000u

/* What every store shares: reads started, in flight, released by the test. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int started, in_flight, max_in_flight, released;
    int over_window; /* a read started more than SLOTS pieces ahead of the consumer */
    int fail_at;     /* the read starting at this offset of object "bad" fails (-1: none) */
    int gather;      /* reads wait (bounded) until this many are in flight (0: none) */
} sh = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, 0, -1, 0 };

static unsigned char byte_at(const struct ostore_obj *o, int64_t off)
{
    return (unsigned char)((unsigned char)o->key[0] * 31u + (unsigned)off * 7u);
}

static enum kerr m_read(struct ostore *s, const struct ostore_obj *src, int64_t off, void *dst,
                        size_t len, struct kerr_info *err)
{
    struct timespec until;
    (void)s;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&sh.mu);
    sh.started++;
    if (sh.started - sh.released > SLOTS)
        sh.over_window = 1;
    sh.in_flight++;
    if (sh.in_flight > sh.max_in_flight)
        sh.max_in_flight = sh.in_flight;
    pthread_cond_broadcast(&sh.cv);
    while (sh.gather && sh.in_flight < sh.gather &&
           pthread_cond_timedwait(&sh.cv, &sh.mu, &until) == 0) {
    }
    sh.gather = 0; /* the first gathering is enough */
    pthread_cond_broadcast(&sh.cv);
    sh.in_flight--;
    pthread_mutex_unlock(&sh.mu);
    if (strcmp(src->key, "bad") == 0 && off == sh.fail_at)
        return kerr_set(err, KERR_HTTP, "GET %s: HTTP 500", src->key);
    for (size_t i = 0; i < len; i++)
        ((unsigned char *)dst)[i] = byte_at(src, off + (int64_t)i);
    return KERR_OK;
}

static const struct ostore_ops mem_ops = { .name = "mem", .read = m_read };
static struct ostore stores[FETCHERS];
static struct ostore *const store_v[FETCHERS] = { &stores[0], &stores[1], &stores[2] };

static char k_a[] = "a", k_b[] = "b", k_c[] = "c", k_d[] = "d", k_bad[] = "bad";
static struct ostore_obj o_a = { .key = k_a, .size = 2500 }, o_b = { .key = k_b, .size = 0 },
                         o_c = { .key = k_c, .size = 1 }, o_d = { .key = k_d, .size = 7000 },
                         o_bad = { .key = k_bad, .size = 3000 };

static void init(void)
{
    for (int i = 0; i < FETCHERS; i++)
        stores[i].ops = &mem_ops;
    sh.started = sh.in_flight = sh.max_in_flight = sh.released = sh.over_window = 0;
    sh.fail_at = -1;
    sh.gather = 0;
}

static void release(struct snapfetch *f)
{
    pthread_mutex_lock(&sh.mu);
    sh.released++;
    pthread_mutex_unlock(&sh.mu);
    snapfetch_release(f);
}

/* Take every piece of items[i] in order and check its bytes. */
static void take_all(struct snapfetch *f, size_t i, const struct ostore_obj *o)
{
    for (int64_t off = 0; o && off < o->size; off += PIECE) {
        size_t n = (size_t)(o->size - off < PIECE ? o->size - off : PIECE);
        const unsigned char *d = NULL;
        enum kerr rc = KERR_INTERNAL;
        struct kerr_info err = { 0 };
        cr_assert(snapfetch_take(f, i, off, n, &d, &rc, &err), "piece %zu@%lld", i, (long long)off);
        cr_assert_eq(rc, KERR_OK, "%s", err.msg);
        for (size_t j = 0; j < n; j++)
            cr_assert_eq(d[j], byte_at(o, off + (int64_t)j), "%s@%lld", o->key,
                         (long long)(off + (int64_t)j));
        release(f);
    }
}

Test(snapfetch, pieces_in_order_read_in_parallel_within_the_window, .init = init, .timeout = 60)
{
    const struct snapfetch_item items[] = { { &o_a }, { &o_b }, { NULL }, { &o_c }, { &o_d } };
    struct snapfetch *f = NULL;
    struct kerr_info err = { 0 };

    sh.gather = FETCHERS; /* the first reads wait until all fetchers read at once */
    cr_assert_eq(snapfetch_start(store_v, FETCHERS, items, 5, PIECE, SLOTS, &f, &err), KERR_OK);
    for (size_t i = 0; i < 5; i++)
        take_all(f, i, items[i].obj);
    snapfetch_free(f);
    cr_expect_eq(sh.started, 3 + 1 + 7, "every piece read once");
    cr_expect_eq(sh.max_in_flight, FETCHERS, "the fetchers read at the same time");
    cr_expect_eq(sh.over_window, 0, "a read started more than %d pieces ahead", SLOTS);
}

Test(snapfetch, an_error_is_the_answer_of_its_piece, .init = init, .timeout = 60)
{
    const struct snapfetch_item items[] = { { &o_a }, { &o_bad }, { &o_d } };
    struct snapfetch *f = NULL;
    struct kerr_info err = { 0 };
    const unsigned char *d = NULL;
    enum kerr rc = KERR_OK;

    sh.fail_at = 2000;
    cr_assert_eq(snapfetch_start(store_v, FETCHERS, items, 3, PIECE, SLOTS, &f, &err), KERR_OK);
    take_all(f, 0, &o_a);
    for (int64_t off = 0; off < 2000; off += PIECE) {
        cr_assert(snapfetch_take(f, 1, off, PIECE, &d, &rc, &err));
        cr_assert_eq(rc, KERR_OK);
        release(f);
    }
    cr_assert(snapfetch_take(f, 1, 2000, PIECE, &d, &rc, &err));
    cr_expect_eq(rc, KERR_HTTP);
    cr_expect_str_eq(err.msg, "GET bad: HTTP 500");
    release(f);
    /* the consumer stops here: the fetchers, waiting for slots, are stopped and joined */
    snapfetch_free(f);
    cr_expect_eq(sh.over_window, 0);
}

Test(snapfetch, misses_are_left_to_the_caller_and_skipped_objects_dropped, .init = init,
     .timeout = 60)
{
    const struct snapfetch_item items[] = { { &o_a }, { &o_c }, { &o_d } };
    struct snapfetch *f = NULL;
    struct kerr_info err = { 0 };
    const unsigned char *d = NULL;
    enum kerr rc = KERR_OK;

    cr_assert_eq(snapfetch_start(store_v, FETCHERS, items, 3, PIECE, SLOTS, &f, &err), KERR_OK);
    cr_expect_not(snapfetch_take(f, 0, 1000, PIECE, &d, &rc, &err), "not the next piece");
    cr_expect_not(snapfetch_take(f, 0, 0, 10, &d, &rc, &err), "another length");
    cr_expect_not(snapfetch_take(NULL, 0, 0, PIECE, &d, &rc, &err), "no fetcher");
    /* object 0 read again after it was taken (a second pass) is a miss */
    take_all(f, 0, &o_a);
    cr_expect_not(snapfetch_take(f, 0, 0, PIECE, &d, &rc, &err));
    /* object 1 skipped: object 2's pieces still come, in order */
    take_all(f, 2, &o_d);
    snapfetch_free(f);
    cr_expect_eq(sh.started, 3 + 1 + 7, "every piece read once");
}

Test(snapfetch, bad_arguments, .init = init, .timeout = 60)
{
    const struct snapfetch_item items[] = { { &o_a } };
    struct snapfetch *f = NULL;
    struct kerr_info err = { 0 };

    cr_expect_eq(snapfetch_start(store_v, 0, items, 1, PIECE, SLOTS, &f, &err), KERR_INVAL);
    cr_expect_eq(snapfetch_start(store_v, 1, items, 1, 0, SLOTS, &f, &err), KERR_INVAL);
    cr_expect_eq(snapfetch_start(store_v, 1, items, 1, PIECE, 0, &f, &err), KERR_INVAL);
    cr_expect_null(f);
    snapfetch_free(NULL);
}
