#include "common/ydoc.h"

#include <criterion/criterion.h>
#include <string.h>

static yaml_node_t *load(struct ydoc *d, struct kerr_info *e, const char *text)
{
    cr_assert_eq(ydoc_load(d, text, strlen(text), "doc.yaml", e), KERR_OK, "%s", e->msg);
    return ydoc_root(d);
}

Test(ydoc, syntax_error_names_file_and_line)
{
    struct ydoc d;
    struct kerr_info e;
    static const char text[] = "a: 1\nb: [1, 2\nc: 3\n";

    cr_expect_eq(ydoc_load(&d, text, strlen(text), "doc.yaml", &e), KERR_PARSE);
    cr_expect_eq(strncmp(e.msg, "doc.yaml:", 9), 0, "%s", e.msg);
    cr_expect_not_null(strstr(e.msg, ": not YAML: "), "%s", e.msg);
    ydoc_release(&d);
    ydoc_release(&d);
}

Test(ydoc, scan_map_picks_known_keys)
{
    struct ydoc d;
    struct kerr_info e;
    struct ydoc_field f[3] = { { .key = "name" }, { .key = "flag" }, { .key = "absent" } };
    yaml_node_t *root = load(&d, &e, "other: x\nname: web\nflag: TRUE\n");
    const char *name = NULL;
    char *copy = NULL;
    int flag = 0;

    cr_assert_eq(ydoc_scan_map(&d, root, "top", f, 3), KERR_OK, "%s", e.msg);
    cr_assert_eq(ydoc_get_view(&d, &f[0], "top", &name), KERR_OK);
    cr_expect_str_eq(name, "web");
    cr_assert_eq(ydoc_get_str(&d, &f[0], "top", &copy), KERR_OK);
    cr_expect_str_eq(copy, "web");
    free(copy);
    cr_assert_eq(ydoc_get_bool(&d, &f[1], "top", &flag), KERR_OK);
    cr_expect_eq(flag, 1);
    cr_expect_null(f[2].val);
    cr_assert_eq(ydoc_get_view(&d, &f[2], "top", &name), KERR_OK);
    cr_expect_null(name);
    cr_expect_eq(ydoc_line(f[1].val), 3);
    ydoc_release(&d);
}

Test(ydoc, type_errors_and_duplicates)
{
    struct ydoc d;
    struct kerr_info e;
    struct ydoc_field f[2] = { { .key = "a" }, { .key = "b" } };
    yaml_node_t *root = load(&d, &e, "a: [1]\nb: yes\n");
    const char *s;
    int v;

    cr_assert_eq(ydoc_scan_map(&d, root, "top", f, 2), KERR_OK);
    cr_expect_eq(ydoc_get_view(&d, &f[0], "top", &s), KERR_PARSE);
    cr_expect_str_eq(e.msg, "doc.yaml:1: top: a must be a string, not a list");
    cr_expect_eq(ydoc_get_bool(&d, &f[1], "top", &v), KERR_PARSE);
    cr_expect_str_eq(e.msg, "doc.yaml:2: top: b must be true or false, not \"yes\"");
    cr_expect_eq(ydoc_enter(&d, root, YAML_SEQUENCE_NODE, "top"), KERR_PARSE);
    cr_expect_str_eq(e.msg, "doc.yaml:1: top must be a list, not a mapping");
    ydoc_release(&d);

    root = load(&d, &e, "a: 1\nb: 2\na: 3\n");
    f[0].val = f[1].val = NULL;
    cr_expect_eq(ydoc_scan_map(&d, root, "top", f, 2), KERR_PARSE);
    cr_expect_str_eq(e.msg, "doc.yaml:3: top: duplicate key \"a\"");
    ydoc_release(&d);

    root = load(&d, &e, "? [x]\n: 1\n");
    f[0].val = f[1].val = NULL;
    cr_expect_eq(ydoc_scan_map(&d, root, "top", f, 2), KERR_PARSE);
    cr_expect_str_eq(e.msg, "doc.yaml:1: top: keys must be strings");
    ydoc_release(&d);
}

Test(ydoc, collections_are_entered_once)
{
    struct ydoc d;
    struct kerr_info e;
    struct ydoc_field f[2] = { { .key = "a" }, { .key = "b" } };
    yaml_node_t *root = load(&d, &e, "a: &m {x: 1}\nb: *m\n");

    cr_assert_eq(ydoc_scan_map(&d, root, "top", f, 2), KERR_OK);
    cr_expect_eq(f[0].val, f[1].val, "an alias is the same node");
    cr_expect_eq(ydoc_enter(&d, f[0].val, YAML_MAPPING_NODE, "a"), KERR_OK);
    cr_expect_eq(ydoc_enter(&d, f[1].val, YAML_MAPPING_NODE, "b"), KERR_PARSE);
    cr_expect_not_null(strstr(e.msg, "b: YAML alias"), "%s", e.msg);
    ydoc_release(&d);
}

Test(ydoc, null_and_present)
{
    struct ydoc d;
    struct kerr_info e;
    struct ydoc_field f[6] = { { .key = "n1" }, { .key = "n2" }, { .key = "q" },
                               { .key = "em" }, { .key = "es" }, { .key = "s" } };
    yaml_node_t *root = load(&d, &e, "n1: ~\nn2:\nq: 'null'\nem: {}\nes: []\ns: x\n");

    cr_assert_eq(ydoc_scan_map(&d, root, "top", f, 6), KERR_OK);
    cr_expect(ydoc_is_null(f[0].val));
    cr_expect(ydoc_is_null(f[1].val));
    cr_expect_not(ydoc_is_null(f[2].val), "a quoted 'null' is a string");
    cr_expect_not(ydoc_is_present(f[3].val));
    cr_expect_not(ydoc_is_present(f[4].val));
    cr_expect(ydoc_is_present(f[5].val));
    cr_expect(ydoc_is_null(NULL));
    ydoc_release(&d);
}

Test(ydoc, empty_document_has_no_root)
{
    struct ydoc d;
    struct kerr_info e;

    cr_assert_eq(ydoc_load(&d, "", 0, NULL, &e), KERR_OK);
    cr_expect_null(ydoc_root(&d));
    cr_expect_str_eq(ydoc_kind(YAML_SCALAR_NODE), "a string");
    ydoc_release(&d);
}
