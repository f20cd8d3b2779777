/*
 * testutil - generic helpers for the Criterion tests: short pauses, waiting
 * for a condition or a counter with a deadline (poll, never a bare sleep),
 * and temporary directories of files. The clock is common/ktime's
 * (ktime_mono_ms, ktime_elapsed_ms).
 *
 * The helpers are for tests only: where something cannot be set up they
 * fail the running test with a Criterion assertion instead of returning an
 * error. Thread safety: the clock, pause and wait helpers may be called from
 * any thread; a struct testutil_dir belongs to the thread that made it.
 */
#ifndef TESTS_SUPPORT_TESTUTIL_H
#define TESTS_SUPPORT_TESTUTIL_H

#include <stdatomic.h>
#include <stddef.h>

#include <criterion/parameterized.h>

#include "common/ktime.h"

/* Sleep for ms milliseconds (0 returns at once). */
void testutil_pause_ms(long ms);

/*
 * Poll cond (an expression, evaluated again and again) every 2 ms until it
 * holds or timeout_ms pass. Asserts nothing: the caller asserts cond after.
 */
#define TESTUTIL_AWAIT(cond, timeout_ms)                        \
    do {                                                        \
        int64_t testutil_end_ = ktime_mono_ms() + (timeout_ms); \
        while (!(cond) && ktime_mono_ms() < testutil_end_)      \
            testutil_pause_ms(2);                               \
    } while (0)

/* Wait until *c reaches want: 1, or 0 when timeout_ms passed first. */
int testutil_await_count(atomic_int *c, int want, long timeout_ms);

/*
 * Write content to path through a temporary file and a rename, so a reader
 * sees the old or the new content, never a part (as kubelet swaps a projected
 * token). Asserts that every step worked.
 */
void testutil_write_file(const char *path, const char *content);

/*
 * The parameters of a table-driven ParameterizedTest: the row numbers 0 to
 * n - 1, written into idx (n elements, static in the caller: Criterion reads
 * them from each test's process).
 */
struct criterion_test_params testutil_row_params(size_t *idx, size_t n);

#define TESTUTIL_DIR_FILES 16

/*
 * A temporary directory under /tmp and the paths of the files written into
 * it. Embedded in the test (testutil_dir_make / testutil_dir_remove); the
 * path strings it hands out are OWNED by it and valid until it is removed.
 */
struct testutil_dir {
    char path[64];
    char files[TESTUTIL_DIR_FILES][160];
    int n;
};

/* Create the directory /tmp/<prefix>.XXXXXX. */
void testutil_dir_make(struct testutil_dir *d, const char *prefix);

/* "<dir>/<name>" (nothing is created). BORROWED from d; the same name gives the same string. */
const char *testutil_dir_path(struct testutil_dir *d, const char *name);

/* Write (or atomically replace, see testutil_write_file) name with content; its path. */
const char *testutil_dir_write(struct testutil_dir *d, const char *name, const char *content);

/* Remove the directory and everything below it (files the code under test made too). */
void testutil_dir_remove(struct testutil_dir *d);

#endif
