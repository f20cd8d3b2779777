/*
 * kw - what the commands of kubectl-warden share: the API client and the namespace
 * taken from the kubeconfig as kubectl takes them, the resources etcd-warden
 * reads and writes, times and ages as kubectl prints them, and the exit codes.
 *
 * Exit codes (kubectl's): 0 done, 1 a failure (an API error, an object not
 * found, a --wait that ended in failure or ran out of time), 2 a usage error.
 *
 * Ownership: struct kw is caller-embedded (kw_init / kw_release) and OWNS its
 * client. Thread safety: one thread.
 */
#ifndef KW_KW_H
#define KW_KW_H

#include <stdio.h>
#include <time.h>

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"

#define KW_EXIT_OK        0
#define KW_EXIT_FAIL      1
#define KW_EXIT_USAGE     2

#define KW_ANN_HIBERNATE  "etcd-warden.io/hibernate"
#define KW_ANN_PHASE      "etcd-warden.io/hibernation-phase"
#define KW_ANN_CUT        "etcd-warden.io/traffic-cut-at"
#define KW_ANN_CONDITION  "etcd-warden.io/hibernation-condition"
#define KW_ANN_RETENTION  "etcd-warden.io/immutability-retention-type"
#define KW_ANN_PROGRESS   "etcd-warden.io/restore-progress"
#define KW_ANN_PROTECTION "druid.gardener.cloud/disable-etcd-component-protection"
#define KW_LABEL_RESTORE  "etcd-warden.io/restoring"

extern const struct k8s_resource KW_RES_ETCD, KW_RES_LEASE, KW_RES_OPSTASK, KW_RES_IMMTASK,
    KW_RES_ENTRY, KW_RES_BACKUP, KW_RES_SCHEDULE, KW_RES_RESTORE, KW_RES_EVENT, KW_RES_DRILL;

/* The options every command reads. Strings BORROWED from argv. */
struct kw_opts {
    const char *kubeconfig; /* --kubeconfig; NULL: $KUBECONFIG, ~/.kube/config */
    const char *context;    /* --context; NULL: the current context */
    const char *ns;         /* -n; NULL: the context's namespace */
    const char *output;     /* -o: NULL (text) or "json" */
    int wait;               /* --wait */
    long timeout_ms;        /* --timeout of --wait */
};

struct kw {
    struct k8s_client *client; /* OWNS */
    const char *ns;            /* BORROWED: opts->ns or the client's namespace */
    struct kw_opts o;
    FILE *out; /* BORROWED: stdout */
    FILE *msg; /* BORROWED: stderr */
};

/* Load the kubeconfig and make the client. On failure the message is in err. */
enum kerr kw_init(struct kw *k, const struct kw_opts *o, struct kerr_info *err);
void kw_release(struct kw *k);

/* Unix seconds of an RFC 3339 time (metav1 Time or MicroTime); 0 when absent or bad. */
time_t kw_time(const char *s);

/* The age of t at now as kubectl prints it ("45s", "12m", "3h4m", "2d3h"; "-" for t = 0). */
void kw_age(time_t t, time_t now, char out[32]);

/*
 * The items of a LIST of res in ns (NULL: cluster-scoped or all) whose string at path
 * equals value (path NULL: every item). On KERR_OK *out OWNS a cJSON array.
 */
enum kerr kw_list_where(struct kw *k, const struct k8s_resource *res, const char *ns,
                        const char *path, const char *value, cJSON **out, struct kerr_info *err);

/* The item of arr (BORROWED) whose metadata.creationTimestamp is newest; NULL when empty. */
const cJSON *kw_newest(const cJSON *arr);

/* Print "error: msg" to k->msg and return KW_EXIT_FAIL. */
int kw_fail(struct kw *k, const struct kerr_info *err);

/* Print cJSON v (BORROWED) indented to k->out; KW_EXIT_FAIL when it cannot. */
int kw_print_json(struct kw *k, const cJSON *v);

#endif
