/*
 * lookup - how the admission decisions see parent objects: the interface the
 * decisions call (struct lookup, a table of function pointers, so tests fake
 * it and the server plugs its watch-fed caches in), the small views of an
 * Etcd and of a StatefulSet the decisions need, and the projections that
 * cut a full object down to what those views read (what the caches store).
 *
 * Object metadata is read the way Kubernetes' unstructured accessors read
 * it: a field of the wrong type reads as absent, labels with a non-string
 * value read as no labels at all, a deletionTimestamp counts only when it
 * is an RFC 3339 time.
 *
 * Thread safety: the functions here are pure and reentrant. The callbacks
 * of a struct lookup are called concurrently from the server's threads.
 */
#ifndef WEBHOOK_LOOKUP_H
#define WEBHOOK_LOOKUP_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cJSON.h>

#include "common/hibguard.h"
#include "common/kerr.h"
#include "webhook/glass.h"

#define LOOKUP_NAME_MAX          253 /* longest object name or namespace (DNS subdomain) */
#define LOOKUP_UID_MAX           63
#define LOOKUP_REASON_MAX        255 /* longest break-glass reason kept */

#define LOOKUP_MEMBER_PREFIX_MAX 511 /* longest spec.memberNamePrefix judged */

/* Label and annotation keys the decisions read. */
#define LOOKUP_LABEL_MANAGED_BY       "app.kubernetes.io/managed-by"
#define LOOKUP_MANAGED_BY_DRUID       "etcd-druid"
#define LOOKUP_LABEL_PART_OF          "app.kubernetes.io/part-of"
#define LOOKUP_ANN_DISABLE_PROTECTION "druid.gardener.cloud/disable-etcd-component-protection"
#define LOOKUP_ANN_DISABLE_RUNTIME    "druid.gardener.cloud/disable-etcd-runtime-component-creation"
#define LOOKUP_ANN_SUSPEND_RECONCILE  "druid.gardener.cloud/suspend-etcd-spec-reconcile"
#define LOOKUP_ANN_STATUS_BACKUP      "etcd-warden.io/status-backup-exists"
#define LOOKUP_LABEL_RESTORING        "etcd-warden.io/restoring"
#define LOOKUP_LABEL_ALLOW_DELETE     "etcd-warden.io/allow-delete-while-restoring"

/* What the decisions need of a live Etcd. */
struct lookup_etcd {
    char uid[LOOKUP_UID_MAX + 1];
    int protection_disabled;            /* has LOOKUP_ANN_DISABLE_PROTECTION */
    int runtime_disabled;               /* has LOOKUP_ANN_DISABLE_RUNTIME */
    int reconcile_in_progress;          /* lastOperation Reconcile in Processing|Error|Requeue */
    int deletion_in_progress;           /* lastOperation Delete in Processing|Error|Requeue */
    int deleting;                       /* metadata.deletionTimestamp set */
    int restoring;                      /* has label LOOKUP_LABEL_RESTORING */
    int has_backup_store;               /* spec.backup.store is an object */
    char store[HIBGUARD_STORE_LEN + 1]; /* hibguard_store_digest ("" without one) */
    enum kerr secret_ref_rc;            /* hibguard_secret_ref: KERR_OK, NOTFOUND or INVAL */
    char secret_ref[HIBGUARD_SECRET_NAME_MAX + 1]; /* its name when KERR_OK */
    char snapshot_store[HIBGUARD_STAMP_MAX];       /* HIBGUARD_ANN_STORE ("" when absent or longer
                                                      than a stamp can be) */
    int64_t replicas; /* spec.replicas; -1 when absent or not an int32 at least 0 */
    enum kerr cut_rc; /* hibguard_cut_at: KERR_OK, KERR_NOTFOUND or KERR_PARSE */
    time_t cut_at;    /* the traffic cut when cut_rc is KERR_OK */
    int cut_current;  /* the phase annotation says a sleep is under way (hibguard) */
    char phase[32];   /* HIBGUARD_ANN_PHASE, cut to fit ("" when absent) */
    char checked[HIBGUARD_CHECKED_MAX]; /* HIBGUARD_ANN_CHECKED ("" when absent, "?" when
                                           longer than a stamp can be) */
    int break_glass;                    /* has HIBGUARD_ANN_BREAK_GLASS */
    enum kerr break_glass_rc;   /* hibguard_break_glass of its value (KERR_OK: well formed) */
    time_t break_glass_expires; /* its expiry when break_glass_rc is KERR_OK */
    char break_glass_reason[LOOKUP_REASON_MAX + 1]; /* its reason (the whole value when
                                                       malformed), cut to fit */
    char break_glass_value[GLASS_HASH_LEN + 1];     /* the sha256 of its whole value (glass.h) */
    /* spec.memberNamePrefix ("" when absent or null); member_prefix_ok 0 when it is not a
     * string or longer than the buffer */
    int member_prefix_ok;
    char member_prefix[LOOKUP_MEMBER_PREFIX_MAX + 1];
};

/* What the decisions need of a StatefulSet (the parent of a scale or a PVC). */
struct lookup_sts {
    char namespace[LOOKUP_NAME_MAX + 1];
    char name[LOOKUP_NAME_MAX + 1];
    int managed;                       /* managed-by label is exactly etcd-druid */
    int has_part_of;                   /* part-of label present */
    char part_of[LOOKUP_NAME_MAX + 1]; /* its value */
    int deleting;                      /* deletionTimestamp set */
    /*
     * Its ordinals [start, start + replicas): spec.ordinals.start (absent: 0)
     * and spec.replicas (absent: 1); ordinals_ok 0 when either is not a
     * number in range (an int32 at least 0), and then no ordinal is known
     * to lie outside them.
     */
    int ordinals_ok;
    int64_t start, replicas;
    time_t created; /* metadata.creationTimestamp (seconds); 0 when absent or malformed */
};

/*
 * err->reason of a KERR_NOTFOUND that nobody confirmed: a synced cache
 * misses the object and no API lookup was made (the fallback limit was
 * reached). Component protection reads it as not found, as documented
 * (wh_cache.h); the mutating endpoint, which would remove owner references
 * on "not found", answers 500 instead.
 */
#define LOOKUP_REASON_UNCONFIRMED "CacheMissUnconfirmed"

/*
 * The parent lookups. Each returns KERR_OK with *out filled, KERR_NOTFOUND
 * when the object does not exist (err->msg as the API server words it, e.g.
 * `statefulsets.apps "x" not found`; err->reason LOOKUP_REASON_UNCONFIRMED
 * when only a cache says so), or another code with err->msg for a failed
 * lookup. ctx is passed back untouched.
 */
struct lookup {
    void *ctx;
    /* The Etcd ns/name. */
    enum kerr (*etcd)(void *ctx, const char *ns, const char *name, struct lookup_etcd *out,
                      struct kerr_info *err);
    /*
     * The Etcd ns/name read from the API server, never from a cache: for a
     * decision the cache may be behind on (warden-controller writes phase
     * ScalingDown and scales right after). NULL: none.
     */
    enum kerr (*etcd_fresh)(void *ctx, const char *ns, const char *name, struct lookup_etcd *out,
                            struct kerr_info *err);
    /* The StatefulSet ns/name. */
    enum kerr (*sts)(void *ctx, const char *ns, const char *name, struct lookup_sts *out,
                     struct kerr_info *err);
    /*
     * The StatefulSets of ns whose labels include every label of labels (a
     * BORROWED JSON object of strings): *matches receives how many there
     * are and, when at least one, *out the first of them.
     */
    enum kerr (*sts_by_labels)(void *ctx, const char *ns, const cJSON *labels,
                               struct lookup_sts *out, size_t *matches, struct kerr_info *err);
    /*
     * Whether a snapshot of Etcd ns/etcd counts for the hibernation cycle
     * whose traffic cut was at cut_at (hibguard_task_counts): *found is 1
     * when an EtcdOpsTask does. Answered from a cache only.
     */
    enum kerr (*snapshot)(void *ctx, const char *ns, const char *etcd, time_t cut_at, int *found,
                          struct kerr_info *err);
    /*
     * The member pods a StatefulSet ns/sts would lose with ordinals [lo, hi): the pods of ns
     * named "<sts>-<ordinal>" (lookup_pods_outside) whose ordinal is outside the range,
     * *outside receiving how many and *first the lowest such ordinal. Read from the API
     * server, never from a cache (pods are not watched): KERR_OK only on its answer. NULL:
     * not known (a decision that needs it fails closed).
     */
    enum kerr (*pods)(void *ctx, const char *ns, const char *sts, int64_t lo, int64_t hi,
                      size_t *outside, int64_t *first, struct kerr_info *err);
    /*
     * The PersistentVolumeClaims of ns: on KERR_OK *items TAKES a JSON array of them (the
     * items of a LIST, possibly empty; cJSON_Delete). Read from the API server, never from
     * a cache (PVCs are not watched): KERR_OK only on its answer. NULL: not known (a
     * decision that needs it fails closed).
     */
    enum kerr (*pvcs)(void *ctx, const char *ns, cJSON **items, struct kerr_info *err);
    /*
     * The pods of ns, as pvcs lists PVCs: on KERR_OK *items TAKES a JSON array of them, read
     * from the API server, never from a cache. NULL: not known (a decision that needs it
     * fails closed).
     */
    enum kerr (*pod_items)(void *ctx, const char *ns, cJSON **items, struct kerr_info *err);
    /*
     * The StatefulSet ns/name with what the data-directory rule reads of its pod template and
     * claim templates (at least datamnt_project's part; the whole object will do): on KERR_OK
     * *obj TAKES it (cJSON_Delete). Answered as sts is (the server: from its cache, a miss
     * falling back to one GET), KERR_NOTFOUND when there is none (err->reason
     * LOOKUP_REASON_UNCONFIRMED when only a cache says so). NULL: not known (a decision that
     * needs it fails closed).
     */
    enum kerr (*sts_object)(void *ctx, const char *ns, const char *name, cJSON **obj,
                            struct kerr_info *err);
    /*
     * The StatefulSet ns/name as a whole, read from the API server, never from a cache (a
     * hibernated Etcd's claims: a cache may not have seen a wake yet): on KERR_OK *obj TAKES
     * it (cJSON_Delete); KERR_NOTFOUND when the server says there is none. NULL: not known (a
     * decision that needs it fails closed).
     */
    enum kerr (*sts_fresh)(void *ctx, const char *ns, const char *name, cJSON **obj,
                           struct kerr_info *err);
    /*
     * The Secret ns/name as a whole: on KERR_OK *obj TAKES it (cJSON_Delete). Read from the
     * API server, never from a cache: KERR_OK only on its answer, KERR_NOTFOUND when it says
     * there is none. NULL: not known (a decision that needs it fails closed).
     */
    enum kerr (*secret)(void *ctx, const char *ns, const char *name, cJSON **obj,
                        struct kerr_info *err);
    /*
     * Record u, a use of break glass (webhook/glass.h's glass_take; dry_run: only read):
     * KERR_OK with used->at 0 when recorded, used->at set when u's value was used before.
     * NULL: nothing can be recorded (a decision that needs it fails closed).
     */
    enum kerr (*glass)(void *ctx, const struct glass_use *u, int dry_run, struct glass_prior *used,
                       struct kerr_info *err);
    /*
     * Whether namespace ns holds an Etcd (being deleted or not): KERR_OK with *any 1 when the
     * Etcd cache holds one there; with *any 0 only when one LIST of ns's Etcds from the API
     * server finds none (a cache that holds none may be behind). No lookup slot, or the LIST
     * failing: an error, nothing proven. NULL: not known (a decision that needs it fails
     * closed).
     */
    enum kerr (*etcd_any)(void *ctx, const char *ns, int *any, struct kerr_info *err);
};

/*
 * The ordinal of pod name pod as a member of StatefulSet sts: 1 with *ord when pod is
 * "<sts>-<digits>" (the StatefulSet controller's names; leading zeros as its parser takes
 * them, an ordinal past INT64_MAX as INT64_MAX), 0 when it is not.
 */
int lookup_pod_ordinal(const char *pod, const char *sts, int64_t *ord);

/*
 * How many of items (a BORROWED JSON array of pods, the items of a LIST; may be NULL)
 * are members of StatefulSet sts (lookup_pod_ordinal) with an ordinal outside [lo, hi),
 * and the lowest such ordinal into *first (-1 when none).
 */
size_t lookup_pods_outside(const cJSON *items, const char *sts, int64_t lo, int64_t hi,
                           int64_t *first);

/*
 * The deadline of the review being decided on the calling thread
 * (ktime_mono_ms() clock; 0: none). The server sets it before a decision
 * and clears it after; lookups that call the API server bound their calls
 * by it, so a lookup never outlives its review. Thread-local.
 */
void lookup_deadline_set(int64_t deadline_ms);
int64_t lookup_deadline(void);

/* True when err is a KERR_NOTFOUND no API answer confirmed (LOOKUP_REASON_UNCONFIRMED). */
int lookup_unconfirmed(enum kerr rc, const struct kerr_info *err);

/* metadata.<key> of obj as a string, "" when absent or not a string. BORROWED. */
const char *lookup_meta_str(const cJSON *obj, const char *key);

/*
 * metadata.labels (or annotations, with key "annotations") of obj as a
 * JSON object whose values are all strings, or NULL (absent, not an object,
 * or a non-string value). BORROWED.
 */
const cJSON *lookup_meta_map(const cJSON *obj, const char *key);

/* Value of key in a map from lookup_meta_map, or NULL. BORROWED. */
const char *lookup_map_get(const cJSON *map, const char *key);

/* True when metadata.deletionTimestamp of obj is an RFC 3339 time. */
int lookup_meta_deleting(const cJSON *obj);

/* True when labels (a map from lookup_meta_map) contains every key/value of want. */
int lookup_labels_match(const cJSON *labels, const cJSON *want);

/* Fill *out from an Etcd (full or projected). KERR_INVAL when the uid does not fit. */
enum kerr lookup_etcd_from_json(const cJSON *etcd, struct lookup_etcd *out, struct kerr_info *err);

/* Fill *out from a StatefulSet (full or projected). KERR_INVAL when a name does not fit. */
enum kerr lookup_sts_from_json(const cJSON *sts, struct lookup_sts *out, struct kerr_info *err);

/*
 * The part of an Etcd the views read: metadata name, namespace, uid,
 * resourceVersion, deletionTimestamp, the two protection annotations, the three scale-down
 * guard annotations (common/hibguard.h: the cut, the phase, break glass, the stamps),
 * spec.replicas, spec.backup.store with the fields of its stamp (secretRef's name too), and
 * status.lastOperation type and state. TAKES: a new tree (cJSON_Delete), NULL on allocation
 * failure.
 */
cJSON *lookup_etcd_project(const cJSON *etcd);

/* The part of a StatefulSet the views read: metadata name, namespace, resourceVersion,
 * creationTimestamp, labels, deletionTimestamp; spec.replicas and spec.ordinals. TAKES as
 * above. */
cJSON *lookup_sts_project(const cJSON *sts);

/*
 * The part of an EtcdOpsTask hibguard_task_counts reads: metadata name,
 * namespace, resourceVersion, creationTimestamp, spec.etcdName,
 * spec.config.onDemandSnapshot.type and status.state. TAKES as above.
 */
cJSON *lookup_task_project(const cJSON *task);

/*
 * An in-memory lookup over JSON lists (for tests, fuzzing and tools): the
 * Etcds, StatefulSets and EtcdOpsTasks are arrays of objects (BORROWED, may be NULL),
 * matched by metadata.namespace and metadata.name (fresh_etcds, when set, stands for
 * the API server where the Etcd cache is behind). When fail is not
 * KERR_OK every call fails with it ("injected failure"). calls counts the
 * calls (not synchronised: one thread).
 */
struct lookup_mem {
    const cJSON *etcds;
    const cJSON *fresh_etcds; /* what etcd_fresh reads; NULL: etcds */
    const cJSON *stses;
    const cJSON *tasks;
    const cJSON *pods;    /* what the pods lookup lists (every namespace's), NULL: none */
    const cJSON *pvcs;    /* what the PVC lookup lists (every namespace's), NULL: none */
    const cJSON *secrets; /* what the Secret lookup reads (every namespace's), NULL: none */
    /* The break glass uses recorded (an array of glass_record objects, BORROWED, written
     * to); NULL: every use is admitted and nothing recorded. */
    cJSON *glass;
    enum kerr fail;
    int calls;
};

/* Point *out at m. m must outlive *out. */
void lookup_mem_bind(struct lookup_mem *m, struct lookup *out);

#endif
