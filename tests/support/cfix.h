/*
 * cfix - fixtures for the tests of the controller's restore-side steps (sbk,
 * rst, oref, imt) on an in-process kube-sim: kube-sim with the chart's CRDs
 * and a namespace, an admin client, a struct rctx on it (no caches: the
 * steps read the API), an Etcd and its components built as etcd-druid builds
 * them (names, labels, owner references), and short get/create helpers.
 *
 * For tests only: where something fails they fail the running test with a
 * Criterion assertion. Thread safety: one test thread.
 */
#ifndef TESTS_SUPPORT_CFIX_H
#define TESTS_SUPPORT_CFIX_H

#include <cJSON.h>

#include "common/k8s.h"
#include "controller/core/rctx.h"
#include "tests/kube-sim/harness.h"

#define CFIX_NS "ns1"

struct cfix {
    struct ksim_harness *h; /* OWNS */
    struct k8s_client *c;   /* OWNS: the admin client */
    struct rctx x;          /* on c; backup_cluster_status on */
};

/* Start kube-sim (opts BORROWED, NULL: no controllers), apply the CRDs, create CFIX_NS. */
void cfix_start(struct cfix *f, const struct ksim_harness_opts *opts);

/* Free the client, stop kube-sim. Safe on a zeroed struct. */
void cfix_stop(struct cfix *f);

/*
 * The Etcd name in CFIX_NS with 3 replicas; store (may be NULL: no backup)
 * is the JSON text of spec.backup.store; schedule (may be NULL) the
 * fullSnapshotSchedule. Not created. OWNED by the caller.
 */
cJSON *cfix_etcd(const char *name, const char *store, const char *schedule);

/* Create obj (BORROWED) as res in CFIX_NS; the stored object, OWNED by the caller. */
cJSON *cfix_create(struct cfix *f, const struct k8s_resource *res, const cJSON *obj);

/* The object res/CFIX_NS/name, or NULL when it does not exist. OWNED by the caller. */
cJSON *cfix_get(struct cfix *f, const struct k8s_resource *res, const char *name);

/*
 * Create the components etcd-druid builds for etcd (BORROWED, as stored:
 * with its uid) with their labels; owner references to owner_uid (NULL: none,
 * as after a Velero restore). Returns how many were created.
 */
int cfix_components(struct cfix *f, const cJSON *etcd, const char *owner_uid);

/* The ownerReferences of res/CFIX_NS/name as "uid:controller,..." ("" when none; "-" when gone). */
const char *cfix_owners(struct cfix *f, const struct k8s_resource *res, const char *name, char *out,
                        size_t n);

#endif
