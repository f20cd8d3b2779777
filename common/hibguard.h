/*
 * hibguard - the scale-to-zero rule shared by the webhook (which refuses a
 * scale-down without a snapshot) and the controller (which waits for one):
 * when an Etcd's traffic was cut for hibernation, and which EtcdOpsTask is a
 * snapshot of that Etcd taken for the current cycle.
 *
 * The controller records the cut on the Etcd as annotation
 * HIBGUARD_ANN_CUT_AT (RFC 3339, UTC), on one clock: the API server's (the
 * creationTimestamp the server stamps on a dry-run create, after the ports
 * are cut), the clock that stamps the tasks it is compared with. A task
 * counts for the cycle when it is a full on-demand snapshot of that Etcd
 * (spec.etcdName, same namespace) that Succeeded and was created strictly
 * after the second of the cut: a task created in the cut's own second may
 * predate the cut and does not count (the controller waits for the next
 * second before it creates its own); a task of an earlier cycle, or of
 * another Etcd of the namespace, never counts.
 * HIBGUARD_ANN_BREAK_GLASS on the Etcd (its value: the reason) lets a
 * scale-down through without a snapshot, for an Etcd whose backups are
 * broken.
 *
 * Ownership: every object is BORROWED. Thread safety: pure functions.
 */
#ifndef COMMON_HIBGUARD_H
#define COMMON_HIBGUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <cJSON.h>

#include "common/kerr.h"

#define HIBGUARD_ANN_CUT_AT      "etcd-warden.io/traffic-cut-at"
#define HIBGUARD_ANN_BREAK_GLASS "etcd-warden.io/allow-scale-down-without-snapshot"
#define HIBGUARD_ANN_PHASE       "etcd-warden.io/hibernation-phase"
#define HIBGUARD_ANN_CHECKED     "etcd-warden.io/final-snapshot-checked"
#define HIBGUARD_ANN_STORE       "etcd-warden.io/final-snapshot-store"
#define HIBGUARD_PHASE_SCALING   "ScalingDown"

/* A digest of the store stamp: hex digits of a sha256 (hibguard_store_digest). */
#define HIBGUARD_STORE_LEN 32

/* Longest stamp value: a uid of up to 63 bytes, '/', a generation of up to 19 digits. */
#define HIBGUARD_CHECKED_MAX 96

/* Longest a break glass may stand: one incident, not an Etcd unguarded for good. */
#define HIBGUARD_BREAK_GLASS_MAX_S (24 * 3600)

/*
 * The time of the traffic cut recorded on etcd into *out (seconds; a
 * fraction is dropped). KERR_NOTFOUND when the annotation is absent,
 * KERR_PARSE when it is not an RFC 3339 time; *out is 0 unless KERR_OK.
 */
enum kerr hibguard_cut_at(const cJSON *etcd, time_t *out, struct kerr_info *err);

/*
 * True when task (an EtcdOpsTask) is in namespace ns, its spec.etcdName is
 * etcd_name, spec.config.onDemandSnapshot.type is "full", status.state is
 * "Succeeded" and metadata.creationTimestamp is in a later second than
 * cut_at (strictly after; a fraction of either is dropped). A task
 * missing any of these, or with a malformed creationTimestamp, does not
 * count.
 */
bool hibguard_task_counts(const cJSON *task, const char *ns, const char *etcd_name, time_t cut_at);

/*
 * True when a cut recorded on an Etcd whose hibernation phase annotation
 * (HIBGUARD_ANN_PHASE) is phase (NULL: absent) belongs to a sleep still
 * under way: CuttingTraffic, FinalSnapshot, Failed or ScalingDown. In
 * any other phase (none, Hibernated, WakingUp, unknown) a StatefulSet
 * above 0 was scaled up after the cut, so the cut is stale.
 */
bool hibguard_phase_current(const char *phase);

/*
 * The break-glass annotation's value: "<expiry> <reason>", the expiry an
 * RFC 3339 time and the reason any text that is not blank, e.g.
 * "2026-11-29T12:00:00Z bucket lost". KERR_OK with *expires (seconds) and
 * *reason (BORROWED from value: the text after the blanks that follow the
 * time) set; KERR_PARSE, with a message saying what is wrong, when the
 * value is not of that form. Whether it has expired is the caller's
 * comparison (*expires <= now: expired).
 */
enum kerr hibguard_break_glass(const char *value, time_t *expires, const char **reason,
                               struct kerr_info *err);

/*
 * The stamp warden-controller writes with hibernation phase ScalingDown
 * (HIBGUARD_ANN_CHECKED): the StatefulSet it checked the final snapshot
 * against, "<metadata.uid>/<metadata.generation>", read before it asked the
 * sidecar for etcd's revision. The API server bumps a StatefulSet's
 * generation on every change of its spec (spec.replicas through the scale
 * subresource included) and nobody can set it, so a StatefulSet still at
 * that uid and generation has not been scaled up (or otherwise changed)
 * since the check.
 */

/*
 * Parse a stamp value: *generation (>= 1) and the uid into uid (size
 * bytes, NUL-terminated). KERR_PARSE, with a message, for anything else (an
 * empty or over-long uid, a uid with '/' or a blank, a generation that is
 * not a positive decimal number without sign or leading zeros).
 */
enum kerr hibguard_checked_parse(const char *value, char *uid, size_t size, long long *generation,
                                 struct kerr_info *err);

/*
 * The stamp of StatefulSet sts into buf (size >= HIBGUARD_CHECKED_MAX):
 * KERR_INVAL when sts has no uid or no positive integer generation, or the
 * uid does not fit.
 */
enum kerr hibguard_checked_format(const cJSON *sts, char *buf, size_t size, struct kerr_info *err);

/*
 * True when value (a stamp, NULL: absent) names StatefulSet sts as it is:
 * same metadata.uid, same metadata.generation. Anything missing or
 * malformed, on either side, is false.
 */
bool hibguard_checked_matches(const char *value, const cJSON *sts);

/*
 * True when value (the stamp above, kept while Hibernated) names StatefulSet sts as asleep
 * since the check: same metadata.uid, spec.replicas 0, no pod counted in its status
 * (status.replicas and status.readyReplicas absent or 0), and metadata.generation the
 * stamp's or the next one. The API server bumps the generation by one for each change of
 * the spec, so the next generation is one change away from the stamp's: the scale to 0 made
 * after the check, or, once warden-controller has moved the stamp to a generation it saw at
 * 0 (hibguard_checked_next), a change at 0 replicas (etcd-druid rolling the pod template of a
 * sleeping StatefulSet). Reaching 0 again after a scale-up takes two changes: a generation
 * two or more past the stamp may hide a wake, and is false (fail closed), as is a StatefulSet
 * whose status counts pods. Anything missing or malformed, on either side, is false.
 */
bool hibguard_checked_slept(const char *value, const cJSON *sts);

/*
 * True when hibguard_checked_slept(value, sts) holds and sts is at the generation after the
 * stamp's: one change of the spec since, which left it at 0 replicas, never above. The stamp
 * may then be moved to sts (hibguard_checked_format), so that the next change at 0 is again
 * one generation away. False otherwise (the stamp's own generation included).
 */
bool hibguard_checked_next(const char *value, const cJSON *sts);

/*
 * The store stamp (HIBGUARD_ANN_STORE): "<store>/<secretRef>/<secret>", where
 *   <store>     is hibguard_store_digest of the Etcd (spec.backup.store's provider,
 *               container, prefix and endpointOverride),
 *   <secretRef> is spec.backup.store.secretRef.name, "-" when the store names no Secret,
 *   <secret>    is hibguard_secret_digest of that Secret of the Etcd's namespace, "-" when
 *               it names none or the Secret does not exist.
 * The sidecar's endpoint, account and the like are in the Secret (docs/backup-entries.md), so
 * a store moved through the Secret, or a secretRef pointed at another, changes the stamp.
 * warden-controller writes it with phase ScalingDown when the final snapshot was checked
 * against the StatefulSet (the same condition as HIBGUARD_ANN_CHECKED), keeps it while
 * Hibernated and drops it in every other phase; a member claim of a hibernated Etcd may go
 * only while it equals the stamp computed afresh (the Secret read from the API server). A stamp
 * of an earlier version (the store digest alone) never equals one.
 */
#define HIBGUARD_SECRET_NAME_MAX 253
#define HIBGUARD_STAMP_MAX       (2 * HIBGUARD_STORE_LEN + HIBGUARD_SECRET_NAME_MAX + 3)

/* The <store> part into out: KERR_NOTFOUND (out "") when etcd has no store, KERR_NOMEM. */
enum kerr hibguard_store_digest(const cJSON *etcd, char out[HIBGUARD_STORE_LEN + 1]);

/*
 * The <secret> part of a Secret object (hostile JSON allowed): the first HIBGUARD_STORE_LEN
 * hex digits of the sha256 of its data's keys and values (as stored, base64), in key order,
 * leaving out the keys that only prove who asks and never say where the sidecar writes
 * (secretAccessKey, accessKeySecret, storageKey, password, applicationCredentialSecret).
 * Every other key counts, known or not (endpoint, region, bucketName, storageAccount, domain,
 * storageAPIEndpoint, authURL, tenantName, storageEndpoint, hostPath, accessKeyID,
 * sseCustomerKey, serviceaccount.json, ...). KERR_NOMEM only.
 */
enum kerr hibguard_secret_digest(const cJSON *secret, char out[HIBGUARD_STORE_LEN + 1]);

/*
 * spec.backup.store.secretRef.name of etcd into *name (BORROWED): KERR_OK; KERR_NOTFOUND
 * (*name NULL) when the store has no secretRef; KERR_INVAL when it has one whose name is no
 * object name (empty, longer than HIBGUARD_SECRET_NAME_MAX, not of a-z, 0-9, '-', '.', or not
 * beginning and ending with a letter or digit).
 */
enum kerr hibguard_secret_ref(const cJSON *etcd, const char **name);

/*
 * The stamp from its parts into out: store (a <store> part), secret_ref (NULL: none named)
 * and secret (the Secret read, NULL: it does not exist). KERR_INVAL for a part that cannot
 * be one, KERR_NOMEM.
 */
enum kerr hibguard_stamp_join(const char *store, const char *secret_ref, const cJSON *secret,
                              char out[HIBGUARD_STAMP_MAX]);

/*
 * The stamp of etcd whose Secret (the one its secretRef names, read by the caller; NULL: none
 * named, or it does not exist) is secret. KERR_NOTFOUND when etcd has no store, KERR_INVAL for
 * a secretRef that names no object, KERR_NOMEM.
 */
enum kerr hibguard_store_stamp(const cJSON *etcd, const cJSON *secret,
                               char out[HIBGUARD_STAMP_MAX]);

#endif
