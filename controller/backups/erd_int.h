/*
 * erd_int - what the restore drill's files share (controller/backups/erd.c:
 * the pass; erd_job.c: the target and the Job; erd_status.c: the status and
 * events; erd_sum.c: the Job's verdict): the checked spec, the resolved
 * target, one pass's findings.
 *
 * Not thread-safe: one struct erd_pass belongs to one call of erd_run.
 */
#ifndef CONTROLLER_ERD_INT_H
#define CONTROLLER_ERD_INT_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "common/blocal.h"
#include "common/kerr.h"
#include "common/ktime.h"
#include "controller/backups/cpjob.h"
#include "controller/backups/erd.h"
#include "controller/backups/erd_sum.h"
#include "controller/core/cron.h"
#include "controller/core/kname.h"

struct rctx;

/* The checked spec; pointers BORROWED from the drill. */
struct erd_spec {
    struct cron cron;
    int suspend;
    int restore; /* mode Restore */
    int64_t keep_ok, keep_bad, deadline_s;
    const char *etcd, *backup; /* target: exactly one */
};

/* The resolved target. */
struct erd_target {
    cJSON *etcd, *backup, *secret; /* OWNS (NULL when not read) */
    struct cpjob_store store;      /* BORROWED from the above */
    const char *etcd_name;         /* the Etcd it belongs to (BORROWED) */
    char what[400];                /* "Etcd <ns>/<name>" or "the copy of EtcdBackup <ns>/<name>" */
    char host_path[BLOCAL_HOSTPATH_MAX + 1]; /* Local: the hostPath judged, store.host_path */
};

/* One pass. */
struct erd_pass {
    const cJSON *drill;       /* BORROWED */
    const char *ns;           /* BORROWED */
    int64_t now;              /* Unix seconds */
    cJSON *jobs;              /* OWNS: the drill's Jobs (owned by its uid), a list's items */
    cJSON *active;            /* OWNS: [{name}] of its unfinished Jobs */
    int64_t last_sched;       /* 0: none */
    const char *run_req;      /* the ERD_ANN_RUN value handled this pass, or NULL */
    const cJSON *read_job;    /* the finished Job read this pass (BORROWED from jobs), or NULL */
    struct erd_outcome out;   /* its verdict, when read_job */
    const char *ready_reason; /* of the Ready condition */
    char ready_msg[1024];
    const char *etcd_name; /* for status.etcdName, BORROWED; NULL: keep */
};

/* Resolve the target of drill (BORROWED) as sp says into *t (zeroed first). KERR_OK with why
 * "" when usable, with *reason and why set when not (TargetNotFound, InvalidTarget,
 * TargetNotOwned: a Local directory the drill's namespace does not own, bkown_local);
 * another code for an API error. A Local target's hostPath is decided here, once
 * (t->host_path, which the Job mounts): an Etcd's from its Secret read now, an EtcdBackup
 * copy's as recorded when its copy Job was made. Release t in every case. */
enum kerr erd_target_read(const struct rctx *x, const cJSON *drill, const struct erd_spec *sp,
                          struct erd_target *t, const char **reason, char *why, size_t n,
                          struct kerr_info *err);
void erd_target_release(struct erd_target *t);

/* A Local target's directory, decided once (erd_job.c's erd_target_read): t->host_path and
 * t->store (an EtcdBackup copy's container and prefix as recorded), then bkown_local. Not
 * Local: nothing. why, *reason and the result as erd_target_read's. */
enum kerr erd_local_decide(const struct rctx *x, const char *ns, struct erd_target *t,
                           const char **reason, char *why, size_t n, struct kerr_info *err);

/* The Job name of the drill for fire time t, or for a run request req (t 0). */
enum kerr erd_job_name(const char *drill, int64_t t, const char *req, char *out, size_t n);

/* The Job of drill (BORROWED) for target t: Verify, or Restore (init container "restore"
 * with the sidecar's image running etcdbrctl restore into the emptyDir, then verify
 * --restored-db). when: the fire time (RFC 3339) for ERD_ANN_SCHEDULED_AT. On KERR_OK *out
 * OWNS it. */
enum kerr erd_job_build(const cJSON *drill, const struct erd_spec *sp, const struct erd_target *t,
                        const struct erd_env *env, const char *name, const char *when, cJSON **out,
                        struct kerr_info *err);

/* An RFC 3339 time at path of obj as Unix seconds; 0 when absent or bad. */
int64_t erd_time_at(const cJSON *obj, const char *path);

/* The status of p (sp NULL: the spec is invalid), written when it changed. */
enum kerr erd_write_status(const struct rctx *x, struct erd_pass *p, const struct erd_spec *sp,
                           struct kerr_info *err);

/* The event of the Job p read (DrillSucceeded or DrillFailed). */
void erd_report(const struct rctx *x, const struct erd_pass *p, const struct erd_target *t);

#endif
