/*
 * smember - where the backup sidecars of an Etcd's members answer, from facts a tenant
 * cannot forge: the StatefulSet's own member pods and its pod template.
 *
 * The client Service is a component a tenant may edit once component protection is disabled
 * (a port, a targetPort, a selector), and any pod carrying the selector's labels joins its
 * endpoints: a question sent to the Service's clusterIP may be answered by a tenant's pod.
 * So the sidecar is asked on the pods of the StatefulSet itself:
 *   - name <sts>-<ordinal> (decimal, no leading zero), in ordinal order;
 *   - an ownerReference with controller=true, kind StatefulSet, the StatefulSet's uid (set by
 *     the StatefulSet controller only; a pod of another owner is never adopted);
 *   - status.phase Running with a status.podIP;
 *   - the port as the StatefulSet's pod template declares it: container backup-restore, port
 *     server (etcd-druid's builder, internal/component/statefulset/builder.go).
 * A tenant who edits the StatefulSet's template rolls its pods, so the pods run what the
 * template says in any case.
 *
 * Ownership: arguments BORROWED; the answers are copied into the caller's array.
 * Thread safety: reentrant.
 */
#ifndef CONTROLLER_SMEMBER_H
#define CONTROLLER_SMEMBER_H

#include <cJSON.h>

#include "common/kerr.h"

struct k8s_client; /* common/k8s.h */

#define SMEMBER_MAX       16 /* members asked at most (etcd-druid runs 1, 3 or 5) */
#define SMEMBER_CONTAINER "backup-restore"
#define SMEMBER_PORT_NAME "server"
#define SMEMBER_NAME_MAX  (253 + 1)
#define SMEMBER_IP_MAX    46 /* INET6_ADDRSTRLEN */

/* One member's sidecar. */
struct smember {
    char pod[SMEMBER_NAME_MAX]; /* <sts>-<ordinal> */
    char ip[SMEMBER_IP_MAX];    /* status.podIP */
    long ordinal;
    int port; /* the template's backup-restore port server */
};

/*
 * The containerPort named server of container backup-restore in sts's pod template (BORROWED),
 * 1..65535; -1 when the template declares none.
 */
int smember_port(const cJSON *sts);

/*
 * The members of sts among pods (a JSON array of Pods, BORROWED; NULL: none) as above, into
 * out[0..*n) in ordinal order, each ordinal once (at most max; those of the highest ordinals
 * are left out).
 * KERR_INVAL with a message when sts has no uid, no name or no such port, or no pod qualifies.
 */
enum kerr smember_pick(const cJSON *sts, const cJSON *pods, struct smember *out, int max, int *n,
                       struct kerr_info *err);

/*
 * LIST the pods of namespace ns and smember_pick them. *api set when the API server failed the
 * LIST (5xx, 429, transport: retry later; it says nothing about the sidecar).
 */
enum kerr smember_list(struct k8s_client *client, const char *ns, const cJSON *sts,
                       struct smember *out, int max, int *n, int *api, struct kerr_info *err);

#endif
