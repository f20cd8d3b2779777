/*
 * discovery - the discovery documents of kube-apiserver, built from the
 * registry: /version, /api (APIVersions), /apis (APIGroupList), /apis/G
 * (APIGroup), /api/v1 and /apis/G/V (APIResourceList with name,
 * singularName, namespaced, kind, verbs, shortNames, categories and the
 * status / scale subresources).
 *
 * kube-sim serves the legacy (unaggregated) form only: kubectl asks for the
 * aggregated apidiscovery.k8s.io/v2 list with application/json as a
 * fallback, and reads the plain documents when the reply is plain JSON.
 *
 * Ownership: every function returns a new tree the caller OWNS, or NULL
 * (out of memory, or unknown group / version).
 * Thread safety: reentrant (the registry locks itself).
 */
#ifndef KSIM_DISCOVERY_H
#define KSIM_DISCOVERY_H

#include <cJSON.h>

#include "tests/kube-sim/registry.h"

/* The Kubernetes version kube-sim claims to be. */
#define KSIM_KUBE_MAJOR  "1"
#define KSIM_KUBE_MINOR  "32"
#define KSIM_GIT_VERSION "v1.32.0-kubesim"

/* /version */
cJSON *ksim_disc_version(void);

/* /api; server_address is "127.0.0.1:PORT". */
cJSON *ksim_disc_api(const char *server_address);

/* /apis */
cJSON *ksim_disc_groups(struct ksim_reg *reg);

/* /apis/<group>, or NULL when no version of the group is served. */
cJSON *ksim_disc_group(struct ksim_reg *reg, const char *group);

/* /api/v1 (group "") and /apis/<group>/<version>, or NULL when not served. */
cJSON *ksim_disc_resources(struct ksim_reg *reg, const char *group, const char *version);

#endif
