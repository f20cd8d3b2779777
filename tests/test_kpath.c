/* kpath: Go's path.Clean cases. */
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
