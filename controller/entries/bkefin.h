/*
 * bkefin - the finalizer of a BackupEntry whose deletion Job may run: a deleted entry never
 * leaves that Job running (the stop itself: controller/entries/bkestop.h).
 *
 * An entry carries the finalizer BKEFIN_FINALIZER from before its first deletion Job is
 * created (bkejob's start) until it is gone. When the entry is deleted (metadata.
 * deletionTimestamp) the controller stops the deletion:
 *   - its Job (the bucket's spec.secretRef namespace, bkejob_name, owned by the entry's uid)
 *     is deleted with propagationPolicy Foreground: the API server keeps the Job until the
 *     garbage collector has deleted its Pods, and a Pod until the kubelet has stopped its
 *     container, so a Job that is gone deletes nothing more;
 *   - once no such Job exists, the finalizer is removed (event DeletionStopped on the entry
 *     when a Job was stopped) and the entry goes: what the Job had not deleted stays.
 * A Job of that name owned by another uid is not the entry's and is left alone. Without the
 * controller the entry stays until the finalizer is removed by hand (docs/backup-entries.md).
 *
 * Ownership: arguments BORROWED; results as documented. Thread safety: reentrant.
 */
#ifndef CONTROLLER_BKEFIN_H
#define CONTROLLER_BKEFIN_H

#include <cJSON.h>

#include "common/kerr.h"
#include "controller/entries/bke_ctx.h"

#define BKEFIN_FINALIZER "etcd-warden.io/deletion-job"

/* 1 when obj's metadata.finalizers holds BKEFIN_FINALIZER. */
int bkefin_has(const cJSON *obj);

/*
 * entry (the stored object) with BKEFIN_FINALIZER: *out OWNS the entry as stored afterwards
 * (a copy when it had it already). KERR_CONFLICT when entry changed meanwhile.
 */
enum kerr bkefin_add(const struct bke_ctx *x, const cJSON *entry, cJSON **out,
                     struct kerr_info *err);

/* BKEFIN_FINALIZER removed from entry (the stored object); KERR_OK when it is gone. */
enum kerr bkefin_remove(const struct bke_ctx *x, const cJSON *entry, struct kerr_info *err);

#endif
