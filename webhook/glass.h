/*
 * glass - break glass used once. HIBGUARD_ANN_BREAK_GLASS on an Etcd allows one
 * scale-down (or member volume deletion) without a snapshot. Before the webhook admits
 * a request only because of it, it records the use, and admits only once that write
 * succeeded:
 *
 *   Lease coordination.k8s.io/v1 "<GLASS_LEASE_PREFIX><first 32 hex digits of the
 *   sha256 of the Etcd's uid>" in the webhook's namespace, annotation GLASS_ANNOTATION:
 *   {"uid","namespace","name","value","at","user","what"} (value: the sha256 of the
 *   annotation's whole value, at in Unix seconds).
 *
 * glass_take: GET the Lease (absent: CREATE it); a record of the same uid and value
 * means the value was used: *used filled, nothing written, the caller refuses; else
 * UPDATE it with the new record (it replaces a record of an earlier value), the
 * resourceVersion read as precondition (compare-and-swap). A 409 starts over, reading
 * what the other admission wrote: of two requests on one value, by any number of webhook
 * replicas, the second to write reads the first's record. When the Lease cannot be read
 * or written (or GLASS_TRIES conflicts in a row) the caller refuses: never admitted
 * unrecorded. A dry run reads and never writes.
 *
 * Bounds: one Lease per Etcd uid (its name), holding one record: the last value used
 * (a new value's use replaces it). The Lease of an Etcd that is gone is left behind
 * (a few hundred bytes each).
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant (the client is); glass_judge
 * and glass_record are pure.
 */
#ifndef WEBHOOK_GLASS_H
#define WEBHOOK_GLASS_H

#include <stddef.h>
#include <time.h>

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"

#define GLASS_LEASE_PREFIX "etcd-warden-glass-"
#define GLASS_ANNOTATION   "etcd-warden.io/break-glass-used"
#define GLASS_TRIES        8
#define GLASS_HASH_LEN     64 /* hex sha256 */
#define GLASS_WHAT_MAX     400

/* A use of break glass to record: all BORROWED. */
struct glass_use {
    const char *ns, *name, *uid; /* the Etcd */
    const char *value;           /* GLASS_HASH_LEN hex: the sha256 of the annotation's value */
    const char *user;            /* who asked */
    const char *what;            /* what the request does */
};

/* The use recorded before (at 0 when none). */
struct glass_prior {
    time_t at;
    char user[256];
    char what[GLASS_WHAT_MAX];
};

/* The sha256 of the break glass value v as GLASS_HASH_LEN hex into out ("" on failure). */
void glass_value_hash(const char *v, char out[GLASS_HASH_LEN + 1]);

/* The Lease name of the Etcd uid into out (n >= 64). */
void glass_lease_name(const char *uid, char *out, size_t n);

/*
 * Whether rec (the parsed annotation, BORROWED, any JSON or NULL) records u's value of u's
 * Etcd as used: 1 with *p filled, else 0 (*p zeroed; a record of another value or uid, or
 * one not well formed, is replaced by u's). Pure.
 */
int glass_judge(const cJSON *rec, const struct glass_use *u, struct glass_prior *p);

/* u's record at now as written (OWNED, cJSON_Delete), NULL when out of memory. Pure. */
cJSON *glass_record(const struct glass_use *u, time_t now);

/*
 * Record u in the webhook's namespace lease_ns (dry_run: only read). KERR_OK with
 * used->at 0: recorded (or, dry run, would be); KERR_OK with used->at set: the value was
 * used before (nothing written). Errors when it could not be decided (the caller refuses).
 */
enum kerr glass_take(struct k8s_client *k, const char *lease_ns, const struct glass_use *u,
                     int dry_run, struct glass_prior *used, struct kerr_info *err);

#endif
