#include "tests/kube-sim/registry.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/kjson.h"

/* Cap of a store key or list kind: group (253) + plural (63), kind (63) + "List". */
#define KEY_MAX 1024

/* A built-in kind: short names and categories are space-separated lists. */
struct builtin {
    const char *group, *version, *plural, *singular, *kind;
    const char *short_names, *categories;
    int namespaced, has_status, has_scale, generation;
    const char *const *fields;
};

static const char *const ns_fields[] = { "status.phase", NULL };
static const char *const secret_fields[] = { "type", NULL };
static const char *const pod_fields[] = { "spec.nodeName",
                                          "spec.restartPolicy",
                                          "spec.schedulerName",
                                          "spec.serviceAccountName",
                                          "spec.hostNetwork",
                                          "status.phase",
                                          "status.podIP",
                                          "status.nominatedNodeName",
                                          NULL };
static const char *const event_fields[] = { "involvedObject.kind",
                                            "involvedObject.namespace",
                                            "involvedObject.name",
                                            "involvedObject.uid",
                                            "involvedObject.apiVersion",
                                            "involvedObject.resourceVersion",
                                            "involvedObject.fieldPath",
                                            "reason",
                                            "reportingComponent",
                                            "source",
                                            "type",
                                            NULL };
static const char *const eventv1_fields[] = { "regarding.kind",
                                              "regarding.namespace",
                                              "regarding.name",
                                              "regarding.uid",
                                              "regarding.apiVersion",
                                              "reason",
                                              "reportingController",
                                              "type",
                                              NULL };
static const char *const job_fields[] = { "status.successful", NULL };

static const struct builtin builtins[] = {
    { "", "v1", "namespaces", "namespace", "Namespace", "ns", "", 0, 1, 0, 0, ns_fields },
    { "", "v1", "nodes", "node", "Node", "no", "", 0, 1, 0, 0, NULL },
    { "", "v1", "services", "service", "Service", "svc", "all", 1, 1, 0, 0, NULL },
    { "", "v1", "endpoints", "endpoints", "Endpoints", "ep", "", 1, 0, 0, 0, NULL },
    { "", "v1", "configmaps", "configmap", "ConfigMap", "cm", "", 1, 0, 0, 0, NULL },
    { "", "v1", "secrets", "secret", "Secret", "", "", 1, 0, 0, 0, secret_fields },
    { "", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", "sa", "", 1, 0, 0, 0, NULL },
    { "", "v1", "pods", "pod", "Pod", "po", "all", 1, 1, 0, 0, pod_fields },
    { "", "v1", "persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim", "pvc",
      "", 1, 1, 0, 0, NULL },
    { "", "v1", "events", "event", "Event", "ev", "", 1, 0, 0, 0, event_fields },
    /* apps/v1 in kube-apiserver's (alphabetical) discovery order */
    { "apps", "v1", "daemonsets", "daemonset", "DaemonSet", "ds", "all", 1, 1, 0, 1, NULL },
    { "apps", "v1", "deployments", "deployment", "Deployment", "deploy", "all", 1, 1, 1, 1, NULL },
    { "apps", "v1", "replicasets", "replicaset", "ReplicaSet", "rs", "all", 1, 1, 1, 1, NULL },
    { "apps", "v1", "statefulsets", "statefulset", "StatefulSet", "sts", "all", 1, 1, 1, 1, NULL },
    { "batch", "v1", "cronjobs", "cronjob", "CronJob", "cj", "all", 1, 1, 0, 1, NULL },
    { "batch", "v1", "jobs", "job", "Job", "", "all", 1, 1, 0, 1, job_fields },
    { "coordination.k8s.io", "v1", "leases", "lease", "Lease", "", "", 1, 0, 0, 0, NULL },
    { "policy", "v1", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", "pdb",
      "", 1, 1, 0, 1, NULL },
    { "networking.k8s.io", "v1", "networkpolicies", "networkpolicy", "NetworkPolicy", "netpol", "",
      1, 0, 0, 1, NULL },
    { "rbac.authorization.k8s.io", "v1", "roles", "role", "Role", "", "", 1, 0, 0, 0, NULL },
    { "rbac.authorization.k8s.io", "v1", "rolebindings", "rolebinding", "RoleBinding", "", "", 1, 0,
      0, 0, NULL },
    { "rbac.authorization.k8s.io", "v1", "clusterroles", "clusterrole", "ClusterRole", "", "", 0, 0,
      0, 0, NULL },
    { "rbac.authorization.k8s.io", "v1", "clusterrolebindings", "clusterrolebinding",
      "ClusterRoleBinding", "", "", 0, 0, 0, 0, NULL },
    { "events.k8s.io", "v1", "events", "event", "Event", "ev", "", 1, 0, 0, 0, eventv1_fields },
    { "apiextensions.k8s.io", "v1", "customresourcedefinitions", "customresourcedefinition",
      "CustomResourceDefinition", "crd crds", "api-extensions", 0, 1, 0, 1, NULL },
    { "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
      "validatingwebhookconfiguration", "ValidatingWebhookConfiguration", "", "api-extensions", 0,
      0, 0, 1, NULL },
    { "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
      "mutatingwebhookconfiguration", "MutatingWebhookConfiguration", "", "api-extensions", 0, 0, 0,
      1, NULL },
    /* reviews: create-only, answered and never stored (see review.h) */
    { "authentication.k8s.io", "v1", "selfsubjectreviews", "selfsubjectreview", "SelfSubjectReview",
      "", "", 0, 0, 0, 0, NULL },
    { "authorization.k8s.io", "v1", "selfsubjectaccessreviews", "selfsubjectaccessreview",
      "SelfSubjectAccessReview", "", "", 0, 0, 0, 0, NULL },
    { "authorization.k8s.io", "v1", "subjectaccessreviews", "subjectaccessreview",
      "SubjectAccessReview", "", "", 0, 0, 0, 0, NULL },
};

struct ksim_reg {
    pthread_rwlock_t lock;
    struct ksim_rtype **types; /* OWNS; served and retired */
    size_t n, cap;
};

static void rtype_free(struct ksim_rtype *rt)
{
    if (!rt)
        return;
    free(rt->group);
    free(rt->version);
    free(rt->plural);
    free(rt->singular);
    free(rt->kind);
    free(rt->list_kind);
    free(rt->store_key);
    strlist_release(&rt->short_names);
    strlist_release(&rt->categories);
    free(rt->scale_spec_path);
    free(rt->scale_status_path);
    free(rt->scale_selector_path);
    free(rt->crd_name);
    cJSON_Delete(rt->printer_columns);
    cJSON_Delete(rt->schema);
    free(rt);
}

/* Split a space-separated list into l. */
static int split_words(const char *s, struct strlist *l)
{
    size_t len;

    while (s && *s) {
        while (*s == ' ')
            s++;
        len = strcspn(s, " ");
        if (len && strlist_addn(l, s, len) != KERR_OK)
            return -1;
        s += len;
    }
    return 0;
}

/* The store key "group/plural". */
static char *join_key(const char *group, const char *plural)
{
    return buf_dupf(KEY_MAX, "%s/%s", group, plural);
}

/* The list kind "<kind>List". */
static char *list_kind_of(const char *kind)
{
    return buf_dupf(KEY_MAX, "%sList", kind);
}

static struct ksim_rtype *rtype_from_builtin(const struct builtin *b)
{
    struct ksim_rtype *rt = calloc(1, sizeof(*rt));

    if (!rt)
        return NULL;
    rt->group = strdup(b->group);
    rt->version = strdup(b->version);
    rt->plural = strdup(b->plural);
    rt->singular = strdup(b->singular);
    rt->kind = strdup(b->kind);
    rt->list_kind = list_kind_of(b->kind);
    /* events.k8s.io/v1 Events are core v1 Events in another shape (see convert.h). */
    rt->store_key = join_key(strcmp(b->group, "events.k8s.io") == 0 ? "" : b->group, b->plural);
    rt->verbs = strstr(b->group, ".k8s.io") && strncmp(b->group, "auth", 4) == 0 ? KSIM_VERB_CREATE
                                                                                 : KSIM_VERBS_ALL;
    rt->namespaced = b->namespaced;
    rt->has_status = b->has_status;
    rt->has_scale = b->has_scale;
    rt->tracks_generation = b->generation;
    rt->fields = b->fields;
    rt->served = 1;
    if (b->has_scale) {
        rt->scale_spec_path = strdup(".spec.replicas");
        rt->scale_status_path = strdup(".status.replicas");
    }
    if (!rt->group || !rt->version || !rt->plural || !rt->singular || !rt->kind || !rt->list_kind ||
        !rt->store_key || (b->has_scale && !rt->scale_status_path) ||
        split_words(b->short_names, &rt->short_names) != 0 ||
        split_words(b->categories, &rt->categories) != 0) {
        rtype_free(rt);
        return NULL;
    }
    return rt;
}

static int reg_push(struct ksim_reg *reg, struct ksim_rtype *rt)
{
    struct ksim_rtype **nt;

    if (reg->n == reg->cap) {
        nt = realloc(reg->types, (reg->cap ? reg->cap * 2 : 64) * sizeof(*nt));
        if (!nt)
            return -1;
        reg->types = nt;
        reg->cap = reg->cap ? reg->cap * 2 : 64;
    }
    reg->types[reg->n++] = rt;
    return 0;
}

enum kerr ksim_reg_new(struct ksim_reg **out, struct kerr_info *err)
{
    struct ksim_reg *reg;
    struct ksim_rtype *rt;
    size_t i;

    *out = NULL;
    reg = calloc(1, sizeof(*reg));
    if (!reg)
        return kerr_set(err, KERR_NOMEM, NULL);
    pthread_rwlock_init(&reg->lock, NULL);
    for (i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++) {
        rt = rtype_from_builtin(&builtins[i]);
        if (!rt || reg_push(reg, rt) != 0) {
            rtype_free(rt);
            ksim_reg_free(reg);
            return kerr_set(err, KERR_NOMEM, NULL);
        }
    }
    *out = reg;
    return KERR_OK;
}

void ksim_reg_free(struct ksim_reg *reg)
{
    size_t i;

    if (!reg)
        return;
    for (i = 0; i < reg->n; i++)
        rtype_free(reg->types[i]);
    free(reg->types);
    pthread_rwlock_destroy(&reg->lock);
    free(reg);
}

const struct ksim_rtype *ksim_reg_find(struct ksim_reg *reg, const char *group, const char *version,
                                       const char *plural)
{
    const struct ksim_rtype *found = NULL;
    size_t i;

    pthread_rwlock_rdlock(&reg->lock);
    for (i = 0; i < reg->n && !found; i++) {
        const struct ksim_rtype *rt = reg->types[i];

        if (rt->served && strcmp(rt->group, group) == 0 && strcmp(rt->version, version) == 0 &&
            strcmp(rt->plural, plural) == 0)
            found = rt;
    }
    pthread_rwlock_unlock(&reg->lock);
    return found;
}

const struct ksim_rtype *ksim_reg_find_kind(struct ksim_reg *reg, const char *api_version,
                                            const char *kind)
{
    const struct ksim_rtype *found = NULL;
    const char *slash = api_version ? strchr(api_version, '/') : NULL;
    const char *version = slash ? slash + 1 : api_version;
    size_t glen = slash ? (size_t)(slash - api_version) : 0;
    size_t i;

    if (!api_version || !kind)
        return NULL;
    pthread_rwlock_rdlock(&reg->lock);
    for (i = 0; i < reg->n && !found; i++) {
        const struct ksim_rtype *rt = reg->types[i];

        if (rt->served && strlen(rt->group) == glen && strncmp(rt->group, api_version, glen) == 0 &&
            strcmp(rt->version, version) == 0 && strcmp(rt->kind, kind) == 0)
            found = rt;
    }
    pthread_rwlock_unlock(&reg->lock);
    return found;
}

const struct ksim_rtype *ksim_reg_find_store(struct ksim_reg *reg, const char *store_key)
{
    const struct ksim_rtype *found = NULL;
    size_t i;

    pthread_rwlock_rdlock(&reg->lock);
    for (i = 0; i < reg->n; i++) {
        const struct ksim_rtype *rt = reg->types[i];

        if (!rt->served || strcmp(rt->store_key, store_key) != 0)
            continue;
        if (!found || ksim_reg_version_cmp(rt->version, found->version) < 0)
            found = rt;
    }
    pthread_rwlock_unlock(&reg->lock);
    return found;
}

void ksim_reg_each(struct ksim_reg *reg, void (*fn)(const struct ksim_rtype *rt, void *arg),
                   void *arg)
{
    size_t i;

    pthread_rwlock_rdlock(&reg->lock);
    for (i = 0; i < reg->n; i++)
        if (reg->types[i]->served)
            fn(reg->types[i], arg);
    pthread_rwlock_unlock(&reg->lock);
}

int ksim_reg_has_verb(const struct ksim_rtype *rt, enum ksim_verb verb)
{
    return (rt->verbs & (unsigned)verb) != 0;
}

/* Split "v1beta2" into major 1, level 1 (0 GA, 1 beta, 2 alpha), minor 2; -1 if not kube-like. */
static int version_parts(const char *v, long *major, int *level, long *minor)
{
    char *end = NULL;

    *minor = 0;
    *level = 0;
    if (v[0] != 'v' || !isdigit((unsigned char)v[1]))
        return -1;
    *major = strtol(v + 1, &end, 10);
    if (*end == '\0')
        return 0;
    if (strncmp(end, "beta", 4) == 0) {
        *level = 1;
        end += 4;
    } else if (strncmp(end, "alpha", 5) == 0) {
        *level = 2;
        end += 5;
    } else {
        return -1;
    }
    if (!isdigit((unsigned char)*end))
        return -1;
    *minor = strtol(end, &end, 10);
    return *end == '\0' ? 0 : -1;
}

int ksim_reg_version_cmp(const char *a, const char *b)
{
    long amaj, amin, bmaj, bmin;
    int alev, blev;
    int ak = version_parts(a, &amaj, &alev, &amin) == 0;
    int bk = version_parts(b, &bmaj, &blev, &bmin) == 0;

    if (ak != bk)
        return ak ? -1 : 1;
    if (!ak)
        return strcmp(a, b);
    if (alev != blev)
        return alev < blev ? -1 : 1;
    if (amaj != bmaj)
        return amaj > bmaj ? -1 : 1;
    if (amin != bmin)
        return amin > bmin ? -1 : 1;
    return 0;
}

static int dns_label_ok(const char *s)
{
    size_t i, len = strlen(s);

    if (len == 0 || len > 63 || !isalnum((unsigned char)s[0]) ||
        !isalnum((unsigned char)s[len - 1]))
        return 0;
    for (i = 0; i < len; i++)
        if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '-')
            return 0;
    return 1;
}

static enum kerr validate_versions(const cJSON *versions, struct kerr_info *err)
{
    const cJSON *v;
    int storage = 0, served = 0;

    if (!cJSON_IsArray(versions) || cJSON_GetArraySize(versions) == 0)
        return kerr_set(err, KERR_INVAL,
                        "spec.versions: Invalid value: null: must have exactly "
                        "one version marked as storage version");
    cJSON_ArrayForEach (v, versions) {
        const char *name = kjson_get_str(v, "name");

        if (!name || !dns_label_ok(name))
            return kerr_set(err, KERR_INVAL,
                            "spec.versions.name: Invalid value: \"%s\": a "
                            "DNS-1035 label is required",
                            name ? name : "");
        storage += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "storage"));
        served += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "served"));
    }
    if (storage != 1)
        return kerr_set(err, KERR_INVAL,
                        "spec.versions: Invalid value: %s: must have exactly one "
                        "version marked as storage version",
                        "[...]");
    if (served == 0)
        return kerr_set(err, KERR_INVAL,
                        "spec.versions: Invalid value: [...]: must have at least one version "
                        "marked as served");
    return KERR_OK;
}

enum kerr ksim_reg_crd_validate(const cJSON *crd, struct kerr_info *err)
{
    const char *name = kjson_get_str(crd, "metadata.name");
    const char *group = kjson_get_str(crd, "spec.group");
    const char *plural = kjson_get_str(crd, "spec.names.plural");
    const char *kind = kjson_get_str(crd, "spec.names.kind");
    const char *scope = kjson_get_str(crd, "spec.scope");
    char want[512];

    if (!group || !*group)
        return kerr_set(err, KERR_INVAL, "spec.group: Required value");
    if (!strchr(group, '.'))
        return kerr_set(err, KERR_INVAL,
                        "spec.group: Invalid value: \"%s\": should be a domain with at least one "
                        "dot",
                        group);
    if (!plural || !*plural)
        return kerr_set(err, KERR_INVAL, "spec.names.plural: Required value");
    if (!dns_label_ok(plural))
        return kerr_set(err, KERR_INVAL,
                        "spec.names.plural: Invalid value: \"%s\": a lowercase RFC 1123 label "
                        "must consist of lower case alphanumeric characters or '-'",
                        plural);
    if (!kind || !*kind)
        return kerr_set(err, KERR_INVAL, "spec.names.kind: Required value");
    if (!scope || (strcmp(scope, "Namespaced") != 0 && strcmp(scope, "Cluster") != 0))
        return kerr_set(err, KERR_INVAL,
                        "spec.scope: Unsupported value: \"%s\": supported values: \"Cluster\", "
                        "\"Namespaced\"",
                        scope ? scope : "");
    snprintf(want, sizeof(want), "%s.%s", plural, group);
    if (!name || strcmp(name, want) != 0)
        return kerr_set(err, KERR_INVAL,
                        "metadata.name: Invalid value: \"%s\": must be "
                        "spec.names.plural+\".\"+spec.group",
                        name ? name : "");
    return validate_versions(kjson_get(crd, "spec.versions"), err);
}

static char *lower_dup(const char *s)
{
    char *d = strdup(s);
    size_t i;

    for (i = 0; d && d[i]; i++)
        d[i] = (char)tolower((unsigned char)d[i]);
    return d;
}

static int str_list(const cJSON *arr, struct strlist *l)
{
    const cJSON *it;

    cJSON_ArrayForEach (it, arr) {
        if (cJSON_IsString(it) && strlist_add(l, it->valuestring) != KERR_OK)
            return -1;
    }
    return 0;
}

static char *opt_dup(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* The rtype of one version of a CRD. */
static struct ksim_rtype *rtype_from_crd(const cJSON *crd, const cJSON *ver)
{
    struct ksim_rtype *rt = calloc(1, sizeof(*rt));
    const cJSON *names = kjson_get(crd, "spec.names");
    const char *kind = kjson_get_str(names, "kind");
    const char *singular = kjson_get_str(names, "singular");
    const char *list_kind = kjson_get_str(names, "listKind");
    const cJSON *scale = kjson_get(ver, "subresources.scale");
    const cJSON *cols = kjson_get(ver, "additionalPrinterColumns");
    const cJSON *schema = kjson_get(ver, "schema.openAPIV3Schema");

    if (!rt)
        return NULL;
    rt->group = strdup(kjson_get_str(crd, "spec.group"));
    rt->version = strdup(kjson_get_str(ver, "name"));
    rt->plural = strdup(kjson_get_str(names, "plural"));
    rt->singular = singular && *singular ? strdup(singular) : lower_dup(kind);
    rt->kind = strdup(kind);
    rt->list_kind = list_kind && *list_kind ? strdup(list_kind) : list_kind_of(kind);
    rt->crd_name = strdup(kjson_get_str(crd, "metadata.name"));
    rt->verbs = KSIM_VERBS_ALL;
    rt->namespaced = strcmp(kjson_get_str(crd, "spec.scope"), "Namespaced") == 0;
    rt->has_status = kjson_get(ver, "subresources.status") != NULL;
    rt->has_scale = scale != NULL;
    rt->tracks_generation = 1;
    rt->custom = 1;
    rt->served = 1;
    rt->scale_spec_path = opt_dup(kjson_get_str(scale, "specReplicasPath"));
    rt->scale_status_path = opt_dup(kjson_get_str(scale, "statusReplicasPath"));
    rt->scale_selector_path = opt_dup(kjson_get_str(scale, "labelSelectorPath"));
    rt->printer_columns = cols ? cJSON_Duplicate(cols, 1) : NULL;
    rt->schema = schema ? cJSON_Duplicate(schema, 1) : NULL;
    if (rt->group && rt->plural)
        rt->store_key = join_key(rt->group, rt->plural);
    if (!rt->group || !rt->version || !rt->plural || !rt->singular || !rt->kind || !rt->list_kind ||
        !rt->crd_name || !rt->store_key || (cols && !rt->printer_columns) ||
        (schema && !rt->schema) ||
        str_list(kjson_get(names, "shortNames"), &rt->short_names) != 0 ||
        str_list(kjson_get(names, "categories"), &rt->categories) != 0) {
        rtype_free(rt);
        return NULL;
    }
    return rt;
}

/* Mark every served type of crd_name unserved; caller holds the write lock. */
static void retire_locked(struct ksim_reg *reg, const char *crd_name)
{
    size_t i;

    for (i = 0; i < reg->n; i++)
        if (reg->types[i]->custom && reg->types[i]->served &&
            strcmp(reg->types[i]->crd_name, crd_name) == 0)
            reg->types[i]->served = 0;
}

static int builtin_clash_locked(struct ksim_reg *reg, const char *store_key)
{
    size_t i;

    for (i = 0; i < reg->n; i++)
        if (!reg->types[i]->custom && strcmp(reg->types[i]->store_key, store_key) == 0)
            return 1;
    return 0;
}

enum kerr ksim_reg_add_crd(struct ksim_reg *reg, const cJSON *crd, struct kerr_info *err)
{
    const cJSON *v;
    struct ksim_rtype *rt;
    enum kerr rc = ksim_reg_crd_validate(crd, err);

    if (rc != KERR_OK)
        return rc;
    pthread_rwlock_wrlock(&reg->lock);
    retire_locked(reg, kjson_get_str(crd, "metadata.name"));
    cJSON_ArrayForEach (v, kjson_get(crd, "spec.versions")) {
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "served")))
            continue;
        rt = rtype_from_crd(crd, v);
        if (rt && builtin_clash_locked(reg, rt->store_key)) {
            rc = kerr_set(err, KERR_CONFLICT, "resource %s is served by kube-sim itself",
                          rt->store_key);
            rtype_free(rt);
            break;
        }
        if (!rt || reg_push(reg, rt) != 0) {
            rtype_free(rt);
            rc = kerr_set(err, KERR_NOMEM, NULL);
            break;
        }
    }
    if (rc != KERR_OK)
        retire_locked(reg, kjson_get_str(crd, "metadata.name"));
    pthread_rwlock_unlock(&reg->lock);
    return rc;
}

void ksim_reg_remove_crd(struct ksim_reg *reg, const char *crd_name)
{
    pthread_rwlock_wrlock(&reg->lock);
    retire_locked(reg, crd_name);
    pthread_rwlock_unlock(&reg->lock);
}
