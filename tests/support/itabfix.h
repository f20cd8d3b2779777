/*
 * itabfix - counting the entries of an indexed table (common/itab) in the
 * Criterion tests of the table and of the store codec built on it.
 *
 * For tests only: a failed walk fails the running test with a Criterion
 * assertion. Thread safety: as itab_walk_index (readers only).
 */
#ifndef TESTS_SUPPORT_ITABFIX_H
#define TESTS_SUPPORT_ITABFIX_H

#include <stddef.h>

#include "common/itab.h"

/* An itab_visit_fn that counts the entries it sees into the int at arg. */
enum kerr itabfix_count_visit(void *arg, struct itab_entry *e);

/* How many entries of t have value for index (the walk must succeed). */
int itabfix_hits(const struct itab *t, size_t index, const char *value);

#endif
