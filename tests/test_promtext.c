#include "common/promtext.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

Test(promtext, names)
{
    cr_assert(promtext_valid_name("a:b_c1"));
    cr_assert(promtext_valid_name(":x"));
    cr_assert_not(promtext_valid_name(""));
    cr_assert_not(promtext_valid_name(NULL));
    cr_assert_not(promtext_valid_name("1abc"));
    cr_assert_not(promtext_valid_name("a-b"));
    cr_assert_not(promtext_valid_name("a b"));
    cr_assert(promtext_valid_label_name("_a1"));
    cr_assert_not(promtext_valid_label_name("a:b"));
    cr_assert_not(promtext_valid_label_name("9"));
    cr_assert_not(promtext_valid_label_name(""));
}

Test(promtext, go_float_syntax)
{
    static const struct {
        double v;
        const char *want;
    } cases[] = {
        { 0, "0" },
        { 1, "1" },
        { -1, "-1" },
        { 0.005, "0.005" },
        { 2.5, "2.5" },
        { 100, "100" },
        { 123456, "123456" },
        { 1e6, "1e+06" },
        { 1234567, "1.234567e+06" },
        { 0.0001, "0.0001" },
        { 1.5e-5, "1.5e-05" },
        { 1e21, "1e+21" },
        { 0.1 + 0.2, "0.30000000000000004" },
        { -0.25, "-0.25" },
        { 1e-300, "1e-300" },
    };
    char out[PROMTEXT_FLOAT_LEN];
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        promtext_format_float(cases[i].v, out);
        cr_assert_str_eq(out, cases[i].want);
    }
    promtext_format_float(NAN, out);
    cr_assert_str_eq(out, "NaN");
    promtext_format_float(INFINITY, out);
    cr_assert_str_eq(out, "+Inf");
    promtext_format_float(-INFINITY, out);
    cr_assert_str_eq(out, "-Inf");
}

Test(promtext, escaping)
{
    struct buf b;

    buf_init(&b, 256);
    cr_assert_eq(promtext_append_escaped(&b, "a\\b\n\"c\"", false), KERR_OK);
    cr_assert_eq(promtext_append_escaped(&b, "|a\\b\n\"c\"", true), KERR_OK);
    cr_assert_str_eq(buf_str(&b), "a\\\\b\\n\"c\"|a\\\\b\\n\\\"c\\\"");
    buf_release(&b);
}

Test(promtext, sample_lines)
{
    static const char *const labels[] = { "code", "path" };
    static const char *const values[] = { "200", "/a\"b" };
    struct buf b;

    buf_init(&b, 1024);
    cr_assert_eq(promtext_append_sample(&b, "x_total", "", NULL, NULL, 0, NULL, 3), KERR_OK);
    cr_assert_eq(promtext_append_sample(&b, "req", "_count", labels, values, 2, NULL, 1.5),
                 KERR_OK);
    cr_assert_eq(promtext_append_sample(&b, "h", "_bucket", NULL, NULL, 0, "+Inf", 4), KERR_OK);
    cr_assert_eq(promtext_append_sample(&b, "h", "_bucket", labels, values, 1, "0.5", 2), KERR_OK);
    cr_assert_str_eq(buf_str(&b), "x_total 3\n"
                                  "req_count{code=\"200\",path=\"/a\\\"b\"} 1.5\n"
                                  "h_bucket{le=\"+Inf\"} 4\n"
                                  "h_bucket{code=\"200\",le=\"0.5\"} 2\n");
    buf_release(&b);
}

Test(promtext, sample_respects_the_buffer_cap)
{
    struct buf b;

    buf_init(&b, 8);
    cr_assert_eq(promtext_append_sample(&b, "a_rather_long_name", "", NULL, NULL, 0, NULL, 1),
                 KERR_TOOBIG);
    buf_release(&b);
}
