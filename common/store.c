#include "common/store.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/itab.h"
#include "common/kjson.h"

const char *const STORE_META_PATHS[] = {
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "metadata.resourceVersion",
    "metadata.generation",
    "metadata.labels",
    "metadata.annotations",
    "metadata.deletionTimestamp",
    "metadata.ownerReferences",
    "status.lastOperation",
    NULL,
};

struct index_fn {
    store_index_fn fn;
    void *ctx;
};

struct store {
    pthread_rwlock_t lock;
    struct store_opts opts;
    struct itab t;        /* entries; data is a cJSON tree or, compact, its text */
    struct index_fn *fns; /* one per index of t, same order */
};

/* ---- lists ---- */

void store_strs_init(struct store_strs *l)
{
    memset(l, 0, sizeof(*l));
}

void store_strs_release(struct store_strs *l)
{
    size_t i;

    for (i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof(*l));
}

enum kerr store_strs_add(struct store_strs *l, const char *s)
{
    char **nv;
    size_t ncap;

    if (l->n == l->cap) {
        ncap = l->cap ? l->cap * 2 : 8;
        nv = realloc(l->v, ncap * sizeof(*nv));
        if (!nv)
            return KERR_NOMEM;
        l->v = nv;
        l->cap = ncap;
    }
    l->v[l->n] = strdup(s);
    if (!l->v[l->n])
        return KERR_NOMEM;
    l->n++;
    return KERR_OK;
}

int store_strs_has(const struct store_strs *l, const char *s)
{
    size_t i;

    for (i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0)
            return 1;
    return 0;
}

void store_changes_init(struct store_changes *c)
{
    memset(c, 0, sizeof(*c));
}

void store_changes_release(struct store_changes *c)
{
    size_t i;

    for (i = 0; i < c->n; i++) {
        free(c->v[i].key);
        cJSON_Delete(c->v[i].old_obj);
        cJSON_Delete(c->v[i].new_obj);
    }
    free(c->v);
    memset(c, 0, sizeof(*c));
}

/* Append a change; TAKES key and old_obj (freed on failure). */
static enum kerr changes_add(struct store_changes *c, enum store_change_kind kind, char *key,
                             cJSON *old_obj)
{
    struct store_change *nv;
    size_t ncap;

    if (c->n == c->cap) {
        ncap = c->cap ? c->cap * 2 : 16;
        nv = realloc(c->v, ncap * sizeof(*nv));
        if (!nv) {
            free(key);
            cJSON_Delete(old_obj);
            return KERR_NOMEM;
        }
        c->v = nv;
        c->cap = ncap;
    }
    c->v[c->n].kind = kind;
    c->v[c->n].key = key;
    c->v[c->n].old_obj = old_obj;
    c->v[c->n].new_obj = NULL;
    c->n++;
    return KERR_OK;
}

/* ---- keys, projection, index functions ---- */

enum kerr store_key_of(const cJSON *obj, char *out, size_t n, struct kerr_info *err)
{
    const char *name = kjson_get_str(obj, "metadata.name");
    const char *ns = kjson_get_str(obj, "metadata.namespace");
    int len;

    if (n)
        out[0] = '\0';
    if (!name || !*name)
        return kerr_set(err, KERR_INVAL, "object has no metadata.name");
    if (ns && *ns)
        len = snprintf(out, n, "%s/%s", ns, name);
    else
        len = snprintf(out, n, "%s", name);
    if (len < 0 || (size_t)len >= n)
        return kerr_set(err, KERR_TOOBIG, "object key longer than %zu bytes", n);
    return KERR_OK;
}

enum kerr store_project_paths(void *ctx, const cJSON *obj, cJSON **out)
{
    const char *const *paths = ctx;
    const cJSON *v;
    cJSON *res, *copy;
    size_t i;

    *out = NULL;
    res = cJSON_CreateObject();
    if (!res)
        return KERR_NOMEM;
    for (i = 0; paths && paths[i]; i++) {
        v = kjson_get(obj, paths[i]);
        if (!v)
            continue;
        copy = cJSON_Duplicate(v, 1);
        if (!copy || kjson_set(res, paths[i], copy, NULL) != KERR_OK) {
            cJSON_Delete(res);
            return KERR_NOMEM;
        }
    }
    *out = res;
    return KERR_OK;
}

enum kerr store_project(const struct store *s, const cJSON *obj, cJSON **out, struct kerr_info *err)
{
    enum kerr rc;

    *out = NULL;
    if (!s->opts.project) {
        *out = cJSON_Duplicate(obj, 1);
        return *out ? KERR_OK : kerr_set(err, KERR_NOMEM, "store: cannot copy object");
    }
    rc = s->opts.project(s->opts.project_ctx, obj, out);
    if (rc != KERR_OK)
        return kerr_set(err, rc, "store: projection failed: %s", kerr_str(rc));
    return KERR_OK;
}

static enum kerr add_str_value(const char *v, struct store_strs *values)
{
    if (!v || !*v)
        return KERR_OK;
    return store_strs_add(values, v);
}

enum kerr store_index_namespace(void *ctx, const cJSON *obj, struct store_strs *values)
{
    (void)ctx;
    return add_str_value(kjson_get_str(obj, "metadata.namespace"), values);
}

enum kerr store_index_label(void *ctx, const cJSON *obj, struct store_strs *values)
{
    const cJSON *labels = kjson_get_obj(obj, "metadata.labels");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(labels, (const char *)ctx);

    return cJSON_IsString(v) ? store_strs_add(values, v->valuestring) : KERR_OK;
}

enum kerr store_index_owner_uid(void *ctx, const cJSON *obj, struct store_strs *values)
{
    const cJSON *refs = kjson_get_arr(obj, "metadata.ownerReferences");
    const cJSON *ref;
    enum kerr rc;

    (void)ctx;
    cJSON_ArrayForEach (ref, refs) {
        rc = add_str_value(kjson_get_str(ref, "uid"), values);
        if (rc != KERR_OK)
            return rc;
    }
    return KERR_OK;
}

/* ---- entries ---- */

static void free_data(const struct store *s, void *data)
{
    if (s->opts.compact)
        free(data);
    else
        cJSON_Delete(data);
}

static void free_data_cb(void *arg, void *data)
{
    free_data(arg, data);
}

/* A new tree from an entry's data (copy or parse); NULL on allocation failure. */
static cJSON *data_copy(const struct store *s, const void *data)
{
    if (s->opts.compact)
        return cJSON_ParseWithLength(data, strlen(data));
    return cJSON_Duplicate(data, 1);
}

/* Free an entry taken out of the table, handing its object to *obj_out when asked. */
static enum kerr retire(const struct store *s, struct itab_entry *e, cJSON **obj_out)
{
    enum kerr rc = KERR_OK;

    if (!e)
        return KERR_OK;
    if (obj_out && !s->opts.compact) {
        *obj_out = e->data;
        e->data = NULL;
    } else if (obj_out) {
        *obj_out = data_copy(s, e->data);
        rc = *obj_out ? KERR_OK : KERR_NOMEM;
    }
    free_data(s, e->data);
    itab_entry_free(e);
    return rc;
}

/* The unlinked entry for proj (BORROWED) under key: its index values computed. */
static enum kerr new_entry(struct store *s, const char *key, const cJSON *proj,
                           struct itab_entry **out, struct kerr_info *err)
{
    struct store_strs *vals = calloc(s->t.nidx ? s->t.nidx : 1, sizeof(*vals));
    struct itab_value *iv = NULL;
    size_t i, j, n = 0;
    enum kerr rc = vals ? KERR_OK : KERR_NOMEM;

    *out = NULL;
    for (i = 0; i < s->t.nidx && rc == KERR_OK; i++) {
        rc = s->fns[i].fn(s->fns[i].ctx, proj, &vals[i]);
        n += vals[i].n;
    }
    if (rc == KERR_OK && n && !(iv = calloc(n, sizeof(*iv))))
        rc = KERR_NOMEM;
    for (i = 0, n = 0; rc == KERR_OK && i < s->t.nidx; i++) {
        for (j = 0; j < vals[i].n; j++) {
            iv[n].index = i;
            iv[n++].value = vals[i].v[j];
        }
    }
    if (rc == KERR_OK)
        rc = itab_entry_new(key, iv, n, out);
    for (i = 0; vals && i < s->t.nidx; i++)
        store_strs_release(&vals[i]);
    free(vals);
    free(iv);
    if (rc != KERR_OK)
        return kerr_set(err, rc, "store: index values of %s: %s", key, kerr_str(rc));
    return KERR_OK;
}

/* Give e its data from proj (TAKES); *tree_out (optional) receives a copy of the object. */
static enum kerr set_data(struct store *s, struct itab_entry *e, cJSON *proj, cJSON **tree_out)
{
    if (s->opts.compact) {
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

/*
 * Build an unlinked entry from obj (TAKES): projection, key, index values,
 * data. *tree_out (optional) receives a copy of the stored object.
 */
static enum kerr prepare(struct store *s, cJSON *obj, struct itab_entry **out, cJSON **tree_out,
                         struct kerr_info *err)
{
    char key[STORE_KEY_MAX];
    cJSON *proj = NULL;
    struct itab_entry *e = NULL;
    enum kerr rc;

    *out = NULL;
    rc = store_project(s, obj, &proj, err);
    cJSON_Delete(obj);
    if (rc == KERR_OK)
        rc = store_key_of(proj, key, sizeof(key), err);
    if (rc == KERR_OK)
        rc = new_entry(s, key, proj, &e, err);
    if (rc != KERR_OK) {
        cJSON_Delete(proj);
        return rc;
    }
    rc = set_data(s, e, proj, tree_out);
    if (rc != KERR_OK) {
        itab_entry_free(e);
        return kerr_set(err, rc, "store: cannot store %s", key);
    }
    *out = e;
    return KERR_OK;
}

/* ---- lifecycle ---- */

/*
 * Writers first: glibc's default lets a steady stream of readers (admission
 * requests) starve the informer's writes. No reader takes the lock twice, so
 * the non-recursive writer preference cannot deadlock.
 */
static int init_lock(pthread_rwlock_t *lock)
{
    pthread_rwlockattr_t attr;
    int rc;

    if (pthread_rwlockattr_init(&attr) != 0)
        return -1;
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    rc = pthread_rwlock_init(lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    return rc;
}

enum kerr store_new(const struct store_opts *opts, struct store **out, struct kerr_info *err)
{
    struct store *s;

    *out = NULL;
    s = calloc(1, sizeof(*s));
    if (!s)
        return kerr_set(err, KERR_NOMEM, "store: out of memory");
    if (opts)
        s->opts = *opts;
    if (itab_init(&s->t) != KERR_OK) {
        free(s);
        return kerr_set(err, KERR_NOMEM, "store: out of memory");
    }
    if (init_lock(&s->lock) != 0) {
        itab_release(&s->t, NULL, NULL);
        free(s);
        return kerr_set(err, KERR_INTERNAL, "store: cannot create the lock");
    }
    *out = s;
    return KERR_OK;
}

void store_free(struct store *s)
{
    if (!s)
        return;
    itab_release(&s->t, free_data_cb, s);
    free(s->fns);
    pthread_rwlock_destroy(&s->lock);
    free(s);
}

enum kerr store_add_index(struct store *s, const char *name, store_index_fn fn, void *ctx,
                          struct kerr_info *err)
{
    struct index_fn *nv;
    enum kerr rc = KERR_INVAL;

    pthread_rwlock_wrlock(&s->lock);
    if (!name || !fn || s->t.count || itab_index_of(&s->t, name) >= 0)
        goto out;
    rc = KERR_NOMEM;
    nv = realloc(s->fns, (s->t.nidx + 1) * sizeof(*nv));
    if (!nv)
        goto out;
    s->fns = nv;
    nv[s->t.nidx].fn = fn;
    nv[s->t.nidx].ctx = ctx;
    rc = itab_add_index(&s->t, name);
out:
    pthread_rwlock_unlock(&s->lock);
    if (rc != KERR_OK)
        return kerr_set(err, rc,
                        "store: cannot add index %s (the store must be empty, names unique)",
                        name ? name : "(null)");
    return KERR_OK;
}

/* ---- writes ---- */

enum kerr store_put(struct store *s, cJSON *obj, cJSON **old_out, cJSON **new_out,
                    struct kerr_info *err)
{
    struct itab_entry *e = NULL, *old;
    enum kerr rc;

    if (old_out)
        *old_out = NULL;
    if (new_out)
        *new_out = NULL;
    rc = prepare(s, obj, &e, new_out, err);
    if (rc != KERR_OK)
        return rc;
    pthread_rwlock_wrlock(&s->lock);
    old = itab_put(&s->t, e);
    pthread_rwlock_unlock(&s->lock);
    if (retire(s, old, old_out) != KERR_OK)
        return kerr_set(err, KERR_NOMEM, "store: stored, but cannot copy the old object");
    return KERR_OK;
}

enum kerr store_remove(struct store *s, const char *key, cJSON **old_out, struct kerr_info *err)
{
    struct itab_entry *e;

    if (old_out)
        *old_out = NULL;
    pthread_rwlock_wrlock(&s->lock);
    e = itab_del(&s->t, key);
    pthread_rwlock_unlock(&s->lock);
    if (!e)
        return kerr_set(err, KERR_NOTFOUND, "store: %s not found", key);
    if (retire(s, e, old_out) != KERR_OK)
        return kerr_set(err, KERR_NOMEM, "store: removed, but cannot copy the object");
    return KERR_OK;
}

/* Build the new content in fresh (no indexes); a later key replaces an earlier one. */
static enum kerr prepare_all(struct store *s, cJSON *items, struct itab *fresh,
                             struct kerr_info *err)
{
    struct itab_entry *e;
    cJSON *item;
    enum kerr rc;

    while ((item = cJSON_DetachItemFromArray(items, 0))) {
        rc = prepare(s, item, &e, NULL, err);
        if (rc != KERR_OK)
            return rc;
        retire(s, itab_put(fresh, e), NULL);
    }
    return KERR_OK;
}

static int differs(const struct store *s, const struct itab_entry *a, const struct itab_entry *b)
{
    if (s->opts.compact)
        return strcmp(a->data, b->data) != 0;
    return !cJSON_Compare(a->data, b->data, 1);
}

struct diff {
    struct store *s;
    struct itab *old;
    struct store_changes *c;
    struct itab_entry **tail; /* queue of the old entries of UPDATED changes, in order */
    enum kerr rc;
};

/*
 * Under the write lock, for each new entry: take the old entry of its key out
 * of old. A changed pair becomes an UPDATED change (its old entry queued), a
 * new key an ADDED one; an unchanged old entry is freed.
 */
static enum kerr diff_one(void *arg, struct itab_entry *e)
{
    struct diff *d = arg;
    struct itab_entry *o = itab_del(d->old, e->key);
    char *key;
    enum kerr r;

    if (o && !differs(d->s, o, e)) {
        retire(d->s, o, NULL);
        return KERR_OK;
    }
    key = strdup(e->key);
    r = key ? changes_add(d->c, o ? STORE_UPDATED : STORE_ADDED, key, NULL) : KERR_NOMEM;
    if (r != KERR_OK) {
        retire(d->s, o, NULL);
        d->rc = r;
    } else if (o) {
        *d->tail = o;
        d->tail = &o->next;
    }
    return KERR_OK;
}

/* Outside the lock: the objects of the changes from first on (dropping changes that lost theirs).
 */
static enum kerr fill_changes(struct store *s, struct store_changes *c, size_t first,
                              struct itab_entry *updated)
{
    struct itab_entry *o;
    size_t i, keep = first;
    enum kerr rc = KERR_OK, r, r2;

    for (i = first; i < c->n; i++) {
        struct store_change ch = c->v[i];

        r2 = KERR_OK;
        if (ch.kind == STORE_UPDATED) {
            o = updated;
            updated = o->next;
            r2 = retire(s, o, &ch.old_obj);
        }
        r = store_get(s, ch.key, &ch.new_obj, NULL);
        if (r == KERR_OK && r2 == KERR_OK) {
            c->v[keep++] = ch;
            continue;
        }
        if (r != KERR_NOTFOUND)
            rc = KERR_NOMEM;
        free(ch.key);
        cJSON_Delete(ch.old_obj);
        cJSON_Delete(ch.new_obj);
    }
    c->n = keep;
    return rc;
}

struct deleted {
    struct store *s;
    struct store_changes *c;
    enum kerr rc;
};

/* Outside the lock, for each entry left in old: a DELETED change taking its object. */
static enum kerr add_deleted(void *arg, struct itab_entry *o)
{
    struct deleted *d = arg;
    char *key = strdup(o->key);
    cJSON *obj;

    if (!d->s->opts.compact) {
        obj = o->data;
        o->data = NULL;
    } else {
        obj = data_copy(d->s, o->data);
    }
    if (!key || !obj) {
        free(key);
        cJSON_Delete(obj);
        d->rc = KERR_NOMEM;
    } else if (changes_add(d->c, STORE_DELETED, key, obj) != KERR_OK) {
        d->rc = KERR_NOMEM;
    }
    return KERR_OK;
}

enum kerr store_replace(struct store *s, cJSON *items, struct store_changes *changes,
                        struct kerr_info *err)
{
    struct itab fresh, old;
    struct itab_entry *updated = NULL;
    struct diff d = { s, &old, changes, &updated, KERR_OK };
    struct deleted del = { s, changes, KERR_OK };
    size_t first = changes ? changes->n : 0;
    enum kerr rc;

    if (!cJSON_IsArray(items)) {
        cJSON_Delete(items);
        return kerr_set(err, KERR_INVAL, "store: replace needs an array of objects");
    }
    rc = itab_init(&fresh);
    if (rc == KERR_OK)
        rc = prepare_all(s, items, &fresh, err);
    else
        kerr_set(err, rc, "store: out of memory");
    cJSON_Delete(items);
    if (rc != KERR_OK) {
        itab_release(&fresh, free_data_cb, s);
        return rc;
    }
    pthread_rwlock_wrlock(&s->lock);
    itab_swap(&s->t, &fresh, &old);
    if (changes)
        itab_walk(&s->t, diff_one, &d);
    pthread_rwlock_unlock(&s->lock);
    rc = d.rc;
    if (changes) {
        rc = fill_changes(s, changes, first, updated) != KERR_OK ? KERR_NOMEM : rc;
        itab_walk(&old, add_deleted, &del);
        rc = del.rc != KERR_OK ? del.rc : rc;
    }
    itab_release(&old, free_data_cb, s);
    if (rc != KERR_OK)
        return kerr_set(err, rc, "store: replaced, but the list of changes is incomplete");
    return KERR_OK;
}

/* ---- reads ---- */

size_t store_count(struct store *s)
{
    size_t n;

    pthread_rwlock_rdlock(&s->lock);
    n = s->t.count;
    pthread_rwlock_unlock(&s->lock);
    return n;
}

struct visit {
    const struct store *s;
    store_view_fn fn; /* visit_view */
    void *ctx;        /* visit_view: fn's; visit_key: a store_strs; visit_copy: a cJSON array */
};

static enum kerr visit_view(void *arg, struct itab_entry *e)
{
    struct visit *v = arg;
    cJSON *tmp;
    enum kerr rc;

    if (!v->s->opts.compact)
        return v->fn(v->ctx, e->key, e->data);
    tmp = data_copy(v->s, e->data);
    if (!tmp)
        return KERR_NOMEM;
    rc = v->fn(v->ctx, e->key, tmp);
    cJSON_Delete(tmp);
    return rc;
}

static enum kerr visit_key(void *arg, struct itab_entry *e)
{
    struct visit *v = arg;

    return store_strs_add(v->ctx, e->key);
}

static enum kerr visit_copy(void *arg, struct itab_entry *e)
{
    struct visit *v = arg;
    cJSON *copy = data_copy(v->s, e->data);

    if (!copy || !cJSON_AddItemToArray(v->ctx, copy)) {
        cJSON_Delete(copy);
        return KERR_NOMEM;
    }
    return KERR_OK;
}

enum kerr store_get(struct store *s, const char *key, cJSON **out, struct kerr_info *err)
{
    struct itab_entry *e;

    *out = NULL;
    pthread_rwlock_rdlock(&s->lock);
    e = itab_get(&s->t, key);
    if (e)
        *out = data_copy(s, e->data);
    pthread_rwlock_unlock(&s->lock);
    if (!e)
        return kerr_set(err, KERR_NOTFOUND, "store: %s not found", key);
    if (!*out)
        return kerr_set(err, KERR_NOMEM, "store: cannot copy %s", key);
    return KERR_OK;
}

enum kerr store_view(struct store *s, const char *key, store_view_fn fn, void *ctx,
                     struct kerr_info *err)
{
    struct visit v = { s, fn, ctx };
    struct itab_entry *e;
    enum kerr rc = KERR_NOTFOUND;

    pthread_rwlock_rdlock(&s->lock);
    e = itab_get(&s->t, key);
    if (e)
        rc = visit_view(&v, e);
    pthread_rwlock_unlock(&s->lock);
    if (!e)
        return kerr_set(err, KERR_NOTFOUND, "store: %s not found", key);
    return rc;
}

/* Walk everything (index NULL) or one index value under the read lock. */
static enum kerr walk(struct store *s, const char *index, const char *value, itab_visit_fn fn,
                      struct visit *v, struct kerr_info *err)
{
    long i = -1;
    enum kerr rc = KERR_OK;

    pthread_rwlock_rdlock(&s->lock);
    if (index)
        i = itab_index_of(&s->t, index);
    if (!index)
        rc = itab_walk(&s->t, fn, v);
    else if (i >= 0)
        rc = itab_walk_index(&s->t, (size_t)i, value, fn, v);
    pthread_rwlock_unlock(&s->lock);
    if (index && i < 0)
        return kerr_set(err, KERR_NOTFOUND, "store: no index %s", index);
    if (rc != KERR_OK)
        return kerr_set(err, rc, "store: walk stopped: %s", kerr_str(rc));
    return KERR_OK;
}

enum kerr store_foreach(struct store *s, store_view_fn fn, void *ctx, struct kerr_info *err)
{
    struct visit v = { s, fn, ctx };

    return walk(s, NULL, NULL, visit_view, &v, err);
}

enum kerr store_keys(struct store *s, struct store_strs *out, struct kerr_info *err)
{
    struct visit v = { s, NULL, out };

    return walk(s, NULL, NULL, visit_key, &v, err);
}

enum kerr store_index_keys(struct store *s, const char *index, const char *value,
                           struct store_strs *out, struct kerr_info *err)
{
    struct visit v = { s, NULL, out };

    return walk(s, index, value, visit_key, &v, err);
}

enum kerr store_index_list(struct store *s, const char *index, const char *value, cJSON **out,
                           struct kerr_info *err)
{
    struct visit v = { s, NULL, NULL };
    enum kerr rc;

    *out = cJSON_CreateArray();
    if (!*out)
        return kerr_set(err, KERR_NOMEM, "store: out of memory");
    v.ctx = *out;
    rc = walk(s, index, value, visit_copy, &v, err);
    if (rc != KERR_OK) {
        cJSON_Delete(*out);
        *out = NULL;
    }
    return rc;
}

enum kerr store_index_view(struct store *s, const char *index, const char *value, store_view_fn fn,
                           void *ctx, struct kerr_info *err)
{
    struct visit v = { s, fn, ctx };

    return walk(s, index, value, visit_view, &v, err);
}
