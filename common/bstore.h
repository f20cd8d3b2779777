/*
 * bstore - the identity of a backup store and of a prefix in it, as
 * etcd-backup-restore (the backup sidecar) sees them. Every part of
 * etcd-warden that names, claims, compares, writes or deletes a prefix
 * goes through this module, so that "two clusters share backups" means
 * what it means to the sidecar:
 *
 *  - the provider as the sidecar names it (etcd-druid's
 *    StorageProviderFromInfraProvider: "aws", "S3" and "s3" are all S3), and
 *    whether it is an object store or a Local directory;
 *  - one store per container name, whatever the provider: an Etcd's provider
 *    names the client its sidecar uses, not the service behind it. The S3
 *    client's endpoint comes from the Secret (etcd-backup-restore v0.28.4 has
 *    no --store-endpoint-override at all; from v0.41 the Secret's "endpoint"
 *    is applied after --store-endpoint-override and wins:
 *    pkg/snapstore/s3_snapstore.go:93-94 then :214-216 at v0.41.2 and
 *    v0.43.0), and S3 reaches Google Cloud Storage (its XML API), Alibaba OSS,
 *    Ceph's RADOS Gateway (whose buckets Swift serves too) and any other
 *    S3-compatible service; ECS and OCS are the same client
 *    (ecs_s3_snapstore.go:33, ocs_s3_snapstore.go:89); Swift, OSS, ABS and
 *    GCS take their endpoint from the Secret as well (swift_snapstore.go
 *    authURL, oss_snapstore.go:64, abs_snapstore.go:110-121,
 *    gcs_snapstore.go:86-97). So every object store of one container name is
 *    one key, BSTORE_OBJECT "|<container>|" (never a false "apart"); two
 *    services with a bucket of one name are told apart by their prefixes
 *    (docs/backup-entries.md). The key holds no endpoint for the same reason.
 *    The family (S3, ECS and OCS: one client) still decides how a prefix is
 *    written (bstore_object_prefixes);
 *  - the container; for Local stores the directory on the node,
 *    path.Clean(hostPath + "/" + container + "/" + prefix) (common/blocal),
 *    is the claim's prefix and the key holds no container;
 *  - the prefix, canonical: Go's path.Clean, then without leading '/'
 *    (the S3 client cleans the request path, Local joins paths), "" for the
 *    whole container ("", ".", "/").
 *
 * Two claims overlap when their keys are equal and either sidecar's
 * listing would return the other's objects: the sidecar lists an object
 * store with the prefix as a plain string, without a trailing '/'
 * ("p/etcd" lists "p/etcd-2/..."), so one canonical prefix being a string
 * prefix of the other, in either direction, is an overlap; it walks a
 * Local store's directory, so there one prefix must contain the other as a
 * path. "" overlaps everything in its container.
 *
 * Pure functions. Ownership: arguments BORROWED; output into caller buffers
 * unless a function says it allocates. Thread safety: reentrant.
 */
#ifndef COMMON_BSTORE_H
#define COMMON_BSTORE_H

#include <stddef.h>

#include "common/kerr.h"

#define BSTORE_KEY_MAX 1024

/*
 * The longest prefix a claim may have: S3 and GCS object keys are at most 1024 bytes, and the
 * sidecar's are "<prefix>/v2/<name>", so no longer prefix can ever hold a snapshot.
 */
#define BSTORE_PREFIX_MAX 1024

/*
 * On a BackupEntry warden-controller made for a retained EtcdBackup copy: "<namespace>/<name>"
 * of the EtcdBackup. Such an entry holds copies of its spec.etcd: that Etcd's further copies
 * may share its prefix, as the copies of one Etcd may (docs/backups-and-restores.md).
 */
#define BSTORE_RETAINED_COPY_ANNOTATION "etcd-warden.io/retained-copy-of"

/* The first field of every object store's key ("Object|<container>|"). */
#define BSTORE_OBJECT "Object"

/* How many key spellings earlier releases used for one container (bstore_legacy_keys). */
#define BSTORE_LEGACY_N 5

/* A BackupEntry's status.phase: the life of a claim after its Etcd (docs/backup-entries.md). */
#define BSTORE_ENTRY_ACTIVE   "Active"
#define BSTORE_ENTRY_PENDING  "PendingDeletion" /* the Etcd deleted, its grace period running */
#define BSTORE_ENTRY_DELETING "Deleting"        /* a deletion Job runs on its prefix */

/* One prefix of one store, canonical. */
struct bstore_claim {
    char key[BSTORE_KEY_MAX]; /* "Object|<container>|"; Local: "Local||" (the prefix is the
                                 directory on the node, common/blocal) */
    char *prefix;             /* OWNS; canonical, "" = the whole container */
};

/* etcd-backup-restore's provider name for provider ("aws" -> "S3"), or NULL if unknown. */
const char *bstore_provider_kind(const char *provider);

/* The providers bstore_provider_kind knows, comma-separated, for messages. */
const char *bstore_provider_list(void);

/* The family of a provider kind: "S3" for S3, ECS and OCS; the kind otherwise. */
const char *bstore_family(const char *kind);

/*
 * The canonical prefix of prefix (NULL is "") into out, which needs at most
 * strlen(prefix) + 2 bytes. KERR_TOOBIG when it does not fit.
 */
enum kerr bstore_prefix(const char *prefix, char *out, size_t n);

/* etcd-druid's pattern for an Etcd's container (api/core/v1alpha1/store.go, since #1390). */
#define BSTORE_CONTAINER_PATTERN "^[a-zA-Z0-9][a-zA-Z0-9._-]{1,61}[a-zA-Z0-9]$"

/*
 * KERR_OK when container can name provider's store: an object store's container must match
 * BSTORE_CONTAINER_PATTERN (every provider's bucket names fit it; a '/' in one makes the S3 and
 * Swift clients address another bucket or another prefix, so such a name is never a store of
 * its own); a Local store's is any non-empty directory (its hostPath, relative or absolute).
 * KERR_INVAL with the reason in err otherwise (err may be NULL).
 */
enum kerr bstore_container_check(const char *provider, const char *container,
                                 struct kerr_info *err);

/*
 * "Object|<container>|" of an object store ("Local|<container>|" of a Local one: a bucket,
 * whose Etcds and entries are compared by it) into out; neither the provider's family nor
 * endpoint is part of it (see above). KERR_INVAL
 * for an unknown provider or a container bstore_container_check refuses; KERR_TOOBIG when n is too
 * small.
 */
enum kerr bstore_key(const char *provider, const char *container, const char *endpoint, char *out,
                     size_t n);

/*
 * The claim of a prefix in a store into *c. KERR_INVAL (with the field in
 * err) for an unknown provider, a container bstore_container_check refuses, a NULL prefix or one
 * longer than BSTORE_PREFIX_MAX bytes. On KERR_OK c->prefix is allocated: bstore_claim_release
 * frees it.
 */
enum kerr bstore_claim_init(struct bstore_claim *c, const char *provider, const char *container,
                            const char *endpoint, const char *prefix, struct kerr_info *err);

/*
 * The claim of a Local store whose backup Secret's hostPath is hostpath (NULL: etcd-druid's
 * default, common/blocal) into *c: key "Local||" (BLOCAL_KEY), prefix the directory on the
 * node without its leading '/' (blocal_dir; allocated: bstore_claim_release frees it). A
 * caller that cannot read the hostPath gets the default's directory from bstore_claim_init:
 * exact for every Etcd without a hostPath of its own (Gardener's local setup), a guess for the
 * others; admission (webhook/plocal) reads it. Errors as blocal_dir.
 */
enum kerr bstore_local_claim_init(struct bstore_claim *c, const char *hostpath,
                                  const char *container, const char *prefix, struct kerr_info *err);

/*
 * The BackupEntry name of claim c into out: the canonical prefix as a name (lower-case letters
 * and digits, anything else '-', at most 64 characters), "--" and BSTORE_ENTRY_HASH_LEN (16) hex
 * digits of the sha256 of the store key and prefix ("root--..." for the whole container). One
 * claim, one name: of two owners making an entry of one prefix at once (warden-controller's,
 * warden-webhook's for a moved Etcd's earlier prefix), the API server lets one create it. 64 bits:
 * no tenant can search out a claim of hers whose name is another's (a name alone still proves
 * nothing: common/bentry). KERR_NOMEM.
 */
#define BSTORE_ENTRY_HASH_LEN    16
#define BSTORE_ENTRY_HASH_LEN_V1 8
#define BSTORE_ENTRY_NAME_MAX    (64 + 2 + BSTORE_ENTRY_HASH_LEN)
enum kerr bstore_entry_name(const struct bstore_claim *c, char out[BSTORE_ENTRY_NAME_MAX + 1]);

/*
 * The name claim c's entry had when earlier releases made it: as bstore_entry_name with 8 hex
 * digits (32 bits: a tenant can find a claim of hers with another's name in minutes). Entries
 * made then keep it; look them up by both names and take one only when its spec is the claim
 * (common/bentry). KERR_NOMEM.
 */
enum kerr bstore_entry_name_v1(const struct bstore_claim *c, char out[BSTORE_ENTRY_NAME_MAX + 1]);

/* Free what c OWNS; c can be released twice. */
void bstore_claim_release(struct bstore_claim *c);

/* 1 when canonical prefixes a and b overlap (string prefix either way, "" overlaps all). */
int bstore_prefix_overlap(const char *a, const char *b);

/*
 * 1 when canonical prefixes a and b of the store key overlap as that store's sidecar lists:
 * a Local store walks a directory (path.Join(home, container, prefix)), so "x" and "x2" are
 * apart while "x" and "x/y" are not; every other provider lists a plain string prefix
 * (bstore_prefix_overlap).
 */
int bstore_overlap(const char *key, const char *a, const char *b);

/* 1 when two claims overlap: one key, overlapping prefixes. */
int bstore_claims_overlap(const struct bstore_claim *a, const struct bstore_claim *b);

/*
 * Where the sidecar of provider kind writes a cluster's objects for prefix,
 * into out (strlen(prefix) + 2 bytes do): path.Clean of the prefix, without
 * leading '/' for S3, ECS, OCS and OSS (their clients clean the request
 * path); with it kept for ABS, GCS and Swift (their object names are
 * path.Join(prefix, ...) as is); "" for the whole container. Every object of
 * the cluster is "<out>/..." (or anything, for ""). For Local the directory
 * is path.Join(container, out).
 */
enum kerr bstore_object_prefix(const char *kind, const char *prefix, char *out, size_t n);

/*
 * 1 when a store whose claim cannot be computed (an unknown provider, a parse error), of
 * container (NULL or "": not known either), may be the store of key: one container name
 * is the same container in any family as far as a refusal or a deletion is concerned, and
 * any container may be a Local store's. Such a claim overlaps everything there: callers
 * fail closed with it.
 */
int bstore_unkeyed_overlap(const char *key, const char *container);

/*
 * 1 when an Etcd's spec.backup.store with provider (NULL: the field is absent) takes no
 * backups: etcd-druid's StorageProviderFromInfraProvider maps an absent provider to "" and
 * the sidecar then starts no snapshotter, so such an Etcd claims nothing at admission. A
 * provider that is present but empty or unknown is not this: it is refused (fail closed).
 * Destructive decisions still count it as in its container's way (its old snapshots may be
 * there, and its entry is kept).
 */
int bstore_no_store(const char *provider);

/*
 * The keys earlier releases (before every object store of one container was one store) gave
 * container, one per family they told apart: "S3|c|" (S3, ECS, OCS), "ABS|c|", "GCS|c|",
 * "Swift|c|", "OSS|c|". Records written under them (the webhook's claim Leases) still count:
 * readers look them up as well. KERR_TOOBIG when container does not fit.
 */
enum kerr bstore_legacy_keys(const char *container, char out[BSTORE_LEGACY_N][BSTORE_KEY_MAX]);

/*
 * Every spelling under which a sidecar of provider kind, of any version etcd-druid ships,
 * writes prefix's objects: first as bstore_object_prefix; second (n bytes each) the
 * path.Clean'd prefix with its leading '/' when kind is of the S3 family and prefix has one
 * (aws-sdk-go-v2, etcd-backup-restore v0.37.0 and later, does not clean the request path:
 * "/p" writes "/p/v2/..." where v0.28.4 wrote "p/v2/..."), "" otherwise.
 */
enum kerr bstore_object_prefixes(const char *kind, const char *prefix, char *first, char *second,
                                 size_t n);

/*
 * 1 when the backup sidecar can never restore what it writes under canonical prefix c (a
 * claim's prefix): its key "<c>/v2/<name>" holds "v1/" before the "v2/", and ParseSnapshot
 * looks for the last "v1/" first (pkg/snapstore/snapshot.go:50-56 at v0.28.4, :40-46 at
 * v0.43.0), so "prod-v1/etcd/v2/Full-..." parses as a version-1 snapshot "etcd" of the
 * name "v2/Full-...", an unknown kind: every listing ignores it as invalid
 * (s3_snapstore.go:470-474 at v0.28.4) and a restore finds nothing. Any segment ending in
 * "v1" does this ("v1", "prod-v1", "etcd-v1").
 */
int bstore_prefix_unparsable(const char *c);

/* The value of BackupBucket spec.prefixScope that partitions a store's prefixes among the
 * namespaces ("Bucket", the default: every prefix for every namespace the bucket admits). */
#define BSTORE_SCOPE_NAMESPACE "Namespace"

/*
 * The namespace that owns canonical prefix c under spec.prefixScope Namespace, into out (n
 * bytes): of its first segment, the part before the last "--" ("shoot--p--n" of Gardener's
 * "shoot--p--n--<uid>/etcd-main"), or the whole segment when it has no "--" ("team" of
 * "team/etcd"). 0 (out "") when no namespace owns it: no "/" after the first segment (a
 * prefix the sidecar would list with every longer first segment: "team" lists "team2/..."),
 * an empty owner, or one longer than n - 1. Two prefixes of different owners never overlap
 * (one a string prefix of the other gives both the same first segment). Pure.
 */
int bstore_prefix_owner(const char *c, char *out, size_t n);

#endif
