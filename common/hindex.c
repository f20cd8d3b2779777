#include "common/hindex.h"

#include <stdatomic.h>
#include <stdlib.h>

#define MIN_SLOTS 16

struct hindex_table {
    struct hindex_table *retired; /* the tables this one replaced */
    size_t mask;                  /* slots - 1; slots a power of two */
    struct hindex_entry *_Atomic slots[];
};

/* A removed entry's slot: not empty, so probes go on past it. */
static struct hindex_entry tombstone;

uint64_t hindex_hash(const char *const *strs, size_t n)
{
    uint64_t h = 14695981039346656037ULL;
    const unsigned char *p;
    size_t i;

    for (i = 0; i < n; i++) {
        p = (const unsigned char *)strs[i];
        do {
            h ^= *p;
            h *= 1099511628211ULL;
        } while (*p++);
    }
    return h;
}

void hindex_init(struct hindex *ix)
{
    atomic_init(&ix->table, NULL);
    ix->used = 0;
}

static void tables_free(struct hindex_table *t)
{
    struct hindex_table *next;

    for (; t; t = next) {
        next = t->retired;
        free(t);
    }
}

void hindex_free(struct hindex *ix)
{
    tables_free(atomic_load_explicit(&ix->table, memory_order_relaxed));
    hindex_init(ix);
}

static void table_put(struct hindex_table *t, struct hindex_entry *e)
{
    size_t i = (size_t)e->hash & t->mask;
    struct hindex_entry *s;

    while ((s = atomic_load_explicit(&t->slots[i], memory_order_relaxed)) && s != &tombstone)
        i = (i + 1) & t->mask;
    atomic_store_explicit(&t->slots[i], e, memory_order_release);
}

struct hindex_entry *hindex_find(struct hindex *ix, uint64_t hash, hindex_eq_fn eq, const void *key)
{
    struct hindex_table *t = atomic_load_explicit(&ix->table, memory_order_acquire);
    struct hindex_entry *e;
    size_t i;

    if (!t)
        return NULL;
    for (i = (size_t)hash & t->mask;; i = (i + 1) & t->mask) {
        e = atomic_load_explicit(&t->slots[i], memory_order_acquire);
        if (!e)
            return NULL;
        if (e != &tombstone && e->hash == hash && eq(e, key))
            return e;
    }
}

enum kerr hindex_reserve(struct hindex *ix)
{
    struct hindex_table *old = atomic_load_explicit(&ix->table, memory_order_relaxed), *t;
    struct hindex_entry *e;
    size_t slots = MIN_SLOTS, live = 0, i;

    if (old && ix->used + 1 <= (old->mask + 1) / 2)
        return KERR_OK;
    for (i = 0; old && i <= old->mask; i++) {
        e = atomic_load_explicit(&old->slots[i], memory_order_relaxed);
        live += e && e != &tombstone;
    }
    while (slots / 2 < live + 1)
        slots *= 2;
    t = malloc(sizeof(*t) + slots * sizeof(t->slots[0]));
    if (!t)
        return KERR_NOMEM;
    t->retired = old;
    t->mask = slots - 1;
    for (i = 0; i < slots; i++)
        atomic_init(&t->slots[i], NULL);
    for (i = 0; old && i <= old->mask; i++) {
        e = atomic_load_explicit(&old->slots[i], memory_order_relaxed);
        if (e && e != &tombstone)
            table_put(t, e);
    }
    atomic_store_explicit(&ix->table, t, memory_order_release);
    ix->used = live;
    return KERR_OK;
}

void hindex_put(struct hindex *ix, struct hindex_entry *e)
{
    struct hindex_table *t = atomic_load_explicit(&ix->table, memory_order_relaxed);
    size_t i = (size_t)e->hash & t->mask;
    struct hindex_entry *s;

    /* A reused tombstone does not add to used; an empty slot does. */
    while ((s = atomic_load_explicit(&t->slots[i], memory_order_relaxed)) && s != &tombstone)
        i = (i + 1) & t->mask;
    ix->used += s == NULL;
    atomic_store_explicit(&t->slots[i], e, memory_order_release);
}

void hindex_remove(struct hindex *ix, struct hindex_entry *e)
{
    struct hindex_table *t = atomic_load_explicit(&ix->table, memory_order_relaxed);
    struct hindex_entry *s;
    size_t i;

    if (!t)
        return;
    tables_free(t->retired); /* no reader (the contract) */
    t->retired = NULL;
    for (i = (size_t)e->hash & t->mask;; i = (i + 1) & t->mask) {
        s = atomic_load_explicit(&t->slots[i], memory_order_relaxed);
        if (!s)
            return;
        if (s == e) {
            atomic_store_explicit(&t->slots[i], &tombstone, memory_order_relaxed);
            return;
        }
    }
}
