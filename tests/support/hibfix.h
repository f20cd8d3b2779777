/*
 * hibfix - fixtures for the tests of hibernation (controller/hib) and of the
 * EtcdOpsTask executor (controller/otask) on an in-process kube-sim:
 *
 *   - a sidecar stand-in: an HTTP server (libmicrohttpd) on an ephemeral
 *     port of every local address, so that each member pod's IP (HIBFIX_POD_IP_FMT) and each
 *     clusterIP kube-sim hands out from HIBFIX_CIDR reach it; it records the address
 *     a request came to (the one the client chose), answering POST /snapshot/{full,delta}
 * with a Snapshot JSON (revisions increase), or with a chosen status; it counts the requests and
 * those with final=true, and can be slowed down;
 *   - an Etcd as etcd-druid runs it: the Etcd (status Ready), its client
 *     Service <etcd>-client (clusterIP allocated by kube-sim; ports client
 *     2379, server 2380, backuprestore = the sidecar's port, in etcd-druid's
 *     order) and its StatefulSet (3 replicas), all owned by the Etcd;
 *   - a hib_env and an otask_env on the admin client, and a drive loop that
 *     plays the controller's dispatch: hib_step on the Etcd, otask_step on
 *     each of its tasks, until a condition holds.
 *
 * For tests only: failures fail the running test (Criterion). Thread safety:
 * the sidecar's settings are atomics; everything else from the test thread.
 */
#ifndef TESTS_SUPPORT_HIBFIX_H
#define TESTS_SUPPORT_HIBFIX_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include <cJSON.h>

#include "controller/hibernation/hib.h"
#include "controller/hibernation/otask.h"
#include "tests/support/cfix.h"

#define HIBFIX_CIDR "127.77.0.0/16"
/* status.podIP of member <sts>-<n> (n = 0, 1, 2): the sidecar listens on every address */
#define HIBFIX_POD_IP_FMT "127.78.0.%d"

struct hibfix_sidecar {
    void *daemon;         /* struct MHD_Daemon, OWNS */
    int port;             /* bound port */
    atomic_int code;      /* status of the snapshot answers (200: a Snapshot) */
    atomic_long delay_ms; /* pause before answering */
    atomic_int requests;  /* snapshot requests received */
    atomic_int finals;    /* ... with final=true */
    atomic_long revision;
    pthread_mutex_t mu; /* guards last_ip */
    char last_ip[64];   /* local address of the last snapshot request */
};

struct hibfix {
    struct cfix f;            /* kube-sim (controllers on), CRDs, namespace, admin client */
    struct hibfix_sidecar sc; /* on HIBFIX_IP */
    struct hib_env hib;       /* on f.c, imm helpers on f.x */
    struct otask_env ot;      /* on f.c */
    struct ev_recorder *ev;   /* OWNS: events of hib and ot */
    const char *hold_prefix;  /* tasks named so are left to "another executor": not run */
    int tolerate;             /* hibfix_round counts step errors instead of failing */
    int errors;               /* ... how many */
};

/* Start kube-sim with the CRDs, the sidecar and the envs (retries 3, short backoffs). */
void hibfix_start(struct hibfix *x);

/* Stop everything. Safe on a zeroed struct. */
void hibfix_stop(struct hibfix *x);

/*
 * Create the Etcd name (store: JSON text of spec.backup.store or NULL),
 * Ready, with its client Service (ports: JSON text of spec.ports, NULL:
 * etcd-druid's three) and, when sts, its StatefulSet (container backup-restore with port
 * server = the Service's backuprestore port, else the sidecar's) with its three member pods,
 * owned by it, Running at HIBFIX_POD_IP_FMT. Returns the Etcd as stored, OWNED by the caller.
 */
cJSON *hibfix_etcd(struct hibfix *x, const char *name, const char *store, const char *ports,
                   int sts);

/* Set (value) or remove (NULL) annotation key of Etcd name with kubectl, as a user does. */
void hibfix_annotate(struct hibfix *x, const char *name, const char *key, const char *value);

/* Set break glass on Etcd name as the webhook accepts it: an expiry an hour ahead, then reason. */
void hibfix_break_glass(struct hibfix *x, const char *name, const char *reason);

/* The Etcd name as stored now, OWNED by the caller; NULL when gone. */
cJSON *hibfix_get_etcd(struct hibfix *x, const char *name);

/* Its hibernation phase now ("" when none). BORROWED static buffer: copy it. */
const char *hibfix_phase(struct hibfix *x, const char *name);

/*
 * One round of the dispatch: hib_step on Etcd name, then otask_step on
 * every EtcdOpsTask of the namespace. Returns hib_step's requeue. An
 * error fails the test, unless x->tolerate (then x->errors counts it).
 */
long hibfix_round(struct hibfix *x, const char *name);

/* Rounds until the phase is want ("" = none) or timeout_ms passed: 1 when reached. */
int hibfix_drive(struct hibfix *x, const char *name, const char *want, long timeout_ms);

/*
 * Rounds until an EtcdOpsTask whose name starts with prefix exists or timeout_ms passed
 * (the controller creates its task once the API server's clock is past the second of the
 * cut): 1 when one exists.
 */
int hibfix_await_task(struct hibfix *x, const char *name, const char *prefix, long timeout_ms);

/*
 * Wait until the clock (kube-sim's, in this process) is in a later second than the traffic
 * cut of Etcd name, so that a task created now counts for the cycle (common/hibguard.h).
 */
void hibfix_after_cut(struct hibfix *x, const char *name);

/* spec.replicas and status.replicas of StatefulSet name (-1 when missing). */
void hibfix_sts(struct hibfix *x, const char *name, int *spec, int *status);

/* The backup-restore container's port server in StatefulSet name's pod template (where the
 * controller asks the members' sidecar). */
void hibfix_backup_port(struct hibfix *x, const char *name, int port);

/* The spec.ports of Service name printed (compact), OWNED (free); NULL when missing. */
char *hibfix_ports(struct hibfix *x, const char *svc);

/*
 * Create an EtcdOpsTask as etcd-druid's pre-sync does (onDemandSnapshot full, no isFinal,
 * spec.etcdName etcd, owned by it) named name; its state (NULL: none) written through
 * /status as an executor would. set_state alone (create 0) changes an existing one.
 */
void hibfix_druid_task(struct hibfix *x, const char *name, const char *etcd, const char *state,
                       int create);

/* The EtcdOpsTasks of the namespace (items array of a List), OWNED by the caller. */
cJSON *hibfix_tasks(struct hibfix *x);

/* How many Events with reason (and type, NULL: any) exist in the namespace. */
int hibfix_events(struct hibfix *x, const char *reason, const char *type);

/* A second sidecar stand-in (*s zeroed first) speaking HTTPS with cert/key (PEM, BORROWED;
 * NULL: plain HTTP). */
void hibfix_tls_sidecar(struct hibfix *x, struct hibfix_sidecar *s, const char *cert,
                        const char *key);

/* Stop a sidecar stand-in started by hibfix_tls_sidecar. */
void hibfix_sidecar_stop(struct hibfix_sidecar *s);

/* The local address (pod IP or clusterIP) the last snapshot request was sent to. */
void hibfix_last_ip(struct hibfix *x, char *out, size_t n);

#endif
