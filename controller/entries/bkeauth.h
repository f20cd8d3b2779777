/*
 * bkeauth - who may claim a prefix of a BackupBucket's store, and whose claim
 * may end in a deletion with the bucket's credentials: the bucket owner's
 * authority (docs/backup-entries.md, "Who may claim").
 *
 *   - spec.namespaceSelector of the bucket (a metav1.LabelSelector, matched
 *     against the labels of the Etcd's Namespace as read from the API server
 *     now): an Etcd of a namespace it does not select gets no BackupEntry. No
 *     selector: every namespace (the operator's choice, as before it existed);
 *     {} the same. A selector that is none is the bucket's InvalidSpec
 *     (bkeclaim_read_bucket), so nothing is decided on it.
 *   - spec.prefixScope Namespace: an Etcd whose prefix is not its namespace's part
 *     (common/bstore bstore_prefix_owner) gets no BackupEntry; warden-webhook refuses such a
 *     claim at admission, so this is an Etcd admitted before the setting. Entries made before
 *     are kept (their deletion deletes only what their Etcd wrote). A Local Etcd's part is its
 *     directory's, placed by the hostPath of its backup Secret read now and judged by
 *     common/lowner (lowner_dir, lowner_part), the code warden-webhook admits it with, and
 *     must lie below the bucket's directory (its deletion empties that path there); a
 *     directory that cannot be placed (the Secret unreadable) gets no entry.
 *   - evidence of a writer: an Etcd of any provider but Local gets an entry only
 *     when spec.backup.store.secretRef names a Secret that exists in its
 *     namespace: without credentials its sidecar cannot have written, and an
 *     entry would only make the bucket's credentials delete someone else's
 *     objects.
 *   - a namespace created again is another owner: an Etcd of the old name there does not
 *     reattach to an entry made before the namespace was created (common/pborn).
 *   - an entry's deletion is refused while its Etcd's namespace exists and the
 *     selector does not select it (the selector narrowed after the entry was
 *     made); a namespace that is gone decides nothing: the entry was made while
 *     it was selected.
 *
 * Ownership: arguments BORROWED; why into the caller's buffer ("" when allowed).
 * Thread safety: reentrant.
 */
#ifndef CONTROLLER_BKEAUTH_H
#define CONTROLLER_BKEAUTH_H

#include <stddef.h>

#include <cJSON.h>

#include "common/kerr.h"
#include "controller/entries/bke_ctx.h"
#include "controller/entries/bkeclaim.h"

extern const struct k8s_resource BKEAUTH_RES_NAMESPACE;

/*
 * Why etcd (of b's store) may not have a BackupEntry in b, into why (n bytes; "" when it
 * may). Errors of the reads are returned: no entry is made then either.
 */
enum kerr bkeauth_etcd(const struct bke_ctx *x, const struct bke_bucket *b, const cJSON *etcd,
                       char *why, size_t n, struct kerr_info *err);

/*
 * 1 when etcd may (re)attach to entry, its own claim's entry: the same Etcd (entry names its
 * uid), or one created again that bkeauth_etcd lets have an entry now. 0 otherwise, and when
 * that cannot be read (fail closed): an Etcd created again without credentials, or in a
 * namespace no longer selected, does not take over its predecessor's entry.
 */
int bkeauth_may_reattach(const struct bke_ctx *x, const struct bke_bucket *b, const cJSON *entry,
                         const cJSON *etcd);

/*
 * Why etcd may not reattach to entry, its own claim's entry, as its namespace's, into why (n
 * bytes; "" when it may): an Etcd created again (its uid is not the entry's spec.etcd.uid)
 * whose namespace was created after the entry was made, or whose namespace or the entry's
 * creation time cannot be read (common/pborn, the rule warden-webhook applies at admission):
 * a namespace created again is another owner, so the entry stays its predecessor's, pending.
 * KERR_NOMEM only.
 */
enum kerr bkeauth_reborn(const struct bke_ctx *x, const cJSON *entry, const cJSON *etcd, char *why,
                         size_t n);

/*
 * Why entry's deletion may not start because b's owner does not authorise its namespace, into
 * why (n bytes; "" when it may). Errors of the reads are returned.
 */
enum kerr bkeauth_entry(const struct bke_ctx *x, const struct bke_bucket *b, const cJSON *entry,
                        char *why, size_t n, struct kerr_info *err);

#endif
