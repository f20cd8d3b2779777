/*
 * oaschema - the components.schemas entries of kube-sim's OpenAPI v3
 * documents, as kube-apiserver builds them: for a custom resource, its CRD
 * version's openAPIV3Schema with apiVersion, kind and metadata (a reference
 * to ObjectMeta) set and the x-kubernetes-group-version-kind extension that
 * `kubectl explain` looks the kind up by; for a built-in kind, a schema
 * with those standard fields only (kube-sim does not carry the Kubernetes
 * API's field documentation) whose description says so; and the shared
 * apimachinery definitions the references point to (ObjectMeta,
 * OwnerReference, ManagedFieldsEntry, Time, FieldsV1).
 *
 * Ownership: returned trees are OWNED by the caller (NULL when out of memory).
 * Thread safety: reentrant; rt is only read.
 */
#ifndef KSIM_OASCHEMA_H
#define KSIM_OASCHEMA_H

#include <stddef.h>

#include <cJSON.h>

#include "tests/kube-sim/registry.h"

/* The prefix of references into a document's components.schemas. */
#define KSIM_OA_REF "#/components/schemas/"

/*
 * The schema of rt's kind, and its components.schemas name into name
 * ("io.etcd-warden.v1alpha1.EtcdBackup", "io.k8s.api.apps.v1.StatefulSet";
 * truncated to size). NULL when out of memory.
 */
cJSON *ksim_oaschema_kind(const struct ksim_rtype *rt, char *name, size_t size);

/* Add the shared apimachinery definitions to schemas (an object). 0, or -1 when out of memory. */
int ksim_oaschema_add_meta(cJSON *schemas);

#endif
