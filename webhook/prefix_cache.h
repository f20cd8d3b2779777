/*
 * prefix_cache - the watch-fed caches the prefix rule (webhook/prefix) decides from: Etcds of
 * every namespace (or opts.ns), BackupEntries, with opts.backups EtcdBackups, each projected
 * by prefix_project and indexed by store key; and the BackupBuckets whole (webhook/bauth).
 *
 * Ownership: struct prefix_cache OWNS its informers; the client and the option strings are
 * BORROWED. Thread safety: the readers from any number of threads once started;
 * new/start/free from one thread.
 */
#ifndef WEBHOOK_PREFIX_CACHE_H
#define WEBHOOK_PREFIX_CACHE_H

#include "common/informer.h"
#include "common/k8s.h"
#include "common/kerr.h"
#include "common/metrics.h"
#include "common/store.h"
#include "webhook/review.h"

struct prefix_cache_opts {
    struct k8s_client *client; /* BORROWED, required */
    const char *ns;            /* BORROWED; NULL or "": Etcds of every namespace */
    int backups;               /* also EtcdBackups (their copies' prefixes) */
    const char *claims_ns;     /* BORROWED; the namespace of the claim Leases (common/pclaim);
                                  NULL or "": none (claims decided from the caches alone) */
    struct metrics_vec *cross; /* BORROWED or NULL: a counter labelled by namespace, counting
                                  the refusals over another namespace's claim (probing shows) */
    int routed; /* the Etcds' StatefulSets are routed to this webhook (--local-volume-guard):
                   webhook/stsvol judges them, so webhook/plocal's exception may apply */
};

struct prefix_cache;

/* Build the informers (nothing runs). On KERR_OK *out OWNS them. */
enum kerr prefix_cache_new(const struct prefix_cache_opts *o, struct prefix_cache **out,
                           struct kerr_info *err);

enum kerr prefix_cache_start(struct prefix_cache *c, struct kerr_info *err);

/* True once both informers listed. */
int prefix_cache_synced(struct prefix_cache *c);

/*
 * prefix_check against the caches; an error (500) until they synced. A claim they allow is
 * then recorded with prefix_lock (with opts.claims_ns, and unless the request is a dry run):
 * two overlapping claims admitted at once are refused but one.
 */
enum kerr prefix_cache_decide(struct prefix_cache *c, const struct review_req *req,
                              struct review_resp *resp, struct kerr_info *err);

/*
 * The bucket owner's authority over a new claim of namespace ns of prefix (canonical) in store
 * key (webhook/bauth): resp denied with the reason when a BackupBucket of the store does not
 * select ns or gives the prefix to another namespace (spec.prefixScope Namespace), a 500 when
 * that could not be read; unchanged otherwise. Callers ask it before any overlap check, so
 * that a claim outside the namespace's part is refused whatever the others claim.
 */
enum kerr prefix_cache_authorise(struct prefix_cache *c, const char *ns, const char *key,
                                 const char *prefix, struct review_resp *resp,
                                 struct kerr_info *err);

/*
 * The projected caches (Etcds, BackupEntries, EtcdBackups or NULL), BORROWED by the caller
 * while c lives; 0 (all NULL) until they synced.
 */
int prefix_cache_stores(struct prefix_cache *c, struct store **etcds, struct store **entries,
                        struct store **backups);

/* The cached BackupBuckets (whole objects), BORROWED while c lives. */
struct store *prefix_cache_buckets(struct prefix_cache *c);

/* inf_report_rv for each informer. */
void prefix_cache_report_rv(struct prefix_cache *c, inf_rv_fn fn, void *ctx);

/* The client and the namespace of the claim Leases (NULL when claims are not recorded),
 * BORROWED while c lives. */
void prefix_cache_claims(struct prefix_cache *c, struct k8s_client **client, const char **ns);

/*
 * Count resp, the answer to a claim of namespace ns, in opts.cross when it refuses the claim over
 * another namespace's (PREFIX_OTHER_NAMESPACE): a namespace probing the others' prefixes with
 * refusals shows there. prefix_cache_decide counts its own answers.
 */
void prefix_cache_count(struct prefix_cache *c, const char *ns, const struct review_resp *resp);

/* opts.routed. */
int prefix_cache_routed(struct prefix_cache *c);

/* Stop and free. NULL is a no-op. */
void prefix_cache_free(struct prefix_cache *c);

#endif
