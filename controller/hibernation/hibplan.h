/*
 * hibplan - the decision logic of hibernation, without any I/O: a function
 * from the state read back from the API (struct hibplan_view) to the one
 * next action (struct hibplan_step). controller/hibernation/hib.c reads the state,
 * calls hibplan_decide, performs the action, reads the state again and
 * repeats; every action is idempotent, so a crash anywhere resumes from
 * whatever the API says.
 *
 * The phases are the values of the annotation etcd-warden.io/hibernation-phase
 * (DESIGN.md §1). Hibernation is wanted on either signal: the annotation
 * etcd-warden.io/hibernate: "true", or spec.replicas: 0 (as Gardener sets it)
 * on an Etcd whose StatefulSet is above 0 or whose flow has begun (the
 * "spec path"). Hibernating:
 *   none/WakingUp/unknown -> phase CuttingTraffic (clearing an old cut time)
 *   CuttingTraffic: suspend etcd-druid (recording that the controller did),
 *     cut the client and server ports, write the cut time
 *     (etcd-warden.io/traffic-cut-at), delete final-snapshot tasks left from an
 *     earlier cycle, then phase FinalSnapshot (backup store configured) or
 *     ScalingDown (no store).
 *   FinalSnapshot, Failed, ScalingDown: the suspension, the cut and the cut
 *     time are checked again first (re-done when undone meanwhile); on the
 *     spec path only until the StatefulSet is at 0.
 *   FinalSnapshot / Failed: a full snapshot of this Etcd that Succeeded after
 *     the cut (ours, or etcd-druid's pre-sync task) -> ScalingDown; a
 *     StatefulSet already at 0 has nothing to snapshot -> ScalingDown. Else
 *     create attempt n+1 when none of ours is live and no other task of this
 *     Etcd is unfinished (etcd-druid's executor would reject one of the two);
 *     a live task is waited for; a failed attempt is retried after
 *     min(base * 2^(n-1), max); after `retries` failed attempts in
 *     FinalSnapshot the phase becomes Failed and the retries go on.
 *     An attempt has failed when the latest task Failed, or when it is live
 *     and has recorded a failed sidecar call (an unreachable sidecar is
 *     retried until the task's timeout, 15 min by default): the first time,
 *     the condition etcd-warden.io/hibernation-condition is written (Warning
 *     event FinalSnapshotFailing with the sidecar's reason); from then on,
 *     and in Failed, the break-glass annotation means ScalingDown without a
 *     snapshot. The condition is removed in ScalingDown, Hibernated, a new
 *     CuttingTraffic and WakingUp.
 *   ScalingDown: with a store, no counted snapshot and no break-glass the
 *     phase goes back to FinalSnapshot unless the StatefulSet already is at 0
 *     (never scale down without a successful final snapshot); a StatefulSet
 *     above 0 that is not the one the snapshot was checked against
 *     (stamp_ok: scaled up or changed since) voids the cut as in Hibernated
 *     (VOID_CUT, phase WakingUp, a new cycle follows); with opts.verify the
 *     scale to 0 follows a check of the same call (VERIFY); scale to 0;
 *     wait for status.replicas 0; move the stamp to the StatefulSet at 0
 *     (stamp_next: RESTAMP); ensure the immutability task (bucket
 *     retention; a task being deleted is waited for); on the spec path lift
 *     the suspension the controller set, so that etcd-druid reconciles
 *     spec.replicas: 0 itself (Gardener waits for that); phase Hibernated.
 *   Hibernated: a StatefulSet above 0, or one that is not asleep as the stamp
 *     says (stamp_moved: pods in its status, or two or more changes past the
 *     stamp, where a wake and a scale-down while warden-controller was away may
 *     hide), voids the cut (VOID_CUT: the Etcd is awake again, the phase becomes
 *     WakingUp; still wanted, a new cycle follows); one change past the stamp
 *     that left it at 0 (stamp_next: etcd-druid rolling the template of a
 *     sleeping StatefulSet) is no wake: the stamp moves to it (RESTAMP), as it
 *     does in ScalingDown after the scale to 0, before the spec path hands the
 *     StatefulSet back to etcd-druid; the annotation path re-asserts a suspension someone removed,
 *     the spec path lifts the one the controller set (the signal switched);
 *     the immutability task follows the retention type.
 *   A cut time that is not the controller's record (cut_forged), or ports
 *   open again after the cut, void it first: a re-cut gets a new time. With
 *   opts.verify, a counted snapshot leads to ScalingDown only once the
 *   sidecar confirmed etcd's revision is in the store (VERIFY), or with
 *   break glass in Failed. After a scale-down without a snapshot the
 *   break-glass annotation is removed (it allows one).
 * Waking up (neither signal): any phase -> WakingUp; WakingUp: remove the
 * cut time first (while it stands, this cycle's snapshot lets the
 * StatefulSet go to 0: it must be gone before writes flow again), delete
 * the immutability task, delete this cycle's unfinished final-snapshot
 * tasks, scale a StatefulSet at 0 back to spec.replicas (a missing
 * StatefulSet is left to etcd-druid, which creates it at spec.replicas; one
 * whose spec.ordinals.start moved is not scaled: BAD OrdinalsMoved, its
 * members would start on other, empty claims),
 * restore the remembered ports, remove the suspension only when the
 * controller set it, remove the phase. No phase: nothing to do.
 *
 * Thread safety: pure functions; the strings returned are static.
 */
#ifndef CONTROLLER_HIBPLAN_H
#define CONTROLLER_HIBPLAN_H

#include <stdbool.h>
#include <stddef.h>

/* Values of etcd-warden.io/hibernation-phase. */
enum hibplan_phase {
    HIBPLAN_NONE,       /* annotation absent */
    HIBPLAN_CUTTING,    /* CuttingTraffic */
    HIBPLAN_SNAPSHOT,   /* FinalSnapshot */
    HIBPLAN_SCALING,    /* ScalingDown */
    HIBPLAN_HIBERNATED, /* Hibernated */
    HIBPLAN_WAKING,     /* WakingUp */
    HIBPLAN_FAILED,     /* Failed */
    HIBPLAN_UNKNOWN,    /* any other value */
    HIBPLAN_PHASE_COUNT
};

/* The client Service <etcd>-client as read back. */
enum hibplan_svc {
    HIBPLAN_SVC_MISSING, /* 404 */
    HIBPLAN_SVC_OPEN,    /* a client or server port is present */
    HIBPLAN_SVC_CUT,     /* neither port; the removed ports are remembered */
    HIBPLAN_SVC_BAD      /* neither port and nothing remembered, no backuprestore
                            port, or a malformed removed-ports annotation */
};

/* The latest final-snapshot task of this Etcd (highest attempt number). */
enum hibplan_task {
    HIBPLAN_TASK_NONE,      /* no task of ours exists */
    HIBPLAN_TASK_LIVE,      /* not finished (no state, Pending, InProgress) */
    HIBPLAN_TASK_SUCCEEDED, /* status.state Succeeded */
    HIBPLAN_TASK_FAILED,    /* Failed or Rejected */
    HIBPLAN_TASK_DELETING   /* deletionTimestamp set */
};

/* Everything the decision needs, read from the API. */
struct hibplan_view {
    bool want;        /* either signal (see above) */
    bool spec_signal; /* wanted through spec.replicas: 0 alone (the spec path) */
    bool deleting;    /* the Etcd has a deletionTimestamp */
    enum hibplan_phase phase;
    bool suspended;    /* druid.gardener.cloud/suspend-etcd-spec-reconcile present */
    bool suspend_ours; /* etcd-warden.io/suspend-added: the controller set the suspension */
    bool cut_at;       /* etcd-warden.io/traffic-cut-at present */
    bool cut_forged;   /* ... but not the cut the controller recorded on the client Service */
    bool counted;      /* a full snapshot of this Etcd Succeeded since the cut (any task) */
    bool other_live;   /* an unfinished EtcdOpsTask of this Etcd that is not ours */
    bool break_glass;  /* etcd-warden.io/allow-scale-down-without-snapshot present */
    bool verified;     /* the sidecar confirmed etcd's revision is the final snapshot's */
    bool stamp_ok;     /* etcd-warden.io/final-snapshot-checked names the StatefulSet as it is
                          (uid, generation): not scaled up or changed since the check */
    bool stamp_moved;  /* etcd-warden.io/final-snapshot-checked is set (kept while Hibernated)
                          and the StatefulSet is not asleep as it says (hibguard_checked_slept):
                          above 0, pods in its status, re-created, or two or more generations
                          past it (a scale-up and down may hide there) */
    bool stamp_next;   /* ... it is asleep, one generation past the stamp (its own scale to 0,
                          or a change at 0 replicas: hibguard_checked_next) */
    bool store;        /* spec.backup.store set */
    int spec_replicas; /* Etcd spec.replicas */
    enum hibplan_svc svc;
    bool svc_remembered;    /* the removed-ports annotation is on the Service */
    enum hibplan_task task; /* state of the latest task */
    int attempt;            /* its attempt number (0 without tasks) */
    int ntasks;             /* final-snapshot tasks of ours not being deleted */
    int ndeleting;          /* final-snapshot tasks of ours being deleted */
    long failed_ago_ms;     /* TASK_FAILED: time since it finished */
    bool task_errors;       /* TASK_LIVE: it has recorded a failed sidecar call (lastErrors) */
    bool failing_noted;     /* etcd-warden.io/hibernation-condition present */
    bool sts_present;       /* StatefulSet <etcd> exists */
    int sts_spec;           /* its spec.replicas */
    bool sts_moved;         /* its spec.ordinals.start is set and not 0 (etcd-druid never sets
                               it): its members would not be <etcd>-0..n-1 on their claims */
    int sts_status;         /* its status.replicas */
    int imm;                /* bucket immutability: 1 yes, 0 no, < 0 malformed */
    bool imm_task;          /* the ExtendFullSnapshotImmutabilityTask exists */
    bool imm_deleting;      /* ... and is being deleted (a finalizer holds it) */
};

/* Tunables of the decision. */
struct hibplan_opts {
    int retries;         /* attempts before phase Failed (>= 1; below 1 counts as 1) */
    long backoff_ms;     /* first retry delay (0: 5 s) */
    long backoff_max_ms; /* retry delay cap (0: 60 s) */
    long poll_ms;        /* re-check interval while waiting (0: 5 s) */
    bool verify;         /* before the scale-down, have the sidecar confirm etcd's revision is
                            the final snapshot's (HIBPLAN_VERIFY; warden-controller: on) */
};

/* The actions, one per step. */
enum hibplan_act {
    HIBPLAN_DONE,           /* nothing to do, no requeue */
    HIBPLAN_WAIT,           /* come back after wait_ms */
    HIBPLAN_BAD,            /* bad input: Warning event `reason`/`note`, come back after wait_ms */
    HIBPLAN_SET_PHASE,      /* write the phase annotation `phase` */
    HIBPLAN_SET_SUSPEND,    /* add the suspend annotation and the record that we did */
    HIBPLAN_CUT_PORTS,      /* remove client+server ports, remember them */
    HIBPLAN_SET_CUT_AT,     /* write etcd-warden.io/traffic-cut-at (now) */
    HIBPLAN_DELETE_TASKS,   /* delete our final-snapshot tasks (earlier cycle; or on wake-up) */
    HIBPLAN_CREATE_TASK,    /* create final-snapshot task number `attempt` */
    HIBPLAN_SCALE,          /* scale the StatefulSet to `replicas` */
    HIBPLAN_IMT_ENSURE,     /* create the immutability task */
    HIBPLAN_IMT_DELETE,     /* delete the immutability task */
    HIBPLAN_RESTORE_PORTS,  /* put the remembered ports back, drop the annotation */
    HIBPLAN_REMOVE_SUSPEND, /* remove the suspension the controller set, and its record */
    HIBPLAN_REMOVE_CUT_AT,
    HIBPLAN_REMOVE_PHASE,
    HIBPLAN_NOTE_FAILING,       /* write the condition that an attempt failed, Warning event */
    HIBPLAN_CLEAR_FAILING,      /* remove that condition */
    HIBPLAN_VOID_CUT,           /* remove a cut that no longer holds (Warning event); Hibernated:
                                   phase WakingUp in the same write (the Etcd is awake again) */
    HIBPLAN_VERIFY,             /* ask the sidecar whether etcd moved on since the final snapshot */
    HIBPLAN_REMOVE_BREAK_GLASS, /* break glass allowed one scale-down: remove it */
    HIBPLAN_RESTAMP,            /* move etcd-warden.io/final-snapshot-checked to the StatefulSet
                                   as it is (one change at 0 since the stamp, never above) */
    HIBPLAN_ACT_COUNT
};

struct hibplan_step {
    enum hibplan_act act;
    enum hibplan_phase phase; /* SET_PHASE */
    int attempt;              /* CREATE_TASK */
    int replicas;             /* SCALE */
    long wait_ms;             /* WAIT, BAD */
    const char *reason;       /* BAD: event reason (static) */
    const char *note;         /* BAD: event note (static) */
};

/* The next action for v under opts (opts may be NULL: defaults). */
struct hibplan_step hibplan_decide(const struct hibplan_view *v, const struct hibplan_opts *opts);

/* Parse a phase annotation value (NULL: HIBPLAN_NONE; unrecognised: HIBPLAN_UNKNOWN). */
enum hibplan_phase hibplan_phase_parse(const char *s);

/* The annotation value of a phase ("" for NONE, "?" for UNKNOWN). Static. */
const char *hibplan_phase_name(enum hibplan_phase p);

/* Name of an action, for logs ("SetPhase", ...). Static. */
const char *hibplan_act_name(enum hibplan_act a);

/*
 * The note of a BAD step with every "<etcd>" replaced by the Etcd's name
 * etcd (BORROWED), cut to fit buf (cap bytes, NUL-terminated). Returns buf.
 */
const char *hibplan_note(const struct hibplan_step *s, const char *etcd, char *buf, size_t cap);

/* Retry delay after failed attempt n (>= 1): min(base * 2^(n-1), max). */
long hibplan_backoff_ms(const struct hibplan_opts *opts, int attempt);

#endif
