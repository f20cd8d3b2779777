/*
 * bke_ctx - what the BackupEntry reconcile (controller/entries/bke.h) and its
 * parts (bkebucket, bkeclaim, bkejob) share: the names and constants of
 * BackupBuckets and BackupEntries, the reconcile's context (struct bke_ctx)
 * and its events.
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef CONTROLLER_BKE_CTX_H
#define CONTROLLER_BKE_CTX_H

#include <stdint.h>

#include <cJSON.h>

#include "common/events.h"
#include "common/k8s.h"

struct store;

#define BKE_FINALIZER      "etcd-warden.io/backup-entries"
#define BKE_DEFAULT_GRACE  "168h"
#define BKE_INDEX_BUCKET   "bucket"        /* index of the entry cache: spec.bucketName */
#define BKE_CACHE_ENTRIES  "backupentries" /* the BackupEntry cache (ctl_store) */
#define BKE_CACHE_BUCKETS  "backupbuckets" /* the BackupBucket cache (ctl_store) */
#define BKE_RETRY_MS       1000L           /* an entry created but not cached yet */
#define BKE_CONFLICT_MS    60000L          /* a claim taken, a deletion blocked: looked at again */
#define BKE_BLOCKED_MIN_MS 2000L /* a deletion blocked since it fell due: looked at again first */

extern const struct k8s_resource BKE_RES_BUCKET;
extern const struct k8s_resource BKE_RES_ENTRY;

/* What a reconcile needs: all BORROWED. */
struct bke_ctx {
    struct k8s_client *client;  /* required */
    struct ev_recorder *events; /* NULL: no events */
    struct store *etcds;        /* the Etcd cache (keys "<ns>/<name>"), required */
    struct store *entries;      /* the BackupEntry cache with index BKE_INDEX_BUCKET, required */
    const char *watch_ns;       /* NULL or "": every namespace */
    const char *job_image;      /* the deletion Job's image (controller/entries/bkejob.h) */
    const char *job_command;    /* and command, NULL: the defaults */
    int64_t since; /* Unix seconds this process began reconciling (ctl_working_since); 0: always */
};

struct ctl;

/* The context of a reconcile of controller c (its client, events, caches and flags), into *x. */
void bke_ctx_of(struct ctl *c, struct bke_ctx *x);

/* An event about obj (kind BackupEntry or BackupBucket) when x has a recorder. */
void bke_event(const struct bke_ctx *x, const cJSON *obj, const char *kind, enum ev_type type,
               const char *reason, const char *action, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* An entry's status, as bke_write_status writes it: strings BORROWED. */
struct bke_status {
    const char *phase, *message; /* required */
    /*
     * 1: status.conditions is written, conflict's PrefixConflict condition (a Warning event
     * when its message is new) or none; 0: it is left as stored and conflict is not read.
     */
    int conditions;
    const char *conflict; /* NULL: no PrefixConflict condition */
};

/*
 * Write status st of entry (the stored object, BORROWED) through the status subresource, with
 * its apiVersion and kind, when it differs from what entry has (phase, message, and the
 * conditions when st writes them); KERR_OK without a write when it does not. Errors of the
 * write are returned (KERR_NOTFOUND: the entry is gone).
 */
enum kerr bke_write_status(const struct bke_ctx *x, const cJSON *entry, const struct bke_status *st,
                           struct kerr_info *err);

/* A Warning event of reason (action KeepEntry) about the Etcd etcd when x has a recorder. */
void bke_etcd_warning(const struct bke_ctx *x, const cJSON *etcd, const char *reason,
                      const char *note);

#endif
