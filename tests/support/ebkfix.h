/*
 * ebkfix - the EtcdBackup reconcile (controller/backups/ebk) on an in-process kube-sim, for
 * tests/test_ebk*.c: an Etcd "main" with an S3 store and backup b1 copying to a destination
 * (ebkfix_world), one reconcile step of b1 (ebkfix_step), and the test standing for the
 * executor of the EtcdOpsTask and for the Job controller and kubelet: it writes the task's
 * state, the Job's status and its Pod's termination message, so every "while X runs" is a
 * state the test holds, not a race.
 *
 * For tests only: where something fails they fail the running test with a Criterion
 * assertion. Ownership: arguments BORROWED. Thread safety: one test thread.
 */
#ifndef TESTS_SUPPORT_EBKFIX_H
#define TESTS_SUPPORT_EBKFIX_H

#include <stddef.h>

#include <cJSON.h>

#include "common/k8s.h"
#include "controller/backups/ebk.h"
#include "controller/core/kname.h"
#include "tests/support/cfix.h"

extern const struct k8s_resource EBKFIX_RES_JOB;
extern const struct k8s_resource EBKFIX_RES_POD;

/* The copy Job's summary (its Pod's termination message) of one Full snapshot. */
extern const char EBKFIX_SUMMARY[];

struct ebkfix {
    struct cfix fx;     /* kube-sim and its admin client */
    struct ebk_env env; /* on fx's client, copy image "img:1" */
    int runs;           /* Pods made by ebkfix_finish_job */
};

/* Start kube-sim (cfix_start) and the reconcile's environment on it. */
void ebkfix_start(struct ebkfix *x);

/* Stop it (cfix_stop). */
void ebkfix_stop(struct ebkfix *x);

/* Create the object of JSON text in res (in CFIX_NS when res is namespaced). */
void ebkfix_create_text(struct ebkfix *x, const struct k8s_resource *res, const char *text);

/* The Etcd "main" with an S3 store, its Secret, the destination's Secret, backup b1. */
void ebkfix_world(struct ebkfix *x, const char *dest_provider);

/* One reconcile of b1 (asserted KERR_OK); its requeue (ms). */
long ebkfix_step(struct ebkfix *x);

/* b1's status.phase into out (n bytes), "(gone)" when b1 is; returns out. */
const char *ebkfix_phase(struct ebkfix *x, char *out, size_t n);

/* Write obj's status (replaced by JSON text) through /status as the executor or Job controller. */
void ebkfix_put_status(struct ebkfix *x, const struct k8s_resource *res, const char *name,
                       const char *text);

/* A Pod status of one terminated container (exit code code, message NULL: none); OWNED. */
cJSON *ebkfix_pod_with(const char *message, int code);

/* The Job name finished with its Pod's termination message (exit code code). */
void ebkfix_finish_job(struct ebkfix *x, const char *name, const char *message, int code);

/* Succeed b1's snapshot task as the executor does. */
void ebkfix_task_succeeded(struct ebkfix *x);

/* The name of the BackupEntry of the copies' claim (S3 "offsite", "copies/main") into out. */
void ebkfix_copy_entry_name(char out[KNAME_SUBDOMAIN_MAX + 1]);

#endif
