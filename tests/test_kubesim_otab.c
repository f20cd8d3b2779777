/* Tests of kube-sim's otab (the sorted objects of one resource) and jpath's cell text. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "tests/kube-sim/jpath.h"
#include "tests/kube-sim/otab.h"

static cJSON *named(const char *ns, const char *name, const char *app)
{
    cJSON *o = cJSON_CreateObject();

    cr_assert_not_null(o);
    cr_assert_eq(kjson_set_str(o, "metadata.namespace", ns, NULL), KERR_OK);
    cr_assert_eq(kjson_set_str(o, "metadata.name", name, NULL), KERR_OK);
    cr_assert_eq(kjson_set_str(o, "metadata.labels.app", app, NULL), KERR_OK);
    return o;
}

/* Insert ns/name at its place; the entry's rv is rv. */
static void put(struct ksim_otab *t, const char *ns, const char *name, uint64_t rv)
{
    char *key = ksim_otab_key(ns, name);
    size_t i;
    int found;

    cr_assert_not_null(key);
    i = ksim_otab_search(t, key, &found);
    cr_assert_not(found, "%s", key);
    cr_assert_eq(ksim_otab_reserve(t), KERR_OK);
    ksim_otab_insert(t, i, key, named(ns, name, rv % 2 ? "odd" : "even"), rv);
}

/* The keys of t joined by ','. */
static void keys(const struct ksim_otab *t, char *out, size_t n)
{
    size_t i, len = 0;

    out[0] = '\0';
    for (i = 0; i < t->n; i++)
        len += (size_t)snprintf(out + len, n - len, "%s%s", i ? "," : "", t->entries[i].key);
    cr_assert_lt(len, n);
}

static int is_odd(const cJSON *obj, void *arg)
{
    (void)arg;
    return strcmp(kjson_get_str(obj, "metadata.labels.app"), "odd") == 0;
}

static void page_names(const struct ksim_store_page *p, char *out, size_t n)
{
    const cJSON *it;
    size_t len = 0;

    out[0] = '\0';
    cJSON_ArrayForEach (it, p->items)
        len += (size_t)snprintf(out + len, n - len, "%s%s", len ? "," : "",
                                kjson_get_str(it, "metadata.name"));
    cr_assert_lt(len, n);
}

Test(kubesim_otab, keys_and_order)
{
    struct ksim_otab t = { 0 };
    struct ksim_otab_entry e;
    char got[256], *k;
    int found;
    size_t i;

    k = ksim_otab_key("ns", "a");
    cr_assert_str_eq(k, "ns/a");
    free(k);
    k = ksim_otab_key("", "node1");
    cr_assert_str_eq(k, "node1");
    free(k);
    k = ksim_otab_key(NULL, "node2");
    cr_assert_str_eq(k, "node2");
    free(k);
    for (i = 0; i < 40; i++) { /* past the first allocation of 16 */
        char name[16];

        snprintf(name, sizeof(name), "o%02zu", (i * 7) % 40);
        put(&t, i % 2 ? "b" : "a", name, i + 1);
    }
    cr_assert_eq(t.n, 40);
    for (i = 1; i < t.n; i++)
        cr_assert_lt(strcmp(t.entries[i - 1].key, t.entries[i].key), 0);
    i = ksim_otab_search(&t, "a/o00", &found);
    cr_assert(found);
    cr_assert_eq(i, 0);
    i = ksim_otab_search(&t, "a/zz", &found);
    cr_assert_not(found);
    cr_assert_str_eq(t.entries[i].key, "b/o01", "insertion point before the first of b");
    ksim_otab_remove(&t, i, &e);
    cr_assert_str_eq(e.key, "b/o01");
    cr_assert_str_eq(kjson_get_str(e.obj, "metadata.name"), "o01");
    free(e.key);
    cJSON_Delete(e.obj);
    cr_assert_eq(t.n, 39);
    ksim_otab_search(&t, "b/o01", &found);
    cr_assert_not(found);
    ksim_otab_release(&t);
    cr_assert_eq(t.n, 0);
    cr_assert_null(t.entries);
    put(&t, "x", "y", 1);
    keys(&t, got, sizeof(got));
    cr_assert_str_eq(got, "x/y", "usable after release");
    ksim_otab_release(&t);
}

Test(kubesim_otab, list_pages_filters_and_counts)
{
    struct ksim_otab t = { 0 };
    struct ksim_store_page p;
    char got[256];

    put(&t, "a", "a1", 1);
    put(&t, "a", "a2", 2);
    put(&t, "a", "a3", 3);
    put(&t, "ab", "x", 5);
    put(&t, "b", "b1", 7);
    memset(&p, 0, sizeof(p));
    p.items = cJSON_CreateArray();
    cr_assert_eq(ksim_otab_list(&t, "a", NULL, NULL, NULL, 2, &p), KERR_OK);
    page_names(&p, got, sizeof(got));
    cr_assert_str_eq(got, "a1,a2", "namespace a only, not ab");
    cr_assert_str_eq(p.next_key, "a/a2");
    cr_assert_eq(p.remaining, 1);
    ksim_store_page_release(&p);

    p.items = cJSON_CreateArray();
    cr_assert_eq(ksim_otab_list(&t, NULL, is_odd, NULL, "a/a1", 0, &p), KERR_OK);
    page_names(&p, got, sizeof(got));
    cr_assert_str_eq(got, "a3,x,b1", "after a/a1, odd rvs, every namespace");
    cr_assert_null(p.next_key);
    cr_assert_eq(p.remaining, 0);
    ksim_store_page_release(&p);

    p.items = cJSON_CreateArray();
    cr_assert_eq(ksim_otab_list(&t, "", NULL, NULL, "a/a25", 1, &p), KERR_OK);
    page_names(&p, got, sizeof(got));
    cr_assert_str_eq(got, "a3", "a start key that is gone: from the next one");
    cr_assert_eq(p.remaining, 2);
    ksim_store_page_release(&p);
    ksim_otab_release(&t);
}

static int odd_counted(const cJSON *obj, void *arg)
{
    ++*(int *)arg;
    return is_odd(obj, NULL);
}

/*
 * A filtered page stops at the first match past it: a paged LIST with a selector cost every
 * object of the table per page (the count of the rest, which a selector leaves unreported);
 * without a filter the rest is still counted.
 */
Test(kubesim_otab, a_filtered_page_does_not_test_the_rest)
{
    struct ksim_otab t = { 0 };
    struct ksim_store_page p;
    char name[16], got[64];
    int i, tests = 0;

    for (i = 1; i <= 1000; i++) {
        snprintf(name, sizeof(name), "n%04d", i);
        put(&t, "a", name, (uint64_t)i);
    }
    memset(&p, 0, sizeof(p));
    p.items = cJSON_CreateArray();
    cr_assert_eq(ksim_otab_list(&t, NULL, odd_counted, &tests, NULL, 2, &p), KERR_OK);
    page_names(&p, got, sizeof(got));
    cr_assert_str_eq(got, "n0001,n0003");
    cr_assert_str_eq(p.next_key, "a/n0003");
    cr_assert_leq(tests, 5, "%d objects tested for a page of 2", tests);
    ksim_store_page_release(&p);

    memset(&p, 0, sizeof(p));
    p.items = cJSON_CreateArray();
    cr_assert_eq(ksim_otab_list(&t, NULL, NULL, NULL, "a/n0990", 4, &p), KERR_OK);
    page_names(&p, got, sizeof(got));
    cr_assert_str_eq(got, "n0991,n0992,n0993,n0994");
    cr_assert_eq(p.remaining, 6);
    ksim_store_page_release(&p);

    memset(&p, 0, sizeof(p));
    p.items = cJSON_CreateArray();
    cr_assert_eq(ksim_otab_list(&t, "a", NULL, NULL, "a/n0990", 4, &p), KERR_OK);
    cr_assert_eq(p.remaining, 6, "in a namespace");
    ksim_store_page_release(&p);
    ksim_otab_release(&t);
}

Test(kubesim_jpath, cell_text)
{
    static const char text[] = "{\"s\":\"x\",\"b\":false,\"n\":2.5,\"i\":3,\"z\":null,"
                               "\"a\":[1,\"two\"],\"o\":{\"k\":1}}";
    cJSON *o = NULL;
    char out[64];

    cr_assert_eq(kjson_parse(text, sizeof(text) - 1, NULL, &o, NULL, NULL), KERR_OK);
    ksim_jpath_text(ksim_jpath_eval(o, ".s"), out, sizeof(out));
    cr_assert_str_eq(out, "x");
    ksim_jpath_text(ksim_jpath_eval(o, ".b"), out, sizeof(out));
    cr_assert_str_eq(out, "false");
    ksim_jpath_text(ksim_jpath_eval(o, ".n"), out, sizeof(out));
    cr_assert_str_eq(out, "2.5");
    ksim_jpath_text(ksim_jpath_eval(o, "$.i"), out, sizeof(out));
    cr_assert_str_eq(out, "3");
    ksim_jpath_text(ksim_jpath_eval(o, ".a"), out, sizeof(out));
    cr_assert_str_eq(out, "[1,\"two\"]");
    ksim_jpath_text(ksim_jpath_eval(o, ".a[-1]"), out, sizeof(out));
    cr_assert_str_eq(out, "two");
    ksim_jpath_text(ksim_jpath_eval(o, "['o']"), out, sizeof(out));
    cr_assert_str_eq(out, "{\"k\":1}");
    ksim_jpath_text(ksim_jpath_eval(o, ".z"), out, sizeof(out));
    cr_assert_str_eq(out, "<none>");
    ksim_jpath_text(ksim_jpath_eval(o, ".missing"), out, sizeof(out));
    cr_assert_str_eq(out, "<none>");
    cr_assert_null(ksim_jpath_eval(o, "s"), "a path starts with . [ { or $");
    cr_assert_null(ksim_jpath_eval(o, NULL));
    cJSON_Delete(o);
}
