/*
 * rctx - what the status-backup, restore, owner-reference and immutability
 * steps (sbk, rst, oref, imt) need of the running controller, gathered in one
 * struct so that each step's I/O can also run on a bare API client in the
 * tests: the client, the events recorder, the caches and the settings. A
 * missing cache makes the step read the API instead; a missing recorder
 * drops events.
 *
 * Ownership: every pointer in a struct rctx is BORROWED (from the struct ctl
 * or the test) and must outlive its use. Thread safety: a filled struct rctx
 * is read-only and may be used from any thread (the client, the recorder and
 * the stores are thread-safe).
 */
#ifndef CONTROLLER_RCTX_H
#define CONTROLLER_RCTX_H

#include <semaphore.h>

#include <cJSON.h>

#include "common/events.h"
#include "common/kerr.h"

struct ctl;        /* controller/core/ctl.h */
struct k8s_client; /* common/k8s.h */
struct store;      /* common/store.h */

#define RCTX_DEFAULT_IMAGE   WARDEN_DEFAULT_IMAGE /* CMakeLists.txt: the chart's appVersion */
#define RCTX_DEFAULT_COMMAND "warden-snapshot extend-snapshot-immutability"

struct rctx {
    struct k8s_client *client;  /* required */
    struct ev_recorder *events; /* NULL: no events */
    struct store *components;   /* CTL_CACHE_COMPONENTS (key "<kind>/<ns>/<name>", index "part-of"),
                                   or NULL: components are listed from the API */
    struct store *opstasks;     /* the EtcdOpsTask cache (index "etcd-name") or NULL */
    struct store *immtasks;     /* the immutability task cache (index "etcd-name") or NULL */
    struct store *statusbackups; /* the EtcdStatusBackup cache (key "<ns>/<name>") or NULL: a GET */
    int backup_cluster_status;   /* --backup-cluster-status */
    const char *imm_image;       /* --immutability-task-image; NULL: RCTX_DEFAULT_IMAGE */
    const char *imm_command;     /* --immutability-task-command; NULL: RCTX_DEFAULT_COMMAND */
    /*
     * A semaphore of CTL_REPAIRS_IN_FLIGHT slots every owner-reference repair holds for its
     * requests (controller/restore/orefpass.h), shared by the workers; NULL: no cap across
     * passes (each pass still runs at most OREFPASS_IN_FLIGHT).
     */
    sem_t *repair_slots;
};

/* Fill *out from the running controller c (BORROWED). */
void rctx_from_ctl(struct ctl *c, struct rctx *out);

/*
 * Emit an event about obj (BORROWED; apiVersion, kind, metadata) through the
 * recorder, when there is one; action is the step ("Restore", ...). Never fails.
 */
void rctx_event(const struct rctx *x, const cJSON *obj, enum ev_type type, const char *reason,
                const char *action, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/*
 * The managed components of the Etcd ns/name (label part-of=name): from the
 * components cache (index "part-of") or, without one, by a LIST of each
 * component kind with the selector managed-by=etcd-druid,part-of=<name>. On
 * KERR_OK *out OWNS a cJSON array of copies (apiVersion, kind, metadata).
 */
enum kerr rctx_components(const struct rctx *x, const char *ns, const char *name, cJSON **out,
                          struct kerr_info *err);

/*
 * A new Ready condition {type Ready, status "True" when ready else "False", reason, message,
 * lastTransitionTime}: the transition time of a Ready condition of the same status in old's
 * (BORROWED, may be NULL) status.conditions, else now. OWNED by the caller; NULL on NOMEM.
 */
cJSON *rctx_ready_condition(int ready, const char *reason, const char *message, const cJSON *old,
                            const char *now);

#endif
