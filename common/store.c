/*
 * store - see store.h. The table (common/itab) and the codec of its entries
 * (common/storeent: projection, key, index values, tree or text) are
 * separate modules; this file adds the lock, relists and the reads.
 */
#include "common/store.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/itab.h"
#include "common/jarena.h"
#include "common/storeent.h"

struct store {
    pthread_rwlock_t lock;
    struct storeent_codec codec; /* its idx is fns */
    struct itab t;               /* entries; data is a cJSON tree or, compact, its text */
    struct storeent_index *fns;  /* one per index of t, same order */
};

/* ---- lists ---- */

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

/* ---- projection ---- */

enum kerr store_project(const struct store *s, const cJSON *obj, cJSON **out, struct kerr_info *err)
{
    return storeent_project(&s->codec, obj, out, err);
}

enum kerr store_key_of(const struct store *s, const cJSON *obj, char *out, size_t n,
                       struct kerr_info *err)
{
    return storeent_key(&s->codec, obj, out, n, err);
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
        s->codec.opts = *opts;
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
    itab_release(&s->t, storeent_free_cb, &s->codec);
    free(s->fns);
    pthread_rwlock_destroy(&s->lock);
    free(s);
}

enum kerr store_add_index(struct store *s, const char *name, store_index_fn fn, void *ctx,
                          struct kerr_info *err)
{
    struct storeent_index *nv;
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
    if (rc == KERR_OK) {
        s->codec.idx = s->fns;
        s->codec.nidx = s->t.nidx;
    }
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
    rc = storeent_prepare(&s->codec, obj, &e, new_out, err);
    if (rc != KERR_OK)
        return rc;
    pthread_rwlock_wrlock(&s->lock);
    old = itab_put(&s->t, e);
    pthread_rwlock_unlock(&s->lock);
    if (storeent_retire(&s->codec, old, old_out) != KERR_OK)
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
    if (storeent_retire(&s->codec, e, old_out) != KERR_OK)
        return kerr_set(err, KERR_NOMEM, "store: removed, but cannot copy the object");
    return KERR_OK;
}

/* Remove the earlier of the two places of key in order (its last entry is the later one). */
static void drop_earlier(struct strlist *order, const char *key)
{
    size_t i = order->n - 1;

    while (i-- > 0) {
        if (strcmp(order->v[i], key) == 0) {
            free(order->v[i]);
            memmove(&order->v[i], &order->v[i + 1], (order->n - i - 1) * sizeof(order->v[0]));
            order->n--;
            return;
        }
    }
}

/*
 * Build the new content in fresh (no indexes); a later key replaces an
 * earlier one. order (optional) receives the keys in list order, each once,
 * at the place of the item that won.
 */
static enum kerr prepare_all(struct store *s, cJSON *items, struct itab *fresh,
                             struct strlist *order, struct kerr_info *err)
{
    struct itab_entry *e, *replaced;
    cJSON *item;
    enum kerr rc;

    while ((item = cJSON_DetachItemFromArray(items, 0))) {
        rc = storeent_prepare(&s->codec, item, &e, NULL, err);
        if (rc != KERR_OK)
            return rc;
        if (order && strlist_add(order, e->key) != KERR_OK) {
            storeent_retire(&s->codec, e, NULL);
            return kerr_set(err, KERR_NOMEM, "store: out of memory");
        }
        replaced = itab_put(fresh, e);
        if (replaced && order)
            drop_earlier(order, e->key);
        storeent_retire(&s->codec, replaced, NULL);
    }
    return KERR_OK;
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

    if (o && !storeent_differs(&d->s->codec, o, e)) {
        storeent_retire(&d->s->codec, o, NULL);
        return KERR_OK;
    }
    key = strdup(e->key);
    r = key ? changes_add(d->c, o ? STORE_UPDATED : STORE_ADDED, key, NULL) : KERR_NOMEM;
    if (r != KERR_OK) {
        storeent_retire(&d->s->codec, o, NULL);
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
            r2 = storeent_retire(&s->codec, o, &ch.old_obj);
        }
        r = c->lazy_new ? KERR_OK : store_get(s, ch.key, &ch.new_obj, NULL);
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
    cJSON *obj = NULL;

    if (storeent_take(&d->s->codec, o, &obj) != KERR_OK || !key) {
        free(key);
        cJSON_Delete(obj);
        d->rc = KERR_NOMEM;
    } else if (changes_add(d->c, STORE_DELETED, key, obj) != KERR_OK) {
        d->rc = KERR_NOMEM;
    }
    return KERR_OK;
}

/* A scoped replace: the keys of the scope that the fresh content lacks. */
struct scope_walk {
    const char *scope;
    size_t len;
    const struct itab *fresh;
    struct strlist *gone;
};

static enum kerr find_gone(void *arg, struct itab_entry *e)
{
    struct scope_walk *w = arg;

    if (strncmp(e->key, w->scope, w->len) != 0 || itab_get(w->fresh, e->key))
        return KERR_OK;
    return strlist_add(w->gone, e->key);
}

/*
 * Before the swap of a scoped replace: every new key in the scope, and the keys to delete
 * (read under the read lock: nobody else writes the scope).
 */
static enum kerr scope_check(struct store *s, const char *scope, const struct itab *fresh,
                             const struct strlist *order, struct strlist *gone,
                             struct kerr_info *err)
{
    struct scope_walk w = { scope, strlen(scope), fresh, gone };
    enum kerr rc;
    size_t i;

    for (i = 0; i < order->n; i++) {
        if (strncmp(order->v[i], scope, w.len) != 0)
            return kerr_set(err, KERR_INVAL, "store: %s is outside the scope %s", order->v[i],
                            scope);
    }
    pthread_rwlock_rdlock(&s->lock);
    rc = itab_walk(&s->t, find_gone, &w);
    pthread_rwlock_unlock(&s->lock);
    return rc != KERR_OK ? kerr_set(err, rc, "store: out of memory") : KERR_OK;
}

/* Under the write lock: the gone keys and the replaced entries into old, fresh's into s. */
static void scope_swap(struct store *s, struct itab *fresh, const struct strlist *order,
                       const struct strlist *gone, struct itab *old)
{
    struct itab_entry *e;
    size_t i;

    for (i = 0; i < gone->n; i++) {
        if ((e = itab_del(&s->t, gone->v[i])))
            itab_put(old, e);
    }
    for (i = 0; i < order->n; i++) {
        e = itab_del(fresh, order->v[i]);
        if (e && (e = itab_put(&s->t, e)))
            itab_put(old, e);
    }
}

enum kerr store_replace(struct store *s, cJSON *items, struct store_changes *changes,
                        struct kerr_info *err)
{
    return store_replace_scope(s, NULL, items, changes, err);
}

enum kerr store_replace_scope(struct store *s, const char *scope, cJSON *items,
                              struct store_changes *changes, struct kerr_info *err)
{
    struct itab fresh, old;
    struct itab_entry *updated = NULL;
    struct diff d = { s, &old, changes, &updated, KERR_OK };
    struct deleted del = { s, changes, KERR_OK };
    size_t first = changes ? changes->n : 0, i;
    struct strlist order, gone;
    enum kerr rc;

    if (!cJSON_IsArray(items)) {
        cJSON_Delete(items);
        return kerr_set(err, KERR_INVAL, "store: replace needs an array of objects");
    }
    strlist_init(&order);
    strlist_init(&gone);
    memset(&old, 0, sizeof(old));
    rc = itab_init(&fresh);
    if (rc == KERR_OK && scope && (rc = itab_init(&old)) != KERR_OK)
        itab_release(&fresh, NULL, NULL);
    if (rc == KERR_OK)
        rc = prepare_all(s, items, &fresh, changes || scope ? &order : NULL, err);
    else
        kerr_set(err, rc, "store: out of memory");
    cJSON_Delete(items);
    if (rc == KERR_OK && scope)
        rc = scope_check(s, scope, &fresh, &order, &gone, err);
    if (rc != KERR_OK) {
        itab_release(&fresh, storeent_free_cb, &s->codec);
        itab_release(&old, NULL, NULL);
        strlist_release(&order);
        strlist_release(&gone);
        return rc;
    }
    pthread_rwlock_wrlock(&s->lock);
    if (scope)
        scope_swap(s, &fresh, &order, &gone, &old);
    else
        itab_swap(&s->t, &fresh, &old);
    for (i = 0; changes && i < order.n; i++) /* in list order, as client-go delivers a list */
        diff_one(&d, itab_get(&s->t, order.v[i]));
    pthread_rwlock_unlock(&s->lock);
    if (scope) /* empty now */
        itab_release(&fresh, storeent_free_cb, &s->codec);
    strlist_release(&order);
    strlist_release(&gone);
    rc = d.rc;
    if (changes) {
        rc = fill_changes(s, changes, first, updated) != KERR_OK ? KERR_NOMEM : rc;
        itab_walk(&old, add_deleted, &del);
        rc = del.rc != KERR_OK ? del.rc : rc;
    }
    itab_release(&old, storeent_free_cb, &s->codec);
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
    void *ctx;        /* visit_view: fn's; visit_key: a strlist; visit_copy: a cJSON array */
};

static enum kerr visit_view(void *arg, struct itab_entry *e)
{
    struct visit *v = arg;
    cJSON *tmp;
    enum kerr rc;

    if (!v->s->codec.opts.compact)
        return v->fn(v->ctx, e->key, e->data);
    /* A tree for the callback only, on this thread: the thread's arena (common/jarena). */
    tmp = jarena_parse(e->data, strlen(e->data), NULL);
    if (!tmp)
        return KERR_NOMEM;
    rc = v->fn(v->ctx, e->key, tmp);
    jarena_delete(tmp);
    return rc;
}

static enum kerr visit_key(void *arg, struct itab_entry *e)
{
    struct visit *v = arg;

    return strlist_add(v->ctx, e->key);
}

static enum kerr visit_copy(void *arg, struct itab_entry *e)
{
    struct visit *v = arg;
    cJSON *copy = NULL;

    if (storeent_copy(&v->s->codec, e->data, &copy) != KERR_OK ||
        !cJSON_AddItemToArray(v->ctx, copy)) {
        cJSON_Delete(copy);
        return KERR_NOMEM;
    }
    return KERR_OK;
}

static enum kerr get(struct store *s, const char *key, int arena, cJSON **out,
                     struct kerr_info *err)
{
    struct itab_entry *e;
    enum kerr rc = KERR_OK;

    *out = NULL;
    pthread_rwlock_rdlock(&s->lock);
    e = itab_get(&s->t, key);
    if (e && arena && s->codec.opts.compact)
        rc = (*out = jarena_parse(e->data, strlen(e->data), NULL)) ? KERR_OK : KERR_NOMEM;
    else if (e)
        rc = storeent_copy(&s->codec, e->data, out);
    pthread_rwlock_unlock(&s->lock);
    if (!e)
        return kerr_set(err, KERR_NOTFOUND, "store: %s not found", key);
    if (rc != KERR_OK)
        return kerr_set(err, KERR_NOMEM, "store: cannot copy %s", key);
    return KERR_OK;
}

enum kerr store_get(struct store *s, const char *key, cJSON **out, struct kerr_info *err)
{
    return get(s, key, 0, out, err);
}

enum kerr store_get_arena(struct store *s, const char *key, cJSON **out, struct kerr_info *err)
{
    return get(s, key, 1, out, err);
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

enum kerr store_keys(struct store *s, struct strlist *out, struct kerr_info *err)
{
    struct visit v = { s, NULL, out };

    return walk(s, NULL, NULL, visit_key, &v, err);
}

enum kerr store_index_keys(struct store *s, const char *index, const char *value,
                           struct strlist *out, struct kerr_info *err)
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
