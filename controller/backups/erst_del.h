/*
 * erst_del - the finalizer of an EtcdRestore (controller/backups/erst.h): what its copy Job
 * wrote into the target prefix is deleted before the restore goes, when nobody else owns it.
 *
 * ERST_FINALIZER (erst.h) is put on the restore (a PUT with its resourceVersion) before its copy
 * Job is created: there is never a copy Job without it. A restore being deleted with it, pass by
 * pass (erst_del_decide, from what the pass read):
 *   1. its copy Job ("<restore>--restore", owned by it) still there: deleted with propagation
 *      Foreground (the Job goes only once its Pod, which may still be writing, is gone), its
 *      name and creation time recorded in the status first when nothing records them; looked at
 *      again until it is gone;
 *   2. still in flight (no phase, Pending, Copying, Creating): status Failed, completionTime
 *      now (the copy has stopped: nothing of the restore is written after it);
 *   3. Completed (its Etcd owns the data), or Failed before its copy Job was created
 *      (common/rtarget's rtarget_claims 0: nothing written): the finalizer dropped;
 *   4. otherwise, with no delete Job: the claims of the target store read from the API server
 *      (controller/core/claims.h claims_find, the restore itself skipped, never the Etcd of
 *      its target name: on an overlapping prefix that Etcd owns the data): one overlapping:
 *      the finalizer dropped, nothing deleted, event CopyKept naming it (another
 *      namespace's claim only as "a prefix claimed from another namespace"). None: the delete Job
 *      ERST_CLEANUP_TAG ("<restore>--cleanup", kname_job; cpjob_build_delete) on the target
 *      store and prefix with the target's Secret and provenance: --written-since the copy's
 *      start (status.copyStartedAt: the copy Job's creation; else the restore's creation) and
 *      --written-before status.completionTime (the failure, or the end of 2.): only what the
 *      restore wrote goes; event CleanupStarted;
 *   5. the delete Job finished: exit 0 with nothing of its own remaining: the finalizer
 *      dropped (event CopyDeleted), the Job deleted. Locked objects or a failure:
 *      status.deletionError, deletionFailures, nextDeletionAt (podjob_backoff_ms; a lock's
 *      expiry), a Warning event, the Job deleted, tried again then;
 *   6. a Job of the delete Job's name owned by another object: left alone, the error in the
 *      status, a Warning event, looked at again after a backoff.
 * A target store that cannot be resolved any more (erst_plan_resolve) is an error retried.
 * The pass itself (erst_delete_step, with erst_add_finalizer and erst_has_finalizer) is
 * declared in erst.h, which this header does not include: this one is the decision, pure.
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef CONTROLLER_ERST_DEL_H
#define CONTROLLER_ERST_DEL_H

#include <cJSON.h>

#include "common/kerr.h"

#define ERST_CLEANUP_TAG "cleanup"

/* The state of the delete Job. */
enum erst_del_job {
    ERST_DJ_NONE,       /* no Job of its name */
    ERST_DJ_RUNNING,    /* the restore's, not finished (or being deleted) */
    ERST_DJ_CLEAN,      /* finished: exit 0, nothing of the restore's remaining */
    ERST_DJ_UNFINISHED, /* finished otherwise: locked objects, a failure */
    ERST_DJ_FOREIGN,    /* owned by another object */
};

/* What a pass over a restore being deleted knows. */
struct erst_del_facts {
    int finalizer; /* ERST_FINALIZER is on it */
    int copy_job;  /* its copy Job (owned by it) is still there */
    int in_flight; /* neither Completed nor Failed */
    int claims;    /* rtarget_claims: Failed after its copy started */
    enum erst_del_job del_job;
    int backoff; /* status.nextDeletionAt lies ahead */
    int owner;   /* another claim overlaps the target: -1 not read yet, 0 no, 1 yes */
};

enum erst_del_act {
    ERST_DEL_NOTHING,     /* no finalizer: nothing to do */
    ERST_DEL_STOP_COPY,   /* delete the copy Job (Foreground), look again */
    ERST_DEL_END_FLIGHT,  /* status Failed, completionTime now */
    ERST_DEL_DROP,        /* nothing of it in the store: the finalizer off */
    ERST_DEL_READ_CLAIMS, /* the claims are needed: read them, decide again */
    ERST_DEL_KEEP,        /* another owns the prefix: the finalizer off, nothing deleted */
    ERST_DEL_START,       /* create the delete Job */
    ERST_DEL_WAIT,        /* a delete Job running, or the backoff not over */
    ERST_DEL_DONE,        /* deleted: the finalizer off, the delete Job deleted */
    ERST_DEL_RETRY,       /* not all deleted: the error recorded, the delete Job deleted */
    ERST_DEL_FOREIGN,     /* a Job of the delete Job's name not the restore's: error, retry */
};

/* The next step of f. Pure. */
enum erst_del_act erst_del_decide(const struct erst_del_facts *f);

#endif
