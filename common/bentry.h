/*
 * bentry - a BackupEntry found by its claim's name, and whether it is that claim's.
 *
 * An entry is named after its claim (common/bstore's bstore_entry_name), so that of two owners
 * making one claim's entry at once the API server lets one create it. A name is no proof,
 * though: entries made by earlier releases carry 8 hex digits of the claim's hash
 * (bstore_entry_name_v1), few enough for a tenant to search out a claim of hers (her own
 * bucket, a prefix that reads alike) whose entry takes another claim's name first. So an entry
 * is looked up by both names, the current one first, and taken for the claim's only when its
 * spec is that claim (bentry_is_claims): one of another claim is a collision, never "the
 * claim's entry is there".
 *
 * Ownership: arguments BORROWED; bentry_find's *out OWNS what it returns.
 * Thread safety: reentrant (bentry_find calls get, which must be).
 */
#ifndef COMMON_BENTRY_H
#define COMMON_BENTRY_H

#include <stdint.h>

#include <cJSON.h>

#include "common/bstore.h"
#include "common/k8s.h"
#include "common/kerr.h"

/*
 * The time warden-webhook admitted the DELETE of the entry's Etcd (webhook/pgone), which
 * warden-controller takes for the last time the Etcd was known alive
 * (controller/entries/bkealive.h).
 */
#define BENTRY_DELETE_ADMITTED "spec.etcdDeleteAdmittedAt"

/*
 * The first time warden-webhook admitted a change of the entry's Etcd's spec.backup.store
 * (webhook/pgone) since warden-controller last attached the entry: the deletion window ends no
 * later, and the next attachment starts it anew (controller/entries/bkeseen.h).
 */
#define BENTRY_STORE_CHANGED "spec.etcdStoreChangedAt"

/*
 * With BENTRY_STORE_CHANGED: the metadata.generation of the Etcd the change was made to (the
 * stored one the UPDATE replaces). Only an Etcd read with a later generation shows the change
 * (or a later one) stored: the webhook records it before the API server stores it, and another
 * webhook may hold or refuse the UPDATE after.
 */
#define BENTRY_STORE_CHANGED_GEN "spec.etcdStoreChangedGeneration"

/*
 * From when the entry's writer was not shown holding its bucket's credentials: the deletion Job
 * deletes nothing written after it (controller/entries/bkeheld.h; a retained copy written with
 * another Secret, controller/backups/ebk_keep.h).
 */
#define BENTRY_CREDS_LOST "spec.credentialsLostAt"

/* The last time the entry's writer was shown holding its bucket's credentials (bkeheld.h). */
#define BENTRY_CREDS_HELD "spec.credentialsHeldAt"

/*
 * Set BENTRY_CREDS_LOST on entry (OWNED by the caller) unless it is set: its BENTRY_CREDS_HELD,
 * else one second before its claim began (spec.claimedAt, else metadata.creationTimestamp):
 * nothing shown held, an empty window. KERR_NOMEM, KERR_INTERNAL.
 */
enum kerr bentry_creds_lost(cJSON *entry, struct kerr_info *err);

/*
 * The earlier windows of an entry (controller/entries/bkewin.h): spans of last-modified times,
 * {since, before} (RFC 3339), in which what lies under its prefix was shown to be its owner's
 * before a gap (a reattachment; a retained copy written apart from the entry's window), deleted
 * with the entry as well as its current window. At most BENTRY_EARLIER_MAX.
 */
#define BENTRY_EARLIER     "spec.earlierWindows"
#define BENTRY_EARLIER_MAX 16

/*
 * Append [since, before] (Unix seconds) to entry's BENTRY_EARLIER (OWNED by the caller), the
 * oldest dropped first when it holds BENTRY_EARLIER_MAX. KERR_NOMEM, KERR_INTERNAL (a time that
 * cannot be written), KERR_INVAL (a path that cannot be set).
 */
enum kerr bentry_add_earlier(cJSON *entry, int64_t since, int64_t before, struct kerr_info *err);

/*
 * 1 when entry (a BackupEntry as stored) is an entry of claim c: its spec.store and spec.prefix
 * make c (bstore_claim_init: the same store key and canonical prefix), or, c being a Local
 * directory's (key BLOCAL_KEY: the entries of a Local store no BackupBucket names), its provider
 * is Local and its annotation BLOCAL_HOSTPATH_ANNOTATION, spec.store.container and spec.prefix
 * place c's directory (common/blocal's blocal_dir). 0 otherwise, and whenever any of it cannot
 * be read (fail closed: such an entry is not the claim's).
 */
int bentry_is_claims(const cJSON *entry, const struct bstore_claim *c);

/* What bentry_find found. */
enum bentry_found {
    BENTRY_NONE,   /* no entry of either name is the claim's; the current name is free */
    BENTRY_CLAIMS, /* an entry of one of its names is the claim's */
    BENTRY_OTHER,  /* the current name is held by an entry of another claim; none is the claim's */
};

/*
 * Get the stored entry of name into *out (OWNS on KERR_OK); KERR_NOTFOUND when there is none,
 * any other error when it cannot be told.
 */
typedef enum kerr (*bentry_get_fn)(void *ctx, const char *name, cJSON **out, struct kerr_info *err);

/*
 * 1 in *any when get finds an entry under either of claim c's names, whatever its spec: a cache
 * of projections cannot tell whose an entry is (bentry_find would take it for another claim's),
 * but it tells whether one is there. Errors of get but KERR_NOTFOUND are returned.
 */
enum kerr bentry_named(bentry_get_fn get, void *ctx, const struct bstore_claim *c, int *any,
                       struct kerr_info *err);

/* The BackupEntry resource (cluster-scoped). */
extern const struct k8s_resource BENTRY_RES;

/* bentry_get_fn: an entry read from the API server; ctx is the struct k8s_client. */
enum kerr bentry_get_stored(void *ctx, const char *name, cJSON **out, struct kerr_info *err);

/* bentry_get_fn: an entry of a cache keyed by name; ctx is the struct store. */
enum kerr bentry_get_cached(void *ctx, const char *name, cJSON **out, struct kerr_info *err);

/*
 * Claim c's entry, looked up by get under its current name, then its earlier one
 * (bstore_entry_name_v1). *found: BENTRY_CLAIMS, *out the entry (OWNS) and name its name; else
 * BENTRY_OTHER, *out the entry holding the current name (OWNS; never the claim's: name another
 * claim's owner to no one on its strength) and name the current name; else BENTRY_NONE, *out
 * NULL and name the current name, the one to create. An entry of the earlier name that is
 * another claim's is logged (a warning naming it, the claim's store and prefix). An error of get
 * (not KERR_NOTFOUND) or of naming is returned, *out NULL: the caller decides nothing then.
 */
enum kerr bentry_find(bentry_get_fn get, void *ctx, const struct bstore_claim *c,
                      enum bentry_found *found, cJSON **out, char name[BSTORE_ENTRY_NAME_MAX + 1],
                      struct kerr_info *err);

#endif
