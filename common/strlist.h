/*
 * strlist - a growable list of strings, each a private copy: the index
 * values and key lists of common/store and common/kobj, the short names and
 * categories of kube-sim's resource types.
 *
 * Ownership: a list OWNS its array and every string in it.
 * Thread safety: none; a list belongs to one thread at a time.
 */
#ifndef COMMON_STRLIST_H
#define COMMON_STRLIST_H

#include <stddef.h>

#include "common/kerr.h"

/* Zero-initialise or strlist_init. v[0..n-1] may be read directly. */
struct strlist {
    char **v;
    size_t n;
    size_t cap;
};

/* An empty list; cannot fail. */
void strlist_init(struct strlist *l);

/* Free every string and the array; the list is empty again. Safe to call twice. */
void strlist_release(struct strlist *l);

/* Append a copy of s (BORROWED). KERR_NOMEM leaves the list as it was. */
enum kerr strlist_add(struct strlist *l, const char *s) __attribute__((warn_unused_result));

/* Append a copy of the len bytes at s (BORROWED; no NUL needed). KERR_NOMEM as strlist_add. */
enum kerr strlist_addn(struct strlist *l, const char *s, size_t len)
    __attribute__((warn_unused_result));

/* 1 when s is in l. */
int strlist_has(const struct strlist *l, const char *s);

#endif
