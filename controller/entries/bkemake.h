/*
 * bkemake - the BackupEntry of a live Etcd of a BackupBucket's store, made or
 * found (controller/entries/bke.h keeps and releases them).
 *
 * An entry is named after its claim (bke_entry_name), so that of two Etcds
 * created at once on one prefix the API server lets one create it. The name
 * is no proof: an entry is looked up under its current name and an earlier
 * release's (common/bentry), and one of either name is the claim's only when
 * its spec (store and prefix) is the claim. The claim's entry of another
 * Etcd keeps the prefix (a PrefixConflict event on this Etcd, naming it); the
 * claim's entry of this Etcd (not cached yet, or made before the bucket) is
 * adopted (controller/entries/bkefree's bkefree_adopt); a name held by an
 * entry of another claim makes nothing and names no one to the Etcd's
 * namespace (a Warning event EntryNameTaken; the operator finds the entry in
 * the log).
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef CONTROLLER_BKEMAKE_H
#define CONTROLLER_BKEMAKE_H

#include <cJSON.h>

#include "common/kerr.h"
#include "controller/entries/bke_ctx.h"
#include "controller/entries/bkeclaim.h"

/* spec.store of entry set to b's store, for the webhook's one-prefix-one-cluster rule. */
enum kerr bkemake_set_store(cJSON *entry, const struct bke_bucket *b, struct kerr_info *err);

/*
 * The entry of etcd (a live Etcd of b's store that has none in b's entries) made, or found
 * (above); *requeue (ms) set when it is to be looked at again. Errors of the API server
 * returned.
 */
enum kerr bkemake_create(const struct bke_ctx *x, const struct bke_bucket *b, const cJSON *etcd,
                         long *requeue, struct kerr_info *err);

#endif
