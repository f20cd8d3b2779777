/*
 * erd_sum - what a restore drill's Job says, read from its Pod: the summary
 * `warden-snapshot verify` leaves in its termination message
 * (controller/snapshot/snapchain.h, snapchain_summary: one JSON line), and
 * in Restore mode the init container "restore" (`etcdbrctl restore`) that
 * runs before it. Pure: no I/O, hostile input (the message is what a
 * container wrote) taken apart with cJSON into capped fields.
 *
 * The verdict (erd_sum_verdict), from the Job's outcome and the Pod:
 *   - the restore container ended with a non-zero exit code: NotRestorable,
 *     the reason its message's last line (the real tool refused the chain);
 *   - a summary {"restorable":true,...} of a Job that succeeded: Restorable,
 *     with the revision, keys and newest snapshot;
 *   - a summary {"restorable":false,...}: NotRestorable, naming failedObject
 *     and the reason;
 *   - anything else (the Job's deadline, {"error"}: the check could not
 *     run, no or an unreadable message, a summary contradicting the Job's
 *     outcome): Failed, with what is known.
 *
 * Ownership: arguments BORROWED; results in caller-owned structs.
 * Thread safety: reentrant.
 */
#ifndef CONTROLLER_ERD_SUM_H
#define CONTROLLER_ERD_SUM_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "common/ktime.h"

#define ERD_RESTORE_CONTAINER "restore"

enum erd_verdict { ERD_UNKNOWN = 0, ERD_RESTORABLE, ERD_NOT_RESTORABLE, ERD_FAILED };

/* The summary line of verify, parsed. */
struct erd_sum {
    int parsed;     /* the line was a summary object with a boolean "restorable" */
    int restorable; /* its "restorable" */
    int has_figures;
    int64_t revision, keys, chain_length, snapshots; /* -1 when absent */
    int has_restored;
    int64_t restored_revision, restored_keys; /* -1 when absent */
    char newest[512];                         /* newestSnapshot, cut; "" */
    char newest_time[KTIME_LEN + 1];          /* newestSnapshotTime when RFC 3339; "" */
    char failed_object[512];                  /* "" */
    char reason[512];                         /* reason, else error; "" */
};

/* Parse the summary line (len bytes, not NUL-terminated) into *out (zeroed first). 1 when it
 * is a summary (out->parsed), 0 otherwise. */
int erd_sum_parse(const char *line, size_t len, struct erd_sum *out);

/* What the drill concludes. */
struct erd_outcome {
    enum erd_verdict verdict;
    struct erd_sum sum;
    int exit_code;      /* the verify container's, -1: it did not end */
    int restore_exit;   /* the restore container's, -1: none or it did not end */
    char message[1024]; /* why, for the condition and the event */
};

/*
 * The verdict of a finished Job (BORROWED; its status) and its Pod (BORROWED, may be NULL)
 * into *out (zeroed first). job_failed: "<reason>: <message>" of the Job's Failed
 * condition, or "" (controller/core/podjob.h podjob_job_failed).
 */
void erd_sum_verdict(const cJSON *job, const cJSON *pod, const char *job_failed,
                     struct erd_outcome *out);

/* "Restorable", "NotRestorable", "Failed" ("" for ERD_UNKNOWN). */
const char *erd_verdict_str(enum erd_verdict v);

#endif
