/*
 * smspec - whether a pod runs what its StatefulSet's pod template says, in everything that
 * decides where the backup sidecar writes and which etcd it reaches: the member rule's spec
 * check (controller/core/smember.h).
 *
 * Image, command and args are not all of it: etcd-druid gives the sidecar its store
 * container as an environment variable (STORAGE_CONTAINER) and reaches etcd through the pod's
 * host alias <etcd>-local, a pod's volumes say what its containers read, and any extra
 * container shares the pod's network (it may bind the sidecar's port first). So the pod's
 * spec is compared with the template's as a whole, and a pod differs unless every difference
 * is one the API server, the scheduler or the StatefulSet controller makes (fail closed):
 *   - pod spec fields absent from the template only with their API-server default
 *     (dnsPolicy ClusterFirst, restartPolicy Always, schedulerName default-scheduler,
 *     terminationGracePeriodSeconds 30, securityContext {}, enableServiceLinks true,
 *     preemptionPolicy PreemptLowerPriority, serviceAccountName default, serviceAccount as
 *     serviceAccountName); nodeName, tolerations, priority, priorityClassName (when the
 *     template has none), overhead, schedulerName, securityContext, affinity, nodeSelector,
 *     topologySpreadConstraints, readinessGates, schedulingGates and imagePullSecrets as
 *     admission, the scheduler and mutating webhooks write them (where and how privileged a
 *     pod runs, never what it runs); hostname the pod's name and subdomain the
 *     StatefulSet's serviceName;
 *   - containers and initContainers: the template's, same names in the same order, each
 *     field equal but for container defaults (terminationMessagePath /dev/termination-log,
 *     terminationMessagePolicy File, imagePullPolicy Always or IfNotPresent), resources,
 *     securityContext and probes as any (a VerticalPodAutoscaler sets resources), and the
 *     service-account token's mount;
 *   - volumes: the template's as they are, one per volumeClaimTemplate (name and claim
 *     only: smember checks which claim) and the service-account token's volume
 *     (kube-api-access-*, projected from the token, kube-root-ca.crt and the namespace,
 *     mounted read-only at /var/run/secrets/kubernetes.io/serviceaccount);
 *   - no ephemeral container (it shares the pod's network, as an extra container does).
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef CONTROLLER_SMSPEC_H
#define CONTROLLER_SMSPEC_H

#include <stddef.h>

#include <cJSON.h>

#define SMSPEC_TOKEN_PREFIX "kube-api-access-"
#define SMSPEC_TOKEN_PATH   "/var/run/secrets/kubernetes.io/serviceaccount"

/* Format why (size bytes, NUL-terminated; size 0: nothing) and return -1: the "differs" answer
 * of these checks and smember's. */
int smspec_why(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * 0 when pod (a Pod, BORROWED) runs the pod template of StatefulSet sts (BORROWED) as above;
 * -1 with why (size bytes, NUL-terminated) naming the first field that differs.
 */
int smspec_differs(const cJSON *sts, const cJSON *pod, char *why, size_t size);

#endif
