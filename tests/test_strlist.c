/* Tests of common/strlist: the growable list of owned strings. */
#include "common/strlist.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

Test(strlist, add_copies_and_has_finds)
{
    struct strlist l;
    char s[8] = "a";

    strlist_init(&l);
    cr_assert_eq(l.n, 0);
    cr_assert_not(strlist_has(&l, "a"));
    cr_assert_eq(strlist_add(&l, s), KERR_OK);
    s[0] = 'b'; /* the list keeps its own copy */
    cr_assert_eq(l.n, 1);
    cr_assert_str_eq(l.v[0], "a");
    cr_assert(strlist_has(&l, "a"));
    cr_assert_not(strlist_has(&l, "b"));
    cr_assert_eq(strlist_add(&l, "a"), KERR_OK, "duplicates are kept");
    cr_assert_eq(l.n, 2);
    strlist_release(&l);
    strlist_release(&l);
    cr_assert_eq(l.n, 0);
    cr_assert_null(l.v);
}

Test(strlist, grows_in_order)
{
    struct strlist l = { 0 };
    char s[16];
    size_t i;

    for (i = 0; i < 100; i++) {
        snprintf(s, sizeof(s), "k%zu", i);
        cr_assert_eq(strlist_add(&l, s), KERR_OK);
    }
    cr_assert_eq(l.n, 100);
    cr_assert_geq(l.cap, 100);
    for (i = 0; i < 100; i++) {
        snprintf(s, sizeof(s), "k%zu", i);
        cr_assert_str_eq(l.v[i], s);
    }
    cr_assert(strlist_has(&l, "k99"));
    strlist_release(&l);
}

Test(strlist, addn_copies_a_part)
{
    struct strlist l = { 0 };

    cr_assert_eq(strlist_addn(&l, "cm configmaps", 2), KERR_OK);
    cr_assert_eq(strlist_addn(&l, "x", 0), KERR_OK);
    cr_assert_eq(l.n, 2);
    cr_assert_str_eq(l.v[0], "cm");
    cr_assert_str_eq(l.v[1], "");
    cr_assert(strlist_has(&l, "cm"));
    strlist_release(&l);
}
