/*
 * bkeover - which live Etcd of a bucket's store overlaps an entry's prefix, found without
 * comparing every entry with every Etcd: one reconcile of a bucket of n Etcds asks for each of
 * its n entries (controller/entries/bke.c), which pairwise is n² prefix comparisons (10^8 at
 * 10,000 Etcds in one bucket).
 *
 * The index holds the bucket's live Etcds of its store (bkeclaim_same_store 1) by canonical
 * prefix, sorted. Two prefixes of an object store overlap when one is a string prefix of the
 * other (common/bstore's bstore_overlap; a Local store only at a directory boundary, checked on
 * the candidates): the Etcds overlapping prefix p are those whose prefix is one of p's
 * len(p) + 1 leading substrings (each found by binary search) and those whose prefix begins
 * with p (one range of the sorted array). An Etcd whose prefix cannot be read overlaps every
 * entry, as does every Etcd an entry whose prefix cannot be read (fail closed).
 *
 * Ownership: the index BORROWS the Etcds (their uid strings) it was built from: free it before
 * them. Thread safety: an index is read-only once built.
 */
#ifndef CONTROLLER_BKEOVER_H
#define CONTROLLER_BKEOVER_H

#include <stdint.h>

#include <cJSON.h>

#include "common/kerr.h"
#include "controller/entries/bkeclaim.h"

struct bkeover;

/* Another live Etcd on an overlapping prefix: its creation time (0: none) and uid (BORROWED). */
struct bkeover_hit {
    int64_t at;
    const char *by;
};

/* The index of etcds (an array of Etcds, BORROWED) in b's store into *out. KERR_NOMEM. */
enum kerr bkeover_build(const struct bke_bucket *b, const cJSON *etcds, struct bkeover **out);

/*
 * The earliest creation time (Unix seconds; an Etcd without one: 1) and the uid of an indexed
 * Etcd, not the one of uid own, whose prefix overlaps prefix (as given: made canonical here);
 * at 0 when none.
 */
struct bkeover_hit bkeover_first(const struct bkeover *ix, const char *prefix, const char *own);

void bkeover_free(struct bkeover *ix);

#endif
