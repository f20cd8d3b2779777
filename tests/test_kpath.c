/* kpath: Go's path.Clean cases and the overlap of backup prefixes. */
#include <criterion/criterion.h>

#include "common/kpath.h"

static const char *const cleaned[][2] = {
    /* from Go's path/path_test.go */
    { "", "." },
    { "abc", "abc" },
    { "abc/def", "abc/def" },
    { "a/b/c", "a/b/c" },
    { ".", "." },
    { "..", ".." },
    { "../..", "../.." },
    { "../../abc", "../../abc" },
    { "/abc", "/abc" },
    { "/", "/" },
    { "abc/", "abc" },
    { "abc/def/", "abc/def" },
    { "a/b/c/", "a/b/c" },
    { "./", "." },
    { "../", ".." },
    { "../../", "../.." },
    { "/abc/", "/abc" },
    { "abc//def//ghi", "abc/def/ghi" },
    { "//abc", "/abc" },
    { "///abc", "/abc" },
    { "//abc//", "/abc" },
    { "abc//", "abc" },
    { "abc/./def", "abc/def" },
    { "/./abc/def", "/abc/def" },
    { "abc/.", "abc" },
    { "abc/def/ghi/../jkl", "abc/def/jkl" },
    { "abc/def/../ghi/../jkl", "abc/jkl" },
    { "abc/def/..", "abc" },
    { "abc/def/../..", "." },
    { "/abc/def/../..", "/" },
    { "abc/def/../../..", ".." },
    { "/abc/def/../../..", "/" },
    { "abc/def/../../../ghi/jkl/../../../mno", "../../mno" },
    { "abc/./../def", "def" },
    { "abc//./../def", "def" },
    { "abc/../../././../def", "../../def" },
};

Test(kpath, clean_as_go)
{
    char out[64];
    size_t i;

    for (i = 0; i < sizeof(cleaned) / sizeof(cleaned[0]); i++) {
        cr_assert_eq(kpath_clean(cleaned[i][0], out, sizeof(out)), KERR_OK);
        cr_expect_str_eq(out, cleaned[i][1], "clean(\"%s\")", cleaned[i][0]);
    }
}

Test(kpath, clean_too_small)
{
    char out[4];

    cr_expect_eq(kpath_clean("abcdef", out, sizeof(out)), KERR_TOOBIG);
    cr_expect_eq(kpath_clean("a/b/../../abc", out, sizeof(out)), KERR_OK);
    cr_expect_str_eq(out, "abc");
}

static const struct {
    const char *a, *b;
    int overlap;
} pairs[] = {
    { "ns--etcd", "ns--etcd", 1 },
    { "ns--etcd/", "ns--etcd", 1 },
    { "ns--etcd", "ns--etcd/v2", 1 },
    { "ns--etcd/v2", "ns--etcd", 1 },
    { "a//b/", "a/b/c", 1 },
    { "ns--etcd", "ns--etcd-events", 0 },
    { "ns--etcd-events", "ns--etcd", 0 },
    { "ns--etcd/v2", "ns--etcd/v20", 0 },
    { "a/b", "a/c", 0 },
    { "", "anything", 1 },
    { "/", "/x", 1 },
    { "/x", "x", 0 },
    { "a/./b", "a/b", 1 },
};

Test(kpath, overlap_as_paths)
{
    size_t i;

    for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
        cr_expect_eq(kpath_overlap(pairs[i].a, pairs[i].b), pairs[i].overlap,
                     "overlap(\"%s\", \"%s\")", pairs[i].a, pairs[i].b);
    cr_expect_eq(kpath_equal("ns--etcd/", "ns--etcd"), 1);
    cr_expect_eq(kpath_equal("ns--etcd", "ns--etcd/v2"), 0);
}
