#include "common/itab.h"

#include <stdlib.h>
#include <string.h>

#define MIN_BUCKETS 64u

/* All entries of one index that have one value. */
struct group {
    struct group *next; /* hash chain of the index */
    struct itab_posting *head;
    size_t count;
    size_t index; /* number of the index */
    uint32_t hash;
    char value[];
};

/* One (value, entry) pair, linked in its group. */
struct itab_posting {
    struct itab_posting *prev;
    struct itab_posting *next;
    struct group *group; /* while the entry is unlinked: a spare group OWNED by the posting */
    struct itab_entry *entry;
};

struct itab_index {
    char *name;
    struct group **b;
    size_t n;
    size_t count;
};

static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u;

    while (*s)
        h = (h ^ (unsigned char)*s++) * 16777619u;
    return h;
}

/* Double the buckets of a full table; on allocation failure chains just get longer. */
static void grow_entries(struct itab *t)
{
    size_t n = t->n * 2, i;
    struct itab_entry **b, *e, *next;

    if (t->count < t->n || !(b = calloc(n, sizeof(*b))))
        return;
    for (i = 0; i < t->n; i++) {
        for (e = t->b[i]; e; e = next) {
            next = e->next;
            e->next = b[e->hash & (n - 1)];
            b[e->hash & (n - 1)] = e;
        }
    }
    free(t->b);
    t->b = b;
    t->n = n;
}

static void grow_groups(struct itab_index *idx)
{
    size_t n = idx->n * 2, i;
    struct group **b, *g, *next;

    if (idx->count < idx->n || !(b = calloc(n, sizeof(*b))))
        return;
    for (i = 0; i < idx->n; i++) {
        for (g = idx->b[i]; g; g = next) {
            next = g->next;
            g->next = b[g->hash & (n - 1)];
            b[g->hash & (n - 1)] = g;
        }
    }
    free(idx->b);
    idx->b = b;
    idx->n = n;
}

enum kerr itab_init(struct itab *t)
{
    memset(t, 0, sizeof(*t));
    t->b = calloc(MIN_BUCKETS, sizeof(*t->b));
    if (!t->b)
        return KERR_NOMEM;
    t->n = MIN_BUCKETS;
    return KERR_OK;
}

static void index_clear(struct itab_index *idx)
{
    struct group *g, *next;
    size_t i;

    for (i = 0; i < idx->n; i++) {
        for (g = idx->b[i]; g; g = next) {
            next = g->next;
            free(g);
        }
        idx->b[i] = NULL;
    }
    idx->count = 0;
}

/* Forget e's postings after their groups were freed wholesale. */
static void drop_postings(struct itab_entry *e)
{
    free(e->posts);
    e->posts = NULL;
    e->nposts = 0;
    e->linked = 0;
}

void itab_release(struct itab *t, itab_free_fn free_data, void *arg)
{
    struct itab_entry *e, *next;
    size_t i;

    for (i = 0; i < t->nidx; i++) {
        index_clear(&t->idx[i]);
        free(t->idx[i].b);
        free(t->idx[i].name);
    }
    for (i = 0; i < t->n; i++) {
        for (e = t->b[i]; e; e = next) {
            next = e->next;
            if (free_data)
                free_data(arg, e->data);
            itab_entry_free(e); /* an unlinked entry's spare groups with it */
        }
    }
    free(t->idx);
    free(t->b);
    memset(t, 0, sizeof(*t));
}

enum kerr itab_add_index(struct itab *t, const char *name)
{
    struct itab_index *nv, *idx;

    if (t->count || itab_index_of(t, name) >= 0)
        return KERR_INVAL;
    nv = realloc(t->idx, (t->nidx + 1) * sizeof(*nv));
    if (!nv)
        return KERR_NOMEM;
    t->idx = nv;
    idx = &t->idx[t->nidx];
    memset(idx, 0, sizeof(*idx));
    idx->name = strdup(name);
    idx->b = calloc(MIN_BUCKETS, sizeof(*idx->b));
    if (!idx->name || !idx->b) {
        free(idx->name);
        free(idx->b);
        return KERR_NOMEM;
    }
    idx->n = MIN_BUCKETS;
    t->nidx++;
    return KERR_OK;
}

long itab_index_of(const struct itab *t, const char *name)
{
    size_t i;

    for (i = 0; i < t->nidx; i++)
        if (strcmp(t->idx[i].name, name) == 0)
            return (long)i;
    return -1;
}

static int seen_before(const struct itab_value *vals, size_t i)
{
    size_t j;

    for (j = 0; j < i; j++)
        if (vals[j].index == vals[i].index && strcmp(vals[j].value, vals[i].value) == 0)
            return 1;
    return 0;
}

static struct group *group_new(size_t index, const char *value)
{
    size_t len = strlen(value);
    struct group *g = calloc(1, sizeof(*g) + len + 1);

    if (!g)
        return NULL;
    g->index = index;
    g->hash = hash_str(value);
    memcpy(g->value, value, len + 1);
    return g;
}

enum kerr itab_entry_new(const char *key, const struct itab_value *vals, size_t n,
                         struct itab_entry **out)
{
    size_t klen = strlen(key), i;
    struct itab_entry *e;
    struct itab_posting *p;

    *out = NULL;
    e = calloc(1, sizeof(*e) + klen + 1);
    if (!e)
        return KERR_NOMEM;
    memcpy(e->key, key, klen + 1);
    e->hash = hash_str(key);
    if (n && !(e->posts = calloc(n, sizeof(*e->posts)))) {
        free(e);
        return KERR_NOMEM;
    }
    for (i = 0; i < n; i++) {
        if (seen_before(vals, i))
            continue;
        p = &e->posts[e->nposts++];
        p->entry = e;
        p->group = group_new(vals[i].index, vals[i].value);
        if (!p->group) {
            itab_entry_free(e);
            return KERR_NOMEM;
        }
    }
    *out = e;
    return KERR_OK;
}

void itab_entry_free(struct itab_entry *e)
{
    uint32_t i;

    if (!e)
        return;
    for (i = 0; !e->linked && i < e->nposts; i++)
        free(e->posts[i].group);
    free(e->posts);
    free(e);
}

static struct itab_entry **find_slot(const struct itab *t, const char *key, uint32_t h)
{
    struct itab_entry **pp;

    if (!t->n)
        return NULL;
    for (pp = &t->b[h & (t->n - 1)]; *pp; pp = &(*pp)->next)
        if ((*pp)->hash == h && strcmp((*pp)->key, key) == 0)
            return pp;
    return NULL;
}

static struct group **find_group(const struct itab_index *idx, const char *value, uint32_t h)
{
    struct group **pp;

    for (pp = &idx->b[h & (idx->n - 1)]; *pp; pp = &(*pp)->next)
        if ((*pp)->hash == h && strcmp((*pp)->value, value) == 0)
            return pp;
    return NULL;
}

/* Link e's postings into t's groups, adopting the spare group when a value is new. */
static void link_postings(struct itab *t, struct itab_entry *e)
{
    struct itab_posting *p;
    struct itab_index *idx;
    struct group **gp, *g;
    uint32_t i;

    for (i = 0; i < e->nposts; i++) {
        p = &e->posts[i];
        idx = &t->idx[p->group->index];
        grow_groups(idx);
        gp = find_group(idx, p->group->value, p->group->hash);
        if (gp) {
            g = *gp;
            free(p->group);
        } else {
            g = p->group;
            g->next = idx->b[g->hash & (idx->n - 1)];
            idx->b[g->hash & (idx->n - 1)] = g;
            idx->count++;
        }
        p->group = g;
        p->prev = NULL;
        p->next = g->head;
        if (g->head)
            g->head->prev = p;
        g->head = p;
        g->count++;
    }
    e->linked = 1;
}

static void unlink_postings(struct itab *t, struct itab_entry *e)
{
    struct itab_posting *p;
    struct group **gp, *g;
    uint32_t i;

    if (!e->linked)
        return;
    for (i = 0; i < e->nposts; i++) {
        p = &e->posts[i];
        g = p->group;
        if (p->prev)
            p->prev->next = p->next;
        else
            g->head = p->next;
        if (p->next)
            p->next->prev = p->prev;
        if (--g->count)
            continue;
        gp = find_group(&t->idx[g->index], g->value, g->hash);
        if (gp)
            *gp = g->next;
        t->idx[g->index].count--;
        free(g);
    }
    drop_postings(e);
}

struct itab_entry *itab_get(const struct itab *t, const char *key)
{
    struct itab_entry **pp = find_slot(t, key, hash_str(key));

    return pp ? *pp : NULL;
}

/* Unlink *pp from the chain and the indexes. */
static struct itab_entry *take(struct itab *t, struct itab_entry **pp)
{
    struct itab_entry *e = *pp;

    *pp = e->next;
    e->next = NULL;
    t->count--;
    unlink_postings(t, e);
    return e;
}

struct itab_entry *itab_put(struct itab *t, struct itab_entry *e)
{
    struct itab_entry **pp = find_slot(t, e->key, e->hash);
    struct itab_entry *old = pp ? take(t, pp) : NULL;

    grow_entries(t);
    e->next = t->b[e->hash & (t->n - 1)];
    t->b[e->hash & (t->n - 1)] = e;
    t->count++;
    if (t->nidx)
        link_postings(t, e);
    return old;
}

struct itab_entry *itab_del(struct itab *t, const char *key)
{
    struct itab_entry **pp = find_slot(t, key, hash_str(key));

    return pp ? take(t, pp) : NULL;
}

enum kerr itab_walk(const struct itab *t, itab_visit_fn fn, void *arg)
{
    struct itab_entry *e;
    enum kerr rc = KERR_OK;
    size_t i;

    for (i = 0; i < t->n && rc == KERR_OK; i++)
        for (e = t->b[i]; e && rc == KERR_OK; e = e->next)
            rc = fn(arg, e);
    return rc;
}

enum kerr itab_walk_index(const struct itab *t, size_t index, const char *value, itab_visit_fn fn,
                          void *arg)
{
    struct group **gp;
    struct itab_posting *p;
    enum kerr rc = KERR_OK;

    if (index >= t->nidx)
        return KERR_NOTFOUND;
    gp = find_group(&t->idx[index], value, hash_str(value));
    for (p = gp ? (*gp)->head : NULL; p && rc == KERR_OK; p = p->next)
        rc = fn(arg, p->entry);
    return rc;
}

void itab_swap(struct itab *t, struct itab *fresh, struct itab *old)
{
    struct itab_entry *e;
    size_t i;

    memset(old, 0, sizeof(*old));
    old->b = t->b;
    old->n = t->n;
    old->count = t->count;
    for (i = 0; i < t->nidx; i++)
        index_clear(&t->idx[i]);
    for (i = 0; i < old->n; i++)
        for (e = old->b[i]; e; e = e->next)
            drop_postings(e);
    t->b = fresh->b;
    t->n = fresh->n;
    t->count = fresh->count;
    fresh->b = NULL;
    fresh->n = 0;
    fresh->count = 0;
    itab_release(fresh, NULL, NULL);
    for (i = 0; t->nidx && i < t->n; i++)
        for (e = t->b[i]; e; e = e->next)
            link_postings(t, e);
}
