/*
 * scaleguardfix - the reviews' objects of the scale-down guard's table tests (test_scaleguard,
 * test_scaleguard_labels): the Etcd etcd-main of shoot with its hibernation annotations, its
 * snapshot tasks (EtcdOpsTask) that count as its final snapshot, the managed StatefulSet the caches
 * hold, and the guard's configuration with its clock fixed at NOW.
 */
#ifndef TESTS_SUPPORT_SCALEGUARDFIX_H
#define TESTS_SUPPORT_SCALEGUARDFIX_H

#include <criterion/criterion.h>
#include <time.h>

#include "common/hibguard.h"
#include "common/ktime.h"
#include "tests/support/guardfix.h"
#include "webhook/protect.h"

#define DRUID     GUARDFIX_DRUID
#define WARDEN    GUARDFIX_WARDEN
#define PERSON    GUARDFIX_PERSON

#define CUT       "2026-11-24T20:00:00Z"
#define BEFORE    "2026-11-24T19:59:59Z"
#define AFTER     "2026-11-24T20:03:00Z"
#define NOW       "2026-11-24T20:05:00Z" /* the guard's clock (break glass expiry) */
#define PHASE(p)  "\"" HIBGUARD_ANN_PHASE "\":\"" p "\""
#define ANN_CUT   "\"" HIBGUARD_ANN_CUT_AT "\":\"" CUT "\"," PHASE("FinalSnapshot")
#define ANN_STALE "\"" HIBGUARD_ANN_CUT_AT "\":\"" CUT "\""
/* the StatefulSet of the reviews below is uid-sts at generation 7 (its old object) */
#define CHECKED(v)  "\"" HIBGUARD_ANN_CHECKED "\":\"" v "\""
#define ANN_SCALING ANN_STALE "," PHASE("ScalingDown") "," CHECKED("uid-sts/7")
#define GLASS(v)    "\"" HIBGUARD_ANN_BREAK_GLASS "\":\"" v "\""
#define ANN_BREAK   GLASS("2026-11-24T22:00:00Z bucket deleted by the provider")
#define ANN_OPEN    "\"druid.gardener.cloud/disable-etcd-component-protection\":\"\""
#define STORE       "\"backup\":{\"store\":{\"container\":\"b\",\"prefix\":\"p\",\"provider\":\"S3\"}}"

#define ETCD(name, ann, spec)                                                          \
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"" name "\",\"uid\":\"uid-" name \
    "\",\"annotations\":{" ann "}},\"spec\":{\"replicas\":0" spec "},"                 \
    "\"status\":{\"lastOperation\":{\"type\":\"Reconcile\",\"state\":\"Succeeded\"}}}"
#define ETCD_MEMBERS(name, ann, spec)                                                  \
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"" name "\",\"uid\":\"uid-" name \
    "\",\"annotations\":{" ann "}},\"spec\":{\"replicas\":3" spec "},"                 \
    "\"status\":{\"replicas\":3,\"lastOperation\":{\"type\":\"Reconcile\",\"state\":"  \
    "\"Succeeded\"}}}"
#define TASK(etcd, type, state, created)                                       \
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"t-" etcd                \
    "\",\"creationTimestamp\":\"" created "\"},\"spec\":{\"etcdName\":\"" etcd \
    "\",\"config\":{\"onDemandSnapshot\":{"                                    \
    "\"type\":\"" type "\"}}},\"status\":{\"state\":\"" state "\"}}"
#define FRESH TASK("etcd-main", "full", "Succeeded", AFTER)

#define DENIED \
    "scaling StatefulSet shoot/etcd-main to 0 replicas needs a full snapshot of Etcd etcd-main"

/* etcd-druid and warden-controller reconcile, warden-controller is the controller. */
static const char *const reconcilers[] = { DRUID, WARDEN };
static const char *const controllers[] = { WARDEN };

/* StatefulSet shoot/etcd-main as the caches hold it: managed by etcd-druid. */
static const char stses[] = "[{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\","
                            "\"labels\":{\"app.kubernetes.io/managed-by\":\"etcd-druid\","
                            "\"app.kubernetes.io/part-of\":\"etcd-main\"}}}]";

/* The guard's clock: NOW. */
static inline time_t fixed_clock(void)
{
    struct timespec ts;

    cr_assert_eq(ktime_parse(NOW, &ts, NULL), KERR_OK);
    return ts.tv_sec;
}

#endif
