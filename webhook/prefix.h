/*
 * prefix - one prefix, one cluster: the rule of /webhooks/etcd that refuses
 * an Etcd CREATE or UPDATE whose claim (common/bstore: the store as the
 * backup sidecar sees it, the prefix canonical) overlaps, as the sidecar
 * lists prefixes (one a plain string prefix of the other: "ns/etcd" and
 * "ns/etcd-2"; "" and "/" overlap every prefix of their container), the
 * claim of
 *   - another live Etcd (another namespace/name), or
 *   - a BackupEntry (etcd-warden.io/v1alpha1, spec.store, spec.prefix,
 *     spec.etcd) of another Etcd: one kept for a deleted Etcd within its
 *     grace period (spec.etcdDeletedAt), or one of a live Etcd this
 *     webhook does not watch; or one of the same Etcd with another prefix;
 *   - with opts.backups, an EtcdBackup's copies (etcd-warden.io/v1alpha1,
 *     status.destination where it wrote, else spec.destination), of any
 *     Etcd: a cluster listing them would restore another's data.
 * A prefix that leaves its container ("../x") is refused. When the caches
 * cannot answer, the request is refused (500), never waved through.
 * An Etcd of the same namespace and name is never a conflict (its own
 * entry: a re-creation reattaches), unless that entry is being deleted
 * (status.phase PREFIX_ENTRY_DELETING: the deletion Job would delete the new
 * cluster's first snapshots with the old ones): then it waits for the entry
 * to go. An UPDATE that keeps the store and
 * prefix as they were is never refused, so Etcds already in conflict when
 * the rule was installed are not disrupted. Refusals are 403 / Forbidden,
 * naming the other owner.
 *
 * Answered from two watch-fed caches of this module, 0 API calls per
 * review: Etcds (restricted to --watch-namespace) and BackupEntries
 * (cluster-scoped), each projected by prefix_project to {metadata {name,
 * namespace}, claim {namespace, name, store, prefix (cleaned), deletedAt}}
 * and indexed by store key (PREFIX_INDEX_STORE).
 *
 * Ownership: struct prefix_cache OWNS its informers; the client and the
 * option strings are BORROWED. Thread safety: prefix_check / prefix_decide
 * from any number of threads once started; new/start/free from one thread.
 */
#ifndef WEBHOOK_PREFIX_H
#define WEBHOOK_PREFIX_H

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"
#include "common/store.h"
#include "webhook/review.h"

#define PREFIX_INDEX_STORE "store"
/* The index value of claims whose store cannot be keyed (claim.invalid): in every store's way. */
#define PREFIX_STORE_UNKEYED "?"

/* Which kind of object prefix_project reads. */
enum prefix_kind { PREFIX_ETCD, PREFIX_ENTRY, PREFIX_BACKUP };

struct prefix_cache_opts {
    struct k8s_client *client; /* BORROWED, required */
    const char *ns;            /* BORROWED; NULL or "": Etcds of every namespace */
    int backups;               /* also EtcdBackups (their copies' prefixes) */
};

struct prefix_cache;

/* store_project_fn: ctx points at an enum prefix_kind. Objects without a usable store
 * are kept with no claim (and so in no index). */
enum kerr prefix_project(void *ctx, const cJSON *obj, cJSON **out);

/* store_index_fn of PREFIX_INDEX_STORE over projected objects. */
enum kerr prefix_index_store(void *ctx, const cJSON *obj, struct strlist *values);

/*
 * prefix_check with a third cache, EtcdBackups projected with PREFIX_BACKUP
 * (NULL: not consulted): the copies of a backup (status.destination, else
 * spec.destination) are a claim too, whoever's backup it is.
 */
enum kerr prefix_check3(struct store *etcds, struct store *entries, struct store *backups,
                        const struct review_req *req, struct review_resp *resp,
                        struct kerr_info *err);

/*
 * The rule for req (an Etcd review) against the projected caches etcds and
 * entries (either may be NULL: not consulted). When it refuses, resp is
 * denied; otherwise resp is left as it was. KERR_NOMEM / KERR_TOOBIG when
 * the answer could not be built.
 */
enum kerr prefix_check(struct store *etcds, struct store *entries, const struct review_req *req,
                       struct review_resp *resp, struct kerr_info *err);

/* Build the informers (nothing runs). On KERR_OK *out OWNS them. */
enum kerr prefix_cache_new(const struct prefix_cache_opts *o, struct prefix_cache **out,
                           struct kerr_info *err);

enum kerr prefix_cache_start(struct prefix_cache *c, struct kerr_info *err);

/* True once both informers listed. */
int prefix_cache_synced(struct prefix_cache *c);

/* prefix_check against the caches; an error (500) until they synced. */
enum kerr prefix_decide(struct prefix_cache *c, const struct review_req *req,
                        struct review_resp *resp, struct kerr_info *err);

/* Stop and free. NULL is a no-op. */
void prefix_cache_free(struct prefix_cache *c);

#endif
