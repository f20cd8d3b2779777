/*
 * ctl - the warden-controller process: the API client, the watch-fed
 * caches, the work queue and its workers, leader election, the events
 * recorder, the metrics and the health endpoints, and the dispatch of a
 * queue key to the reconcilers of the other controller modules.
 *
 * Caches. Every replica runs the informers of enum ctl_cache (restricted to
 * --watch-namespace when set). Components are projected to their metadata
 * so that 1,000 Etcds with 12,000 components stay small. /readyz answers
 * 200 once every cache has synced; "warden-controller ready" is logged
 * (msg of a JSON line on stderr) at that moment.
 *
 * Queue keys. A de-duplicating, rate-limited work queue (--workers) holds:
 *   "etcd/<ns>/<name>"     the Etcd's flows (dispatch below),
 *   "immtask/<ns>/<name>"  an ExtendFullSnapshotImmutabilityTask (imt_reconcile),
 *   "bucket//<name>"       a BackupBucket and its BackupEntries (bke_reconcile; only
 *                          with --backup-entries; every Etcd event queues every
 *                          bucket's key, an entry's event its bucket's),
 *   "backup/<ns>/<name>"   an EtcdBackup (ebk_reconcile; only with --backups),
 *   "restore/<ns>/<name>"  an EtcdRestore (erst_reconcile; only with --backups),
 *   "bschedule/<ns>/<name>" an EtcdBackupSchedule (ebs_reconcile; only with --backups;
 *                          its own events but those of its status alone).
 * The EtcdOpsTask executor has a queue and workers of its own
 * (--ops-task-workers; controller/otask_exec.h), so that sidecar calls that
 * take long cannot hold up the other flows:
 *   "opstask/<ns>/<name>"  an EtcdOpsTask (otask_reconcile; only with
 *                          --ops-task-executor=true).
 * Informer events map to keys: an Etcd to its own key; a component to
 * etcd/<ns>/<part-of label>; an EtcdOpsTask to its own key and
 * etcd/<ns>/<spec.etcdName>; an immutability task to its own key and
 * etcd/<ns>/<spec.etcdName>; a CronJob to immtask/<ns>/<owning task>; an
 * EtcdStatusBackup to etcd/<ns>/<name>. A task's own key is not queued for
 * an update of its status alone (its step's own write; see ctl_caches.h).
 *
 * Dispatch of "etcd/<ns>/<name>" (on a worker thread): a fresh GET of the
 * Etcd (not the cache). Gone: nothing (owner references let the garbage
 * collector clean up). Label etcd-warden.io/restoring present:
 * rst_reconcile only. Otherwise sbk_reconcile, oref_reconcile,
 * hib_reconcile in that order (each runs even when an earlier one failed).
 * The smallest requeue_ms > 0 of the steps wins. A step that returns an
 * error: logged with the Etcd's namespace/name, an event (Warning,
 * ReconcileFailed) unless the step already emitted one, counted in
 * controller_runtime_reconcile_errors_total, and the key is requeued
 * rate-limited (5 ms doubling up to 1000 s, client-go's default), but no
 * later than the smallest requeue_ms another step asked for: one step's
 * failure does not slow another step's polling. Success forgets the key's
 * failures.
 *
 * The step functions (declared in their modules' headers):
 *   enum kerr hib_reconcile(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
 *                           struct kerr_info *err);              controller/hib.h
 *   enum kerr sbk_reconcile(... the same ...);                    controller/sbk.h
 *   enum kerr oref_reconcile(... the same ...);                   controller/oref.h
 *   enum kerr rst_reconcile(... the same ...);                    controller/rst.h
 *   enum kerr otask_reconcile(struct ctl *c, const char *ns, const char *name,
 *                             struct ctl_result *res, struct kerr_info *err);  otask.h
 *   enum kerr imt_reconcile(... the same as otask ...);           controller/imt.h
 * etcd is BORROWED for the call; res is zeroed before the call.
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
 * plus the process metrics. controller is "etcd", "opstask", "immtask", "bucket",
 * "backup", "restore" or "bschedule".
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

#include <stdatomic.h>

#include <cJSON.h>

#include "common/kerr.h"

struct ctl;              /* the running controller */
struct ctl_config;       /* controller/ctl_config.h */
struct k8s_client;       /* common/k8s.h */
struct ev_recorder;      /* common/events.h */
struct store;            /* common/store.h */
struct metrics_registry; /* common/metrics.h */

/* The watch-fed caches (common/store), their keys "<ns>/<name>" unless said otherwise. */
enum ctl_cache {
    CTL_C_ETCDS,         /* druid.gardener.cloud/v1alpha1 etcds, full objects */
    CTL_C_COMPONENTS,    /* every managed component of every kind (ServiceAccount, Service,
                            ConfigMap, Role, RoleBinding, StatefulSet, PodDisruptionBudget,
                            Lease, PersistentVolumeClaim) with label
                            app.kubernetes.io/managed-by=etcd-druid, projected to
                            apiVersion, kind, metadata (name, namespace, uid,
                            resourceVersion, labels, ownerReferences), Services also to
                            metadata.annotations and spec.ports, StatefulSets to
                            spec.replicas and status.replicas (what hibernation reads);
                            key "<kind>/<ns>/<name>"; index "part-of" by "<ns>/<part-of label>" */
    CTL_C_OPSTASKS,      /* druid.gardener.cloud/v1alpha1 etcdopstasks; index "etcd-name" */
    CTL_C_IMMTASKS,      /* etcd-warden.io/v1alpha1 extendfullsnapshotimmutabilitytasks;
                            index "etcd-name" */
    CTL_C_CRONJOBS,      /* batch/v1 cronjobs owned by an immutability task (label
                            app.kubernetes.io/managed-by=etcd-warden) */
    CTL_C_STATUSBACKUPS, /* etcd-warden.io/v1alpha1 etcdstatusbackups */
    CTL_C_BUCKETS,       /* etcd-warden.io/v1alpha1 backupbuckets (cluster-scoped, key "<name>";
                            with --backup-entries only, else NULL) */
    CTL_C_BKENTRIES,     /* etcd-warden.io/v1alpha1 backupentries (likewise); index
                            BKE_INDEX_BUCKET (controller/bke.h) */
    CTL_C_BACKUPS,       /* etcd-warden.io/v1alpha1 etcdbackups (with --backups only, else
                            NULL); index CTL_INDEX_ETCD_NAME */
    CTL_C_RESTORES,      /* etcd-warden.io/v1alpha1 etcdrestores (with --backups only, else NULL) */
    CTL_C_SCHEDULES,     /* etcd-warden.io/v1alpha1 etcdbackupschedules (with --backups only) */
    CTL_C_COUNT
};

/* Name of the index of CTL_C_COMPONENTS: values "<ns>/<part-of label>". */
#define CTL_INDEX_PART_OF "part-of"

/*
 * Name of the index of CTL_C_OPSTASKS and CTL_C_IMMTASKS: values
 * "<ns>/<spec.etcdName>", so that one Etcd's reconcile reads its own tasks
 * only, not every task of every namespace.
 */
#define CTL_INDEX_ETCD_NAME "etcd-name"

/* What a step asks of the dispatch. */
struct ctl_result {
    long requeue_ms; /* > 0: call again after that long */
};

/* A step of an Etcd key (hib_reconcile, sbk_reconcile, oref_reconcile, rst_reconcile). */
typedef enum kerr (*ctl_etcd_step_fn)(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                                      struct kerr_info *err);

/* The step of a task key (otask_reconcile, imt_reconcile). */
typedef enum kerr (*ctl_task_step_fn)(struct ctl *c, const char *ns, const char *name,
                                      struct ctl_result *res, struct kerr_info *err);

/* The steps the dispatch calls; NULL entries are skipped (tests replace them). */
struct ctl_steps {
    ctl_etcd_step_fn sbk, oref, hib, rst;
    ctl_task_step_fn otask, imt;
    ctl_task_step_fn bke;       /* "bucket//<name>": bke_reconcile */
    ctl_task_step_fn ebk;       /* "backup/<ns>/<name>": ebk_reconcile */
    ctl_task_step_fn erst;      /* "restore/<ns>/<name>": erst_reconcile */
    ctl_task_step_fn bschedule; /* "bschedule/<ns>/<name>": ebs_reconcile */
};

/* Options a test may change; zero means the default. */
struct ctl_opts {
    const struct ctl_steps *steps; /* BORROWED; NULL: the real modules' */
    struct k8s_client *client;     /* BORROWED: use this client instead of --kubeconfig's */
    const char *identity;          /* BORROWED: leader-election identity (default hostname_pid) */
    long lease_ms, renew_ms, retry_ms; /* override the config's lease timings */
    int no_servers;                    /* do not start the /metrics and health servers */
    long long (*now_ms)(void); /* the wall clock of the steps (Unix ms); NULL: the real one */
};

/* ---- the contract of the step modules ---- */

/* The API client. BORROWED; thread-safe use as common/k8s.h documents. */
struct k8s_client *ctl_client(struct ctl *c);

/* The events recorder (events.k8s.io/v1). BORROWED. */
struct ev_recorder *ctl_events(struct ctl *c);

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

/* A cache (read with store_get / store_view / store_index_*). BORROWED. */
struct store *ctl_store(struct ctl *c, enum ctl_cache w);

/* Add "etcd/<ns>/<name>" to the queue now (after_ms <= 0) or after after_ms. */
void ctl_enqueue_etcd(struct ctl *c, const char *ns, const char *name, long after_ms);

/* Add "<kind>/<ns>/<name>" (kind "etcd", "opstask" or "immtask") as above. */
void ctl_enqueue(struct ctl *c, const char *kind, const char *ns, const char *name, long after_ms);

/*
 * The cancel flag of the EtcdOpsTask executor's sidecar calls: set once this
 * replica lost the Lease or stops past its drain. BORROWED.
 */
const atomic_int *ctl_ops_cancel(struct ctl *c);

/* ---- lifecycle (main.c and the tests) ---- */

/*
 * Build the controller: the client (opts->client or --kubeconfig), the
 * caches and informers, the queue, the recorder, the metrics registry and
 * the elector. Nothing runs yet. cfg is BORROWED and must outlive *out;
 * opts may be NULL. On KERR_OK *out OWNS the controller (ctl_free).
 */
enum kerr ctl_new(const struct ctl_config *cfg, const struct ctl_opts *opts, struct ctl **out,
                  struct kerr_info *err);

/*
 * Start the informers, the servers and leader election (or the workers at
 * once with --leader-elect=false). Returns without waiting for the caches.
 */
enum kerr ctl_start(struct ctl *c, struct kerr_info *err);

/* True once every cache has synced. */
int ctl_synced(struct ctl *c);

/* True while this replica holds the Lease (always with --leader-elect=false). */
int ctl_leading(struct ctl *c);

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
