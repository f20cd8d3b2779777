/*
 * kpath - object-store prefixes compared as paths, the way two Etcds' backup
 * prefixes overlap or not: "ns--etcd" and "ns--etcd-events" are different
 * paths although one string starts with the other.
 *
 * A prefix is first cleaned as Go's path.Clean does it (repeated '/' made
 * one, "." elements dropped, ".." elements resolved, a trailing '/'
 * dropped; "" becomes "."). Two prefixes overlap when their cleaned forms
 * are equal or one is a leading list of whole '/'-separated elements of the
 * other ("a" and "a/b"; "." overlaps every relative prefix, "/" every
 * absolute one).
 *
 * Pure functions. Ownership: arguments BORROWED; output into caller buffers.
 * Thread safety: reentrant.
 */
#ifndef COMMON_KPATH_H
#define COMMON_KPATH_H

#include <stddef.h>

#include "common/kerr.h"

/*
 * The cleaned form of p into out (n bytes, at most strlen(p) + 2 needed).
 * KERR_TOOBIG when it does not fit; NULL p is "".
 */
enum kerr kpath_clean(const char *p, char *out, size_t n);

/* 1 when a and b (cleaned already) are equal or one contains the other as a path. */
int kpath_overlap_clean(const char *a, const char *b);

/* kpath_overlap_clean of the cleaned forms of a and b; -1 when one cannot be cleaned. */
int kpath_overlap(const char *a, const char *b);

/* 1 when the cleaned forms of a and b are equal; -1 when one cannot be cleaned. */
int kpath_equal(const char *a, const char *b);

#endif
