/*
 * bklocal - the Local stores of EtcdBackups, EtcdBackupSchedules and
 * EtcdRestores at admission (webhook/bkadm). A Local store is the directory
 * path.Clean(hostPath + "/" + container + "/" + prefix) on the node
 * (common/blocal), hostPath in a Secret its namespace may edit, so it is read
 * fresh from the API server (webhook/plocal) whenever a Local destination,
 * target or source is decided:
 *
 *   - the candidate's directory is the one its copy Job mounts: an
 *     EtcdBackup's (or schedule's) destination by its own
 *     spec.destination.secretRef; an EtcdRestore's target by the Secret the
 *     controller gives its copy (spec.target.store.secretRef, else the
 *     template's backup.store.secretRef, else the source's: spec.source.store's,
 *     the cached source EtcdBackup's destination's, the cached source Etcd's).
 *     A Secret that cannot be read, a hostPath not understood, or a target
 *     whose Secret cannot be told: refused (fail closed);
 *   - another's Local claim is placed by webhook/plocal (its own Secret, an
 *     entry's bucket or annotation); one that cannot be placed is in the way;
 *   - an EtcdRestore's Local source is read only by a namespace that owns it
 *     (common/lowner's rule, warden-controller's too): a BackupBucket of
 *     provider Local whose directory (its Secret's hostPath + container)
 *     holds the source's and whose spec.namespaceSelector selects the
 *     namespace (no selector: every namespace, as for claims); an EtcdBackup
 *     copy of the namespace whose recorded hostPath holds it; or, while no
 *     claim of another namespace overlaps it (one not placed, or not
 *     understood, is in the way, and so is the target of another namespace's
 *     EtcdRestore recorded in the claim Lease of Local stores, common/pclaim,
 *     as warden-controller counts restore targets), an Etcd of the namespace (a copy not
 *     recorded: its Secret) whose directory holds it, its Secret the
 *     namespace's to edit, or a BackupEntry of one of its Etcds, placed by its
 *     bucket (or annotation), made after the namespace was created
 *     (common/lowner's lowner_entry, the rule warden-controller applies at the
 *     Job too: one made before is an earlier namespace's, another owner, in
 *     the way).
 *     Otherwise refused, naming no other namespace. A Local bucket with
 *     spec.prefixScope Namespace gives each namespace its own part of its
 *     directory only (common/lowner): a directory there that is not the
 *     namespace's part is never its own, whatever grants it, and is
 *     refused as a claim too (webhook/plocal's plocal_part).
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant (the client and the stores are).
 */
#ifndef WEBHOOK_BKLOCAL_H
#define WEBHOOK_BKLOCAL_H

#include <stddef.h>

#include <cJSON.h>

#include "common/bstore.h"
#include "common/k8s.h"
#include "common/kerr.h"
#include "common/store.h"

#define BKLOCAL_WHY_MAX 1024

/*
 * The name of the Secret whose hostPath places the Local store at base of obj (an EtcdBackup's
 * "spec.destination", a schedule's "spec.backupTemplate.destination", an EtcdRestore's
 * "spec.target.store" or "spec.source.store"), or NULL when none is named (the default
 * hostPath). *known 0 when an EtcdRestore target's Secret cannot be told from the caches
 * (etcds, backups: projected by webhook/prefix; either may be NULL).
 */
const char *bklocal_secret_of(struct store *etcds, struct store *backups, const cJSON *obj,
                              const char *base, int *known);

/*
 * c (a Local claim, key BLOCAL_KEY) made the directory the Secret of obj's store at base
 * places it in, read now through k. why (BKLOCAL_WHY_MAX bytes) says why it cannot be known
 * ("" when it is); KERR_NOMEM only.
 */
enum kerr bklocal_self(struct k8s_client *k, struct store *etcds, struct store *backups,
                       const cJSON *obj, const char *base, struct bstore_claim *c, char *why);

/*
 * 1 when the cached Local claim c of another object (webhook/prefix's projection) overlaps the
 * directory dir (canonical), its own directory read now; 1 too when it cannot be placed. ns: the
 * namespace claiming dir, for whom another namespace's claim that no StatefulSet may mount (above
 * its part of a partitioned bucket) is in nobody's way (webhook/plocal's plocal_in_the_way); NULL:
 * every overlap counts (a read that must not race a deletion).
 */
int bklocal_in_the_way(struct k8s_client *k, struct store *buckets, const char *ns, const char *dir,
                       const cJSON *c);

/*
 * Why namespace ns may not read the Local directory dir (canonical) as an EtcdRestore's source,
 * into why (BKLOCAL_WHY_MAX bytes, "" when it may): see above. buckets, etcds, entries,
 * backups: the caches (NULL: none); lease_ns: the namespace of the claim Leases (NULL or "":
 * none, restore targets not known). Errors when the namespace's labels, a bucket's Secret or
 * the claim Lease cannot be read are returned (the caller refuses, 500); a namespace whose
 * creation cannot be read grants nothing through its entries.
 */
enum kerr bklocal_source_owned(struct k8s_client *k, struct store *buckets, struct store *etcds,
                               struct store *entries, struct store *backups, const char *lease_ns,
                               const char *ns, const char *dir, char *why, struct kerr_info *err);

#endif
