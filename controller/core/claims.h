/*
 * claims - who else owns backups a destructive step or a copy would touch,
 * read from the API server when the step is about to run (never only from
 * the caches, which may be behind).
 *
 * A claim is a prefix of a store (common/bstore). The claims in a cluster:
 *   - every Etcd with spec.backup.store (of the watched namespace, or all);
 *   - every BackupEntry (spec.store, spec.prefix); one of the skipped Etcd
 *     is its own only with the same prefix;
 *   - every EtcdBackup's copy: status.destination {provider, container,
 *     endpointOverride, prefix}, recorded once its copy Job exists; an
 *     EtcdBackup that never started one (failed before, or still waiting)
 *     claims nothing;
 *   - every EtcdRestore in flight (no phase yet, or neither Completed nor
 *     Failed): its target, spec.target.store, claimed from admission while
 *     its copy is written (then its Etcd claims it); a Failed one after its
 *     copy started, while it is stored (common/rtarget's rtarget_claims: what
 *     it copied may be there). A target without its own provider is in the
 *     store warden-webhook resolved at admission (common/rtarget's
 *     rtarget_resolve_in: the template's, the source Etcd's, the source
 *     store's); one no rule tells, or whose store cannot be keyed, overlaps
 *     every claim of its container (fail closed). The restore creating the
 *     skipped Etcd is its own.
 * Readers are not claims but hold deletions back: an EtcdRestore in flight reads
 * its source store (claims_find_readers).
 * claims_find reports the first claim overlapping c as the sidecar lists
 * prefixes, skipping what struct claims_skip names as c's own owner.
 *
 * Ownership: arguments BORROWED; why written into the caller's buffer.
 * Thread safety: reentrant (the client is thread-safe).
 */
#ifndef CONTROLLER_CLAIMS_H
#define CONTROLLER_CLAIMS_H

#include <stddef.h>
#include <time.h>

#include <cJSON.h>

#include "common/bstore.h"
#include "common/k8s.h"
#include "common/kerr.h"
#include "controller/core/kname.h"

#define CLAIMS_WHY_MAX 512

/* What is c's own: NULL fields skip nothing. */
struct claims_skip {
    const char *etcd_ns, *etcd_name;  /* the Etcd of c: its own Etcd and its entries */
    const char *entry;                /* a BackupEntry by name */
    const char *backup_ns, *backup;   /* an EtcdBackup by namespace/name */
    const char *backups_of;           /* with backup_ns: every EtcdBackup of this Etcd
                                         (spec.etcdName), whose copies may share a prefix */
    const char *restore_ns, *restore; /* an EtcdRestore by namespace/name (its target) */
    const char *ns;                   /* every claim of this namespace: its Etcds, their
                                         BackupEntries, its EtcdBackups' copies, its
                                         EtcdRestores' targets */
    const char *viewer_ns;            /* the namespace the reason is shown to (a tenant's
                                         status): a claim of another namespace is described
                                         only as "a prefix claimed from another namespace";
                                         NULL: the operator's, everything named */
};

/*
 * The claim of obj, read from its store fields at base ("spec.backup.store",
 * "spec.store" with the prefix at "spec.prefix", "spec.destination",
 * "status.destination"): prefix_path NULL means base + ".prefix". KERR_INVAL
 * when obj has no usable claim there (reason in err); on KERR_OK release c.
 */
enum kerr claims_of(const cJSON *obj, const char *base, const char *prefix_path,
                    struct bstore_claim *c, struct kerr_info *err);

/*
 * claims_of of a copy's side at base (never an entry's) whose Secret, as read by the caller
 * (NULL: none), places a Local store: the directory on the node its Job mounts
 * (common/blocal: hostPath + "/" + container + "/" + prefix), so that what is checked is what
 * the Job built from that same Secret writes. KERR_INVAL (reason in err) for a hostPath not
 * understood (relative, with "..", not base64); on KERR_OK release c.
 */
enum kerr claims_of_placed(const cJSON *obj, const char *base, const cJSON *secret,
                           struct bstore_claim *c, struct kerr_info *err);

/*
 * The first claim in the cluster overlapping c that skip does not name, described into why
 * (CLAIMS_WHY_MAX bytes: "the prefix \"x\" of Etcd ns/name", ...); why "" when none.
 * watch_ns NULL or "": Etcds of every namespace. Errors of the LISTs are returned: a step
 * that cannot prove the prefix free must not run. An object with a store whose claim cannot
 * be computed (an unknown provider, no container or prefix, one leaving its container)
 * overlaps every claim of its container (bstore_unkeyed_overlap): fail closed.
 */
enum kerr claims_find(struct k8s_client *k, const char *watch_ns, const struct bstore_claim *c,
                      const struct claims_skip *skip, char why[CLAIMS_WHY_MAX],
                      struct kerr_info *err);

/*
 * Why the copy destination at base of obj ("spec.destination" of an EtcdBackup,
 * "spec.backupTemplate.destination" of a schedule) may not be written, into why (n bytes;
 * "" when it may): it is no usable store, or it overlaps a claim skip does not name, as
 * claims_find reads them from the API server now. Errors of the LISTs are returned.
 */
enum kerr claims_destination(struct k8s_client *k, const cJSON *obj, const char *base,
                             const struct claims_skip *skip, char *why, size_t n,
                             struct kerr_info *err);

/* claims_destination of a destination whose Local store the Secret secret (as read, the one
 * the copy Job is built from; NULL: none) places (claims_of_placed). */
enum kerr claims_destination_placed(struct k8s_client *k, const cJSON *obj, const char *base,
                                    const cJSON *secret, const struct claims_skip *skip, char *why,
                                    size_t n, struct kerr_info *err);

/* claims_find over lists already read (arrays of objects, NULL: none). */
void claims_find_in(const cJSON *etcds, const cJSON *entries, const cJSON *backups,
                    const struct bstore_claim *c, const struct claims_skip *skip,
                    char why[CLAIMS_WHY_MAX]);

/* claims_find's search of EtcdRestores over lists already read (arrays, NULL: none): their
 * targets resolved with the Etcds and EtcdBackups in etcds and backups. */
void claims_find_restores_in(const cJSON *restores, const cJSON *etcds, const cJSON *backups,
                             const struct bstore_claim *c, const struct claims_skip *skip,
                             char why[CLAIMS_WHY_MAX]);

/*
 * The first EtcdRestore that may still read a prefix overlapping c, as the sidecar lists
 * prefixes: its source store (spec.source.store) while it is neither Completed nor Failed (a
 * source store not understood: anything of its container), described into why ("" when
 * none). A deletion of c waits for it; a write does not. claims_find_readers reads the
 * EtcdRestores of every namespace from the API server now (their CRD not installed: none);
 * errors of the LIST are returned. _in: over a list already read (an array, NULL: none).
 */
enum kerr claims_find_readers(struct k8s_client *k, const struct bstore_claim *c,
                              char why[CLAIMS_WHY_MAX], struct kerr_info *err);
void claims_find_readers_in(const cJSON *restores, const struct bstore_claim *c,
                            char why[CLAIMS_WHY_MAX]);

/*
 * The first BackupEntry in phase Deleting (BSTORE_ENTRY_DELETING: its deletion Job is emptying
 * its prefix) whose prefix overlaps c as the sidecar lists prefixes, described into why (""
 * when none): a copy from c would read what is being deleted. claims_find_deleting reads the
 * BackupEntries from the API server now (their CRD not installed: none); errors of the LIST
 * are returned. _in: over a list already read (an array, NULL: none).
 */
enum kerr claims_find_deleting(struct k8s_client *k, const struct bstore_claim *c,
                               char why[CLAIMS_WHY_MAX], struct kerr_info *err);
void claims_find_deleting_in(const cJSON *entries, const struct bstore_claim *c,
                             char why[CLAIMS_WHY_MAX]);

/*
 * A copy's claim made atomic with admission (common/pclaim): before warden-controller creates
 * a copy Job it records c (its kind PCLAIM_KIND_BACKUP or PCLAIM_KIND_RESTORE, its store key and
 * canonical prefix) in the store's claim Lease, in the controller's own namespace (the
 * webhook's: both run there), with a compare-and-swap on the Lease's resourceVersion as
 * warden-webhook records an admitted Etcd. An Etcd admitted by the webhook and not stored yet
 * (another validating webhook still holding its request) is in the Lease, never in the API
 * server's lists: a live record of another owner overlapping c refuses the copy, described
 * into why (CLAIMS_WHY_MAX bytes; another namespace's named only as "a prefix claimed from
 * another namespace" when viewer_ns is not its); once recorded, the webhook refuses an Etcd
 * overlapping it. KERR_OK with why "" when recorded. An error (the Lease cannot be read or
 * written) is returned: the caller makes no copy (never "no claim").
 */
struct pclaim;
enum kerr claims_take(struct k8s_client *k, const struct pclaim *c, const char *viewer_ns,
                      char why[CLAIMS_WHY_MAX], struct kerr_info *err);

/*
 * The first claim recorded in c's store's claim Lease (common/pclaim's pclaim_admitted: an
 * Etcd or EtcdRestore target admitted and maybe not stored yet, a copy starting) overlapping
 * c, described into why ("" when none), but the admission of Etcd etcd_ns/etcd_name made
 * before gone_at (Unix seconds; 0: every record counts). A deletion of c waits for it. An
 * error (the Lease cannot be read) is returned: the caller deletes nothing.
 */
enum kerr claims_find_admitted(struct k8s_client *k, const struct bstore_claim *c,
                               const char *etcd_ns, const char *etcd_name, time_t gone_at,
                               char why[CLAIMS_WHY_MAX], struct kerr_info *err);

/*
 * The BackupEntry name of claim c into out: the canonical prefix as a name, "--" and 16 hex
 * digits of the sha256 of the store key and prefix ("root--..." for the whole container;
 * common/bstore's bstore_entry_name; an entry found by it is the claim's only when its spec
 * says so, and earlier releases' entries have 8: common/bentry looks up both). One
 * claim, one name: of two owners making an entry of one prefix at once, the API server lets
 * one create it (an Etcd's, controller/entries; a retained copy's, controller/backups/ebk_keep).
 */
enum kerr claims_entry_name(const struct bstore_claim *c, char out[KNAME_SUBDOMAIN_MAX + 1]);

#endif
