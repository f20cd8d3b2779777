#include "common/store.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "common/kobj.h"
#include "tests/support/testutil.h"

/* {"metadata":{"name","namespace","resourceVersion","labels":{"role":role}},"spec":{...}} */
static cJSON *mk(const char *ns, const char *name, const char *rv, const char *role)
{
    cJSON *o = cJSON_CreateObject();

    cr_assert_not_null(o);
    cr_assert_eq(kjson_set_str(o, "metadata.name", name, NULL), KERR_OK);
    if (ns)
        cr_assert_eq(kjson_set_str(o, "metadata.namespace", ns, NULL), KERR_OK);
    if (rv)
        cr_assert_eq(kjson_set_str(o, "metadata.resourceVersion", rv, NULL), KERR_OK);
    if (role)
        cr_assert_eq(kjson_set_str(o, "metadata.labels.role", role, NULL), KERR_OK);
    cr_assert_eq(kjson_set_str(o, "spec.big", "a field the projection drops", NULL), KERR_OK);
    return o;
}

static struct store *new_store(int compact, int project)
{
    struct store_opts opts = { 0 };
    struct store *s = NULL;

    opts.compact = compact;
    if (project) {
        opts.project = kobj_project_paths;
        opts.project_ctx = (void *)KOBJ_META_PATHS;
    }
    cr_assert_eq(store_new(&opts, &s, NULL), KERR_OK);
    return s;
}

static const char *rv_of(const cJSON *o)
{
    return kjson_get_str(o, "metadata.resourceVersion");
}

static void put_get_remove(int compact)
{
    struct store *s = new_store(compact, 0);
    cJSON *old = NULL, *cur = NULL, *got = NULL;

    cr_assert_eq(store_put(s, mk("ns", "a", "1", "main"), &old, &cur, NULL), KERR_OK);
    cr_assert_null(old);
    cr_assert_str_eq(rv_of(cur), "1");
    cJSON_Delete(cur);
    cr_assert_eq(store_count(s), 1);

    cr_assert_eq(store_put(s, mk("ns", "a", "2", "main"), &old, &cur, NULL), KERR_OK);
    cr_assert_str_eq(rv_of(old), "1");
    cr_assert_str_eq(rv_of(cur), "2");
    cJSON_Delete(old);
    cJSON_Delete(cur);
    cr_assert_eq(store_count(s), 1);

    cr_assert_eq(store_get(s, "ns/a", &got, NULL), KERR_OK);
    cr_assert_str_eq(rv_of(got), "2");
    cr_assert_str_eq(kjson_get_str(got, "spec.big"), "a field the projection drops");
    /* A copy: changing it does not change the store. */
    cr_assert_eq(kjson_set_str(got, "metadata.resourceVersion", "99", NULL), KERR_OK);
    cJSON_Delete(got);
    cr_assert_eq(store_get(s, "ns/a", &got, NULL), KERR_OK);
    cr_assert_str_eq(rv_of(got), "2");
    cJSON_Delete(got);

    cr_assert_eq(store_get(s, "ns/b", &got, NULL), KERR_NOTFOUND);
    cr_assert_null(got);
    cr_assert_eq(store_remove(s, "ns/a", &old, NULL), KERR_OK);
    cr_assert_str_eq(rv_of(old), "2");
    cJSON_Delete(old);
    cr_assert_eq(store_remove(s, "ns/a", NULL, NULL), KERR_NOTFOUND);
    cr_assert_eq(store_count(s), 0);
    store_free(s);
}

Test(store, put_get_remove_tree)
{
    put_get_remove(0);
}

Test(store, put_get_remove_compact)
{
    put_get_remove(1);
}

Test(store, put_without_name_fails_and_frees)
{
    struct store *s = new_store(0, 0);
    struct kerr_info err;

    cr_assert_eq(store_put(s, cJSON_CreateObject(), NULL, NULL, &err), KERR_INVAL);
    cr_assert_eq(err.code, KERR_INVAL);
    cr_assert_eq(store_count(s), 0);
    store_free(s);
}

/* "<spec.kind>/<ns>/<name>", refusing objects without spec.kind. */
static enum kerr kind_key(void *ctx, const cJSON *obj, char *out, size_t n, struct kerr_info *err)
{
    const char *kind = kjson_get_str(obj, "spec.kind");
    int len;

    (void)ctx;
    if (!kind)
        return kerr_set(err, KERR_INVAL, "no kind");
    len = snprintf(out, n, "%s/%s/%s", kind, kjson_get_str(obj, "metadata.namespace"),
                   kjson_get_str(obj, "metadata.name"));
    return len > 0 && (size_t)len < n ? KERR_OK : kerr_set(err, KERR_TOOBIG, "long");
}

Test(store, key_function)
{
    struct store_opts opts = { 0 };
    struct store *s = NULL;
    cJSON *a = mk("ns", "x", "1", NULL), *b = mk("ns", "x", "2", NULL), *got = NULL;
    char key[STORE_KEY_MAX];
    struct kerr_info err;
    int compact;

    for (compact = 0; compact < 2; compact++) {
        opts.compact = compact;
        opts.key = kind_key;
        cr_assert_eq(store_new(&opts, &s, NULL), KERR_OK);
        cr_assert_eq(kjson_set_str(a, "spec.kind", "ConfigMap", NULL), KERR_OK);
        cr_assert_eq(kjson_set_str(b, "spec.kind", "Service", NULL), KERR_OK);
        cr_assert_eq(store_key_of(s, a, key, sizeof(key), NULL), KERR_OK);
        cr_expect_str_eq(key, "ConfigMap/ns/x");
        cr_assert_eq(store_put(s, cJSON_Duplicate(a, 1), NULL, NULL, NULL), KERR_OK);
        cr_assert_eq(store_put(s, cJSON_Duplicate(b, 1), NULL, NULL, NULL), KERR_OK);
        cr_expect_eq(store_count(s), 2, "same namespace and name, two kinds");
        cr_assert_eq(store_get(s, "Service/ns/x", &got, NULL), KERR_OK);
        cr_expect_str_eq(rv_of(got), "2");
        cJSON_Delete(got);
        cr_expect_eq(store_get(s, "ns/x", &got, NULL), KERR_NOTFOUND);
        cr_assert_eq(store_remove(s, "ConfigMap/ns/x", NULL, NULL), KERR_OK);
        cr_expect_eq(store_count(s), 1);
        cr_assert_eq(kjson_delete(a, "spec.kind"), KERR_OK);
        cr_expect_eq(store_put(s, cJSON_Duplicate(a, 1), NULL, NULL, &err), KERR_INVAL);
        cr_expect_str_eq(err.msg, "no kind");
        store_free(s);
    }
    cJSON_Delete(a);
    cJSON_Delete(b);
}

Test(store, projection_keeps_only_the_listed_paths)
{
    static const char *const paths[] = { "metadata.name", "metadata.namespace",
                                         "metadata.annotations[druid.gardener.cloud/x]",
                                         "status.lastOperation", NULL };
    struct store_opts opts = { kobj_project_paths, (void *)paths, 0, NULL, NULL };
    struct store *s = NULL;
    cJSON *o = mk("ns", "e", "7", "main"), *got = NULL;

    cr_assert_eq(kjson_set_str(o, "metadata.annotations[druid.gardener.cloud/x]", "1", NULL),
                 KERR_OK);
    cr_assert_eq(kjson_set_str(o, "metadata.annotations.other", "2", NULL), KERR_OK);
    cr_assert_eq(kjson_set_str(o, "status.lastOperation.state", "Succeeded", NULL), KERR_OK);
    cr_assert_eq(kjson_set_str(o, "status.ready", "yes", NULL), KERR_OK);
    cr_assert_eq(store_new(&opts, &s, NULL), KERR_OK);
    cr_assert_eq(store_put(s, o, NULL, NULL, NULL), KERR_OK);
    cr_assert_eq(store_get(s, "ns/e", &got, NULL), KERR_OK);
    cr_assert_str_eq(kjson_get_str(got, "metadata.name"), "e");
    cr_assert_str_eq(kjson_get_str(got, "metadata.annotations[druid.gardener.cloud/x]"), "1");
    cr_assert_null(kjson_get(got, "metadata.annotations.other"));
    cr_assert_null(kjson_get(got, "metadata.labels"));
    cr_assert_null(kjson_get(got, "metadata.resourceVersion"));
    cr_assert_null(kjson_get(got, "spec"));
    cr_assert_null(kjson_get(got, "status.ready"));
    cr_assert_str_eq(kjson_get_str(got, "status.lastOperation.state"), "Succeeded");
    cJSON_Delete(got);
    store_free(s);
}

Test(store, meta_paths_projection)
{
    struct store *s = new_store(1, 1);
    cJSON *o = mk("ns", "e", "7", "main"), *got = NULL;
    cJSON *refs = cJSON_CreateArray(), *ref = cJSON_CreateObject();

    cJSON_AddStringToObject(ref, "uid", "u-1");
    cJSON_AddItemToArray(refs, ref);
    cr_assert_eq(kjson_set(o, "metadata.ownerReferences", refs, NULL), KERR_OK);
    cr_assert_eq(kjson_set_str(o, "metadata.managedFields", "dropped", NULL), KERR_OK);
    cr_assert_eq(store_put(s, o, NULL, NULL, NULL), KERR_OK);
    cr_assert_eq(store_get(s, "ns/e", &got, NULL), KERR_OK);
    cr_assert_str_eq(kjson_get_str(got, "metadata.labels.role"), "main");
    cr_assert_str_eq(rv_of(got), "7");
    cr_assert_str_eq(kjson_get_str(got, "metadata.ownerReferences[0].uid"), "u-1");
    cr_assert_null(kjson_get(got, "metadata.managedFields"));
    cr_assert_null(kjson_get(got, "spec"));
    cJSON_Delete(got);
    store_free(s);
}

/* How many keys index holds for value. */
static size_t count_keys(struct store *s, const char *index, const char *value)
{
    struct strlist keys;
    size_t n;

    strlist_init(&keys);
    cr_assert_eq(store_index_keys(s, index, value, &keys, NULL), KERR_OK);
    n = keys.n;
    strlist_release(&keys);
    return n;
}

static void assert_keys(struct store *s, const char *index, const char *value, size_t n, ...)
{
    struct strlist keys;
    va_list ap;
    size_t i;

    strlist_init(&keys);
    cr_assert_eq(store_index_keys(s, index, value, &keys, NULL), KERR_OK);
    cr_assert_eq(keys.n, n, "%s=%s: %zu keys, want %zu", index, value, keys.n, n);
    va_start(ap, n);
    for (i = 0; i < n; i++) {
        const char *k = va_arg(ap, const char *);

        cr_assert(strlist_has(&keys, k), "%s=%s lacks %s", index, value, k);
    }
    va_end(ap);
    strlist_release(&keys);
}

static void indexes(int compact)
{
    struct store *s = new_store(compact, 1);
    cJSON *list = NULL;

    cr_assert_eq(store_add_index(s, "ns", kobj_index_namespace, NULL, NULL), KERR_OK);
    cr_assert_eq(store_add_index(s, "role", kobj_index_label, (void *)"role", NULL), KERR_OK);
    cr_assert_eq(store_add_index(s, "ns", kobj_index_namespace, NULL, NULL), KERR_INVAL);
    cr_assert_eq(store_put(s, mk("a", "x", "1", "main"), NULL, NULL, NULL), KERR_OK);
    cr_assert_eq(store_put(s, mk("a", "y", "1", "events"), NULL, NULL, NULL), KERR_OK);
    cr_assert_eq(store_put(s, mk("b", "x", "1", "main"), NULL, NULL, NULL), KERR_OK);
    cr_assert_eq(store_put(s, mk(NULL, "c", "1", NULL), NULL, NULL, NULL), KERR_OK);
    cr_assert_eq(store_add_index(s, "late", kobj_index_namespace, NULL, NULL), KERR_INVAL);

    assert_keys(s, "ns", "a", 2, "a/x", "a/y");
    assert_keys(s, "ns", "b", 1, "b/x");
    assert_keys(s, "ns", "nope", 0);
    assert_keys(s, "role", "main", 2, "a/x", "b/x");

    /* An update moves the object between index values. */
    cr_assert_eq(store_put(s, mk("a", "x", "2", "events"), NULL, NULL, NULL), KERR_OK);
    assert_keys(s, "role", "main", 1, "b/x");
    assert_keys(s, "role", "events", 2, "a/x", "a/y");
    cr_assert_eq(store_remove(s, "a/y", NULL, NULL), KERR_OK);
    assert_keys(s, "role", "events", 1, "a/x");
    assert_keys(s, "ns", "a", 1, "a/x");

    cr_assert_eq(store_index_list(s, "role", "events", &list, NULL), KERR_OK);
    cr_assert_eq(cJSON_GetArraySize(list), 1);
    cr_assert_str_eq(rv_of(cJSON_GetArrayItem(list, 0)), "2");
    cJSON_Delete(list);
    cr_assert_eq(store_index_keys(s, "nosuch", "a", NULL, NULL), KERR_NOTFOUND);
    store_free(s);
}

Test(store, indexes_tree)
{
    indexes(0);
}

Test(store, indexes_compact)
{
    indexes(1);
}

static enum kerr two_values(void *ctx, const cJSON *obj, struct strlist *values)
{
    const char *role = kjson_get_str(obj, "metadata.labels.role");
    enum kerr rc;

    (void)ctx;
    if (!role)
        return KERR_OK;
    rc = strlist_add(values, role);
    if (rc == KERR_OK)
        rc = strlist_add(values, "any");
    if (rc == KERR_OK)
        rc = strlist_add(values, "any"); /* duplicates count once */
    return rc;
}

Test(store, index_with_several_values_and_owner_uid)
{
    struct store *s = new_store(0, 1);
    cJSON *o = mk("a", "owned", "1", "main");
    cJSON *refs = NULL;

    cr_assert_not_null(refs = cJSON_Parse("[{\"uid\":\"u1\"},{\"uid\":\"u2\"},{\"uid\":\"u1\"}]"));
    cr_assert_eq(kjson_set(o, "metadata.ownerReferences", refs, NULL), KERR_OK);
    cr_assert_eq(store_add_index(s, "multi", two_values, NULL, NULL), KERR_OK);
    cr_assert_eq(store_add_index(s, "owner", kobj_index_owner_uid, NULL, NULL), KERR_OK);
    cr_assert_eq(store_put(s, o, NULL, NULL, NULL), KERR_OK);
    cr_assert_eq(store_put(s, mk("a", "b", "1", "events"), NULL, NULL, NULL), KERR_OK);
    assert_keys(s, "multi", "any", 2, "a/owned", "a/b");
    assert_keys(s, "multi", "main", 1, "a/owned");
    assert_keys(s, "owner", "u1", 1, "a/owned");
    assert_keys(s, "owner", "u2", 1, "a/owned");
    store_free(s);
}

static enum kerr count_view(void *ctx, const char *key, const cJSON *obj)
{
    int *n = ctx;

    cr_assert_not_null(key);
    cr_assert_not_null(kjson_get_str(obj, "metadata.name"));
    (*n)++;
    return *n == 3 ? KERR_CANCELLED : KERR_OK;
}

Test(store, foreach_keys_and_view)
{
    struct store *s = new_store(0, 0);
    struct strlist keys;
    char name[16];
    int i, n = 0;

    for (i = 0; i < 5; i++) {
        snprintf(name, sizeof(name), "o%d", i);
        cr_assert_eq(store_put(s, mk("ns", name, "1", NULL), NULL, NULL, NULL), KERR_OK);
    }
    cr_assert_eq(store_foreach(s, count_view, &n, NULL), KERR_CANCELLED, "stops on non-OK");
    cr_assert_eq(n, 3);
    n = -100;
    cr_assert_eq(store_foreach(s, count_view, &n, NULL), KERR_OK);
    cr_assert_eq(n, -95);
    strlist_init(&keys);
    cr_assert_eq(store_keys(s, &keys, NULL), KERR_OK);
    cr_assert_eq(keys.n, 5);
    cr_assert(strlist_has(&keys, "ns/o4"));
    strlist_release(&keys);
    n = 2;
    cr_assert_eq(store_view(s, "ns/o1", count_view, &n, NULL), KERR_CANCELLED);
    cr_assert_eq(store_view(s, "ns/none", count_view, &n, NULL), KERR_NOTFOUND);
    cr_assert_eq(n, 3, "fn is not called for a missing key");
    store_free(s);
}

static const struct store_change *find_change(const struct store_changes *c, const char *key)
{
    size_t i;

    for (i = 0; i < c->n; i++)
        if (strcmp(c->v[i].key, key) == 0)
            return &c->v[i];
    return NULL;
}

static void replace_reports_differences(int compact)
{
    struct store *s = new_store(compact, 1);
    struct store_changes ch;
    const struct store_change *c;
    cJSON *items = cJSON_CreateArray();

    cr_assert_eq(store_add_index(s, "role", kobj_index_label, (void *)"role", NULL), KERR_OK);
    cr_assert_eq(store_put(s, mk("ns", "same", "1", "main"), NULL, NULL, NULL), KERR_OK);
    cr_assert_eq(store_put(s, mk("ns", "changed", "1", "main"), NULL, NULL, NULL), KERR_OK);
    cr_assert_eq(store_put(s, mk("ns", "gone", "1", "main"), NULL, NULL, NULL), KERR_OK);
    cJSON_AddItemToArray(items, mk("ns", "same", "1", "main"));
    cJSON_AddItemToArray(items, mk("ns", "changed", "1", "old"));
    cJSON_AddItemToArray(items, mk("ns", "changed", "2", "events")); /* the later one wins */
    cJSON_AddItemToArray(items, mk("ns", "new", "5", "main"));
    store_changes_init(&ch);
    cr_assert_eq(store_replace(s, items, &ch, NULL), KERR_OK);
    cr_assert_eq(ch.n, 3);
    cr_assert_null(find_change(&ch, "ns/same"));
    cr_assert_not_null(c = find_change(&ch, "ns/changed"));
    cr_assert_eq(c->kind, STORE_UPDATED);
    cr_assert_str_eq(rv_of(c->old_obj), "1");
    cr_assert_str_eq(rv_of(c->new_obj), "2");
    cr_assert_not_null(c = find_change(&ch, "ns/new"));
    cr_assert_eq(c->kind, STORE_ADDED);
    cr_assert_null(c->old_obj);
    cr_assert_str_eq(rv_of(c->new_obj), "5");
    cr_assert_not_null(c = find_change(&ch, "ns/gone"));
    cr_assert_eq(c->kind, STORE_DELETED);
    cr_assert_str_eq(rv_of(c->old_obj), "1");
    cr_assert_null(c->new_obj);
    store_changes_release(&ch);

    cr_assert_eq(store_count(s), 3);
    assert_keys(s, "role", "main", 2, "ns/same", "ns/new");
    assert_keys(s, "role", "events", 1, "ns/changed");
    assert_keys(s, "role", "old", 0);

    /* Without a change list; an empty list empties the store. */
    cr_assert_eq(store_replace(s, cJSON_CreateArray(), NULL, NULL), KERR_OK);
    cr_assert_eq(store_count(s), 0);
    assert_keys(s, "role", "main", 0);
    store_free(s);
}

Test(store, replace_reports_differences_tree)
{
    replace_reports_differences(0);
}

Test(store, replace_reports_differences_compact)
{
    replace_reports_differences(1);
}

Test(store, replace_with_a_bad_item_leaves_the_store_unchanged)
{
    struct store *s = new_store(0, 0);
    cJSON *items = cJSON_CreateArray();

    cr_assert_eq(store_put(s, mk("ns", "keep", "1", NULL), NULL, NULL, NULL), KERR_OK);
    cJSON_AddItemToArray(items, mk("ns", "a", "1", NULL));
    cJSON_AddItemToArray(items, cJSON_CreateObject());
    cJSON_AddItemToArray(items, mk("ns", "b", "1", NULL));
    cr_assert_eq(store_replace(s, items, NULL, NULL), KERR_INVAL);
    cr_assert_eq(store_count(s), 1);
    cr_assert_eq(store_view(s, "ns/keep", count_view, &(int){ 0 }, NULL), KERR_OK);
    cr_assert_eq(store_replace(s, cJSON_CreateObject(), NULL, NULL), KERR_INVAL);
    store_free(s);
}

Test(store, ten_thousand_objects)
{
    struct store *s = new_store(1, 1);
    char ns[16], name[32], role[8];
    cJSON *got = NULL;
    int i;

    cr_assert_eq(store_add_index(s, "ns", kobj_index_namespace, NULL, NULL), KERR_OK);
    cr_assert_eq(store_add_index(s, "role", kobj_index_label, (void *)"role", NULL), KERR_OK);
    for (i = 0; i < 10000; i++) {
        snprintf(ns, sizeof(ns), "ns%d", i % 100);
        snprintf(name, sizeof(name), "etcd-%d", i);
        snprintf(role, sizeof(role), "r%d", i % 7);
        cr_assert_eq(store_put(s, mk(ns, name, "1", role), NULL, NULL, NULL), KERR_OK);
    }
    cr_assert_eq(store_count(s), 10000);
    cr_assert_eq(store_get(s, "ns42/etcd-4242", &got, NULL), KERR_OK);
    cr_assert_str_eq(kjson_get_str(got, "metadata.labels.role"), "r0");
    cJSON_Delete(got);
    cr_assert_eq(count_keys(s, "ns", "ns7"), 100);
    cr_assert_eq(count_keys(s, "role", "r0"), 1429);
    for (i = 0; i < 10000; i += 2) {
        snprintf(name, sizeof(name), "ns%d/etcd-%d", i % 100, i);
        cr_assert_eq(store_remove(s, name, NULL, NULL), KERR_OK);
    }
    cr_assert_eq(store_count(s), 5000);
    cr_assert_eq(count_keys(s, "ns", "ns7"), 100);
    cr_assert_eq(count_keys(s, "ns", "ns8"), 0);
    store_free(s);
}

/* ---- concurrent readers while a writer updates ---- */

struct race {
    struct store *s;
    atomic_int started; /* readers running */
    atomic_int stop;
    atomic_long reads;
    atomic_int bad;
};

/* Every object has label role == its resourceVersion: a torn read would break that. */
static enum kerr check_consistent(void *ctx, const char *key, const cJSON *obj)
{
    struct race *r = ctx;
    const char *rv = kjson_get_str(obj, "metadata.resourceVersion");
    const char *role = kjson_get_str(obj, "metadata.labels.role");
    const char *name = kjson_get_str(obj, "metadata.name");

    if (!rv || !role || !name || strcmp(rv, role) != 0 || !strstr(key, name))
        atomic_fetch_add(&r->bad, 1);
    atomic_fetch_add(&r->reads, 1);
    return KERR_OK;
}

static void *reader(void *arg)
{
    struct race *r = arg;
    struct strlist keys;
    char key[32];
    cJSON *got;
    int i = 0;

    atomic_fetch_add(&r->started, 1);
    while (!atomic_load(&r->stop)) {
        snprintf(key, sizeof(key), "ns/o%d", i++ % 50);
        (void)store_view(r->s, key, check_consistent, r, NULL);
        if (store_get(r->s, key, &got, NULL) == KERR_OK) {
            check_consistent(r, key, got);
            cJSON_Delete(got);
        }
        strlist_init(&keys);
        if (store_index_keys(r->s, "ns", "ns", &keys, NULL) != KERR_OK || keys.n > 50)
            atomic_fetch_add(&r->bad, 1);
        strlist_release(&keys);
        if (i % 64 == 0)
            (void)store_foreach(r->s, check_consistent, r, NULL);
    }
    return NULL;
}

static void concurrent(int compact)
{
    struct race r = { .s = new_store(compact, 1) };
    pthread_t th[3];
    char name[16], gen[16];
    cJSON *items;
    int i, j;

    cr_assert_eq(store_add_index(r.s, "ns", kobj_index_namespace, NULL, NULL), KERR_OK);
    for (i = 0; i < 3; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, reader, &r), 0);
    /* the updates start once every reader runs: a busy machine could else finish them first */
    TESTUTIL_AWAIT(atomic_load(&r.started) == 3, 30000);
    cr_assert_eq(atomic_load(&r.started), 3);
    for (i = 0; i < 2000; i++) {
        snprintf(name, sizeof(name), "o%d", i % 50);
        snprintf(gen, sizeof(gen), "%d", i);
        if (i % 7 == 3)
            (void)store_remove(r.s, "ns/o3", NULL, NULL);
        cr_assert_eq(store_put(r.s, mk("ns", name, gen, gen), NULL, NULL, NULL), KERR_OK);
        /* once every object exists, the rest of the updates wait for the readers to read:
           a busy machine could else run them all before a reader is scheduled again */
        if (i == 49)
            TESTUTIL_AWAIT(atomic_load(&r.reads) > 0, 30000);
        if (i % 500 != 499)
            continue;
        items = cJSON_CreateArray();
        for (j = 0; j < 40; j++) {
            snprintf(name, sizeof(name), "o%d", j);
            cJSON_AddItemToArray(items, mk("ns", name, gen, gen));
        }
        cr_assert_eq(store_replace(r.s, items, NULL, NULL), KERR_OK);
    }
    atomic_store(&r.stop, 1);
    for (i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    cr_assert_eq(atomic_load(&r.bad), 0);
    cr_assert_gt(atomic_load(&r.reads), 0);
    store_free(r.s);
}

Test(store, concurrent_readers_during_updates_tree)
{
    concurrent(0);
}

Test(store, concurrent_readers_during_updates_compact)
{
    concurrent(1);
}

Test(store, changes_release_twice)
{
    struct store_changes c;

    store_changes_init(&c);
    store_changes_release(&c);
    store_changes_release(&c);
    store_free(NULL);
}

static cJSON *many(int n, int changed_every)
{
    cJSON *items = cJSON_CreateArray();
    char ns[16], name[32], rv[16];
    int i;

    for (i = 0; i < n; i++) {
        snprintf(ns, sizeof(ns), "ns%d", i % 100);
        snprintf(name, sizeof(name), "etcd-%d", i);
        snprintf(rv, sizeof(rv), "%d", changed_every && i % changed_every == 0 ? 2 : 1);
        cJSON_AddItemToArray(items, mk(ns, name, rv, "main"));
    }
    return items;
}

Test(store, relist_of_ten_thousand_reports_only_the_changes)
{
    struct store *s = new_store(1, 1);
    struct store_changes ch;
    size_t i;

    cr_assert_eq(store_add_index(s, "ns", kobj_index_namespace, NULL, NULL), KERR_OK);
    store_changes_init(&ch);
    cr_assert_eq(store_replace(s, many(10000, 0), &ch, NULL), KERR_OK);
    cr_assert_eq(ch.n, 10000);
    store_changes_release(&ch);
    cr_assert_eq(store_replace(s, many(9990, 100), &ch, NULL), KERR_OK);
    cr_assert_eq(ch.n, 100 + 10, "100 updated, 10 deleted");
    for (i = 0; i < ch.n; i++) {
        if (ch.v[i].kind == STORE_UPDATED)
            cr_assert_str_eq(rv_of(ch.v[i].new_obj), "2");
        else
            cr_assert_eq(ch.v[i].kind, STORE_DELETED);
    }
    store_changes_release(&ch);
    cr_assert_eq(store_count(s), 9990);
    store_free(s);
}
