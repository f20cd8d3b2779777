/*
 * ebs_int - what controller/backups/ebs.c (the pass: survey, prune,
 * schedule) and ebs_status.c (the status it writes, the stuck report, the
 * requeue) share: the checked spec and what one pass found.
 *
 * Not thread-safe: one struct pass belongs to one call of ebs_run.
 */
#ifndef CONTROLLER_EBS_INT_H
#define CONTROLLER_EBS_INT_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "common/kerr.h"
#include "common/ktime.h"
#include "controller/core/claims.h"
#include "controller/core/cron.h"
#include "controller/core/kname.h"

struct rctx;

/* The checked spec of a schedule; pointers BORROWED from the schedule. */
struct spec {
    struct cron cron;
    int suspend;
    int64_t deadline_s; /* < 0: none */
    int64_t keep_ok, keep_bad;
    const cJSON *tmpl;
    const char *etcd;
    const char *uid; /* the schedule's metadata.uid, written on its backups; NULL: none */
    char label[KNAME_LABEL_MAX + 1];
};

/* What one pass found and decided. */
struct pass {
    const cJSON *sched; /* BORROWED */
    int64_t now;        /* Unix seconds */
    cJSON *backups;     /* OWNS: the namespace's EtcdBackup list */
    cJSON *active;      /* OWNS: [{name}] of the schedule's unfinished backups */
    const char *busy;   /* an unfinished backup of the same Etcd (BORROWED), or NULL */
    const cJSON *stuck; /* the oldest one unfinished for over EBS_STUCK_S (BORROWED), or NULL */
    int64_t last_sched; /* 0: none */
    int64_t last_ok;    /* 0: none */
    const char *reason; /* of the Ready condition */
    char message[1024];
    char in_use[CLAIMS_WHY_MAX + 256]; /* why the destination may not be written, or "" */
    char refused[KERR_MSG_LEN + 256];  /* why the API server refused this pass's backup, or "" */
    int created;                       /* this pass created a backup */
};

/* An RFC 3339 time at path of obj as Unix seconds; 0 when absent or bad. */
int64_t ebs_time_at(const cJSON *obj, const char *path);

/* t (Unix seconds) as RFC 3339 into out ("?" when it cannot be); returns out. */
const char *ebs_fmt_time(int64_t t, char out[KTIME_LEN + 1]);

/* Since when backup b is unfinished: its fire time annotation, else its creationTimestamp. */
int64_t ebs_since_of(const cJSON *b);

/* A Warning event BackupStuck when p has a stuck backup the stored status does not report. */
void ebs_report_stuck(const struct rctx *x, const struct pass *p, const struct spec *sp);

/* Build the status of p (ready: the spec is valid; sp NULL when it is not) and write it when
 * it changed. */
enum kerr ebs_write_status(const struct rctx *x, struct pass *p, const struct spec *sp, int ready,
                           struct kerr_info *err);

/* The requeue after a pass over a valid schedule, in ms (0: none). */
long ebs_requeue_after(const struct pass *p, const struct spec *sp, int64_t now_ms);

#endif
