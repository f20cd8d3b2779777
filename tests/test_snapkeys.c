#include "controller/snapshot/snapkeys.h"

#include <criterion/criterion.h>
#include <stdio.h>

Test(snapkeys, add_delete_and_grow)
{
    struct snapkeys *s = NULL;
    unsigned char h[SNAPKEYS_HASH_LEN];
    char k[32];
    cr_assert_eq(snapkeys_new(100000, &s, NULL), KERR_OK);
    for (int i = 0; i < 50000; i++) {
        int n = snprintf(k, sizeof k, "/registry/k%d", i);
        snapkeys_hash(s, k, (size_t)n, h);
        cr_assert_eq(snapkeys_add(s, h, NULL), KERR_OK);
        cr_assert_eq(snapkeys_add(s, h, NULL), KERR_OK); /* again: no-op */
    }
    cr_expect_eq(snapkeys_count(s), 50000);
    for (int i = 0; i < 50000; i += 2) {
        int n = snprintf(k, sizeof k, "/registry/k%d", i);
        snapkeys_hash(s, k, (size_t)n, h);
        cr_assert(snapkeys_del(s, h));
        cr_assert(!snapkeys_del(s, h));
    }
    cr_expect_eq(snapkeys_count(s), 25000);
    for (int i = 0; i < 50000; i++) {
        int n = snprintf(k, sizeof k, "/registry/k%d", i);
        snapkeys_hash(s, k, (size_t)n, h);
        cr_assert_eq(snapkeys_has(s, h), i % 2 == 1, "key %d", i);
    }
    snapkeys_free(s);
}

Test(snapkeys, bound)
{
    struct snapkeys *s = NULL;
    unsigned char h[SNAPKEYS_HASH_LEN];
    struct kerr_info err = { 0 };
    cr_assert_eq(snapkeys_new(2, &s, NULL), KERR_OK);
    snapkeys_hash(s, "a", 1, h);
    cr_assert_eq(snapkeys_add(s, h, NULL), KERR_OK);
    snapkeys_hash(s, "b", 1, h);
    cr_assert_eq(snapkeys_add(s, h, NULL), KERR_OK);
    snapkeys_hash(s, "c", 1, h);
    cr_expect_eq(snapkeys_add(s, h, &err), KERR_TOOBIG);
    cr_expect(strstr(err.msg, "more than 2 keys") != NULL, "%s", err.msg);
    snapkeys_free(s);
}
