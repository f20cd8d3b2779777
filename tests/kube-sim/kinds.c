#include "tests/kube-sim/kinds.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "tests/kube-sim/obj.h"
#include "tests/kube-sim/podval.h"
#include "tests/kube-sim/sel.h"

static int is(const struct ksim_rtype *rt, const char *group, const char *plural)
{
    return !rt->custom && strcmp(rt->group, group) == 0 && strcmp(rt->plural, plural) == 0;
}

static int def_str(cJSON *obj, const char *path, const char *v)
{
    if (kjson_has(obj, path))
        return 0;
    return kjson_set_str(obj, path, v, NULL) == KERR_OK ? 0 : -1;
}

static int def_int(cJSON *obj, const char *path, long v)
{
    if (kjson_has(obj, path))
        return 0;
    return kjson_set_int(obj, path, v, NULL) == KERR_OK ? 0 : -1;
}

static int def_bool(cJSON *obj, const char *path, int v)
{
    if (kjson_has(obj, path))
        return 0;
    return kjson_set_bool(obj, path, v != 0, NULL) == KERR_OK ? 0 : -1;
}

static int default_pod_spec(cJSON *spec)
{
    if (!cJSON_IsObject(spec))
        return 0;
    return def_str(spec, "restartPolicy", "Always") | def_str(spec, "dnsPolicy", "ClusterFirst") |
           def_str(spec, "schedulerName", "default-scheduler") |
           def_int(spec, "terminationGracePeriodSeconds", 30);
}

static int default_service(cJSON *obj)
{
    cJSON *ports = (cJSON *)kjson_get_arr(obj, "spec.ports");
    cJSON *p, *port;
    int rc = def_str(obj, "spec.type", "ClusterIP") | def_str(obj, "spec.sessionAffinity", "None");

    cJSON_ArrayForEach (p, ports) {
        port = cJSON_GetObjectItemCaseSensitive(p, "port");
        rc |= def_str(p, "protocol", "TCP");
        if (cJSON_IsNumber(port))
            rc |= def_int(p, "targetPort", (long)port->valuedouble);
    }
    return rc;
}

/* A DaemonSet's update strategy: RollingUpdate, one unavailable and no surge, unless OnDelete. */
static int default_daemonset(cJSON *obj)
{
    const char *type;
    int rc = def_str(obj, "spec.updateStrategy.type", "RollingUpdate") |
             def_int(obj, "spec.revisionHistoryLimit", 10);

    type = kjson_get_str(obj, "spec.updateStrategy.type");
    if (type && strcmp(type, "RollingUpdate") == 0)
        rc |= def_int(obj, "spec.updateStrategy.rollingUpdate.maxUnavailable", 1) |
              def_int(obj, "spec.updateStrategy.rollingUpdate.maxSurge", 0);
    return rc;
}

static int default_webhooks(cJSON *obj, int mutating)
{
    cJSON *hooks = cJSON_GetObjectItemCaseSensitive(obj, "webhooks");
    cJSON *h, *r;
    int rc = 0;

    cJSON_ArrayForEach (h, hooks) {
        rc |= def_str(h, "failurePolicy", "Fail") | def_str(h, "matchPolicy", "Equivalent") |
              def_int(h, "timeoutSeconds", 10);
        if (!kjson_has(h, "namespaceSelector"))
            rc |= cJSON_AddObjectToObject(h, "namespaceSelector") ? 0 : -1;
        if (!kjson_has(h, "objectSelector"))
            rc |= cJSON_AddObjectToObject(h, "objectSelector") ? 0 : -1;
        if (kjson_has(h, "clientConfig.service"))
            rc |= def_int(h, "clientConfig.service.port", 443);
        if (mutating)
            rc |= def_str(h, "reinvocationPolicy", "Never");
        cJSON_ArrayForEach (r, cJSON_GetObjectItemCaseSensitive(h, "rules")) {
            rc |= def_str(r, "scope", "*");
        }
    }
    return rc;
}

int ksim_kinds_default(const struct ksim_rtype *rt, cJSON *obj)
{
    if (rt->custom)
        return 0;
    if (is(rt, "apps", "statefulsets"))
        return def_int(obj, "spec.replicas", 1) |
               def_str(obj, "spec.podManagementPolicy", "OrderedReady") |
               def_str(obj, "spec.updateStrategy.type", "RollingUpdate") |
               def_int(obj, "spec.revisionHistoryLimit", 10) |
               def_str(obj, "spec.persistentVolumeClaimRetentionPolicy.whenDeleted", "Retain") |
               def_str(obj, "spec.persistentVolumeClaimRetentionPolicy.whenScaled", "Retain") |
               default_pod_spec((cJSON *)kjson_get_obj(obj, "spec.template.spec"));
    if (is(rt, "apps", "deployments"))
        return def_int(obj, "spec.replicas", 1) | def_int(obj, "spec.revisionHistoryLimit", 10) |
               def_int(obj, "spec.progressDeadlineSeconds", 600) |
               def_str(obj, "spec.strategy.type", "RollingUpdate") |
               default_pod_spec((cJSON *)kjson_get_obj(obj, "spec.template.spec"));
    if (is(rt, "apps", "replicasets"))
        return def_int(obj, "spec.replicas", 1) |
               default_pod_spec((cJSON *)kjson_get_obj(obj, "spec.template.spec"));
    if (is(rt, "apps", "daemonsets"))
        return default_daemonset(obj) |
               default_pod_spec((cJSON *)kjson_get_obj(obj, "spec.template.spec"));
    if (is(rt, "", "services"))
        return default_service(obj);
    if (is(rt, "", "secrets"))
        return def_str(obj, "type", "Opaque");
    if (is(rt, "", "pods"))
        return default_pod_spec((cJSON *)kjson_get_obj(obj, "spec"));
    if (is(rt, "", "persistentvolumeclaims"))
        return def_str(obj, "spec.volumeMode", "Filesystem");
    if (is(rt, "batch", "jobs"))
        return def_int(obj, "spec.parallelism", 1) | def_int(obj, "spec.completions", 1) |
               def_int(obj, "spec.backoffLimit", 6) |
               def_str(obj, "spec.completionMode", "NonIndexed") | def_bool(obj, "spec.suspend", 0);
    if (is(rt, "batch", "cronjobs"))
        return def_str(obj, "spec.concurrencyPolicy", "Allow") | def_bool(obj, "spec.suspend", 0) |
               def_int(obj, "spec.successfulJobsHistoryLimit", 3) |
               def_int(obj, "spec.failedJobsHistoryLimit", 1);
    if (is(rt, "admissionregistration.k8s.io", "validatingwebhookconfigurations"))
        return default_webhooks(obj, 0);
    if (is(rt, "admissionregistration.k8s.io", "mutatingwebhookconfigurations"))
        return default_webhooks(obj, 1);
    if (is(rt, "apiextensions.k8s.io", "customresourcedefinitions"))
        return def_str(obj, "spec.conversion.strategy", "None");
    return 0;
}

static int set_status(cJSON *obj, const char *json)
{
    cJSON *st = NULL;

    cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
    if (kjson_parse(json, strlen(json), NULL, &st, NULL, NULL) != KERR_OK)
        return -1;
    return cJSON_AddItemToObject(obj, "status", st) ? 0 : (cJSON_Delete(st), -1);
}

int ksim_kinds_initial_status(const struct ksim_rtype *rt, cJSON *obj)
{
    if (rt->custom) {
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
        return 0;
    }
    if (is(rt, "apps", "statefulsets"))
        return set_status(obj, "{\"replicas\":0,\"availableReplicas\":0}");
    if (is(rt, "apps", "replicasets"))
        return set_status(obj, "{\"replicas\":0}");
    if (is(rt, "apps", "daemonsets"))
        return set_status(obj, "{\"currentNumberScheduled\":0,\"numberMisscheduled\":0,"
                               "\"desiredNumberScheduled\":0,\"numberReady\":0}");
    if (is(rt, "", "namespaces"))
        return set_status(obj, "{\"phase\":\"Active\"}") |
               (kjson_set(obj, "spec.finalizers",
                          cJSON_CreateStringArray((const char *[]){ "kubernetes" }, 1),
                          NULL) == KERR_OK
                    ? 0
                    : -1);
    if (is(rt, "", "services"))
        return set_status(obj, "{\"loadBalancer\":{}}");
    if (is(rt, "", "pods"))
        return set_status(obj, "{\"phase\":\"Pending\",\"qosClass\":\"BestEffort\"}");
    if (is(rt, "", "persistentvolumeclaims"))
        return set_status(obj, "{\"phase\":\"Pending\"}");
    if (is(rt, "policy", "poddisruptionbudgets"))
        return set_status(obj, "{\"disruptionsAllowed\":0,\"currentHealthy\":0,"
                               "\"desiredHealthy\":0,\"expectedPods\":0}");
    if (is(rt, "apiextensions.k8s.io", "customresourcedefinitions"))
        return 0;
    if (rt->has_status)
        return set_status(obj, "{}");
    return 0;
}

static cJSON *condition(const char *type, const char *reason, const char *message)
{
    cJSON *c = cJSON_CreateObject();
    char now[21];

    ksim_obj_now(now);
    if (!c || !cJSON_AddStringToObject(c, "type", type) ||
        !cJSON_AddStringToObject(c, "status", "True") ||
        !cJSON_AddStringToObject(c, "lastTransitionTime", now) ||
        !cJSON_AddStringToObject(c, "reason", reason) ||
        !cJSON_AddStringToObject(c, "message", message)) {
        cJSON_Delete(c);
        return NULL;
    }
    return c;
}

static int crd_status(cJSON *obj)
{
    cJSON *st = cJSON_CreateObject();
    cJSON *conds = cJSON_AddArrayToObject(st, "conditions");
    cJSON *names = cJSON_Duplicate(kjson_get(obj, "spec.names"), 1);
    cJSON *stored = cJSON_AddArrayToObject(st, "storedVersions");
    const cJSON *v;

    if (!st || !conds || !stored || !names ||
        !cJSON_AddItemToArray(conds,
                              condition("NamesAccepted", "NoConflicts", "no conflicts found")) ||
        !cJSON_AddItemToArray(conds, condition("Established", "InitialNamesAccepted",
                                               "the initial names have been accepted")) ||
        !cJSON_AddItemToObject(st, "acceptedNames", names)) {
        cJSON_Delete(names);
        cJSON_Delete(st);
        return -1;
    }
    cJSON_ArrayForEach (v, kjson_get(obj, "spec.versions")) {
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "storage")))
            cJSON_AddItemToArray(stored, cJSON_CreateString(kjson_get_str(v, "name")));
    }
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
    return cJSON_AddItemToObject(obj, "status", st) ? 0 : (cJSON_Delete(st), -1);
}

int ksim_kinds_maintain(const struct ksim_rtype *rt, cJSON *obj)
{
    const char *name = ksim_obj_meta_str(obj, "name");
    cJSON *md, *labels;

    if (is(rt, "", "namespaces") && name) {
        md = ksim_obj_meta(obj);
        labels = cJSON_GetObjectItemCaseSensitive(md, "labels");
        if (!cJSON_IsObject(labels)) {
            cJSON_DeleteItemFromObjectCaseSensitive(md, "labels");
            labels = cJSON_AddObjectToObject(md, "labels");
        }
        if (!labels)
            return -1;
        cJSON_DeleteItemFromObjectCaseSensitive(labels, "kubernetes.io/metadata.name");
        return cJSON_AddStringToObject(labels, "kubernetes.io/metadata.name", name) ? 0 : -1;
    }
    if (is(rt, "apiextensions.k8s.io", "customresourcedefinitions"))
        return crd_status(obj);
    return 0;
}

/* 422 for obj of rt with the field error text "<field>: <detail>". */
static int invalid(const struct ksim_rtype *rt, const cJSON *obj, struct ksim_apierr *e,
                   const char *field, const char *cause, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static int invalid(const struct ksim_rtype *rt, const cJSON *obj, struct ksim_apierr *e,
                   const char *field, const char *cause, const char *fmt, ...)
{
    char detail[1024];
    const char *name = ksim_obj_meta_str(obj, "name");
    va_list ap;
    int n;

    n = snprintf(detail, sizeof(detail), "%s: ", field);
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof(detail))
        vsnprintf(detail + n, sizeof(detail) - (size_t)n, fmt, ap);
    va_end(ap);
    return ksim_apierr_invalid(e, rt->group, rt->kind, name ? name : "", field, cause, detail);
}

static int validate_workload(const struct ksim_rtype *rt, const cJSON *obj, struct ksim_apierr *e)
{
    const cJSON *rep = kjson_get(obj, "spec.replicas");
    const cJSON *selector = kjson_get(obj, "spec.selector");
    const cJSON *tlabels = kjson_get(obj, "spec.template.metadata.labels");
    struct ksim_sel *sel = NULL;
    int ok;

    if (cJSON_IsNumber(rep) && rep->valuedouble < 0)
        return invalid(rt, obj, e, "spec.replicas", "FieldValueInvalid",
                       "Invalid value: %.0f: must be greater than or equal to 0", rep->valuedouble);
    if (!cJSON_IsObject(selector))
        return invalid(rt, obj, e, "spec.selector", "FieldValueRequired", "Required value");
    if (ksim_sel_from_json(selector, 1, &sel, NULL) != KERR_OK)
        return invalid(rt, obj, e, "spec.selector", "FieldValueInvalid",
                       "Invalid value: the selector is malformed");
    ok = !ksim_sel_is_everything(sel) && ksim_sel_matches(sel, tlabels);
    ksim_sel_free(sel);
    if (!ok)
        return invalid(rt, obj, e, "spec.template.metadata.labels", "FieldValueInvalid",
                       "Invalid value: the template labels: `selector` does not match template "
                       "`labels`");
    if (cJSON_GetArraySize(kjson_get(obj, "spec.template.spec.containers")) == 0)
        return invalid(rt, obj, e, "spec.template.spec.containers", "FieldValueRequired",
                       "Required value");
    return 0;
}

static int one_of(const char *v, const char *a, const char *b)
{
    return v && (strcmp(v, a) == 0 || strcmp(v, b) == 0);
}

static int validate_hook(const struct ksim_rtype *rt, const cJSON *obj, const cJSON *h, int i,
                         struct ksim_apierr *e)
{
    const char *name = kjson_get_str(h, "name");
    const char *side = kjson_get_str(h, "sideEffects");
    const char *url = kjson_get_str(h, "clientConfig.url");
    const cJSON *svc = kjson_get(h, "clientConfig.service");
    const cJSON *to = kjson_get(h, "timeoutSeconds");
    const cJSON *v;
    char f[96];
    int versions = 0;

    snprintf(f, sizeof(f), "webhooks[%d].name", i);
    if (!name || !*name)
        return invalid(rt, obj, e, f, "FieldValueRequired", "Required value");
    if (!strchr(name, '.') || !strchr(strchr(name, '.') + 1, '.'))
        return invalid(rt, obj, e, f, "FieldValueInvalid",
                       "Invalid value: \"%s\": should be a domain with at least three segments "
                       "separated by dots",
                       name);
    snprintf(f, sizeof(f), "webhooks[%d].sideEffects", i);
    if (!side)
        return invalid(rt, obj, e, f, "FieldValueRequired",
                       "Required value: must specify one of None, NoneOnDryRun");
    if (!one_of(side, "None", "NoneOnDryRun"))
        return invalid(rt, obj, e, f, "FieldValueNotSupported",
                       "Unsupported value: \"%s\": supported values: \"None\", \"NoneOnDryRun\"",
                       side);
    cJSON_ArrayForEach (v, kjson_get(h, "admissionReviewVersions")) {
        versions += cJSON_IsString(v) && one_of(v->valuestring, "v1", "v1beta1");
    }
    snprintf(f, sizeof(f), "webhooks[%d].admissionReviewVersions", i);
    if (!versions)
        return invalid(rt, obj, e, f, "FieldValueRequired",
                       "Required value: must specify one of v1, v1beta1");
    snprintf(f, sizeof(f), "webhooks[%d].clientConfig", i);
    if (!url == !svc)
        return invalid(rt, obj, e, f, "FieldValueRequired",
                       "Required value: exactly one of url or service is required");
    snprintf(f, sizeof(f), "webhooks[%d].clientConfig.url", i);
    if (url && strncmp(url, "https://", 8) != 0)
        return invalid(rt, obj, e, f, "FieldValueInvalid",
                       "Invalid value: \"%s\": 'https' is the only allowed URL scheme", url);
    snprintf(f, sizeof(f), "webhooks[%d].timeoutSeconds", i);
    if (cJSON_IsNumber(to) && (to->valuedouble < 1 || to->valuedouble > 30))
        return invalid(rt, obj, e, f, "FieldValueInvalid",
                       "Invalid value: %.0f: the timeout value must be between 1 and 30 seconds",
                       to->valuedouble);
    snprintf(f, sizeof(f), "webhooks[%d].failurePolicy", i);
    if (!one_of(kjson_get_str(h, "failurePolicy"), "Fail", "Ignore"))
        return invalid(rt, obj, e, f, "FieldValueNotSupported",
                       "Unsupported value: \"%s\": supported values: \"Fail\", \"Ignore\"",
                       kjson_get_str(h, "failurePolicy") ? kjson_get_str(h, "failurePolicy") : "");
    snprintf(f, sizeof(f), "webhooks[%d].matchPolicy", i);
    if (!one_of(kjson_get_str(h, "matchPolicy"), "Exact", "Equivalent"))
        return invalid(rt, obj, e, f, "FieldValueNotSupported",
                       "Unsupported value: supported values: \"Equivalent\", \"Exact\"");
    return 0;
}

static int validate_webhooks(const struct ksim_rtype *rt, const cJSON *obj, struct ksim_apierr *e)
{
    const cJSON *hooks = cJSON_GetObjectItemCaseSensitive(obj, "webhooks");
    int i, j, n = cJSON_GetArraySize(hooks), code;
    char f[64];

    for (i = 0; i < n; i++) {
        code = validate_hook(rt, obj, cJSON_GetArrayItem(hooks, i), i, e);
        if (code)
            return code;
        for (j = 0; j < i; j++) {
            const char *a = kjson_get_str(cJSON_GetArrayItem(hooks, i), "name");
            const char *b = kjson_get_str(cJSON_GetArrayItem(hooks, j), "name");

            snprintf(f, sizeof(f), "webhooks[%d].name", i);
            if (strcmp(a, b) == 0)
                return invalid(rt, obj, e, f, "FieldValueDuplicate", "Duplicate value: \"%s\"", a);
        }
    }
    return 0;
}

int ksim_kinds_validate(const struct ksim_rtype *rt, const cJSON *obj, struct ksim_apierr *e)
{
    struct kerr_info err;

    if (rt->custom)
        return 0;
    if (is(rt, "apps", "statefulsets") || is(rt, "apps", "deployments") ||
        is(rt, "apps", "replicasets") || is(rt, "apps", "daemonsets"))
        return validate_workload(rt, obj, e);
    if (is(rt, "", "pods"))
        return ksim_podval_validate(rt, obj, e);
    if (is(rt, "admissionregistration.k8s.io", "validatingwebhookconfigurations") ||
        is(rt, "admissionregistration.k8s.io", "mutatingwebhookconfigurations"))
        return validate_webhooks(rt, obj, e);
    if (is(rt, "apiextensions.k8s.io", "customresourcedefinitions") &&
        ksim_reg_crd_validate(obj, &err) != KERR_OK) {
        const char *colon = strchr(err.msg, ':');
        char field[128];

        snprintf(field, sizeof(field), "%.*s", colon ? (int)(colon - err.msg) : 0, err.msg);
        const char *name = ksim_obj_meta_str(obj, "name");

        return ksim_apierr_invalid(e, rt->group, rt->kind, name ? name : "", field,
                                   "FieldValueInvalid", err.msg);
    }
    return 0;
}
