/*
 * pclaim - a prefix claim made atomic at admission. The one-prefix-one-cluster
 * rule (webhook/prefix.h) decides from watch caches, so two CREATEs arriving
 * together could both pass (neither is in the cache when the other is
 * reviewed). Before the webhook admits a new claim it records it in a
 * per-store lock object and admits only once that write succeeded:
 *
 *   Lease coordination.k8s.io/v1 "<PCLAIM_LEASE_PREFIX><first 16 hex digits of
 *   the sha256 of the store key>" in the webhook's namespace, annotation
 *   PCLAIM_ANNOTATION: a JSON array of the claims admitted in the last
 *   PCLAIM_TTL_S seconds, [{"namespace","name","prefix","at"}] (prefix
 *   canonical, at in Unix seconds).
 *
 * pclaim_take: GET the Lease (absent: CREATE it); refuse when a recorded claim
 * of another owner overlaps (bstore_overlap: string prefix either way, as the
 * sidecar lists, not only equality); else UPDATE it with this claim added, the
 * resourceVersion read as precondition (compare-and-swap). A 409 (another
 * admission wrote in between) starts over, reading what it wrote.
 *
 * What it guarantees: of two admissions of overlapping claims in one store
 * within PCLAIM_TTL_S of each other, by any number of webhook replicas, the
 * second to write reads the first's record and is refused: their writes are
 * serialised by the one object's resourceVersion, and overlap (not equality)
 * is checked against every record. Past PCLAIM_TTL_S the admitted object is
 * expected in the watch caches, which the rule consults first. A request
 * admitted here and then not stored (refused by another webhook) keeps its
 * prefix from other owners for PCLAIM_TTL_S: the safe side. When the Lease
 * cannot be read or written (or PCLAIM_TRIES conflicts in a row, or
 * PCLAIM_MAX records) the request is refused with an error: never admitted
 * unrecorded.
 *
 * Bounds: a request admitted here and then not stored (AlreadyExists, another
 * webhook's refusal) leaves a record with no object. Records of one namespace
 * in one Lease are at most PCLAIM_NS_CLAIMS (its next claim is refused, never
 * another namespace's); a prefix is at most BSTORE_PREFIX_MAX bytes; one Etcd
 * has one record (a newer request of the same namespace and name replaces
 * it: the object holds one prefix); a namespace's records are at most
 * PCLAIM_NS_BYTES bytes; and a record older than PCLAIM_PENDING_S whose
 * Etcd is not stored with that claim (a GET) is dropped when it is in the way
 * of a claim, its namespace is at its bound, or the Lease is full. So no
 * namespace fills the Lease for another: it is full only when 16 namespaces
 * hold their whole share of stored claims at once, and a claim that would take
 * its annotations past PCLAIM_ANNOTATIONS_MAX is refused with a message (403),
 * the Lease left as it was, writable for every claim that fits.
 *
 * Upgrade: releases before every object store of one container was one store
 * (common/bstore) named the Lease after "<family>|<container>|". pclaim_take
 * reads those Leases of the container too (bstore_legacy_keys) and refuses on
 * an overlapping live record there, so a claim recorded by a webhook of the
 * release before (a rolling upgrade) still blocks, and pclaim_admitted reads
 * them as well, so it holds a deletion back; they are never written and their
 * records lapse after PCLAIM_TTL_S.
 *
 * Both processes: warden-webhook records an Etcd's claim and an EtcdRestore's
 * target at admission; warden-controller records an EtcdBackup's copy
 * destination and takes an EtcdRestore's target again before it creates their
 * copy Jobs (controller/core/claims.h's claims_take), so a copy and an
 * admission are serialised by the same Lease: an Etcd admitted and not stored
 * yet refuses the copy, and a copy recorded refuses the Etcd.
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant (the client is).
 */
#ifndef COMMON_PCLAIM_H
#define COMMON_PCLAIM_H

#include <stddef.h>
#include <time.h>

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"

#define PCLAIM_LEASE_PREFIX "etcd-warden-claims-"
#define PCLAIM_ANNOTATION   "etcd-warden.io/claims"
#define PCLAIM_TTL_S        120
#define PCLAIM_TRIES        16
#define PCLAIM_MAX          512
#define PCLAIM_KIND_RESTORE "EtcdRestore"
#define PCLAIM_KIND_BACKUP  "EtcdBackup"
#define PCLAIM_KIND_SOURCE  "EtcdRestoreSource"

#define PCLAIM_NS_MAX       256
/* An admitted request is stored or given up within this (the API server's webhook timeout is at
 * most 30 s): a record older than it whose object is not stored with its claim is dropped. */
#define PCLAIM_PENDING_S 30
/* The records (Etcds: one record each) one namespace may have in one store's Lease (its own
 * claims of further Etcds refused beyond). */
#define PCLAIM_NS_CLAIMS 16

/* The API server's bound on one object's annotations, keys and values together
 * (apimachinery ValidateAnnotations, TotalAnnotationSizeLimitB): a claim that would take the
 * Lease past it is refused (o->refused), never written. */
#define PCLAIM_ANNOTATIONS_MAX (256 * 1024)
/* The bytes of records (as written, JSON) one namespace may have in one store's Lease, its own
 * next claim refused beyond: so the Lease is full only once PCLAIM_ANNOTATIONS_MAX /
 * PCLAIM_NS_BYTES namespaces each hold their whole share at once. */
#define PCLAIM_NS_BYTES (16 * 1024)

/* What a conflict found: the other owner described, and its namespace. */
struct pclaim_other {
    char what[512];         /* "" when none */
    char ns[PCLAIM_NS_MAX]; /* its namespace */
    char refused[512];      /* "" or why the claim's own namespace may not record another */
};

/*
 * A claim to record: all BORROWED; prefix canonical (common/bstore). kind NULL: an Etcd's
 * (recorded {namespace, name, prefix, at}), by warden-webhook at admission.
 * PCLAIM_KIND_RESTORE: an EtcdRestore's target, recorded {kind, namespace, name, etcd, prefix,
 * at, provider, endpointOverride, uid} with etcd the Etcd it will create and provider and
 * endpointOverride the target store as resolved at admission (common/rtarget; what the copy
 * writes: common/rtrec); such a record counts whatever its age while its EtcdRestore is
 * stored and claims its target (common/rtarget's rtarget_claims: until Completed, when its Etcd
 * carries the claim; Failed after its copy started, for as long as it is stored), and is no
 * conflict for that Etcd; warden-controller takes it again before the copy Job.
 * PCLAIM_KIND_BACKUP: an EtcdBackup's copy destination, recorded {kind, namespace, name, etcd,
 * prefix, at} (etcd: spec.etcdName) by warden-controller before it creates the copy Job; it
 * counts for PCLAIM_TTL_S as an Etcd's does (by then status.destination, written with the Job,
 * is the claim every cache sees), and is no conflict for the copies of EtcdBackups of the same
 * Etcd in the same namespace (a schedule's history shares one prefix).
 * PCLAIM_KIND_SOURCE: an EtcdRestore's spec.source.store, recorded {kind, namespace, name,
 * prefix, at, uid} by warden-webhook at admission, in the Lease of the source's store: a read,
 * not a claim, so it conflicts with nothing; pclaim_admitted counts it for PCLAIM_TTL_S unless
 * its EtcdRestore is stored and over (Completed or Failed), so a deletion of what the restore
 * reads waits for a restore admitted and not stored yet (once stored, the API server's list
 * of restores says so).
 */
struct pclaim {
    const char *ns, *name; /* the owner */
    const char *store;     /* bstore key */
    const char *prefix;
    const char *kind; /* NULL (an Etcd), PCLAIM_KIND_RESTORE, _BACKUP or _SOURCE */
    const char *etcd; /* PCLAIM_KIND_RESTORE: the target Etcd's name; _BACKUP: the source's */
    /* PCLAIM_KIND_RESTORE, recorded when not NULL: the target store's provider and endpoint as
     * resolved at admission, and the EtcdRestore's metadata.uid */
    const char *provider, *endpoint, *uid;
};

/* The Lease name of store key into out (n >= 64). */
void pclaim_lease_name(const char *store, char *out, size_t n);

/*
 * The records of rec (a parsed annotation, BORROWED) that still count at now and that overlap
 * c for another owner: the first into *o (o->what "" when none). Pure.
 */
void pclaim_conflict(const cJSON *rec, const struct pclaim *c, time_t now, struct pclaim_other *o);

/*
 * Like pclaim_take but read-only and against EtcdRestore records only: the first in-flight
 * restore target of store overlapping prefix into *o (o->what "" when none); a restore of
 * namespace ns whose target Etcd is etcd (NULL: none) is no conflict. Errors when the Lease
 * could not be read (the caller must refuse).
 */
enum kerr pclaim_restores(struct k8s_client *k, const char *lease_ns, const struct pclaim *c,
                          struct pclaim_other *o, struct kerr_info *err);

/*
 * Read-only: the first EtcdRestore target recorded in store's Lease of a namespace other than
 * ns that overlaps prefix and is in the way of an owner there (its restore stored and claiming
 * its target, common/rtarget's rtarget_claims, or that cannot be told; or admitted within
 * PCLAIM_PENDING_S and not stored yet), into *o (o->what "" when none). A Local store's record
 * holds the target's directory as placed at admission. Errors when the Lease could not be read
 * (the caller must refuse).
 */
enum kerr pclaim_restore_targets(struct k8s_client *k, const char *lease_ns, const char *store,
                                 const char *prefix, const char *ns, struct pclaim_other *o,
                                 struct kerr_info *err);

/*
 * Read-only: the first record of store's Lease that still counts (an admission within
 * PCLAIM_TTL_S, a copy starting, a restore target in flight, a restore's source admitted
 * within PCLAIM_TTL_S whose restore is not over) and overlaps prefix, whoever
 * owns it, into *o (o->what "" when none): a deletion of prefix waits for it, since an Etcd
 * admitted and not stored yet (another validating webhook still holding its request) is in
 * no list of the API server. A record of own (NULL: none; its kind, namespace and name)
 * made no later than before (Unix seconds) does not count: the admission of what is being
 * deleted (its last update may fall in the second it was seen gone).
 * The Leases an earlier release named after the family keys of the store's container
 * (bstore_legacy_keys) are read too: a claim a webhook of the release before recorded there
 * during a rolling upgrade counts as well.
 * Errors when a Lease could not be read (the caller must not delete).
 */
enum kerr pclaim_admitted(struct k8s_client *k, const char *lease_ns, const char *store,
                          const char *prefix, const struct pclaim *own, time_t before,
                          struct pclaim_other *o, struct kerr_info *err);

/* The records of lease (its PCLAIM_ANNOTATION parsed; a new array, OWNED by the caller; a
 * missing or unreadable annotation: none). */
cJSON *pclaim_records(const cJSON *lease);

/* How many records of rec (a parsed annotation, BORROWED) of namespace ns count at now. Pure. */
int pclaim_pending(const cJSON *rec, const char *ns, time_t now);

/* The bytes of the records of rec of namespace ns that count at now, as written. Pure. */
size_t pclaim_ns_bytes(const cJSON *rec, const char *ns, time_t now);

/* The bytes c's record takes, as written at now. Pure. */
size_t pclaim_record_bytes(const struct pclaim *c, time_t now);

/* The bytes the API server counts for lease's annotations (every key's and value's length)
 * with PCLAIM_ANNOTATION's value text. Pure. */
size_t pclaim_annotation_bytes(const cJSON *lease, const char *text);

/*
 * Record c in the Lease of its store in namespace ns, or find a recorded overlapping claim of
 * another owner (into *o: the caller denies then), or c's namespace over its share (o->refused:
 * the caller denies with it). KERR_OK with o->what and o->refused "" when recorded;
 * errors when it could not be decided (the caller must refuse).
 */
enum kerr pclaim_take(struct k8s_client *k, const char *ns, const struct pclaim *c,
                      struct pclaim_other *o, struct kerr_info *err);

#endif
