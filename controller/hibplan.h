/*
 * hibplan - the decision logic of hibernation, without any I/O: a function
 * from the state read back from the API (struct hibplan_view) to the one
 * next action (struct hibplan_step). controller/hib.c reads the state,
 * calls hibplan_decide, performs the action, reads the state again and
 * repeats; every action is idempotent, so a crash anywhere resumes from
 * whatever the API says.
 *
 * The phases are the values of the annotation etcd-warden.io/hibernation-phase
 * (DESIGN.md §1). Hibernating (etcd-warden.io/hibernate: "true"):
 *   none/WakingUp/unknown -> phase CuttingTraffic
 *   CuttingTraffic: suspend annotation, then cut the client and server ports,
 *     then delete final-snapshot tasks left from an earlier cycle, then phase
 *     FinalSnapshot (backup store configured) or ScalingDown (no store).
 *   FinalSnapshot, Failed, ScalingDown: the suspend annotation and the cut
 *     are checked again first (re-done when undone meanwhile).
 *   FinalSnapshot / Failed: create task attempt n+1 when none is live; a live
 *     task is waited for; Succeeded -> ScalingDown; a failed attempt is
 *     retried after min(base * 2^(n-1), max); after `retries` failed
 *     attempts in FinalSnapshot the phase becomes Failed and the retries go on.
 *   ScalingDown: with a store and no Succeeded task the phase goes back to
 *     FinalSnapshot unless the StatefulSet already is at 0 (never scale down
 *     without a successful final snapshot); scale to 0; wait for
 *     status.replicas 0; ensure the immutability task (bucket retention);
 *     phase Hibernated.
 *   Hibernated: the immutability task follows the retention type.
 * Waking up (annotation absent or not "true"): any phase -> WakingUp;
 * WakingUp: delete the immutability task, scale a StatefulSet at 0 back to
 * spec.replicas, restore the remembered ports, remove the suspend
 * annotation, remove the phase. No phase: nothing to do.
 *
 * Thread safety: pure functions; the strings returned are static.
 */
#ifndef CONTROLLER_HIBPLAN_H
#define CONTROLLER_HIBPLAN_H

#include <stdbool.h>

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
    bool want;     /* etcd-warden.io/hibernate == "true" */
    bool deleting; /* the Etcd has a deletionTimestamp */
    enum hibplan_phase phase;
    bool suspended;    /* druid.gardener.cloud/suspend-etcd-spec-reconcile present */
    bool store;        /* spec.backup.store set */
    int spec_replicas; /* Etcd spec.replicas */
    enum hibplan_svc svc;
    bool svc_remembered;    /* the removed-ports annotation is on the Service */
    enum hibplan_task task; /* state of the latest task */
    int attempt;            /* its attempt number (0 without tasks) */
    int ntasks;             /* final-snapshot tasks of ours not being deleted */
    int ndeleting;          /* final-snapshot tasks of ours being deleted */
    long failed_ago_ms;     /* TASK_FAILED: time since it finished */
    bool sts_present;       /* StatefulSet <etcd> exists */
    int sts_spec;           /* its spec.replicas */
    int sts_status;         /* its status.replicas */
    int imm;                /* bucket immutability: 1 yes, 0 no, < 0 malformed */
    bool imm_task;          /* the ExtendFullSnapshotImmutabilityTask exists */
};

/* Tunables of the decision. */
struct hibplan_opts {
    int retries;         /* attempts before phase Failed (>= 1; below 1 counts as 1) */
    long backoff_ms;     /* first retry delay (0: 5 s) */
    long backoff_max_ms; /* retry delay cap (0: 60 s) */
    long poll_ms;        /* re-check interval while waiting (0: 5 s) */
};

/* The actions, one per step. */
enum hibplan_act {
    HIBPLAN_DONE,          /* nothing to do, no requeue */
    HIBPLAN_WAIT,          /* come back after wait_ms */
    HIBPLAN_BAD,           /* bad input: Warning event `reason`/`note`, come back after wait_ms */
    HIBPLAN_SET_PHASE,     /* write the phase annotation `phase` */
    HIBPLAN_SET_SUSPEND,   /* add the suspend annotation */
    HIBPLAN_CUT_PORTS,     /* remove client+server ports, remember them */
    HIBPLAN_DELETE_TASKS,  /* delete the final-snapshot tasks of an earlier cycle */
    HIBPLAN_CREATE_TASK,   /* create final-snapshot task number `attempt` */
    HIBPLAN_SCALE,         /* scale the StatefulSet to `replicas` */
    HIBPLAN_IMT_ENSURE,    /* create the immutability task */
    HIBPLAN_IMT_DELETE,    /* delete the immutability task */
    HIBPLAN_RESTORE_PORTS, /* put the remembered ports back, drop the annotation */
    HIBPLAN_REMOVE_SUSPEND,
    HIBPLAN_REMOVE_PHASE,
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

/* Retry delay after failed attempt n (>= 1): min(base * 2^(n-1), max). */
long hibplan_backoff_ms(const struct hibplan_opts *opts, int attempt);

#endif
