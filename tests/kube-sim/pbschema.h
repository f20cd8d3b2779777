/*
 * pbschema - the protobuf field numbers of the built-in kinds that kubectl
 * sends as application/vnd.kubernetes.protobuf (its typed clients do, for
 * `kubectl create namespace|configmap|secret|serviceaccount|service|role|
 * rolebinding|clusterrole|clusterrolebinding|deployment|job|cronjob|pdb`
 * and `kubectl run`), of ReplicaSet and DaemonSet (which typed clients of
 * other programs may send), and of every message they contain.
 *
 * One line per message: "<Name> <field> <field> ...", a field being
 * <number>[*]<type>=<jsonName>: '*' marks a repeated field; types are
 * s string, b bytes, i signed varint, u unsigned varint, B bool, d double,
 * @Name a message, {X a map from string to type X, and the special
 * apimachinery messages T Time, U MicroTime, I IntOrString, Q Quantity,
 * R RawExtension, F FieldsV1, D Duration.
 *
 * The table was derived from the FileDescriptorProtos of k8s.io/api
 * v1.32 (the generated.proto files embedded in kubectl 1.32): the messages
 * reachable from Namespace, ConfigMap, Secret, ServiceAccount, Service,
 * Pod, Role, ClusterRole, RoleBinding, ClusterRoleBinding, Deployment,
 * ReplicaSet, DaemonSet, Job, CronJob and PodDisruptionBudget.
 *
 * Thread safety: read-only data.
 */
#ifndef KSIM_PBSCHEMA_H
#define KSIM_PBSCHEMA_H

/* The schema text described above, NUL-terminated, one message per line. */
extern const char ksim_pbschema_text[];

#endif
