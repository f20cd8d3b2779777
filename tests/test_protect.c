/*
 * Tests of webhook/protect: etcd-druid's component-protection procedure, one
 * row per rule and per message. Each row is sent through the whole pure
 * pipeline: an AdmissionReview body is built, decoded, decided with
 * in-memory parent lookups, encoded, and the answer read back.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "tests/support/testutil.h"
#include "webhook/protect.h"
#include "tests/support/whdiff.h"

#define DRUID    "system:serviceaccount:druid:etcd-druid"
#define WARDEN   "system:serviceaccount:warden:warden-controller"
#define GC       "system:serviceaccount:kube-system:generic-garbage-collector"
#define MEMBER   "system:serviceaccount:shoot:etcd-main"
#define PERSON   "alice@example.com"
#define ANN_PROT "druid.gardener.cloud/disable-etcd-component-protection"
#define ANN_RT   "druid.gardener.cloud/disable-etcd-runtime-component-creation"

/* Objects. */
#define LABELS_MANAGED(etcd)                                                           \
    "\"labels\":{\"app.kubernetes.io/managed-by\":\"etcd-druid\",\"app.kubernetes.io/" \
    "part-of\":\"" etcd "\"}"
#define OBJ(name, labels) \
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"" name "\"," labels "}}"
#define MANAGED(name) OBJ(name, LABELS_MANAGED("etcd-main"))
#define DELETING(name)                                        \
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"" name \
    "\",\"deletionTimestamp\":\"2026-01-02T03:04:05Z\"," LABELS_MANAGED("etcd-main") "}}"

/* Parent Etcds: lastOperation and annotations. */
#define ETCD(ann, type, state)                                                          \
    "[{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"uid\":\"uid-1\"," \
    "\"annotations\":{" ann "}},\"status\":{\"lastOperation\":{\"type\":\"" type        \
    "\",\"state\":\"" state "\"}}}]"
#define ETCD_IDLE      ETCD("", "Reconcile", "Succeeded")
#define ETCD_RECONCILE ETCD("", "Reconcile", "Processing")
#define ETCD_DELETING  ETCD("", "Delete", "Processing")
#define NO_ETCD        "[]"
#define LOOKUP_FAILS   "fail"

#define STS(name, labels) \
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"" name "\"," labels "}}"
#define STS_MAIN STS("etcd-main", LABELS_MANAGED("etcd-main"))
#define LIVE_PVC(user)                                                                        \
    "PersistentVolumeClaim shoot/etcd-main-etcd-main-0 cannot be deleted by " user ": it is " \
    "the volume of running member etcd-main-0 of Etcd etcd-main (StatefulSet etcd-main has "  \
    "ordinals [0, 1)), and the pod's next restart would start that member on a new, empty "   \
    "volume. Scale the Etcd down first or, if the volume must go now, allow it: kubectl "     \
    "annotate etcd -n shoot etcd-main etcd-warden.io/allow-scale-down-without-snapshot="      \
    "\"<RFC 3339 expiry, at most 24h ahead> <reason>\" (annotation "                          \
    "etcd-warden.io/allow-scale-down-without-snapshot is not set)"
#define LIVE_PVC_MSG LIVE_PVC(PERSON)

#define CORE         "", "v1"
#define APPS         "apps", "v1"
#define COORD        "coordination.k8s.io", "v1"
#define RBAC         "rbac.authorization.k8s.io", "v1"
#define POLICY       "policy", "v1"

struct row {
    const char *title;
    const char *op;
    const char *group, *version, *kind;
    const char *resource; /* "group/resource" of the request, for scale */
    const char *user;
    const char *object; /* object (UPDATE) and oldObject (UPDATE, DELETE); NULL = absent */
    const char *etcds;  /* JSON array, or LOOKUP_FAILS */
    const char *stses;  /* JSON array (NULL = none) */
    int allowed, code;
    const char *reason;
    const char *message;
    const char *warning; /* NULL = none */
};

#define DENY_MSG(user)                                                                     \
    "changes from service account " user " are disallowed at the moment. Please consider " \
    "disabling component protection by setting annotation "                                \
    "`druid.gardener.cloud/disable-etcd-component-protection` on the parent Etcd resource"

static const struct row rows[] = {
    /* 1. CREATE and CONNECT */
    { "create", "CREATE", CORE, "ConfigMap", "", PERSON, MANAGED("c"), ETCD_IDLE, NULL, 1, 200, "",
      "operation CREATE is allowed", NULL },
    { "connect", "CONNECT", CORE, "Pod", "", PERSON, NULL, ETCD_IDLE, NULL, 1, 200, "",
      "operation CONNECT is allowed", NULL },
    /* 2. decoding */
    { "update without object", "UPDATE", CORE, "ConfigMap", "", PERSON, NULL, ETCD_IDLE, NULL, 0,
      400, "", "[Operation: UPDATE, Code: ERR_DECODE_REQUEST_OBJECT] there is no content to decode",
      NULL },
    { "delete of a string", "DELETE", CORE, "Service", "", PERSON, "\"x\"", ETCD_IDLE, NULL, 0, 400,
      "",
      "[Operation: DELETE, Code: ERR_DECODE_REQUEST_OBJECT] json: cannot unmarshal string into Go "
      "value of type map[string]interface {}",
      NULL },
    { "update of an array", "UPDATE", APPS, "StatefulSet", "", PERSON, "[1]", ETCD_IDLE, NULL, 0,
      400, "",
      "[Operation: UPDATE, Code: ERR_DECODE_REQUEST_OBJECT] json: cannot unmarshal array into Go "
      "value of type map[string]interface {}",
      NULL },
    /* 3. unsupported kinds */
    { "secret", "UPDATE", CORE, "Secret", "", PERSON, MANAGED("s"), ETCD_IDLE, NULL, 1, 200, "",
      "resource: Secret is not supported by EtcdComponents webhook", NULL },
    { "job", "DELETE", "batch", "v1", "Job", "", PERSON, MANAGED("j"), ETCD_IDLE, NULL, 1, 200, "",
      "resource: Job.batch is not supported by EtcdComponents webhook", NULL },
    { "unknown coordination kind", "UPDATE", COORD, "Unknown", "", PERSON, MANAGED("u"), ETCD_IDLE,
      NULL, 1, 200, "",
      "resource: Unknown.coordination.k8s.io is not supported by EtcdComponents "
      "webhook",
      NULL },
    { "scale of a deployment", "UPDATE", "autoscaling", "v1", "Scale", "apps/deployments", PERSON,
      "{}", ETCD_IDLE, NULL, 1, 200, "",
      "resource: Scale.autoscaling is not supported by EtcdComponents webhook", NULL },
    /* 4. not managed */
    { "no labels", "UPDATE", CORE, "ConfigMap", "", PERSON, OBJ("c", "\"x\":1"), ETCD_IDLE, NULL, 1,
      200, "", "resource: shoot/c is not managed by druid, skipping validations", NULL },
    { "other manager", "DELETE", CORE, "ConfigMap", "", PERSON,
      OBJ("c", "\"labels\":{\"app.kubernetes.io/managed-by\":\"helm\"}"), ETCD_IDLE, NULL, 1, 200,
      "", "resource: shoot/c is not managed by druid, skipping validations", NULL },
    { "non-string label reads as no labels", "UPDATE", CORE, "ConfigMap", "", PERSON,
      OBJ("c", "\"labels\":{\"app.kubernetes.io/managed-by\":\"etcd-druid\",\"n\":1}"), ETCD_IDLE,
      NULL, 1, 200, "", "resource: shoot/c is not managed by druid, skipping validations", NULL },
    /* 5. parent Etcd */
    { "no part-of label", "UPDATE", CORE, "ConfigMap", "", PERSON,
      OBJ("c", "\"labels\":{\"app.kubernetes.io/managed-by\":\"etcd-druid\"}"), ETCD_IDLE, NULL, 1,
      200, "", "resource: shoot/c  is not part of any Etcd, skipping validations",
      "cannot determine parent etcd resource, label app.kubernetes.io/part-of not found on "
      "resource: shoot/c" },
    { "parent not found", "UPDATE", CORE, "ConfigMap", "", PERSON, MANAGED("c"), NO_ETCD, NULL, 1,
      200, "", "resource: shoot/c  is not part of any Etcd, skipping validations",
      "parent Etcd etcd-main not found for resource: shoot/c" },
    { "parent lookup fails", "UPDATE", CORE, "ConfigMap", "", PERSON, MANAGED("c"), LOOKUP_FAILS,
      NULL, 0, 500, "", "injected failure", NULL },
    /* 6-7. annotations */
    { "protection disabled", "DELETE", APPS, "StatefulSet", "", PERSON, MANAGED("etcd-main"),
      ETCD("\"" ANN_PROT "\":\"\"", "Reconcile", "Processing"), NULL, 1, 200, "",
      "changes allowed, since Etcd etcd-main has annotation "
      "druid.gardener.cloud/disable-etcd-component-protection",
      NULL },
    { "runtime disabled, service account", "UPDATE", CORE, "ServiceAccount", "", PERSON,
      MANAGED("sa"), ETCD("\"" ANN_RT "\":\"true\"", "Reconcile", "Succeeded"), NULL, 1, 200, "",
      "Etcd etcd-main has runtime component creation disabled, skipping validations for resource "
      "shoot/sa",
      NULL },
    { "runtime disabled, lease", "DELETE", COORD, "Lease", "", PERSON, MANAGED("l"),
      ETCD("\"" ANN_RT "\":\"\"", "Reconcile", "Succeeded"), NULL, 1, 200, "",
      "Etcd etcd-main has runtime component creation disabled, skipping validations for resource "
      "shoot/l",
      NULL },
    { "runtime disabled, configmap stays protected", "UPDATE", CORE, "ConfigMap", "", PERSON,
      MANAGED("c"), ETCD("\"" ANN_RT "\":\"\"", "Reconcile", "Succeeded"), NULL, 0, 403,
      "Forbidden", DENY_MSG(PERSON), NULL },
    /* 8. DELETE while the Etcd is being deleted */
    { "delete during deletion by druid", "DELETE", RBAC, "Role", "", DRUID, MANAGED("r"),
      ETCD_DELETING, NULL, 1, 200, "",
      "deletion of resource by etcd-druid is allowed during deletion of Etcd etcd-main", NULL },
    { "delete during deletion by warden", "DELETE", RBAC, "RoleBinding", "", WARDEN, MANAGED("rb"),
      ETCD_DELETING, NULL, 1, 200, "",
      "deletion of resource by etcd-druid is allowed during deletion of Etcd etcd-main", NULL },
    { "delete during deletion by exempt", "DELETE", POLICY, "PodDisruptionBudget", "", GC,
      MANAGED("pdb"), ETCD("", "Delete", "Error"), NULL, 1, 200, "",
      "deletion of resource by exempt SA " GC " is allowed during deletion of Etcd etcd-main",
      NULL },
    { "delete during deletion by a person", "DELETE", CORE, "Service", "", PERSON, MANAGED("svc"),
      ETCD("", "Delete", "Requeue"), NULL, 0, 403, "Forbidden",
      "no external intervention allowed during ongoing deletion of Etcd etcd-main by etcd-druid",
      NULL },
    { "update during deletion is judged as an update", "UPDATE", CORE, "Service", "", GC,
      MANAGED("svc"), ETCD_DELETING, NULL, 1, 200, "",
      "operations on resources by exempt service account " GC " are allowed", NULL },
    { "delete after deletion finished", "DELETE", CORE, "Service", "", PERSON, MANAGED("svc"),
      ETCD("", "Delete", "Succeeded"), NULL, 0, 403, "Forbidden", DENY_MSG(PERSON), NULL },
    /* 9. updates */
    { "druid always", "UPDATE", APPS, "StatefulSet", "", DRUID, MANAGED("etcd-main"),
      ETCD_RECONCILE, NULL, 1, 200, "", "update of managed resources by etcd-druid is allowed",
      NULL },
    { "warden-controller always", "DELETE", CORE, "ConfigMap", "", WARDEN, MANAGED("c"), ETCD_IDLE,
      NULL, 1, 200, "", "update of managed resources by etcd-druid is allowed", NULL },
    { "member renews its lease", "UPDATE", COORD, "Lease", "", MEMBER, MANAGED("etcd-main-0"),
      ETCD_RECONCILE, NULL, 1, 200, "", "lease resource can be freely updated by etcd members",
      NULL },
    { "member name is trimmed", "DELETE", COORD, "Lease", "", " " MEMBER "\t", MANAGED("l"),
      ETCD_IDLE, NULL, 1, 200, "", "lease resource can be freely updated by etcd members", NULL },
    { "member of another etcd", "UPDATE", COORD, "Lease", "", "system:serviceaccount:shoot:etcd-x",
      MANAGED("l"), ETCD_IDLE, NULL, 0, 403, "Forbidden",
      DENY_MSG("system:serviceaccount:shoot:etcd-x"), NULL },
    { "member and a configmap", "UPDATE", CORE, "ConfigMap", "", MEMBER, MANAGED("c"), ETCD_IDLE,
      NULL, 0, 403, "Forbidden", DENY_MSG(MEMBER), NULL },
    { "exempt while idle", "UPDATE", CORE, "ConfigMap", "", GC, MANAGED("c"), ETCD_IDLE, NULL, 1,
      200, "", "operations on resources by exempt service account " GC " are allowed", NULL },
    { "exempt during reconcile, deleting object", "UPDATE", CORE, "ConfigMap", "", GC,
      DELETING("c"), ETCD("", "Reconcile", "Error"), NULL, 1, 200, "",
      "deletion of resource by exempt service account " GC " is allowed during ongoing "
      "reconciliation of Etcd etcd-main, since deletion timestamp is set on the resource",
      NULL },
    { "exempt during reconcile", "DELETE", CORE, "ConfigMap", "", GC, MANAGED("c"),
      ETCD("", "Reconcile", "Requeue"), NULL, 0, 403, "Forbidden", DENY_MSG(GC), NULL },
    { "exempt is an exact match", "UPDATE", CORE, "ConfigMap", "", GC " ", MANAGED("c"), ETCD_IDLE,
      NULL, 0, 403, "Forbidden", DENY_MSG(GC " "), NULL },
    { "a person", "UPDATE", APPS, "StatefulSet", "", PERSON, MANAGED("etcd-main"), ETCD_IDLE, NULL,
      0, 403, "Forbidden", DENY_MSG(PERSON), NULL },
    { "reconciler is an exact match", "UPDATE", APPS, "StatefulSet", "", DRUID "x",
      MANAGED("etcd-main"), ETCD_IDLE, NULL, 0, 403, "Forbidden", DENY_MSG(DRUID "x"), NULL },
    /* scale subresource: judged by the StatefulSet */
    { "scale by a person", "UPDATE", "autoscaling", "v1", "Scale", "apps/statefulsets", PERSON,
      "{\"spec\":{\"replicas\":0}}", ETCD_IDLE, "[" STS_MAIN "]", 0, 403, "Forbidden",
      DENY_MSG(PERSON), NULL },
    { "scale by druid", "UPDATE", "autoscaling", "v1", "Scale", "apps/statefulsets", DRUID, "{}",
      ETCD_RECONCILE, "[" STS_MAIN "]", 1, 200, "",
      "update of managed resources by etcd-druid is allowed", NULL },
    { "scale of a missing statefulset", "UPDATE", "autoscaling", "v1", "Scale", "apps/statefulsets",
      PERSON, "{}", ETCD_IDLE, "[]", 0, 500, "",
      "[Operation: UPDATE, Code: ERR_GET_SCALE_SUBRESOURCE_PARENT] statefulsets.apps "
      "\"etcd-main\" not found",
      NULL },
    { "scale of an unmanaged statefulset", "UPDATE", "autoscaling", "v1", "Scale",
      "apps/statefulsets", PERSON, "{}", ETCD_IDLE, "[" STS("etcd-main", "\"x\":1") "]", 1, 200, "",
      "resource: shoot/etcd-main is not managed by druid, skipping validations", NULL },
    /* PVC DELETE: judged by the one matching StatefulSet */
    { "pvc by a person", "DELETE", CORE, "PersistentVolumeClaim", "", PERSON,
      MANAGED("etcd-main-etcd-main-0"), ETCD_IDLE, "[" STS_MAIN "]", 0, 403, "Forbidden",
      LIVE_PVC_MSG, NULL },
    /* without labels (no objectSelector since PVC UPDATE is registered): by name or owner */
    { "pvc without labels", "DELETE", CORE, "PersistentVolumeClaim", "", PERSON,
      OBJ("data-0", "\"labels\":{}"), ETCD_IDLE, "[" STS_MAIN "]", 1, 200, "",
      "resource: PersistentVolumeClaim is not supported by EtcdComponents webhook", NULL },
    { "pvc by name without labels", "DELETE", CORE, "PersistentVolumeClaim", "", PERSON,
      OBJ("etcd-main-etcd-main-0", "\"labels\":{}"), ETCD_IDLE, "[" STS_MAIN "]", 0, 403,
      "Forbidden", LIVE_PVC_MSG, NULL },
    { "pvc by name, relabelled", "DELETE", CORE, "PersistentVolumeClaim", "", PERSON,
      OBJ("data-etcd-main-12", "\"labels\":{\"x\":\"y\"}"), ETCD_IDLE, "[" STS_MAIN "]", 0, 403,
      "Forbidden", DENY_MSG(PERSON), NULL },
    { "pvc by name of an unmanaged statefulset", "DELETE", CORE, "PersistentVolumeClaim", "",
      PERSON, OBJ("data-etcd-main-0", "\"labels\":{\"x\":\"y\"}"), ETCD_IDLE,
      "[" STS("etcd-main", "\"x\":1") "]", 1, 200, "",
      "resource: PersistentVolumeClaim is not supported by EtcdComponents webhook", NULL },
    { "pvc by name of no statefulset", "DELETE", CORE, "PersistentVolumeClaim", "", PERSON,
      OBJ("data-etcd-b-0", "\"labels\":{\"x\":\"y\"}"), ETCD_IDLE, "[" STS_MAIN "]", 1, 200, "",
      "resource: PersistentVolumeClaim is not supported by EtcdComponents webhook", NULL },
    { "pvc by name owned by the statefulset", "DELETE", CORE, "PersistentVolumeClaim", "", PERSON,
      "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"scratch\",\"ownerReferences\":[{"
      "\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"name\":\"etcd-main\"}]}}",
      ETCD_IDLE, "[" STS_MAIN "]", 0, 403, "Forbidden", DENY_MSG(PERSON), NULL },
    { "pvc by name with protection disabled", "DELETE", CORE, "PersistentVolumeClaim", "", PERSON,
      OBJ("etcd-main-etcd-main-0", "\"labels\":{}"),
      ETCD("\"" ANN_PROT "\":\"\"", "Reconcile", "Succeeded"), "[" STS_MAIN "]", 0, 403,
      "Forbidden", LIVE_PVC_MSG, NULL },
    /* issue 30: member 0 is live (a StatefulSet without spec.replicas has 1); ordinal 1 is not */
    { "pvc of a live member by etcd-druid", "DELETE", CORE, "PersistentVolumeClaim", "", DRUID,
      MANAGED("etcd-main-etcd-main-0"), ETCD_IDLE, "[" STS_MAIN "]", 0, 403, "Forbidden",
      LIVE_PVC(DRUID), NULL },
    { "pvc by name past the ordinals, protection disabled", "DELETE", CORE, "PersistentVolumeClaim",
      "", PERSON, OBJ("etcd-main-etcd-main-1", "\"labels\":{}"),
      ETCD("\"" ANN_PROT "\":\"\"", "Reconcile", "Succeeded"), "[" STS_MAIN "]", 1, 200, "",
      "changes allowed, since Etcd etcd-main has annotation " ANN_PROT, NULL },
    /* PVC UPDATE: only a change of managed-by or part-of is judged (on the old object) */
    { "pvc update keeping its labels", "UPDATE", CORE, "PersistentVolumeClaim", "", PERSON,
      MANAGED("etcd-main-etcd-main-0"), ETCD_IDLE, "[" STS_MAIN "]", 1, 200, "",
      "update of PersistentVolumeClaim shoot/etcd-main allowed", NULL },
    { "pvc of no statefulset", "DELETE", CORE, "PersistentVolumeClaim", "", PERSON,
      OBJ("data-0", "\"labels\":{\"app\":\"other\"}"), ETCD_IDLE, "[" STS_MAIN "]", 1, 200, "",
      "resource: PersistentVolumeClaim is not supported by EtcdComponents webhook", NULL },
    { "pvc of two statefulsets", "DELETE", CORE, "PersistentVolumeClaim", "", PERSON,
      OBJ("data-0", "\"labels\":{\"app.kubernetes.io/managed-by\":\"etcd-druid\"}"), ETCD_IDLE,
      "[" STS_MAIN "," STS("etcd-b", LABELS_MANAGED("etcd-b")) "]", 0, 500, "",
      "[Operation: DELETE, Code: ERR_TOO_MANY_MATCHING_STATEFULSETS] found 2 StatefulSets "
      "matching the labels of resource shoot/data-0, expected one",
      NULL },
    { "pvc by exempt while the statefulset is deleted", "DELETE", CORE, "PersistentVolumeClaim", "",
      GC, MANAGED("data-0"), ETCD_RECONCILE,
      "[{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"deletionTimestamp\":"
      "\"2026-01-02T03:04:05.5+01:00\"," LABELS_MANAGED("etcd-main") "}}]",
      1, 200, "",
      "deletion of resource by exempt service account " GC " is allowed during ongoing "
      "reconciliation of Etcd etcd-main, since deletion timestamp is set on the resource",
      NULL },
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

static const char *const reconcilers[] = { DRUID, WARDEN };
static const char *const exempt[] = { GC };

/* An AdmissionReview body for a row. */
static char *review_body(const struct row *t)
{
    cJSON *root = cJSON_CreateObject(), *req, *k, *obj;
    char resgroup[64] = "", *slash, *text;
    const char *resname = "";

    cJSON_AddStringToObject(root, "apiVersion", "admission.k8s.io/v1");
    cJSON_AddStringToObject(root, "kind", "AdmissionReview");
    req = cJSON_AddObjectToObject(root, "request");
    cJSON_AddStringToObject(req, "uid", "0000-1111");
    k = cJSON_AddObjectToObject(req, "kind");
    cJSON_AddStringToObject(k, "group", t->group);
    cJSON_AddStringToObject(k, "version", t->version);
    cJSON_AddStringToObject(k, "kind", t->kind);
    snprintf(resgroup, sizeof(resgroup), "%s", t->resource);
    slash = strchr(resgroup, '/');
    if (slash) {
        *slash = '\0';
        resname = slash + 1;
    }
    k = cJSON_AddObjectToObject(req, "resource");
    cJSON_AddStringToObject(k, "group", resgroup);
    cJSON_AddStringToObject(k, "version", "v1");
    cJSON_AddStringToObject(k, "resource", resname);
    cJSON_AddStringToObject(req, "name", "etcd-main");
    cJSON_AddStringToObject(req, "namespace", "shoot");
    cJSON_AddStringToObject(req, "operation", t->op);
    cJSON_AddObjectToObject(req, "userInfo");
    cJSON_AddStringToObject(cJSON_GetObjectItem(req, "userInfo"), "username", t->user);
    if (t->object && strcmp(t->op, "DELETE") != 0) {
        obj = cJSON_Parse(t->object);
        cr_assert_not_null(obj, "row object does not parse: %s", t->object);
        cJSON_AddItemToObject(req, "object", obj);
    }
    if (t->object && strcmp(t->op, "CREATE") != 0)
        cJSON_AddItemToObject(req, "oldObject", cJSON_Parse(t->object));
    text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}

static cJSON *decide_row(const struct row *t, int *calls)
{
    struct protect_config cfg = { reconcilers, 2, exempt, 1, NULL, NULL, 0, NULL };
    struct review_req req;
    struct review_resp resp;
    struct lookup_mem mem = { 0 };
    struct lookup lk;
    struct kerr_info err;
    cJSON *etcds = NULL, *stses = NULL, *doc = NULL;
    char *body = review_body(t), *out = NULL;
    size_t len = 0;

    if (strcmp(t->etcds, LOOKUP_FAILS) == 0)
        mem.fail = KERR_API;
    else
        etcds = cJSON_Parse(t->etcds);
    stses = t->stses ? cJSON_Parse(t->stses) : NULL;
    mem.etcds = etcds;
    mem.stses = stses;
    lookup_mem_bind(&mem, &lk);
    review_req_init(&req);
    review_resp_init(&resp);
    cr_assert_eq(review_req_decode(&req, body, strlen(body), &err), KERR_OK, "%s", err.msg);
    whdiff_same(&cfg, &mem, WH_HOOK_COMPONENTS, body);
    cr_assert_eq(protect_decide(&cfg, &lk, &req, &resp, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(review_encode(&req, &resp, &out, &len, &err), KERR_OK);
    cr_assert_eq(kjson_parse(out, len, NULL, &doc, NULL, NULL), KERR_OK);
    *calls = mem.calls;
    free(out);
    free(body);
    review_resp_release(&resp);
    review_req_release(&req);
    cJSON_Delete(etcds);
    cJSON_Delete(stses);
    return doc;
}

ParameterizedTestParameters(protect, rows)
{
    static size_t idx[NROWS];

    return testutil_row_params(idx, NROWS);
}

ParameterizedTest(size_t *i, protect, rows)
{
    const struct row *t = &rows[*i];
    const cJSON *warnings;
    const char *reason, *warning;
    cJSON *doc;
    bool allowed = false;
    int64_t code = 0;
    int calls = 0;

    doc = decide_row(t, &calls);
    cr_assert_eq(kjson_get_bool(doc, "response.allowed", &allowed), KERR_OK);
    cr_assert_eq(kjson_get_int64(doc, "response.status.code", &code), KERR_OK);
    cr_expect_str_eq(kjson_get_str(doc, "response.uid"), "0000-1111", "%s", t->title);
    cr_expect_eq(allowed, t->allowed != 0, "%s: allowed", t->title);
    cr_expect_eq(code, t->code, "%s: code %lld", t->title, (long long)code);
    reason = kjson_get_str(doc, "response.status.reason");
    cr_expect_str_eq(reason ? reason : "", t->reason, "%s: reason", t->title);
    cr_expect_str_eq(kjson_get_str(doc, "response.status.message"), t->message, "%s", t->title);
    warnings = kjson_get_arr(doc, "response.warnings");
    warning = cJSON_IsString(cJSON_GetArrayItem(warnings, 0))
                  ? cJSON_GetArrayItem(warnings, 0)->valuestring
                  : NULL;
    if (t->warning)
        cr_expect_str_eq(warning ? warning : "(none)", t->warning, "%s: warning", t->title);
    else
        cr_expect_null(warnings, "%s: unexpected warnings", t->title);
    /* a PVC by name: one lookup per StatefulSet name its name allows */
    cr_expect_leq(calls, strstr(t->title, "pvc by name") ? 4 : 2, "%s: %d lookups", t->title,
                  calls);
    cJSON_Delete(doc);
}

/* Unsupported and unmanaged objects never reach the lookups. */
Test(protect, no_lookup_for_unmanaged_objects)
{
    size_t i;
    int calls;
    cJSON *doc;

    for (i = 0; i < NROWS; i++) {
        if (!strstr(rows[i].message, "not managed by druid") || strstr(rows[i].resource, "/"))
            continue;
        doc = decide_row(&rows[i], &calls);
        cr_expect_eq(calls, 0, "%s", rows[i].title);
        cJSON_Delete(doc);
    }
}

Test(protect, user_in)
{
    cr_expect(protect_user_in(DRUID, reconcilers, 2));
    cr_expect(protect_user_in(WARDEN, reconcilers, 2));
    cr_expect_not(protect_user_in(PERSON, reconcilers, 2));
    cr_expect_not(protect_user_in(DRUID, reconcilers, 0));
}
