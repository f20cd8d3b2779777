/* Tests of common/storeent: how the store builds, copies, compares and frees its entries. */
#include "common/storeent.h"

#include <criterion/criterion.h>
#include <string.h>

#include "common/kjson.h"
#include "common/kobj.h"
#include "tests/support/itabfix.h"
#include "tests/support/jsonfix.h"

#define OBJ(rv)                                                                                \
    "{\"metadata\":{\"name\":\"e\",\"namespace\":\"ns\",\"resourceVersion\":\"" rv "\","       \
    "\"labels\":{\"role\":\"main\"},\"ownerReferences\":[{\"uid\":\"u1\"},{\"uid\":\"u2\"}]}," \
    "\"spec\":{\"replicas\":3}}"

static const struct storeent_index IDX[] = {
    { kobj_index_namespace, NULL },
    { kobj_index_label, (void *)"role" },
    { kobj_index_owner_uid, NULL },
};

static void codec(struct storeent_codec *c, int compact, int project)
{
    memset(c, 0, sizeof(*c));
    c->opts.compact = compact;
    if (project) {
        c->opts.project = kobj_project_paths;
        c->opts.project_ctx = (void *)KOBJ_META_PATHS;
    }
    c->idx = IDX;
    c->nidx = 3;
}

static struct itab_entry *prepare(const struct storeent_codec *c, const char *json, cJSON **tree)
{
    struct itab_entry *e = NULL;
    struct kerr_info err;

    cr_assert_eq(storeent_prepare(c, jsonfix_parse(json), &e, tree, &err), KERR_OK, "%s", err.msg);
    return e;
}

static void roundtrip(int compact)
{
    struct storeent_codec c;
    struct itab t;
    struct itab_entry *e;
    cJSON *tree = NULL, *copy = NULL, *want = jsonfix_parse(OBJ("7"));

    codec(&c, compact, 0);
    e = prepare(&c, OBJ("7"), &tree);
    cr_assert_str_eq(e->key, "ns/e");
    cr_assert(cJSON_Compare(tree, want, 1), "tree_out is the stored object");
    if (compact)
        cr_assert_eq(((const char *)e->data)[0], '{', "compact keeps JSON text");
    cr_assert_eq(storeent_copy(&c, e->data, &copy), KERR_OK);
    cr_assert(cJSON_Compare(copy, want, 1));
    cr_assert_neq((void *)copy, e->data, "a copy, not the stored tree");
    cJSON_Delete(copy);

    /* The index values were computed: link the entry into a table with three indexes. */
    cr_assert_eq(itab_init(&t), KERR_OK);
    cr_assert_eq(itab_add_index(&t, "ns"), KERR_OK);
    cr_assert_eq(itab_add_index(&t, "role"), KERR_OK);
    cr_assert_eq(itab_add_index(&t, "owner"), KERR_OK);
    cr_assert_null(itab_put(&t, e));
    cr_assert_eq(itabfix_hits(&t, 0, "ns"), 1);
    cr_assert_eq(itabfix_hits(&t, 1, "main"), 1);
    cr_assert_eq(itabfix_hits(&t, 2, "u1"), 1);
    cr_assert_eq(itabfix_hits(&t, 2, "u2"), 1);
    cr_assert_eq(itabfix_hits(&t, 2, "ns"), 0);
    e = itab_del(&t, "ns/e");
    cr_assert_not_null(e);
    itab_release(&t, storeent_free_cb, &c);

    cr_assert_eq(storeent_retire(&c, e, &copy), KERR_OK);
    cr_assert(cJSON_Compare(copy, want, 1), "retire hands the object over");
    cJSON_Delete(copy);
    cJSON_Delete(tree);
    cJSON_Delete(want);
}

Test(storeent, roundtrip_tree)
{
    roundtrip(0);
}

Test(storeent, roundtrip_compact)
{
    roundtrip(1);
}

Test(storeent, projection_comes_first)
{
    struct storeent_codec c;
    struct itab_entry *e;
    cJSON *o = jsonfix_parse(OBJ("7")), *p = NULL;

    codec(&c, 1, 1);
    e = prepare(&c, OBJ("7"), NULL);
    cr_assert_eq(storeent_copy(&c, e->data, &p), KERR_OK);
    cr_assert_null(kjson_get(p, "spec"), "spec is not in KOBJ_META_PATHS");
    cr_assert_str_eq(kjson_get_str(p, "metadata.resourceVersion"), "7");
    cJSON_Delete(p);
    cr_assert_eq(storeent_retire(&c, e, NULL), KERR_OK);

    cr_assert_eq(storeent_project(&c, o, &p, NULL), KERR_OK);
    cr_assert_null(kjson_get(p, "spec"));
    cJSON_Delete(p);
    codec(&c, 0, 0);
    cr_assert_eq(storeent_project(&c, o, &p, NULL), KERR_OK);
    cr_assert(cJSON_Compare(p, o, 1), "no projection: a whole copy");
    cr_assert_neq(p, o);
    cJSON_Delete(p);
    cJSON_Delete(o);
}

static enum kerr refuse(void *ctx, const cJSON *obj, cJSON **out)
{
    (void)ctx;
    (void)obj;
    *out = NULL;
    return KERR_INVAL;
}

static enum kerr no_memory(void *ctx, const cJSON *obj, struct strlist *values)
{
    (void)ctx;
    (void)obj;
    (void)values;
    return KERR_NOMEM;
}

/* Every failure frees the object it took (ASan would report a leak). */
Test(storeent, failures_free_the_object_and_say_why)
{
    static const struct storeent_index bad_idx[] = { { no_memory, NULL } };
    struct storeent_codec c;
    struct itab_entry *e = (struct itab_entry *)1;
    struct kerr_info err;

    codec(&c, 0, 0);
    cr_assert_eq(storeent_prepare(&c, jsonfix_parse("{\"metadata\":{}}"), &e, NULL, &err),
                 KERR_INVAL);
    cr_assert_null(e);
    cr_assert_not_null(strstr(err.msg, "metadata.name"), "%s", err.msg);
    c.opts.project = refuse;
    cr_assert_eq(storeent_prepare(&c, jsonfix_parse(OBJ("1")), &e, NULL, &err), KERR_INVAL);
    cr_assert_not_null(strstr(err.msg, "projection failed"), "%s", err.msg);
    codec(&c, 1, 0);
    c.idx = bad_idx;
    c.nidx = 1;
    cr_assert_eq(storeent_prepare(&c, jsonfix_parse(OBJ("1")), &e, NULL, &err), KERR_NOMEM);
    cr_assert_not_null(strstr(err.msg, "index values of ns/e"), "%s", err.msg);
    cr_assert_null(e);
}

Test(storeent, take_steals_a_tree_and_copies_text)
{
    struct storeent_codec c;
    struct itab_entry *e;
    cJSON *o = NULL;

    codec(&c, 0, 0);
    e = prepare(&c, OBJ("1"), NULL);
    cr_assert_eq(storeent_take(&c, e, &o), KERR_OK);
    cr_assert_null(e->data, "the tree moved to the caller");
    cr_assert_str_eq(kjson_get_str(o, "metadata.name"), "e");
    cJSON_Delete(o);
    cr_assert_eq(storeent_retire(&c, e, NULL), KERR_OK);

    codec(&c, 1, 0);
    e = prepare(&c, OBJ("1"), NULL);
    cr_assert_eq(storeent_take(&c, e, &o), KERR_OK);
    cr_assert_not_null(e->data, "the text stays with the entry");
    cr_assert_str_eq(kjson_get_str(o, "metadata.name"), "e");
    cJSON_Delete(o);
    cr_assert_eq(storeent_retire(&c, e, NULL), KERR_OK);
    cr_assert_eq(storeent_retire(&c, NULL, NULL), KERR_OK);
}

Test(storeent, differs_compares_the_stored_objects)
{
    struct storeent_codec c;
    struct itab_entry *a, *b, *d;
    int compact;

    for (compact = 0; compact < 2; compact++) {
        codec(&c, compact, 0);
        a = prepare(&c, OBJ("1"), NULL);
        b = prepare(&c, OBJ("1"), NULL);
        d = prepare(&c, OBJ("2"), NULL);
        cr_assert_not(storeent_differs(&c, a, b), "compact %d", compact);
        cr_assert(storeent_differs(&c, a, d), "compact %d", compact);
        storeent_retire(&c, a, NULL);
        storeent_retire(&c, b, NULL);
        storeent_retire(&c, d, NULL);
    }
}

Test(storeent, a_raw_item_is_kept_as_its_text_in_a_compact_codec)
{
    struct storeent_codec c;
    struct itab t;
    struct itab_entry *e = NULL;
    struct kerr_info err;
    cJSON *obj = jsonfix_parse(OBJ("9")), *tree = NULL, *copy = NULL;
    char *text = cJSON_PrintUnformatted(obj);

    codec(&c, 1, 0);
    cr_assert_eq(storeent_prepare(&c, cJSON_CreateRaw(text), &e, &tree, &err), KERR_OK, "%s",
                 err.msg);
    cr_assert_str_eq(e->key, "ns/e");
    cr_assert_str_eq(e->data, text, "the text is stored as it came");
    cr_assert(cJSON_Compare(tree, obj, 1), "tree_out is the parsed text");
    cr_assert_eq(storeent_copy(&c, e->data, &copy), KERR_OK);
    cr_assert(cJSON_Compare(copy, obj, 1));
    cr_assert_eq(itab_init(&t), KERR_OK);
    cr_assert_eq(itab_add_index(&t, "ns"), KERR_OK);
    cr_assert_eq(itab_add_index(&t, "role"), KERR_OK);
    cr_assert_eq(itab_add_index(&t, "owner"), KERR_OK);
    cr_assert_null(itab_put(&t, e));
    cr_assert_eq(itabfix_hits(&t, 1, "main"), 1, "index values come from the parsed text");
    cr_assert_eq(itabfix_hits(&t, 2, "u2"), 1);
    itab_release(&t, storeent_free_cb, &c);
    /* Text that is not JSON is refused (and freed). */
    cr_assert_eq(storeent_prepare(&c, cJSON_CreateRaw("{\"metadata\":"), &e, NULL, &err),
                 KERR_INVAL);
    cr_assert_null(e);
    /* A tree codec, or a compact one with a projection, does not take raw text as an object. */
    codec(&c, 0, 0);
    cr_assert_neq(storeent_prepare(&c, cJSON_CreateRaw(text), &e, NULL, &err), KERR_OK);
    codec(&c, 1, 1);
    cr_assert_neq(storeent_prepare(&c, cJSON_CreateRaw(text), &e, NULL, &err), KERR_OK);
    free(text);
    cJSON_Delete(copy);
    cJSON_Delete(tree);
    cJSON_Delete(obj);
}
