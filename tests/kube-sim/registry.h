/*
 * registry - the resource types kube-sim serves: the built-in kinds and the
 * custom resources of every established CustomResourceDefinition.
 *
 * A struct ksim_rtype describes one resource in one served version: group,
 * version, plural, kind, scope, short names, categories, verbs, the status
 * and scale subresources and (for CRDs) the additionalPrinterColumns. All
 * versions of one resource share a store key "group/plural" (core: "/plural"),
 * so objects are stored once and served in every version.
 *
 * Ownership and lifetime: the registry OWNS every rtype. A pointer returned
 * by a lookup stays valid until ksim_reg_free, even after its CRD is deleted
 * (the type is then only marked unserved), so request handlers may keep
 * using it without holding a lock.
 * Thread safety: all functions may be called from any thread (an rwlock
 * guards the table).
 */
#ifndef KSIM_REGISTRY_H
#define KSIM_REGISTRY_H

#include <stddef.h>

#include <cJSON.h>

#include "common/kerr.h"
#include "common/strlist.h"

/* Verbs an rtype supports, as discovery lists them. */
enum ksim_verb {
    KSIM_VERB_CREATE = 1 << 0,
    KSIM_VERB_DELETE = 1 << 1,
    KSIM_VERB_DELETECOLLECTION = 1 << 2,
    KSIM_VERB_GET = 1 << 3,
    KSIM_VERB_LIST = 1 << 4,
    KSIM_VERB_PATCH = 1 << 5,
    KSIM_VERB_UPDATE = 1 << 6,
    KSIM_VERB_WATCH = 1 << 7,
};

#define KSIM_VERBS_ALL 0xff

/* One served resource in one version. Immutable once registered (except served). */
struct ksim_rtype {
    char *group;                /* "" for the core group */
    char *version;              /* "v1" */
    char *plural;               /* "statefulsets" */
    char *singular;             /* "statefulset" */
    char *kind;                 /* "StatefulSet" */
    char *list_kind;            /* "StatefulSetList" */
    char *store_key;            /* "apps/statefulsets": objects are shared by every version */
    struct strlist short_names; /* "sts" */
    struct strlist categories;  /* "all" */
    unsigned verbs;
    int namespaced;
    int has_status;            /* status subresource */
    int has_scale;             /* scale subresource */
    char *scale_spec_path;     /* ".spec.replicas" */
    char *scale_status_path;   /* ".status.replicas" */
    char *scale_selector_path; /* ".status.selector" or NULL; built-ins: from spec.selector */
    int tracks_generation;     /* metadata.generation is maintained */
    int custom;                /* defined by a CRD */
    char *crd_name;            /* "etcds.druid.gardener.cloud" for custom types */
    cJSON *printer_columns;    /* OWNS: CRD additionalPrinterColumns, or NULL */
    cJSON *schema; /* OWNS: the CRD version's openAPIV3Schema when it prunes (prune.h), or NULL */
    const char *const *fields; /* extra field-selector paths (built-ins), NULL-terminated */
    int served;                /* 0 once the CRD is deleted or replaced */
};

struct ksim_reg;

/* A registry holding the built-in kinds. On KERR_OK *out OWNS it (ksim_reg_free). */
enum kerr ksim_reg_new(struct ksim_reg **out, struct kerr_info *err);

/* NULL is a no-op. Frees every rtype ever registered. */
void ksim_reg_free(struct ksim_reg *reg);

/* The served rtype for group/version/plural, or NULL. BORROWED (see lifetime above). */
const struct ksim_rtype *ksim_reg_find(struct ksim_reg *reg, const char *group, const char *version,
                                       const char *plural);

/* The served rtype for an apiVersion ("apps/v1", "v1") and kind, or NULL. */
const struct ksim_rtype *ksim_reg_find_kind(struct ksim_reg *reg, const char *api_version,
                                            const char *kind);

/* Any served rtype with this store key (the preferred version first), or NULL. */
const struct ksim_rtype *ksim_reg_find_store(struct ksim_reg *reg, const char *store_key);

/*
 * Validate a CustomResourceDefinition (BORROWED) as kube-apiserver does for
 * the fields kube-sim uses: metadata.name == plural.group, names, scope,
 * versions (exactly one storage version, at least one served). KERR_INVAL
 * with a "spec.names.plural: Required value"-style message otherwise.
 */
enum kerr ksim_reg_crd_validate(const cJSON *crd, struct kerr_info *err);

/*
 * Serve the resource a CRD defines (replacing what an earlier version of the
 * same CRD registered). Types whose names clash with another group's are
 * KERR_CONFLICT.
 */
enum kerr ksim_reg_add_crd(struct ksim_reg *reg, const cJSON *crd, struct kerr_info *err);

/* Stop serving the resource of the named CRD. Unknown names are a no-op. */
void ksim_reg_remove_crd(struct ksim_reg *reg, const char *crd_name);

/*
 * Call fn for every served rtype, in registration order (built-ins first),
 * under the registry's read lock: fn must not call back into the registry.
 */
void ksim_reg_each(struct ksim_reg *reg, void (*fn)(const struct ksim_rtype *rt, void *arg),
                   void *arg);

/* Kubernetes version ordering: v1 > v1beta2 > v1beta1 > v1alpha1 > other (alphabetical). <0 when
 * a sorts first (is preferred). */
int ksim_reg_version_cmp(const char *a, const char *b);

/* True when rt supports verb. */
int ksim_reg_has_verb(const struct ksim_rtype *rt, enum ksim_verb verb);

#endif
