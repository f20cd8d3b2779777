/*
 * hib_int - what controller/hib.c (acting, the loop), controller/hib_read.c
 * (reading and deriving the view), hib_note.c, hib_verify.c and hib_task.c (the
 * final-snapshot tasks) share: the state one hib_step call holds.
 *
 * A call reads each object once (from the caches when hib_env has them, else
 * from the API) and then keeps it current from the answers of its own writes,
 * so that an action costs its write alone. Objects read from the API in the
 * call, or answers of its writes, are "fresh"; a scale, a decision that leads
 * to a scale-down (ScalingDown, Hibernated) and the end of a wake-up are taken
 * on fresh state only.
 *
 * Not thread-safe: one struct round belongs to one call.
 */
#ifndef CONTROLLER_HIB_INT_H
#define CONTROLLER_HIB_INT_H

#include <stdbool.h>
#include <time.h>

#include <cJSON.h>

#include "common/hibguard.h"
#include "common/kerr.h"
#include "controller/hibernation/hib.h"
#include "controller/hibernation/hibplan.h"

/* What one hib_step call holds. Every object OWNED by the round. */
struct round {
    const char *ns, *name; /* BORROWED from etcd */
    int used;              /* API requests of this call so far */
    int budget;            /* ... and at most (hib_env.max_requests) */
    cJSON *etcd;           /* NULL: read it again (after a conflict) */
    cJSON *svc, *sts, *imm;
    cJSON *tasks;            /* array of the EtcdOpsTasks of this Etcd (a LIST: the namespace's) */
    bool svc_read, sts_read; /* loaded (NULL then means: absent) */
    bool tasks_read, imm_read;
    bool svc_api; /* read the Service from the API (the cached one conflicted) */
    bool svc_fresh, sts_fresh, tasks_fresh; /* from the API in this call (or a write's answer) */
    const cJSON *latest;                    /* BORROWED from tasks: our highest attempt */
    struct hibplan_view v;
    long defer_ms; /* set by an action that has to wait: requeue after this long */
    bool verified; /* the sidecar confirmed the final snapshot holds etcd's revision (this call) */
    char checked[HIBGUARD_CHECKED_MAX]; /* the StatefulSet as read before that check
                                           (hibguard_checked_format; "" when it had none) */
};

/*
 * Ask the backup sidecar whether etcd moved on since the final snapshot
 * (controller/hibernation/hib_verify.c): r->verified on success; otherwise a
 * Warning event, phase Failed and r->defer_ms set.
 */
enum kerr hib_verify(const struct hib_env *env, struct round *r, struct kerr_info *err);

/*
 * Merge-patch annotations of the Etcd (hib.c), resourceVersion checked: n pairs of key and
 * value (NULL: remove), in one write; the answer is r->etcd from then on.
 */
/* hib_patch_etcd of one annotation (value NULL: remove it). */
enum kerr hib_patch_one(const struct hib_env *env, struct round *r, const char *key,
                        const char *value, struct kerr_info *err);

/*
 * (hib_task.c: the final-snapshot EtcdOpsTasks warden-controller writes, owned by the Etcd,
 * onDemandSnapshot full with isFinal) The API server's clock: the creationTimestamp it stamps on a
 * task created with dryRun=All (nothing stored, nothing watched). *now is its second; text, when
 * not NULL, receives it as RFC 3339 (KTIME_LEN + 1 bytes). Arguments BORROWED.
 */
enum kerr hib_task_server_now(const struct hib_env *env, struct round *r, time_t *now, char *text,
                              struct kerr_info *err);

/*
 * (hib_task.c) Create final-snapshot attempt n of r's Etcd once the API server's clock is past the
 * second of the cut (a task of that second might predate the cut and would not count,
 * common/hibguard.h); before that, nothing is created and *defer_ms says how long to wait.
 * The task made joins r->tasks (an existing one of that name, read back, too).
 */
enum kerr hib_task_create(const struct hib_env *env, struct round *r, int attempt, long *defer_ms,
                          struct kerr_info *err);

/*
 * (hib_task.c) Delete the live final-snapshot tasks of ours in r->tasks, as many as the call's
 * budget allows (then *defer_ms is 1: come back for the rest). A task already gone counts as
 * deleted.
 */
enum kerr hib_task_delete_ours(const struct hib_env *env, struct round *r, long *defer_ms,
                               struct kerr_info *err);

/* (hib_note.c) The condition of a failing final snapshot from r->latest, with its Warning. */
enum kerr hib_note_failing(const struct hib_env *env, struct round *r, struct kerr_info *err);

/* (hib_note.c) The events that go with phase p, about to be written. */
void hib_phase_event(const struct hib_env *env, struct round *r, enum hibplan_phase p);

/*
 * The events of the scale of r's StatefulSet to replicas that ended in rc (err: its message,
 * BORROWED): made to 0 without a final snapshot, Warning ScaleDownWithoutSnapshot; a scale to 0
 * refused (the API server or warden-webhook answered no), Warning ScaleDownRefused with the
 * answer: the StatefulSet did not move. Nothing for other scales.
 */
void hib_scale_event(const struct hib_env *env, struct round *r, int replicas, enum kerr rc,
                     const struct kerr_info *err);

/*
 * (hib_note.c) Remove a cut that no longer holds, with a Warning that says why: scaled up
 * while Hibernated (phase WakingUp in the same write), ports open again, or not the record.
 */
enum kerr hib_void_cut(const struct hib_env *env, struct round *r, struct kerr_info *err);

/*
 * (hib_note.c) Move etcd-warden.io/final-snapshot-checked to r->sts as it is (one change of
 * its spec since the stamp, which left it at 0 replicas: no wake), with a Normal event
 * SleepKept when Hibernated.
 */
enum kerr hib_restamp(const struct hib_env *env, struct round *r, struct kerr_info *err);

enum kerr hib_patch_etcd(const struct hib_env *env, struct round *r, int n, const char *const kv[],
                         struct kerr_info *err);

/* Free what r holds (r itself is the caller's). */
void hib_round_release(struct round *r);

/*
 * Load what the decision needs and derive r->v from it (r->etcd present, or
 * read again from the API when NULL; *gone set when the Etcd no longer
 * exists).
 */
enum kerr hib_read_view(const struct hib_env *env, struct round *r, int *gone,
                        struct kerr_info *err);

/* How many of the Service, the StatefulSet and the tasks are not fresh (0 to 3). */
int hib_stale(const struct round *r);

/* Read again from the API those of them that are not fresh (hib_stale requests). */
enum kerr hib_read_fresh(const struct hib_env *env, struct round *r, struct kerr_info *err);

/*
 * (hib_read.c) The store stamp of r->etcd (common/hibguard.h: HIBGUARD_ANN_STORE) into out,
 * its backup Secret read from the API now (404: none): "" when it has none (no store, a
 * secretRef that names no object). A Secret that cannot be read: its code, err set. Also ""
 * with the reason in why (n bytes) when the final snapshot is not known to be in that store:
 * r->sts's template store unknown, its rollout incomplete, or another store than the spec's
 * (controller/core/cmember's cmember_stamp_store).
 */
enum kerr hib_store_stamp(const struct hib_env *env, struct round *r, char out[HIBGUARD_STAMP_MAX],
                          char *why, size_t n, struct kerr_info *err);

/* A GET that maps 404 to *out = NULL. */
enum kerr hib_get_opt(const struct hib_env *env, struct round *r, const struct k8s_resource *res,
                      const char *name, cJSON **out, struct kerr_info *err);

/* The task t (TAKEN) replaces the one of its name in r->tasks, or joins them. */
void hib_keep_task(struct round *r, cJSON *t);

/* (hib_task.c) The task named name was deleted: the answer ans (BORROWED; an object or a
 * Status). */
void hib_task_deleted(struct round *r, const char *name, const cJSON *ans);

/* (hib_task.c) "<etcd>-final-snapshot-", cut with a hash to leave room for the attempt number. */
enum kerr hib_task_prefix(const char *etcd, char *out, size_t n);

/* (hib_task.c) A final-snapshot task of ours for etcd: its attempt number (> 0), else 0. */
int hib_task_ours(const cJSON *t, const char *etcd);

/* The cut time of the Etcd (etcd-warden.io/traffic-cut-at), or -1. */
time_t hib_cut_time(const cJSON *etcd);

/* The annotation etcd-warden.io/hibernate is "true". */
int hib_wanted(const cJSON *etcd);

/* spec.replicas is set to 0 (Gardener's signal). */
int hib_spec_zero(const cJSON *etcd);

#endif
