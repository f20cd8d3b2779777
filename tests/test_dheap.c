/* Tests of common/dheap: the indexed min-heap of due times under the work queue. */
#include "common/dheap.h"

#include <criterion/criterion.h>
#include <stdlib.h>

struct item {
    int id;
    struct dheap_node hn;
};

static struct item *item_of(struct dheap_node *n)
{
    return (struct item *)(void *)((char *)n - offsetof(struct item, hn));
}

static int pop_id(struct dheap *h)
{
    struct dheap_node *n = dheap_pop(h);

    cr_assert_not_null(n);
    cr_assert_not(dheap_contains(n), "a popped node is out of the heap");
    return item_of(n)->id;
}

Test(dheap, empty_heap)
{
    struct dheap h;

    dheap_init(&h);
    cr_assert_eq(dheap_len(&h), 0);
    cr_assert_null(dheap_peek(&h));
    cr_assert_null(dheap_pop(&h));
    dheap_release(&h);
    dheap_release(&h);
}

Test(dheap, pops_in_time_order_and_ties_in_push_order)
{
    static const int64_t at[] = { 50, 10, 30, 10, 40, 30, 10 };
    static const int want[] = { 1, 3, 6, 2, 5, 4, 0 };
    struct item it[7];
    struct dheap h;
    size_t i;

    dheap_init(&h);
    for (i = 0; i < 7; i++) {
        it[i].id = (int)i;
        dheap_node_init(&it[i].hn);
        cr_assert_not(dheap_contains(&it[i].hn));
        cr_assert_eq(dheap_push(&h, &it[i].hn, at[i]), KERR_OK);
        cr_assert(dheap_contains(&it[i].hn));
        cr_assert_eq(it[i].hn.at, at[i]);
    }
    cr_assert_eq(dheap_len(&h), 7);
    cr_assert_eq(item_of(dheap_peek(&h))->id, 1, "peek shows the first due");
    cr_assert_eq(dheap_len(&h), 7, "peek leaves it in");
    for (i = 0; i < 7; i++)
        cr_assert_eq(pop_id(&h), want[i], "pop %zu", i);
    cr_assert_eq(dheap_len(&h), 0);
    dheap_release(&h);
}

Test(dheap, advance_moves_earlier_only)
{
    struct item a = { .id = 0 }, b = { .id = 1 }, c = { .id = 2 };
    struct dheap h;

    dheap_init(&h);
    dheap_node_init(&a.hn);
    dheap_node_init(&b.hn);
    dheap_node_init(&c.hn);
    cr_assert_eq(dheap_push(&h, &a.hn, 100), KERR_OK);
    cr_assert_eq(dheap_push(&h, &b.hn, 200), KERR_OK);
    cr_assert_eq(dheap_push(&h, &c.hn, 300), KERR_OK);
    dheap_advance(&h, &c.hn, 50);
    cr_assert_eq(c.hn.at, 50);
    dheap_advance(&h, &a.hn, 400); /* later: ignored */
    cr_assert_eq(a.hn.at, 100);
    dheap_advance(&h, &b.hn, 100); /* same time as a, pushed after it */
    cr_assert_eq(pop_id(&h), 2);
    cr_assert_eq(pop_id(&h), 0);
    cr_assert_eq(pop_id(&h), 1);
    dheap_release(&h);
}

Test(dheap, a_popped_node_can_be_pushed_again)
{
    struct item a = { .id = 7 };
    struct dheap h;

    dheap_init(&h);
    dheap_node_init(&a.hn);
    cr_assert_eq(dheap_push(&h, &a.hn, 5), KERR_OK);
    cr_assert_eq(pop_id(&h), 7);
    cr_assert_eq(dheap_push(&h, &a.hn, 9), KERR_OK);
    cr_assert_eq(item_of(dheap_peek(&h))->id, 7);
    cr_assert_eq(dheap_peek(&h)->at, 9);
    dheap_release(&h);
}

/* Many random pushes and advances (the array grows several times): pops come out sorted. */
Test(dheap, random_operations_keep_the_order)
{
    enum { N = 5000 };
    struct item *it = calloc(N, sizeof(*it));
    unsigned seed = 12345;
    struct dheap_node *n;
    struct dheap h;
    int64_t last = INT64_MIN;
    size_t i, popped = 0;

    cr_assert_not_null(it);
    dheap_init(&h);
    for (i = 0; i < N; i++) {
        it[i].id = (int)i;
        dheap_node_init(&it[i].hn);
        cr_assert_eq(dheap_push(&h, &it[i].hn, rand_r(&seed) % 1000), KERR_OK);
        if (i % 3 == 0)
            dheap_advance(&h, &it[rand_r(&seed) % (i + 1)].hn, rand_r(&seed) % 1000);
    }
    while ((n = dheap_pop(&h))) {
        cr_assert_geq(n->at, last, "pop %zu out of order", popped);
        last = n->at;
        popped++;
    }
    cr_assert_eq(popped, N);
    dheap_release(&h);
    free(it);
}
