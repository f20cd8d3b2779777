/* Tests of common/itab: the string-keyed hash table with secondary indexes under the store. */
#include "common/itab.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tests/support/itabfix.h"

/* A new entry under key with up to two values for index 0 and one for index 1 (NULL: none). */
static struct itab_entry *entry(const char *key, const char *v0, const char *v0b, const char *v1)
{
    struct itab_value vals[3];
    struct itab_entry *e = NULL;
    size_t n = 0;

    if (v0)
        vals[n++] = (struct itab_value){ 0, v0 };
    if (v0b)
        vals[n++] = (struct itab_value){ 0, v0b };
    if (v1)
        vals[n++] = (struct itab_value){ 1, v1 };
    cr_assert_eq(itab_entry_new(key, vals, n, &e), KERR_OK);
    cr_assert_str_eq(e->key, key);
    cr_assert_null(e->data);
    return e;
}

static void count_free(void *arg, void *data)
{
    (void)data;
    (*(int *)arg)++;
}

static void two_indexes(struct itab *t)
{
    cr_assert_eq(itab_init(t), KERR_OK);
    cr_assert_eq(itab_add_index(t, "ns"), KERR_OK);
    cr_assert_eq(itab_add_index(t, "owner"), KERR_OK);
}

Test(itab, put_get_del)
{
    struct itab t;
    struct itab_entry *a = entry("ns/a", NULL, NULL, NULL), *a2 = entry("ns/a", NULL, NULL, NULL);
    int frees = 0;

    cr_assert_eq(itab_init(&t), KERR_OK);
    cr_assert_null(itab_put(&t, a));
    cr_assert_null(itab_put(&t, entry("ns/b", NULL, NULL, NULL)));
    cr_assert_eq(t.count, 2);
    cr_assert_eq(itab_get(&t, "ns/a"), a);
    cr_assert_null(itab_get(&t, "ns/c"));
    cr_assert_eq(itab_put(&t, a2), a, "a put under a taken key returns the old entry");
    itab_entry_free(a);
    cr_assert_eq(itab_get(&t, "ns/a"), a2);
    cr_assert_eq(t.count, 2);
    cr_assert_eq(itab_del(&t, "ns/a"), a2);
    cr_assert_null(itab_del(&t, "ns/a"));
    cr_assert_eq(t.count, 1);
    itab_entry_free(a2);
    itab_entry_free(NULL);
    itab_release(&t, count_free, &frees);
    cr_assert_eq(frees, 1, "free_data runs for each entry still in the table");
    itab_release(&t, count_free, &frees);
    cr_assert_eq(frees, 1);
}

Test(itab, indexes_follow_puts_and_deletes)
{
    struct itab t;
    struct itab_entry *e;

    two_indexes(&t);
    cr_assert_eq(itab_add_index(&t, "ns"), KERR_INVAL, "names are unique");
    cr_assert_eq(itab_index_of(&t, "owner"), 1);
    cr_assert_eq(itab_index_of(&t, "nope"), -1);
    cr_assert_null(itab_put(&t, entry("x/a", "x", "x", "u1")));
    cr_assert_null(itab_put(&t, entry("x/b", "x", NULL, "u2")));
    cr_assert_null(itab_put(&t, entry("y/c", "y", "x", NULL)));
    cr_assert_eq(itab_add_index(&t, "late"), KERR_INVAL, "only while empty");
    cr_assert_eq(itabfix_hits(&t, 0, "x"), 3, "a value repeated for one entry counts once");
    cr_assert_eq(itabfix_hits(&t, 0, "y"), 1);
    cr_assert_eq(itabfix_hits(&t, 1, "u1"), 1);
    cr_assert_eq(itabfix_hits(&t, 1, "x"), 0, "indexes are separate");
    cr_assert_eq(itabfix_hits(&t, 0, "none"), 0);
    cr_assert_eq(itab_walk_index(&t, 2, "x", itabfix_count_visit, &(int){ 0 }), KERR_NOTFOUND);

    e = itab_put(&t, entry("x/a", "z", NULL, NULL)); /* replaced: its old values go */
    cr_assert_not_null(e);
    itab_entry_free(e);
    cr_assert_eq(itabfix_hits(&t, 0, "x"), 2);
    cr_assert_eq(itabfix_hits(&t, 0, "z"), 1);
    cr_assert_eq(itabfix_hits(&t, 1, "u1"), 0);
    e = itab_del(&t, "y/c");
    itab_entry_free(e);
    cr_assert_eq(itabfix_hits(&t, 0, "y"), 0);
    cr_assert_eq(itabfix_hits(&t, 0, "x"), 1);
    itab_release(&t, NULL, NULL);
}

static enum kerr stop_at_two(void *arg, struct itab_entry *e)
{
    (void)e;
    return ++*(int *)arg == 2 ? KERR_CANCELLED : KERR_OK;
}

Test(itab, walks_visit_everything_and_stop_on_error)
{
    struct itab t;
    int n = 0;

    two_indexes(&t);
    cr_assert_null(itab_put(&t, entry("a", "x", NULL, NULL)));
    cr_assert_null(itab_put(&t, entry("b", "x", NULL, NULL)));
    cr_assert_null(itab_put(&t, entry("c", "x", NULL, NULL)));
    cr_assert_eq(itab_walk(&t, itabfix_count_visit, &n), KERR_OK);
    cr_assert_eq(n, 3);
    n = 0;
    cr_assert_eq(itab_walk(&t, stop_at_two, &n), KERR_CANCELLED);
    cr_assert_eq(n, 2);
    n = 0;
    cr_assert_eq(itab_walk_index(&t, 0, "x", stop_at_two, &n), KERR_CANCELLED);
    cr_assert_eq(n, 2);
    itab_release(&t, NULL, NULL);
}

/* Enough entries and values to grow the entry table and the group tables several times. */
Test(itab, grows_and_stays_consistent)
{
    enum { N = 5000 };
    struct itab t;
    char key[16], v[16];
    int i;

    two_indexes(&t);
    for (i = 0; i < N; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        snprintf(v, sizeof(v), "v%d", i % 10);
        cr_assert_null(itab_put(&t, entry(key, v, NULL, key)));
    }
    cr_assert_eq(t.count, N);
    cr_assert_eq(itabfix_hits(&t, 0, "v3"), N / 10);
    cr_assert_eq(itabfix_hits(&t, 1, "k4321"), 1);
    for (i = 0; i < N; i += 2) {
        snprintf(key, sizeof(key), "k%d", i);
        itab_entry_free(itab_del(&t, key));
    }
    cr_assert_eq(t.count, N / 2);
    cr_assert_eq(itabfix_hits(&t, 0, "v3"), N / 10, "odd values keep all their entries");
    cr_assert_eq(itabfix_hits(&t, 0, "v4"), 0);
    cr_assert_not_null(itab_get(&t, "k4321"));
    cr_assert_null(itab_get(&t, "k4320"));
    itab_release(&t, NULL, NULL);
}

Test(itab, swap_moves_the_old_content_out_and_rebuilds_indexes)
{
    struct itab t, fresh, old;
    int frees = 0;

    two_indexes(&t);
    cr_assert_null(itab_put(&t, entry("a", "x", NULL, NULL)));
    cr_assert_null(itab_put(&t, entry("b", "x", NULL, NULL)));
    cr_assert_eq(itab_init(&fresh), KERR_OK);
    cr_assert_null(itab_put(&fresh, entry("b", "y", NULL, "u")));
    cr_assert_null(itab_put(&fresh, entry("c", "y", NULL, NULL)));
    cr_assert_null(itab_put(&fresh, entry("d", "x", NULL, NULL)));
    itab_swap(&t, &fresh, &old);
    cr_assert_eq(t.count, 3);
    cr_assert_eq(t.nidx, 2, "the indexes stay");
    cr_assert_eq(itabfix_hits(&t, 0, "y"), 2);
    cr_assert_eq(itabfix_hits(&t, 0, "x"), 1, "only the new d");
    cr_assert_eq(itabfix_hits(&t, 1, "u"), 1);
    cr_assert_eq(old.count, 2);
    cr_assert_eq(old.nidx, 0);
    cr_assert_not_null(itab_get(&old, "a"));
    cr_assert_null(itab_get(&old, "c"));
    itab_release(&old, count_free, &frees);
    cr_assert_eq(frees, 2);
    itab_release(&t, count_free, &frees);
    cr_assert_eq(frees, 5);
}
