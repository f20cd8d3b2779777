/* nftw is an XSI interface */
#define _XOPEN_SOURCE 700
#include "tests/support/testutil.h"

#include <criterion/criterion.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void testutil_pause_ms(long ms)
{
    ktime_sleep_ns(ms * KTIME_NS_PER_MS);
}

int testutil_await_count(atomic_int *c, int want, long timeout_ms)
{
    TESTUTIL_AWAIT(atomic_load(c) >= want, timeout_ms);
    return atomic_load(c) >= want;
}

struct criterion_test_params testutil_row_params(size_t *idx, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        idx[i] = i;
    return cr_make_param_array(size_t, idx, n);
}

void testutil_write_file(const char *path, const char *content)
{
    char tmp[600];
    FILE *f;

    cr_assert_lt((size_t)snprintf(tmp, sizeof(tmp), "%s.new", path), sizeof(tmp), "%s", path);
    f = fopen(tmp, "w");
    cr_assert_not_null(f, "cannot write %s", tmp);
    cr_assert_eq(fwrite(content, 1, strlen(content), f), strlen(content), "%s", tmp);
    cr_assert_eq(fclose(f), 0, "%s", tmp);
    cr_assert_eq(rename(tmp, path), 0, "rename to %s", path);
}

void testutil_dir_make(struct testutil_dir *d, const char *prefix)
{
    memset(d, 0, sizeof(*d));
    snprintf(d->path, sizeof(d->path), "/tmp/%s.XXXXXX", prefix);
    cr_assert_not_null(mkdtemp(d->path), "mkdtemp %s", d->path);
}

const char *testutil_dir_path(struct testutil_dir *d, const char *name)
{
    char full[sizeof(d->files[0])];
    int i;

    cr_assert_lt((size_t)snprintf(full, sizeof(full), "%s/%s", d->path, name), sizeof(full));
    for (i = 0; i < d->n; i++) {
        if (strcmp(d->files[i], full) == 0)
            return d->files[i];
    }
    cr_assert_lt(d->n, TESTUTIL_DIR_FILES, "too many files in %s", d->path);
    memcpy(d->files[d->n], full, sizeof(full));
    return d->files[d->n++];
}

const char *testutil_dir_write(struct testutil_dir *d, const char *name, const char *content)
{
    const char *path = testutil_dir_path(d, name);

    testutil_write_file(path, content);
    return path;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void testutil_dir_remove(struct testutil_dir *d)
{
    if (d->path[0])
        nftw(d->path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    d->path[0] = '\0';
    d->n = 0;
}
