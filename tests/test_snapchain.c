#include "controller/snapshot/snapchain.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static void add(struct ostore_list *l, const char *key)
{
    struct ostore_obj o = { .key = (char *)key, .size = 1 };
    cr_assert_eq(ostore_list_add(l, &o, NULL), KERR_OK);
}

static const char *const KEYS[] = {
    "p/etcd/v2/Full-00000000-00000005-90",
    "p/etcd/v2/Incr-00000006-00000009-95",
    "p/etcd/v2/Full-00000000-00000010-100.gz",
    "p/etcd/v2/Incr-00000011-00000020-110.gz",
    "p/etcd/v2/Incr-00000021-00000030-120.gz",
    "p/etcd/v2/Full-00000000-00000040-130/0000000001",
    "p/etcd/v2/not-a-snapshot",
    "other/v2/Full-00000000-00000099-100",
};

static void listing(struct ostore_list *l)
{
    memset(l, 0, sizeof *l);
    for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++)
        add(l, KEYS[i]);
}

static void expect_chain(const struct snapchain *c, const char *const *want, size_t n)
{
    cr_assert_eq(c->n, n, "chain of %zu, want %zu", c->n, n);
    for (size_t i = 0; i < n; i++) {
        cr_expect_str_eq(c->v[i].key, want[i]);
        cr_expect_not_null(c->v[i].obj.key, "%s not found in the listing", want[i]);
        cr_expect(!c->v[i].foreign);
    }
}

Test(snapchain, latest_full_and_the_deltas_after_it)
{
    struct ostore_list l;
    struct snapchain c;
    static const char *const want[] = { "p/etcd/v2/Full-00000000-00000010-100.gz",
                                        "p/etcd/v2/Incr-00000011-00000020-110.gz",
                                        "p/etcd/v2/Incr-00000021-00000030-120.gz" };
    listing(&l);
    cr_assert_eq(snapchain_select(&l, "p/etcd/", INT64_MAX, false, &c, NULL), KERR_OK);
    expect_chain(&c, want, 3);
    cr_expect_str_eq(c.prefix, "p/etcd");
    snapchain_release(&c);
    ostore_list_release(&l);
}

Test(snapchain, at_takes_the_chain_of_that_time)
{
    struct ostore_list l;
    struct snapchain c;
    static const char *const want[] = { "p/etcd/v2/Full-00000000-00000010-100.gz",
                                        "p/etcd/v2/Incr-00000011-00000020-110.gz" };
    static const char *const older[] = { "p/etcd/v2/Full-00000000-00000005-90" };
    listing(&l);
    cr_assert_eq(snapchain_select(&l, "p/etcd", 115, false, &c, NULL), KERR_OK);
    expect_chain(&c, want, 2);
    snapchain_release(&c);
    cr_assert_eq(snapchain_select(&l, "p/etcd", 94, false, &c, NULL), KERR_OK);
    expect_chain(&c, older, 1);
    snapchain_release(&c);
    cr_assert_eq(snapchain_select(&l, "p/etcd", 10, false, &c, NULL), KERR_OK);
    cr_expect_eq(c.n, 0);
    snapchain_release(&c);
    ostore_list_release(&l);
}

Test(snapchain, a_sibling_prefix_newer_full_is_taken_and_missing)
{
    struct ostore_list l;
    struct snapchain c;
    listing(&l);
    add(&l, "p/etcd-2/v2/Full-00000000-00000050-140");
    cr_assert_eq(snapchain_select(&l, "p/etcd", INT64_MAX, false, &c, NULL), KERR_OK);
    cr_assert_eq(c.n, 1);
    cr_expect_str_eq(c.v[0].key, "p/etcd/-2/v2/Full-00000000-00000050-140");
    cr_expect_str_eq(c.v[0].listed, "p/etcd-2/v2/Full-00000000-00000050-140");
    cr_expect_null(c.v[0].obj.key);
    snapchain_release(&c);
    /* Local: the sidecar walks p/etcd's directory, the sibling is never listed */
    ostore_list_release(&l);
    listing(&l);
    cr_assert_eq(snapchain_select(&l, "p/etcd", INT64_MAX, true, &c, NULL), KERR_OK);
    cr_expect_eq(c.n, 3);
    snapchain_release(&c);
    ostore_list_release(&l);
}

Test(snapchain, a_nested_prefix_is_foreign)
{
    struct ostore_list l;
    struct snapchain c;
    listing(&l);
    add(&l, "p/etcd/sub/v2/Full-00000000-00000060-150");
    cr_assert_eq(snapchain_select(&l, "p/etcd", INT64_MAX, false, &c, NULL), KERR_OK);
    cr_assert_eq(c.n, 1);
    cr_expect_not_null(c.v[0].obj.key);
    cr_expect(c.v[0].foreign);
    snapchain_release(&c);
    ostore_list_release(&l);
}

Test(snapchain, v1_layout_and_excluded)
{
    struct ostore_list l = { 0 };
    struct snapchain c;
    add(&l, "q/v1/Backup-100/Full-00000000-00000010-100");
    add(&l, "q/v1/Backup-100/Incr-00000011-00000012-101");
    add(&l, "q/v2/Full-00000000-00000020-200");
    l.v[2].excluded = true;
    cr_assert_eq(snapchain_select(&l, "q", INT64_MAX, false, &c, NULL), KERR_OK);
    cr_assert_eq(c.n, 2);
    cr_expect_str_eq(c.v[0].key, "q/v1/Backup-100/Full-00000000-00000010-100");
    cr_expect_not_null(c.v[1].obj.key);
    cr_expect(!c.v[0].foreign && !c.v[1].foreign);
    snapchain_release(&c);
    ostore_list_release(&l);
}
