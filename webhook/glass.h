/*
 * glass - break glass used once. HIBGUARD_ANN_BREAK_GLASS on an Etcd allows one
 * scale-down (or member volume deletion) without a snapshot. Before the webhook admits
 * a request only because of it, it records the use, and admits only once that write
 * succeeded:
 *
 *   Lease coordination.k8s.io/v1 "<GLASS_LEASE_PREFIX><first 32 hex digits of the
 *   sha256 of "<namespace>/<name>" of the Etcd>" in the webhook's namespace, annotation
 *   GLASS_ANNOTATION: a list of records {"uid","namespace","name","value","at","user",
 *   "what"} (value: the sha256 of the annotation's whole value, at in Unix seconds).
 *
 * A use is one request: the object it acts on (resource, namespace, name) and, for an UPDATE or
 * DELETE, that object's uid and resourceVersion as the review's oldObject gives them (for a
 * CREATE, the review's request.uid). Before a use is recorded for an UPDATE or DELETE the
 * object stored must be the review's oldObject (GET, uid and resourceVersion equal), for a
 * CREATE no object of its name may be stored: a review posted to the webhook's port by someone
 * who does not know the object cannot use the value up. The same request again (the API server
 * re-sending it, or the real request after a forged copy of it) finds its own record and is
 * admitted without a new one: the API server commits at most one write per resourceVersion of
 * an object, so that admits no second change.
 *
 * A recorded use that never committed is no use. With a use of an UPDATE or DELETE its target
 * is recorded: resource, namespace, name, uid, resourceVersion and metadata.generation of the
 * object stored (a DELETE's without it). When a later request finds the value used by another
 * request, the record's target is read: the same uid, another resourceVersion, no
 * deletionTimestamp and, for an UPDATE, the same generation mean the recorded request can no
 * longer commit (its resourceVersion is gone; a retry of it is admitted anew) and never did (a
 * scale-down, any spec change, bumps the generation when it commits, a status write does not;
 * a DELETE leaves the object gone or deleting): the record is void, it is dropped and this
 * request uses the value. So a copy of a request posted to the webhook's
 * port by a reader, which the API server never makes, does not use the value up once the
 * object moves on. A record without a target (or, of an UPDATE, without a generation), a
 * target gone, of another uid,
 * whose generation moved, stored at the recorded resourceVersion (the request may still
 * commit), deleting, or that cannot be read keeps the use.
 *
 * Keyed by the Etcd's namespace and name, not its uid: an Etcd deleted and created again
 * from the same manifest, the same value in it, does not get that value's use once more.
 * Every value used is kept GLASS_KEEP_S after its use (a value expires at most 24 hours
 * after any time it counts), so a value used once, set again after another one was used
 * (a re-applied manifest, a runbook run twice), is still refused.
 *
 * glass_take: the object checked as above; GET the Lease (absent: CREATE it); a record of the
 * same Etcd and value means the value was used: *used filled, nothing written, the caller
 * refuses (unless the record is this request's: admitted, nothing written); else
 * UPDATE it with the new record added (the records older than GLASS_KEEP_S dropped), the
 * resourceVersion read as precondition (compare-and-swap). A 409 starts over, reading
 * what the other admission wrote: of two requests on one value, by any number of webhook
 * replicas, the second to write reads the first's record. When the Lease cannot be read
 * or written (or GLASS_TRIES conflicts in a row) the caller refuses: never admitted
 * unrecorded. A dry run reads and never writes.
 *
 * Bounds: one Lease per Etcd namespace and name, holding at most GLASS_RECORDS_MAX records
 * (a further use within GLASS_KEEP_S is refused, KERR_TOOBIG). The Lease of an Etcd that is
 * gone is left behind (a few hundred bytes each).
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant (the client is); glass_judge
 * and glass_record are pure.
 */
#ifndef WEBHOOK_GLASS_H
#define WEBHOOK_GLASS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"

#define GLASS_LEASE_PREFIX "etcd-warden-glass-"
#define GLASS_ANNOTATION   "etcd-warden.io/break-glass-used"
#define GLASS_TRIES        8
#define GLASS_HASH_LEN     64 /* hex sha256 */
#define GLASS_WHAT_MAX     400
#define GLASS_KEEP_S       (25 * 3600) /* a use's record kept this long */
#define GLASS_RECORDS_MAX  32

/* A use of break glass to record: all BORROWED. */
struct glass_use {
    const char *ns, *name, *uid; /* the Etcd */
    const char *value;           /* GLASS_HASH_LEN hex: the sha256 of the annotation's value */
    const char *user;            /* who asked */
    const char *what;            /* what the request does */
    /* the request: the object it acts on (NULL target: no check, request "") */
    const struct k8s_resource *target;
    const char *target_ns, *target_name;
    const char *target_uid, *target_rv; /* the review's oldObject's; NULL for a CREATE */
    const char *review_uid;             /* a CREATE: the review's request.uid */
    const char *request;                /* glass_request_key of the above */
    int64_t target_gen; /* the stored target's metadata.generation (glass_take sets it; 0: none) */
    int deletion;       /* the request is a DELETE of the target */
};

#define GLASS_REQUEST_MAX 800

/*
 * The key of u's request into out (GLASS_REQUEST_MAX + 1 bytes): "<group>/<resource>
 * <namespace>/<name> <uid> <resourceVersion>", or "... create <review_uid>" when target_uid
 * is NULL (a CREATE is the same request only when the API server sends that call again);
 * "" without a target, or with an empty target_uid or no target_rv (matching no other
 * request). Pure.
 */
void glass_request_key(const struct glass_use *u, char out[GLASS_REQUEST_MAX + 1]);

/* The use recorded before (at 0 when none). */
struct glass_prior {
    time_t at;
    char user[256];
    char what[GLASS_WHAT_MAX];
};

/* The sha256 of the break glass value v as GLASS_HASH_LEN hex into out ("" on failure). */
void glass_value_hash(const char *v, char out[GLASS_HASH_LEN + 1]);

/* The Lease name of Etcd ns/name into out (n >= 64). */
void glass_lease_name(const char *ns, const char *name, char *out, size_t n);

/*
 * Whether rec (the parsed annotation, BORROWED, any JSON or NULL: a record or a list of
 * them) records u's value of u's Etcd (namespace and name) as used: 1 with *p filled, 2
 * when that record is of u's request (u->request, not ""), else 0 (*p zeroed; a record of
 * another value or Etcd, or one not well formed, does not count). Pure.
 */
int glass_judge(const cJSON *rec, const struct glass_use *u, struct glass_prior *p);

/*
 * u's record at now as written (OWNED, cJSON_Delete), NULL when out of memory: with a "target"
 * {group, version, resource, namespace, name, uid, resourceVersion, generation (when > 0),
 * operation "DELETE" (a deletion)} when u has a target with a uid, a resourceVersion and a
 * generation (target_gen > 0) or is a deletion. Pure.
 */
cJSON *glass_record(const struct glass_use *u, time_t now);

/*
 * The object the record rec (BORROWED) was used on, to read: *res and *ns, *name (BORROWED
 * from rec) set and 1 when rec has a target with a generation or of a DELETE (glass_record);
 * else 0. Pure.
 */
int glass_target(const cJSON *rec, struct k8s_resource *res, const char **ns, const char **name);

/*
 * Whether the use rec (one record, BORROWED) is void given its target as stored now (stored,
 * BORROWED; NULL: not found): 1 when stored has the target's uid, another resourceVersion, no
 * deletionTimestamp and, unless the target is of a DELETE, the target's generation (the
 * recorded request never committed and no longer can); else 0 (the use is kept). Pure.
 */
int glass_void(const cJSON *rec, const cJSON *stored);

/*
 * Record u in the webhook's namespace lease_ns (dry_run: only read). KERR_OK with
 * used->at 0: recorded (or, dry run, would be; or recorded before for this very request);
 * KERR_OK with used->at set: the value was used before (nothing written; a void record, see
 * above, does not count and is replaced by u's). KERR_CONFLICT
 * when u->target is stored otherwise than the review says (nothing written). Errors when it
 * could not be decided (the caller refuses).
 */
enum kerr glass_take(struct k8s_client *k, const char *lease_ns, const struct glass_use *u,
                     int dry_run, struct glass_prior *used, struct kerr_info *err);

#endif
