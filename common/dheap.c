/*
 * dheap - see dheap.h. A classic array heap: node i has children 2i+1 and
 * 2i+2; every move writes the node's new index back into it.
 */
#include "common/dheap.h"

#include <stdlib.h>
#include <string.h>

static int less(const struct dheap_node *a, const struct dheap_node *b)
{
    return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void set(struct dheap *h, size_t i, struct dheap_node *n)
{
    h->v[i] = n;
    n->idx = i;
}

static void sift_up(struct dheap *h, size_t i)
{
    struct dheap_node *n = h->v[i];

    while (i > 0 && less(n, h->v[(i - 1) / 2])) {
        set(h, i, h->v[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    set(h, i, n);
}

static void sift_down(struct dheap *h, size_t i)
{
    struct dheap_node *n = h->v[i];
    size_t c;

    while ((c = 2 * i + 1) < h->n) {
        if (c + 1 < h->n && less(h->v[c + 1], h->v[c]))
            c++;
        if (!less(h->v[c], n))
            break;
        set(h, i, h->v[c]);
        i = c;
    }
    set(h, i, n);
}

void dheap_init(struct dheap *h)
{
    memset(h, 0, sizeof(*h));
}

void dheap_release(struct dheap *h)
{
    free(h->v);
    memset(h, 0, sizeof(*h));
}

void dheap_node_init(struct dheap_node *n)
{
    n->idx = DHEAP_NONE;
}

int dheap_contains(const struct dheap_node *n)
{
    return n->idx != DHEAP_NONE;
}

size_t dheap_len(const struct dheap *h)
{
    return h->n;
}

enum kerr dheap_push(struct dheap *h, struct dheap_node *n, int64_t at)
{
    struct dheap_node **v;
    size_t cap;

    if (h->n == h->cap) {
        cap = h->cap ? h->cap * 2 : 16;
        v = realloc(h->v, cap * sizeof(*v));
        if (!v)
            return KERR_NOMEM;
        h->v = v;
        h->cap = cap;
    }
    n->at = at;
    n->seq = h->seq++;
    set(h, h->n++, n);
    sift_up(h, h->n - 1);
    return KERR_OK;
}

void dheap_advance(struct dheap *h, struct dheap_node *n, int64_t at)
{
    if (at >= n->at)
        return;
    n->at = at;
    sift_up(h, n->idx);
}

struct dheap_node *dheap_peek(const struct dheap *h)
{
    return h->n ? h->v[0] : NULL;
}

struct dheap_node *dheap_pop(struct dheap *h)
{
    struct dheap_node *top;

    if (!h->n)
        return NULL;
    top = h->v[0];
    top->idx = DHEAP_NONE;
    if (--h->n > 0) {
        set(h, 0, h->v[h->n]);
        sift_down(h, 0);
    }
    return top;
}
