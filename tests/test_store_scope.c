/* Tests of store_replace_scope (common/store): one store filled by several writers, a scope each.
 */
#include "common/store.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "common/kobj.h"

/* {"kind":kind,"metadata":{"name","namespace":"ns","resourceVersion","labels":{"role"}}} */
static cJSON *mk(const char *kind, const char *name, const char *rv, const char *role)
{
    cJSON *o = cJSON_CreateObject();

    cr_assert_eq(kjson_set_str(o, "kind", kind, NULL), KERR_OK);
    cr_assert_eq(kjson_set_str(o, "metadata.name", name, NULL), KERR_OK);
    cr_assert_eq(kjson_set_str(o, "metadata.namespace", "ns", NULL), KERR_OK);
    cr_assert_eq(kjson_set_str(o, "metadata.resourceVersion", rv, NULL), KERR_OK);
    cr_assert_eq(kjson_set_str(o, "metadata.labels.role", role, NULL), KERR_OK);
    return o;
}

/* As an informer lists into a compact store: the compact text as a raw item. */
static cJSON *raw(cJSON *o)
{
    char *text = cJSON_PrintUnformatted(o);
    cJSON *r = cJSON_CreateRaw(text);

    cJSON_free(text);
    cJSON_Delete(o);
    return r;
}

static enum kerr kind_key(void *ctx, const cJSON *obj, char *out, size_t n, struct kerr_info *err)
{
    int len =
        snprintf(out, n, "%s/%s/%s", kjson_get_str(obj, "kind"),
                 kjson_get_str(obj, "metadata.namespace"), kjson_get_str(obj, "metadata.name"));

    (void)ctx;
    return len > 0 && (size_t)len < n ? KERR_OK : kerr_set(err, KERR_TOOBIG, "long");
}

static struct store *new_store(int compact)
{
    struct store_opts opts = { .compact = compact, .key = kind_key };
    struct store *s = NULL;

    cr_assert_eq(store_new(&opts, &s, NULL), KERR_OK);
    cr_assert_eq(store_add_index(s, "role", kobj_index_label, (void *)"role", NULL), KERR_OK);
    return s;
}

static const char *rv_in(struct store *s, const char *key)
{
    static char rv[32];
    cJSON *o = NULL;

    if (store_get(s, key, &o, NULL) != KERR_OK)
        return "absent";
    snprintf(rv, sizeof(rv), "%s", kjson_get_str(o, "metadata.resourceVersion"));
    cJSON_Delete(o);
    return rv;
}

static size_t role_count(struct store *s, const char *role)
{
    struct strlist keys;
    size_t n;

    strlist_init(&keys);
    cr_assert_eq(store_index_keys(s, "role", role, &keys, NULL), KERR_OK);
    n = keys.n;
    strlist_release(&keys);
    return n;
}

static const struct store_change *find(const struct store_changes *c, const char *key)
{
    size_t i;

    for (i = 0; i < c->n; i++)
        if (strcmp(c->v[i].key, key) == 0)
            return &c->v[i];
    return NULL;
}

static void replaces_its_scope_only(int compact)
{
    struct store *s = new_store(compact);
    struct store_changes ch;
    const struct store_change *c;
    cJSON *items = cJSON_CreateArray();
    struct kerr_info err;

    cr_assert_eq(store_put(s, mk("Service", "a", "1", "main"), NULL, NULL, NULL), KERR_OK);
    cr_assert_eq(store_put(s, mk("Service", "gone", "2", "main"), NULL, NULL, NULL), KERR_OK);
    cr_assert_eq(store_put(s, mk("Service", "same", "3", "main"), NULL, NULL, NULL), KERR_OK);
    cr_assert_eq(store_put(s, mk("ServiceAccount", "a", "4", "main"), NULL, NULL, NULL), KERR_OK);
    cr_assert_eq(store_put(s, mk("ConfigMap", "gone", "5", "main"), NULL, NULL, NULL), KERR_OK);
    cJSON_AddItemToArray(items, mk("Service", "a", "10", "peer"));
    cJSON_AddItemToArray(items, compact ? raw(mk("Service", "new", "11", "main"))
                                        : mk("Service", "new", "11", "main"));
    cJSON_AddItemToArray(items, mk("Service", "same", "3", "main"));
    store_changes_init(&ch);
    cr_assert_eq(store_replace_scope(s, "Service/", items, &ch, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(ch.n, 3, "a updated, new added, gone deleted; same unchanged");
    cr_assert_not_null(c = find(&ch, "Service/ns/a"));
    cr_assert_eq(c->kind, STORE_UPDATED);
    cr_assert_str_eq(kjson_get_str(c->old_obj, "metadata.resourceVersion"), "1");
    cr_assert_str_eq(kjson_get_str(c->new_obj, "metadata.resourceVersion"), "10");
    cr_assert_not_null(c = find(&ch, "Service/ns/new"));
    cr_assert_eq(c->kind, STORE_ADDED);
    cr_assert_not_null(c = find(&ch, "Service/ns/gone"));
    cr_assert_eq(c->kind, STORE_DELETED);
    cr_assert_str_eq(kjson_get_str(c->old_obj, "metadata.resourceVersion"), "2");
    store_changes_release(&ch);

    cr_assert_eq(store_count(s), 5);
    cr_assert_str_eq(rv_in(s, "Service/ns/a"), "10");
    cr_assert_str_eq(rv_in(s, "Service/ns/new"), "11");
    cr_assert_str_eq(rv_in(s, "Service/ns/gone"), "absent");
    cr_assert_str_eq(rv_in(s, "ServiceAccount/ns/a"), "4",
                     "another scope, though it shares a prefix");
    cr_assert_str_eq(rv_in(s, "ConfigMap/ns/gone"), "5");
    cr_assert_eq(role_count(s, "main"), 4, "same, new, the ServiceAccount and the ConfigMap");
    cr_assert_eq(role_count(s, "peer"), 1);

    /* Without a change list; an empty list empties the scope only. */
    cr_assert_eq(store_replace_scope(s, "Service/", cJSON_CreateArray(), NULL, NULL), KERR_OK);
    cr_assert_eq(store_count(s), 2);
    cr_assert_eq(role_count(s, "peer"), 0);
    cr_assert_eq(role_count(s, "main"), 2);
    store_free(s);
}

Test(store_scope, replaces_its_scope_only_tree)
{
    replaces_its_scope_only(0);
}

Test(store_scope, replaces_its_scope_only_compact)
{
    replaces_its_scope_only(1);
}

Test(store_scope, an_item_outside_the_scope_changes_nothing)
{
    struct store *s = new_store(1);
    cJSON *items = cJSON_CreateArray();
    struct kerr_info err;

    cr_assert_eq(store_put(s, mk("Service", "a", "1", "main"), NULL, NULL, NULL), KERR_OK);
    cJSON_AddItemToArray(items, mk("Service", "b", "2", "main"));
    cJSON_AddItemToArray(items, mk("Lease", "c", "3", "main"));
    cr_assert_eq(store_replace_scope(s, "Service/", items, NULL, &err), KERR_INVAL);
    cr_assert_str_eq(err.msg, "store: Lease/ns/c is outside the scope Service/");
    cr_assert_eq(store_count(s), 1);
    cr_assert_str_eq(rv_in(s, "Service/ns/a"), "1");
    store_free(s);
}

/* A writer relisting its own kind over and over. */
struct writer {
    struct store *s;
    const char *kind;
    char scope[32];
    int rounds;
    enum kerr rc;
};

static void *relist(void *arg)
{
    struct writer *w = arg;
    struct store_changes ch;
    char name[16], rv[16];
    cJSON *items;
    int r, i;

    for (r = 1; r <= w->rounds && !w->rc; r++) {
        items = cJSON_CreateArray();
        for (i = r % 2; i < 200; i += 1 + r % 2) { /* every object, then every other one */
            snprintf(name, sizeof(name), "o%d", i);
            snprintf(rv, sizeof(rv), "%d", r);
            cJSON_AddItemToArray(items, raw(mk(w->kind, name, rv, w->kind)));
        }
        store_changes_init(&ch);
        w->rc = store_replace_scope(w->s, w->scope, items, &ch, NULL);
        store_changes_release(&ch);
    }
    return NULL;
}

Test(store_scope, writers_of_different_scopes_at_once)
{
    struct store *s = new_store(1);
    struct writer w[3] = { { .kind = "Service" },
                           { .kind = "ServiceAccount" },
                           { .kind = "Lease" } };
    pthread_t t[3];
    int i;

    for (i = 0; i < 3; i++) {
        w[i].s = s;
        w[i].rounds = 50 + i;
        snprintf(w[i].scope, sizeof(w[i].scope), "%s/", w[i].kind);
        cr_assert_eq(pthread_create(&t[i], NULL, relist, &w[i]), 0);
    }
    for (i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        cr_assert_eq(w[i].rc, KERR_OK);
    }
    /* round 50 (even): every object; 51 (odd): o1, o3, ...; 52 (even): every object */
    cr_assert_eq(role_count(s, "Service"), 200);
    cr_assert_eq(role_count(s, "ServiceAccount"), 100);
    cr_assert_eq(role_count(s, "Lease"), 200);
    cr_assert_eq(store_count(s), 500);
    cr_assert_str_eq(rv_in(s, "ServiceAccount/ns/o1"), "51");
    cr_assert_str_eq(rv_in(s, "ServiceAccount/ns/o0"), "absent");
    cr_assert_str_eq(rv_in(s, "Lease/ns/o0"), "52");
    store_free(s);
}

Test(store_scope, lazy_changes_carry_no_new_objects)
{
    struct store *s = new_store(1);
    struct store_changes ch;
    cJSON *items = cJSON_CreateArray();
    size_t i;

    cr_assert_eq(store_put(s, mk("Lease", "a", "1", "main"), NULL, NULL, NULL), KERR_OK);
    cr_assert_eq(store_put(s, mk("Lease", "b", "2", "main"), NULL, NULL, NULL), KERR_OK);
    cJSON_AddItemToArray(items, raw(mk("Lease", "a", "3", "main")));
    cJSON_AddItemToArray(items, raw(mk("Lease", "c", "4", "main")));
    store_changes_init(&ch);
    ch.lazy_new = 1;
    cr_assert_eq(store_replace_scope(s, "Lease/", items, &ch, NULL), KERR_OK);
    cr_assert_eq(ch.n, 3);
    for (i = 0; i < ch.n; i++)
        cr_assert_null(ch.v[i].new_obj, "%s", ch.v[i].key);
    cr_assert_eq(find(&ch, "Lease/ns/a")->kind, STORE_UPDATED);
    cr_assert_str_eq(kjson_get_str(find(&ch, "Lease/ns/a")->old_obj, "metadata.resourceVersion"),
                     "1");
    cr_assert_eq(find(&ch, "Lease/ns/c")->kind, STORE_ADDED);
    cr_assert_eq(find(&ch, "Lease/ns/b")->kind, STORE_DELETED);
    cr_assert_not_null(find(&ch, "Lease/ns/b")->old_obj);
    cr_assert_str_eq(rv_in(s, "Lease/ns/a"), "3", "the new object is the store's");
    store_changes_release(&ch);
    store_free(s);
}
