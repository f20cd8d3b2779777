/*
 * ctl - the warden-controller process: the API client, the watch-fed
 * caches, the work queue and its workers, leader election, the events
 * recorder, the metrics and the health endpoints, and the dispatch of a
 * queue key to the reconcilers of the other controller modules.
 *
 * The core knows no capability: main.c hands ctl_new the capabilities
 * (struct ctl_capability, controller/core/ctl_cap.h), and the core runs their
 * watches, indexes, queue keys, Etcd steps and services. The core itself
 * watches Etcds and their components only.
 *
 * Caches. Every replica runs one informer per resource the enabled
 * capabilities watch (restricted to --watch-namespace when set), and the
 * core's: Etcds ("etcds", full objects, re-delivered every resync) and the
 * nine kinds of managed components, projected to their metadata so that
 * 1,000 Etcds with 12,000 components stay small ("components"; Services keep
 * their annotations and spec.ports too, StatefulSets spec.replicas and
 * status.replicas: what hibernation reads). /readyz
 * answers 200 once every cache has synced; "warden-controller ready" is
 * logged (msg of a JSON line on stderr) at that moment.
 *
 * Queue keys. A de-duplicating, rate-limited work queue (--workers) holds
 * "etcd/<ns>/<name>" (the Etcd's steps, dispatch below; queued by every
 * event of the Etcd and of a component labelled part-of=<name>) and the
 * keys of the capabilities ("<kind>/<ns>/<name>", struct ctl_key), each
 * dispatched to its reconcile while its capability (and the key) is
 * enabled. Key kinds marked lane_workers have a queue and workers of their
 * own (controller/core/ctl_lane.h), so that calls that take long cannot hold up
 * the other flows.
 *
 * Dispatch of "etcd/<ns>/<name>" (on a worker thread): a fresh GET of the
 * Etcd (not the cache). Gone: nothing (owner references let the garbage
 * collector clean up). Label etcd-warden.io/restoring present: the steps
 * marked restoring only. Otherwise the other steps, in the order of the
 * capabilities (each runs even when an earlier one failed).
 * The smallest requeue_ms > 0 of the steps wins. A step that returns an
 * error: logged with the Etcd's namespace/name, an event (Warning,
 * ReconcileFailed) unless the step already emitted one, counted in
 * controller_runtime_reconcile_errors_total, and the key is requeued
 * rate-limited (5 ms doubling up to 1000 s, client-go's default), but no
 * later than the smallest requeue_ms another step asked for: one step's
 * failure does not slow another step's polling. Success forgets the key's
 * failures.
 *
 * The step functions (ctl_etcd_step_fn, ctl_task_step_fn of ctl_cap.h) get etcd
 * BORROWED for the call and res zeroed before the call.
 *
 * Leader election: a coordination.k8s.io/v1 Lease (--leader-election-id in
 * --leader-election-namespace; 15 s lease, 10 s renew deadline, 2 s retry).
 * Only the leader runs workers; on losing the lease the workers stop at
 * once (API requests and sidecar calls in flight cancelled, the elector
 * ended: it never takes the Lease again) and ctl_run returns an error, so
 * the process exits non-zero (as controller-runtime does) within about the
 * renew deadline after its last renewal, and no two replicas reconcile at
 * once. With --leader-elect=false the workers start at once.
 *
 * Signals: SIGTERM and SIGINT stop the process gracefully: the workers
 * finish the keys in hand, the Lease is released (holder cleared) so a
 * standby takes over at once, then the process exits 0. A second SIGTERM
 * exits at once with status 1. SIGPIPE is ignored.
 *
 * Metrics (/metrics on --metrics-bind-address): controller_runtime_reconcile_total
 * {controller,result}, controller_runtime_reconcile_time_seconds{controller},
 * controller_runtime_reconcile_errors_total{controller}, workqueue_depth{name},
 * workqueue_adds_total{name}, workqueue_retries_total{name},
 * leader_election_master_status{name}, warden_hibernation_phase_etcds{phase}
 * (cached Etcds per value of etcd-warden.io/hibernation-phase; "" = none),
 * plus the process metrics. controller is "etcd" or a capability's key kind.
 * /healthz and /readyz on --health-probe-bind-address.
 *
 * Ownership: ctl_new copies what it needs of the config (the struct
 * ctl_config must outlive the struct ctl, which BORROWS it); everything the
 * accessors return is BORROWED from the struct ctl and lives until ctl_free.
 * Thread safety: the accessors and ctl_enqueue_* may be called from any
 * thread (workers, informer handlers); ctl_new, ctl_start, ctl_run and
 * ctl_free from one thread.
 */
#ifndef CONTROLLER_CTL_H
#define CONTROLLER_CTL_H

#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>

#include <cJSON.h>

#include "common/kerr.h"
#include "controller/core/ctl_cap.h"

struct ctl;        /* the running controller */
struct ctl_config; /* controller/core/ctl_config.h */

struct k8s_client;       /* common/k8s.h */
struct ev_recorder;      /* common/events.h */
struct store;            /* common/store.h */
struct metrics_registry; /* common/metrics.h */

/* Options a test may change; zero means the default. */
struct ctl_opts {
    const struct ctl_stub *stubs; /* BORROWED; non-NULL: every step and key reconcile is its
                                     stub, skipped without one (services are not stubbed) */
    struct k8s_client *client;    /* BORROWED: use this client instead of --kubeconfig's */
    const char *identity;         /* BORROWED: leader-election identity (default hostname_pid) */
    long lease_ms, renew_ms, retry_ms; /* override the config's lease timings */
    int no_servers;                    /* do not start the /metrics and health servers */
    long long (*now_ms)(void); /* the wall clock of the steps (Unix ms); NULL: the real one */
};

/* ---- the contract of the step modules ---- */

/* The API client. BORROWED; thread-safe use as common/k8s.h documents. */
struct k8s_client *ctl_client(struct ctl *c);

/* The events recorder (events.k8s.io/v1). BORROWED. */
struct ev_recorder *ctl_events(struct ctl *c);

/* Owner-reference repairs in flight at most, all workers' passes together. */
#define CTL_REPAIRS_IN_FLIGHT 16

/* The owner-reference repairs' slots (CTL_REPAIRS_IN_FLIGHT), shared by the workers. BORROWED. */
sem_t *ctl_repair_slots(struct ctl *c);

/* The wall clock the steps go by, Unix milliseconds (ctl_opts.now_ms in tests). */
long long ctl_now_ms(const struct ctl *c);

/* The configuration. BORROWED. */
const struct ctl_config *ctl_cfg(const struct ctl *c);

/*
 * API requests a reconcile of an Etcd may make (its steps together, the dispatch's GET
 * included), and how many the reconcile running on the calling thread has made so far.
 */
#define CTL_ETCD_REQUESTS 8
unsigned long ctl_reconcile_requests(void);

/*
 * The cache of resource (CTL_CACHE_* or a watched resource's plural name;
 * read with store_get / store_view / store_index_*), or NULL when no enabled
 * capability watches it. BORROWED.
 */
struct store *ctl_store(struct ctl *c, const char *resource);

/* Add "etcd/<ns>/<name>" to the queue now (after_ms <= 0) or after after_ms. */
void ctl_enqueue_etcd(struct ctl *c, const char *ns, const char *name, long after_ms);

/* Add "<kind>/<ns>/<name>" (kind "etcd" or a capability's key kind) as above. */
void ctl_enqueue(struct ctl *c, const char *kind, const char *ns, const char *name, long after_ms);

/*
 * Queue "<kind>/<obj's namespace>/<name>" now; nothing when name is NULL or
 * empty. For the capabilities' key functions; obj and the strings BORROWED.
 */
void ctl_enqueue_obj(struct ctl *c, const char *kind, const cJSON *obj, const char *name);

/*
 * Call the service name of the enabled capabilities (controller/core/ctl_cap.h)
 * on etcd (BORROWED). Without one: KERR_OK and res untouched when optional,
 * else KERR_UNSUPPORTED.
 */
enum kerr ctl_call(struct ctl *c, const char *name, int optional, const cJSON *etcd,
                   struct ctl_result *res, struct kerr_info *err);

/*
 * The cancel flag of the lane's long calls (controller/core/ctl_lane.h): set once
 * this replica lost the Lease or stops past its drain. BORROWED.
 */
const atomic_int *ctl_cancel_flag(struct ctl *c);

/*
 * Set from the moment this replica begins to stop (SIGTERM, a lost Lease): a wait that
 * decides nothing and is asked again by the next leader (the hibernation's revision check)
 * ends then rather than hold the drain. BORROWED.
 */
const atomic_int *ctl_stopping_flag(struct ctl *c);

/* ---- lifecycle (main.c and the tests) ---- */

/*
 * Build the controller of the capabilities caps (NULL-terminated, at most
 * CTL_CAPS_MAX; BORROWED, like cfg, until ctl_free): the client
 * (opts->client or --kubeconfig), the caches and informers, the queues, the
 * recorder, the metrics registry and the elector. Nothing runs yet. opts may
 * be NULL. On KERR_OK *out OWNS the controller (ctl_free).
 */
enum kerr ctl_new(const struct ctl_config *cfg, const struct ctl_capability *const *caps,
                  const struct ctl_opts *opts, struct ctl **out, struct kerr_info *err);

/*
 * Start the informers, the servers and leader election (or the workers at
 * once with --leader-elect=false). Returns without waiting for the caches.
 */
enum kerr ctl_start(struct ctl *c, struct kerr_info *err);

/* True once every cache has synced. */
int ctl_synced(struct ctl *c);

/* True while this replica holds the Lease (always with --leader-elect=false). */
int ctl_leading(struct ctl *c);

/* When this replica's workers started (Unix seconds; 0 before): what it reconciles it has
 * watched since then. */
int64_t ctl_working_since(struct ctl *c);

/*
 * Stop: the workers finish their keys, the informers and servers stop, the
 * Lease is released. Idempotent; ctl_free calls it.
 */
void ctl_stop(struct ctl *c);

/*
 * ctl_start, then wait until SIGTERM / SIGINT (common/proc), the loss of
 * the Lease or a fatal error. After a signal: ctl_stop, KERR_OK. After the
 * loss of the Lease: KERR_CANCELLED at once, without ctl_stop (the loss
 * already ended the elector, the sidecar calls, the queues and the client's
 * requests), so that the process can exit without waiting for the teardown
 * of its watches (up to a second), as controller-runtime exits; ctl_free
 * still tears everything down.
 */
enum kerr ctl_run(struct ctl *c, struct kerr_info *err);

/* The metrics registry (tests read the exposition from it). BORROWED. */
struct metrics_registry *ctl_metrics(struct ctl *c);

/* Stop and free. NULL is a no-op. */
void ctl_free(struct ctl *c);

#endif
