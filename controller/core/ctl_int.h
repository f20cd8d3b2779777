/*
 * ctl_int - what the two halves of the controller process share: the struct
 * ctl (ctl.c: lifecycle, election, servers, the capabilities' table) and the
 * dispatch of a queue key to the steps (ctl_dispatch.c). Not for other
 * modules: they use ctl.h and ctl_cap.h.
 */
#ifndef CONTROLLER_CTL_INT_H
#define CONTROLLER_CTL_INT_H

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>

#include "common/leader.h"
#include "common/wqpool.h"
#include "controller/core/ctl.h"
#include "controller/core/ctl_metrics.h"
#include "controller/core/ctl_table.h"

struct ctl {
    const struct ctl_config *cfg; /* BORROWED */
    struct ctl_opts o;
    struct ctl_table table;       /* the enabled capabilities */
    struct k8s_client *client;    /* OWNS unless opts.client */
    struct k8s_client *le_client; /* OWNS unless opts.client: short timeouts */
    char identity[LE_IDENTITY_MAX];
    char *le_ns; /* OWNS */
    struct ev_recorder *events;
    struct ctl_metrics *metrics;
    const char *controllers[CTL_METRICS_CONTROLLERS_MAX + 1];           /* their metrics' names */
    const struct ctl_metrics_gauge *gauges[CTL_METRICS_GAUGES_MAX + 1]; /* the capabilities' */
    struct ctl_caches *caches;
    struct wq *queue;
    struct wqpool *pool;
    struct ctl_lane *lane; /* the lane's keys' own queue and workers, or NULL */
    struct le *le;
    struct httpsrv *metrics_srv, *health_srv;
    pthread_t supervisor;
    int supervising;
    atomic_int stopping, leading, lost, ready;
    atomic_llong working_since; /* Unix seconds the workers started, 0 before */
    sem_t repair_slots;         /* CTL_REPAIRS_IN_FLIGHT; valid when slots_made */
    int slots_made;
};

/*
 * The work function of the queue's workers and of the EtcdOpsTask executor:
 * one key "kind/ns/name" (arg is the struct ctl), dispatched as ctl.h says.
 */
enum wqpool_result ctl_dispatch(void *arg, const char *key, long *after_ms);

#endif
