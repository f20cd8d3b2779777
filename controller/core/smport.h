/*
 * smport - whether the backup sidecar's port can be taken from a pod spec: the spec must be one
 * etcd-druid builds around that port (the member rule's port check, controller/core/smember.h).
 *
 * The port warden-controller asks is container backup-restore's containerPort named server. A
 * pod template is written by whoever may edit the StatefulSet: a namespace editor once
 * component protection is disabled. Every container of a pod shares its network, so a
 * container of hers that listens on the declared port answers for the sidecar, and a port
 * declared on backup-restore that its process does not listen on leads to whatever does. So a
 * spec (a pod template's or a pod's) gives the port only when, as etcd-druid builds it
 * (internal/component/statefulset/builder.go):
 *   - its containers are among etcd and backup-restore, its init containers among
 *     change-permissions and change-backup-bucket-permissions, each name once, and it has no
 *     ephemeral container and no hostNetwork (the pod IP would be the node's);
 *   - no container or init container but backup-restore declares the port's number
 *     (containerPort or hostPort);
 *   - backup-restore has no command (etcd-druid runs the image's entrypoint), and its args set
 *     the port etcdbrctl listens on to the declared one: each --server-port=N, --server-port N,
 *     -p N, -pN or -p=N names the declared port (N plain decimal: etcdbrctl reads 0x1f90 and
 *     010 in other bases), no other short option group (which could hide -p) is there, and
 *     without any such flag (etcd-druid before v0.31) the declared port is etcdbrctl's
 *     default, 8080.
 * Anything else: the port is not taken (fail closed), and the message names the container.
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef CONTROLLER_SMPORT_H
#define CONTROLLER_SMPORT_H

#include <stddef.h>

#include <cJSON.h>

#define SMPORT_SIDECAR "backup-restore"
#define SMPORT_ETCD    "etcd"
#define SMPORT_NAME    "server"

/*
 * The containerPort named server of container backup-restore in pod spec spec (BORROWED; NULL:
 * none), 1..65535; -1 when it declares none. No check beyond that: smport_check.
 */
int smport_declared(const cJSON *spec);

/*
 * The sidecar port of pod spec spec (BORROWED) when spec is one etcd-druid builds around it
 * (above), 1..65535; else -1 with why (size bytes, NUL-terminated; size 0: nothing) naming the
 * container and what is not etcd-druid's.
 */
int smport_check(const cJSON *spec, char *why, size_t size);

#endif
