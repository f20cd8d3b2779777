/*
 * smember - where the backup sidecars of an Etcd's members answer, from facts a tenant
 * cannot forge: the StatefulSet's own member pods and its pod template.
 *
 * The client Service is a component a tenant may edit once component protection is disabled
 * (a port, a targetPort, a selector), and any pod carrying the selector's labels joins its
 * endpoints: a question sent to the Service's clusterIP may be answered by a tenant's pod.
 * So the sidecar is asked on the pods of the StatefulSet itself, and a pod's name and owner
 * references are no proof either (whoever creates a pod writes them: a tenant creates
 * <sts>-<n> past the ordinals, or in member 0's place after deleting it). A member is a pod
 *   - named <sts>-<ordinal> (decimal, no leading zero), the ordinal inside the StatefulSet's
 *     current ordinals [spec.ordinals.start, start + spec.replicas);
 *   - with an ownerReference controller=true, kind StatefulSet, the StatefulSet's uid;
 *   - whose containers etcd and backup-restore carry the template's image, command and args
 *     (what makes them the genuine etcd and sidecar);
 *   - with, for each volumeClaimTemplate T, volume T on the member claim <T>-<sts>-<ordinal>,
 *     mounted where the template's etcd and backup-restore containers mount T;
 *   - whose spec is the template's in everything else too (controller/core/smspec.h: env,
 *     envFrom, hostAliases, volumes, no container the template does not run), but for what
 *     the API server, the scheduler and the StatefulSet controller fill in;
 *   - status.phase Running with a status.podIP (written by the kubelet: the identity asked);
 *   - its spec and the template's both ones etcd-druid builds around the sidecar's port
 *     (controller/core/smport.h: no container but etcd and backup-restore, none but
 *     backup-restore declaring the port, backup-restore's args listening on it): the template
 *     is a tenant's too once component protection is disabled, and any container shares the
 *     pod's network.
 * Every ordinal must have such a member, or nothing is asked (fail closed): a member missing,
 * or a pod in its place that does not match, makes the question unanswered.
 * The port is the StatefulSet's pod template's: container backup-restore, port server
 * (etcd-druid's builder, internal/component/statefulset/builder.go), taken only from a template
 * smport_check accepts.
 *
 * Ownership: arguments BORROWED; the answers are copied into the caller's array.
 * Thread safety: reentrant.
 */
#ifndef CONTROLLER_SMEMBER_H
#define CONTROLLER_SMEMBER_H

#include <stddef.h>

#include <cJSON.h>

#include "common/kerr.h"

struct k8s_client; /* common/k8s.h */

#define SMEMBER_MAX       16 /* members asked at most (etcd-druid runs 1, 3 or 5) */
#define SMEMBER_CONTAINER "backup-restore"
#define SMEMBER_ETCD      "etcd"
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
 * The current ordinals [*lo, *hi) of sts (BORROWED): spec.ordinals.start (default 0) and
 * spec.replicas (default 1). 0 when either is not a valid number.
 */
int smember_ordinals(const cJSON *sts, long *lo, long *hi);

/*
 * The rule above for one pod (BORROWED): its ordinal when pod is a member of sts that may be
 * asked, else -1 with why (size bytes, NUL-terminated) saying what does not match.
 */
long smember_is_member(const cJSON *sts, const cJSON *pod, char *why, size_t size);

/*
 * The members of sts among pods (a JSON array of Pods, BORROWED; NULL: none), one per ordinal
 * of [start, start + replicas), into out[0..*n) in ordinal order (the first pod of a name
 * decides).
 * KERR_INVAL with a message (*n 0) when sts has no uid, no name or no such port, a pod template
 * smport_check refuses (the message names the container), 0 or more
 * than max members, or an ordinal has no pod or one that is not a member (smember_is_member).
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
