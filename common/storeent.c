/* storeent - see storeent.h. The data of an entry is a cJSON tree, or its compact text. */
#include "common/storeent.h"

#include <stdlib.h>
#include <string.h>

#include "common/jarena.h"
#include "common/kobj.h"
#include "common/strlist.h"

enum kerr storeent_project(const struct storeent_codec *c, const cJSON *obj, cJSON **out,
                           struct kerr_info *err)
{
    enum kerr rc;

    *out = NULL;
    if (!c->opts.project) {
        *out = cJSON_Duplicate(obj, 1);
        return *out ? KERR_OK : kerr_set(err, KERR_NOMEM, "store: cannot copy object");
    }
    rc = c->opts.project(c->opts.project_ctx, obj, out);
    if (rc != KERR_OK)
        return kerr_set(err, rc, "store: projection failed: %s", kerr_str(rc));
    return KERR_OK;
}

void storeent_free_data(const struct storeent_codec *c, void *data)
{
    if (c->opts.compact)
        free(data);
    else
        cJSON_Delete(data);
}

void storeent_free_cb(void *arg, void *data)
{
    storeent_free_data(arg, data);
}

enum kerr storeent_copy(const struct storeent_codec *c, const void *data, cJSON **out)
{
    if (c->opts.compact)
        *out = cJSON_ParseWithLength(data, strlen(data));
    else
        *out = cJSON_Duplicate(data, 1);
    return *out ? KERR_OK : KERR_NOMEM;
}

enum kerr storeent_take(const struct storeent_codec *c, struct itab_entry *e, cJSON **out)
{
    if (c->opts.compact)
        return storeent_copy(c, e->data, out);
    *out = e->data;
    e->data = NULL;
    return KERR_OK;
}

enum kerr storeent_retire(const struct storeent_codec *c, struct itab_entry *e, cJSON **obj_out)
{
    enum kerr rc = KERR_OK;

    if (!e)
        return KERR_OK;
    if (obj_out)
        rc = storeent_take(c, e, obj_out);
    storeent_free_data(c, e->data);
    itab_entry_free(e);
    return rc;
}

int storeent_differs(const struct storeent_codec *c, const struct itab_entry *a,
                     const struct itab_entry *b)
{
    if (c->opts.compact)
        return strcmp(a->data, b->data) != 0;
    return !cJSON_Compare(a->data, b->data, 1);
}

/* The unlinked entry for proj (BORROWED) under key: its index values computed. */
static enum kerr new_entry(const struct storeent_codec *c, const char *key, const cJSON *proj,
                           struct itab_entry **out, struct kerr_info *err)
{
    struct strlist *vals = calloc(c->nidx ? c->nidx : 1, sizeof(*vals));
    struct itab_value *iv = NULL;
    size_t i, j, n = 0;
    enum kerr rc = vals ? KERR_OK : KERR_NOMEM;

    *out = NULL;
    for (i = 0; i < c->nidx && rc == KERR_OK; i++) {
        rc = c->idx[i].fn(c->idx[i].ctx, proj, &vals[i]);
        n += vals[i].n;
    }
    if (rc == KERR_OK && n && !(iv = calloc(n, sizeof(*iv))))
        rc = KERR_NOMEM;
    for (i = 0, n = 0; rc == KERR_OK && i < c->nidx; i++) {
        for (j = 0; j < vals[i].n; j++) {
            iv[n].index = i;
            iv[n++].value = vals[i].v[j];
        }
    }
    if (rc == KERR_OK)
        rc = itab_entry_new(key, iv, n, out);
    for (i = 0; vals && i < c->nidx; i++)
        strlist_release(&vals[i]);
    free(vals);
    free(iv);
    if (rc != KERR_OK)
        return kerr_set(err, rc, "store: index values of %s: %s", key, kerr_str(rc));
    return KERR_OK;
}

/* Give e its data from proj (TAKES); *tree_out (optional) receives a copy of the object. */
static enum kerr set_data(const struct storeent_codec *c, struct itab_entry *e, cJSON *proj,
                          cJSON **tree_out)
{
    if (c->opts.compact) {
        e->data = cJSON_PrintUnformatted(proj);
        if (tree_out && e->data)
            *tree_out = proj;
        else
            cJSON_Delete(proj);
        return e->data ? KERR_OK : KERR_NOMEM;
    }
    if (tree_out && !(*tree_out = cJSON_Duplicate(proj, 1))) {
        cJSON_Delete(proj);
        return KERR_NOMEM;
    }
    e->data = proj;
    return KERR_OK;
}

enum kerr storeent_key(const struct storeent_codec *c, const cJSON *obj, char *out, size_t n,
                       struct kerr_info *err)
{
    if (c->opts.key)
        return c->opts.key(c->opts.key_ctx, obj, out, n, err);
    return kobj_key_of(obj, out, n, err);
}

/*
 * A raw item (TAKES) holding an object's compact text, for a compact store
 * without a projection: the text is kept as it is, parsed only for the key
 * and the index values.
 */
static enum kerr prepare_text(const struct storeent_codec *c, cJSON *raw, struct itab_entry **out,
                              cJSON **tree_out, struct kerr_info *err)
{
    char key[STORE_KEY_MAX];
    cJSON *tree = jarena_parse(raw->valuestring, strlen(raw->valuestring), NULL);
    struct itab_entry *e = NULL;
    enum kerr rc = tree ? KERR_OK : kerr_set(err, KERR_INVAL, "store: a raw item is not JSON");

    if (rc == KERR_OK)
        rc = storeent_key(c, tree, key, sizeof(key), err);
    if (rc == KERR_OK)
        rc = new_entry(c, key, tree, &e, err);
    if (rc == KERR_OK && tree_out && !(*tree_out = cJSON_Duplicate(tree, 1))) {
        itab_entry_free(e);
        rc = kerr_set(err, KERR_NOMEM, "store: cannot copy %s", key);
    }
    if (rc == KERR_OK) {
        e->data = raw->valuestring; /* the item's text becomes the entry's */
        raw->valuestring = NULL;
        *out = e;
    }
    jarena_delete(tree);
    cJSON_Delete(raw);
    return rc;
}

enum kerr storeent_prepare(const struct storeent_codec *c, cJSON *obj, struct itab_entry **out,
                           cJSON **tree_out, struct kerr_info *err)
{
    char key[STORE_KEY_MAX];
    cJSON *proj = NULL;
    struct itab_entry *e = NULL;
    enum kerr rc = KERR_OK;

    *out = NULL;
    if (tree_out)
        *tree_out = NULL;
    if (c->opts.compact && !c->opts.project && cJSON_IsRaw(obj) && obj->valuestring)
        return prepare_text(c, obj, out, tree_out, err);
    if (c->opts.project) {
        rc = storeent_project(c, obj, &proj, err);
        cJSON_Delete(obj);
    } else {
        proj = obj; /* taken as it is: no copy */
    }
    if (rc == KERR_OK)
        rc = storeent_key(c, proj, key, sizeof(key), err);
    if (rc == KERR_OK)
        rc = new_entry(c, key, proj, &e, err);
    if (rc != KERR_OK) {
        cJSON_Delete(proj);
        return rc;
    }
    rc = set_data(c, e, proj, tree_out);
    if (rc != KERR_OK) {
        itab_entry_free(e);
        return kerr_set(err, rc, "store: cannot store %s", key);
    }
    *out = e;
    return KERR_OK;
}
