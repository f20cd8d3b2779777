#include "controller/snapshot/snapreplay.h"

#include <criterion/criterion.h>
#include <string.h>

struct ev {
    int type;
    const char *key;
    int64_t mod;
};

static struct snapkeys *keys_of(const char *const *k, size_t n)
{
    struct snapkeys *s = NULL;
    unsigned char h[SNAPKEYS_HASH_LEN];
    cr_assert_eq(snapkeys_new(100, &s, NULL), KERR_OK);
    for (size_t i = 0; i < n; i++) {
        snapkeys_hash(s, k[i], strlen(k[i]), h);
        cr_assert_eq(snapkeys_add(s, h, NULL), KERR_OK);
    }
    return s;
}

/* One delta through r; the result of snapreplay_end. */
static enum kerr delta(struct snapreplay *r, bool first, const struct ev *e, size_t n, int64_t last,
                       struct kerr_info *err)
{
    bool again = false;
    enum kerr rc = KERR_OK;
    for (int pass = 0; pass < 2; pass++) {
        snapreplay_begin(r, first, pass == 1);
        for (size_t i = 0; rc == KERR_OK && i < n; i++) {
            struct snapdelta_event ev = { .type = e[i].type,
                                          .key = (const unsigned char *)e[i].key,
                                          .klen = strlen(e[i].key),
                                          .mod_revision = e[i].mod,
                                          .index = (int64_t)i };
            rc = snapreplay_event(r, &ev, err);
        }
        rc = rc ? rc : snapreplay_end(r, last, &again, err);
        if (rc != KERR_OK || !again)
            return rc;
    }
    cr_assert_fail("asked for a third reading");
    return rc;
}

Test(snapreplay, puts_deletes_and_transactions_count_as_etcd_does)
{
    static const char *const base[] = { "/a", "/b" };
    struct snapkeys *k = keys_of(base, 2);
    struct snapreplay r;
    struct kerr_info err = { 0 };
    snapreplay_init(&r, k, 10);
    /* the first delta overlaps the full snapshot by two revisions (etcd#9037) */
    struct ev d1[] = { { 0, "/a", 9 },  { 0, "/b", 10 }, { 0, "/c", 11 },
                       { 0, "/d", 12 }, { 0, "/e", 12 }, { 1, "/a", 12 } };
    cr_assert_eq(delta(&r, true, d1, 6, 12, &err), KERR_OK, "%s", err.msg);
    cr_expect_eq(snapkeys_count(k), 4); /* b c d e */
    /* a delete of a missing key changes nothing: no revision */
    struct ev d2[] = { { 1, "/zz", 13 }, { 0, "/f", 14 } };
    cr_expect_eq(delta(&r, false, d2, 2, 14, &err), KERR_PARSE);
    cr_expect(strstr(err.msg, "at revision 13 after it, its name says 14") != NULL, "%s", err.msg);
    snapreplay_release(&r);
    snapkeys_free(k);
}

Test(snapreplay, first_delta_all_at_or_below_the_full_revision_is_applied_whole)
{
    struct snapkeys *k = keys_of(NULL, 0);
    struct snapreplay r;
    struct kerr_info err = { 0 };
    snapreplay_init(&r, k, 10);
    struct ev d1[] = { { 0, "/a", 9 }, { 0, "/b", 10 } };
    /* the restorer's index stays 0: both applied again, revision 12 */
    cr_expect_eq(delta(&r, true, d1, 2, 12, &err), KERR_OK, "%s", err.msg);
    cr_expect_eq(r.rev, 12);
    cr_expect_eq(snapkeys_count(k), 2);
    snapreplay_release(&r);
    snapkeys_free(k);
}

Test(snapreplay, gap_overlap_and_duplicates_fail)
{
    struct snapkeys *k = keys_of(NULL, 0);
    struct snapreplay r;
    struct kerr_info err = { 0 };
    snapreplay_init(&r, k, 10);
    struct ev gap[] = { { 0, "/a", 15 }, { 0, "/b", 16 } };
    cr_expect_eq(delta(&r, true, gap, 2, 16, &err), KERR_PARSE);
    cr_expect(strstr(err.msg, "a gap") != NULL, "%s", err.msg);

    snapreplay_release(&r);
    snapreplay_init(&r, k, 10);
    struct ev ok[] = { { 0, "/a", 11 }, { 0, "/b", 12 } };
    cr_expect_eq(delta(&r, true, ok, 2, 12, &err), KERR_OK, "%s", err.msg);
    cr_expect_eq(delta(&r, false, ok, 2, 12, &err), KERR_PARSE);
    cr_expect(strstr(err.msg, "an overlap") != NULL, "%s", err.msg);

    snapreplay_release(&r);
    snapreplay_init(&r, k, 12);
    struct ev dup[] = { { 0, "/a", 13 }, { 1, "/a", 13 } };
    cr_expect_eq(delta(&r, false, dup, 2, 13, &err), KERR_PARSE);
    cr_expect(strstr(err.msg, "duplicate key") != NULL, "%s", err.msg);

    snapreplay_release(&r);
    snapreplay_init(&r, k, 12);
    struct ev dels[] = { { 1, "/a", 13 }, { 1, "/a", 13 } }; /* two deletes: allowed */
    cr_expect_eq(delta(&r, false, dels, 2, 13, &err), KERR_OK, "%s", err.msg);

    struct ev bad[] = { { 2, "/a", 14 } };
    cr_expect_eq(delta(&r, false, bad, 1, 14, &err), KERR_PARSE);
    cr_expect(strstr(err.msg, "unexpected event type") != NULL, "%s", err.msg);
    struct ev empty[] = { { 0, "", 14 } };
    cr_expect_eq(delta(&r, false, empty, 1, 14, &err), KERR_PARSE);
    cr_expect(strstr(err.msg, "key is not provided") != NULL, "%s", err.msg);
    snapreplay_release(&r);
    snapkeys_free(k);
}

Test(snapreplay, an_event_going_back_joins_the_current_transaction)
{
    struct snapkeys *k = keys_of(NULL, 0);
    struct snapreplay r;
    struct kerr_info err = { 0 };
    snapreplay_init(&r, k, 10);
    /* 11, 13, 12: the restorer commits at 13 (above 11), then 12 joins 13's group */
    struct ev d[] = { { 0, "/a", 11 }, { 0, "/b", 13 }, { 0, "/c", 12 } };
    cr_expect_eq(delta(&r, false, d, 3, 13, &err), KERR_PARSE);
    cr_expect_eq(r.rev, 12);
    snapreplay_release(&r);
    snapkeys_free(k);
}
