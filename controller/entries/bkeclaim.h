/*
 * bkeclaim - the claims of a BackupBucket's entries (common/bstore): the
 * bucket's store as read, the entry names derived from a claim, how two
 * entries' prefixes compare, and what keeps an entry's deletion from
 * starting: its prefix being the whole container, or another owner's
 * claim overlapping it (controller/claims, read from the API server), and
 * an older bucket of the same store.
 *
 * Ownership: arguments BORROWED; a struct bke_bucket BORROWS the strings of
 * its object. Thread safety: reentrant.
 */
#ifndef CONTROLLER_BKECLAIM_H
#define CONTROLLER_BKECLAIM_H

#include <stddef.h>

#include <cJSON.h>

#include "common/bstore.h"
#include "common/kerr.h"
#include "controller/entries/bke_ctx.h"
#include "controller/core/kname.h"

/* A bucket as read: strings BORROWED from its object. */
struct bke_bucket {
    const cJSON *obj;
    const char *name, *kind, *container, *endpoint;
    char key[BSTORE_KEY_MAX]; /* the store, canonical (common/bstore) */
    long grace_ms;
    const cJSON *secret; /* its Secret as read once per reconcile (bke_run); NULL: not read */
};

#define BKECLAIM_WHY_MAX 768

/* Read obj into *b; KERR_INVAL with the field in err when it does not validate. */
enum kerr bkeclaim_read_bucket(const cJSON *obj, struct bke_bucket *b, struct kerr_info *err);

#define BKECLAIM_MAYBE 2

/*
 * 1 when etcd's spec.backup.store is b's store (canonical) and names a prefix;
 * BKECLAIM_MAYBE when it names a prefix in a store whose claim cannot be computed (an
 * unknown provider, no container) that may be b's (bstore_unkeyed_overlap): every entry of
 * that Etcd in b is kept as it is (etcd-druid refuses such a spec, so the sidecar keeps
 * writing where it did), none is created; 0 otherwise.
 */
int bkeclaim_same_store(const struct bke_bucket *b, const cJSON *etcd);

/* 1 when prefixes a and b are one as the sidecar sees them; -1 when one cannot be read. */
int bkeclaim_same_prefix(const char *a, const char *b);

/* 1 when prefixes a and b of bk's store overlap as its sidecar lists them; -1: unreadable. */
int bkeclaim_overlapping(const struct bke_bucket *bk, const char *a, const char *b);

/*
 * Whose is cur, the stored entry of etcd's claim (common/bentry's bentry_find: its spec is the
 * claim, whatever its name)? 1: etcd's (not cached yet); 0: another Etcd's, described into
 * other (n bytes).
 */
int bkeclaim_owner(const cJSON *cur, const cJSON *etcd, char *other, size_t n);

/*
 * Why entry's deletion may not start now, into why (n bytes; "" when it may): its prefix is
 * the whole container, or another owner's claim overlaps it, as read from the API server now.
 * An error when that could not be read: the deletion must not start then either.
 */
enum kerr bkeclaim_deletion_blocked(const struct bke_ctx *x, const struct bke_bucket *b,
                                    const cJSON *entry, char *why, size_t n, struct kerr_info *err);

/*
 * The first entry of entries (one bucket: one store) of another Etcd whose prefix overlaps
 * that of entry i, described into why (BKECLAIM_WHY_MAX); NULL when none.
 */
const char *bkeclaim_conflict(const struct bke_bucket *b, const cJSON *entries, int i, char *why);

/*
 * The older BackupBucket of b's store, if any (one store, one bucket: the one created first,
 * then the first by name, keeps it), into other (n bytes); "" when b is the store's bucket.
 */
enum kerr bkeclaim_duplicate_of(const struct bke_ctx *x, const struct bke_bucket *b, char *other,
                                size_t n, struct kerr_info *err);

/*
 * The entry name of claim c into out: the canonical prefix as a name, "--"
 * and 16 hex digits of the sha256 of the store key and prefix ("root--..."
 * for the whole container; common/bstore). One claim, one name: of two Etcds
 * created at once with one prefix, the API server lets one create the entry.
 * Entries of earlier releases have 8 (common/bentry looks up both).
 */
enum kerr bke_entry_name(const struct bstore_claim *c, char out[KNAME_SUBDOMAIN_MAX + 1]);

/* spec.etcd {namespace, name, uid} of entry set to etcd's, spec.claimedAt to since. */
enum kerr bkeclaim_set_etcd(cJSON *entry, const cJSON *etcd, const char *since,
                            struct kerr_info *err);

#endif
