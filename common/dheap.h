/*
 * dheap - an indexed binary min-heap of due times: the delay queue under
 * common/workqueue.
 *
 * A node (struct dheap_node) is embedded in the caller's struct and knows
 * its position in the heap, so it can be moved to an earlier time without a
 * search. Nodes due at the same time come out in the order they were
 * pushed. The time is an int64_t in the caller's unit (workqueue uses
 * monotonic nanoseconds).
 *
 * Ownership: a heap OWNS only its array of pointers; the nodes are BORROWED
 * and must stay valid (and not move) while they are in the heap.
 * Thread safety: none; the caller serialises access to a heap and its nodes.
 */
#ifndef COMMON_DHEAP_H
#define COMMON_DHEAP_H

#include <stddef.h>
#include <stdint.h>

#include "common/kerr.h"

/* The index of a node that is in no heap. */
#define DHEAP_NONE ((size_t)-1)

struct dheap_node {
    int64_t at;   /* due time; read it, change it only through dheap_advance */
    uint64_t seq; /* push order, the tie-break; internal */
    size_t idx;   /* position in the heap, DHEAP_NONE when out; internal */
};

struct dheap {
    struct dheap_node **v; /* OWNS the array, not the nodes */
    size_t n;
    size_t cap;
    uint64_t seq; /* next push order */
};

/* An empty heap; cannot fail (the array grows on the first push). */
void dheap_init(struct dheap *h);

/* Free the array. The nodes still in it are not touched. Safe to call twice. */
void dheap_release(struct dheap *h);

/* Mark a node as in no heap; call once before its first push. */
void dheap_node_init(struct dheap_node *n);

/* 1 when n is in a heap. */
int dheap_contains(const struct dheap_node *n);

/* Number of nodes in h. */
size_t dheap_len(const struct dheap *h);

/*
 * Insert n (BORROWED, in no heap) due at at. KERR_NOMEM when the array
 * cannot grow; n stays out of the heap then.
 */
enum kerr dheap_push(struct dheap *h, struct dheap_node *n, int64_t at);

/* Move n (in h) to the earlier time at; an at not earlier than n->at is ignored. */
void dheap_advance(struct dheap *h, struct dheap_node *n, int64_t at);

/* The node due first (BORROWED, left in the heap), or NULL when h is empty. */
struct dheap_node *dheap_peek(const struct dheap *h);

/* Take out the node due first and return it, or NULL when h is empty. */
struct dheap_node *dheap_pop(struct dheap *h);

#endif
