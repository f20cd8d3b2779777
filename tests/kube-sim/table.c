#include "tests/kube-sim/table.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "common/ktime.h"
#include "tests/kube-sim/jpath.h"
#include "tests/kube-sim/sel.h"

enum getter {
    G_NAME,      /* metadata.name */
    G_STR,       /* string at path a ("<none>" when absent) */
    G_INT,       /* integer at path a (0 when absent) */
    G_AGE,       /* HumanDuration since metadata.creationTimestamp */
    G_CREATED,   /* metadata.creationTimestamp as is */
    G_COUNT,     /* entries of the object/array at a plus those at b */
    G_RATIO,     /* "<a>/<b>" integers */
    G_POD_READY, /* ready containers / containers */
    G_POD_RESTARTS,
    G_SVC_PORTS,
    G_SVC_IP,
    G_NONE,      /* always "<none>" */
    G_ROLE,      /* roleRef.kind/roleRef.name */
    G_EVENT_OBJ, /* involvedObject kind/name */
    G_LAST_SEEN, /* age of series.lastObservedTime / lastTimestamp / eventTime */
    G_SELECTOR,  /* spec.selector as a string */
};

struct col {
    const char *group, *plural;
    const char *name, *type;
    int priority;
    enum getter g;
    const char *a, *b;
};

static const struct col cols[] = {
    { "", "pods", "Ready", "string", 0, G_POD_READY, NULL, NULL },
    { "", "pods", "Status", "string", 0, G_STR, "status.phase", NULL },
    { "", "pods", "Restarts", "string", 0, G_POD_RESTARTS, NULL, NULL },
    { "", "pods", "Age", "string", 0, G_AGE, NULL, NULL },
    { "", "pods", "IP", "string", 1, G_STR, "status.podIP", NULL },
    { "", "pods", "Node", "string", 1, G_STR, "spec.nodeName", NULL },
    { "", "namespaces", "Status", "string", 0, G_STR, "status.phase", NULL },
    { "", "namespaces", "Age", "string", 0, G_AGE, NULL, NULL },
    { "", "services", "Type", "string", 0, G_STR, "spec.type", NULL },
    { "", "services", "Cluster-IP", "string", 0, G_SVC_IP, NULL, NULL },
    { "", "services", "External-IP", "string", 0, G_NONE, NULL, NULL },
    { "", "services", "Port(s)", "string", 0, G_SVC_PORTS, NULL, NULL },
    { "", "services", "Age", "string", 0, G_AGE, NULL, NULL },
    { "", "services", "Selector", "string", 1, G_SELECTOR, "spec.selector", NULL },
    { "", "endpoints", "Endpoints", "string", 0, G_NONE, NULL, NULL },
    { "", "endpoints", "Age", "string", 0, G_AGE, NULL, NULL },
    { "", "configmaps", "Data", "integer", 0, G_COUNT, "data", "binaryData" },
    { "", "configmaps", "Age", "string", 0, G_AGE, NULL, NULL },
    { "", "secrets", "Type", "string", 0, G_STR, "type", NULL },
    { "", "secrets", "Data", "integer", 0, G_COUNT, "data", NULL },
    { "", "secrets", "Age", "string", 0, G_AGE, NULL, NULL },
    { "", "serviceaccounts", "Secrets", "integer", 0, G_COUNT, "secrets", NULL },
    { "", "serviceaccounts", "Age", "string", 0, G_AGE, NULL, NULL },
    { "", "persistentvolumeclaims", "Status", "string", 0, G_STR, "status.phase", NULL },
    { "", "persistentvolumeclaims", "Volume", "string", 0, G_STR, "spec.volumeName", NULL },
    { "", "persistentvolumeclaims", "Age", "string", 0, G_AGE, NULL, NULL },
    { "", "events", "Last Seen", "string", 0, G_LAST_SEEN, NULL, NULL },
    { "", "events", "Type", "string", 0, G_STR, "type", NULL },
    { "", "events", "Reason", "string", 0, G_STR, "reason", NULL },
    { "", "events", "Object", "string", 0, G_EVENT_OBJ, NULL, NULL },
    { "", "events", "Message", "string", 0, G_STR, "message", "note" },
    { "apps", "statefulsets", "Ready", "string", 0, G_RATIO, "status.readyReplicas",
      "spec.replicas" },
    { "apps", "statefulsets", "Age", "string", 0, G_AGE, NULL, NULL },
    { "apps", "deployments", "Ready", "string", 0, G_RATIO, "status.readyReplicas",
      "spec.replicas" },
    { "apps", "deployments", "Up-to-date", "integer", 0, G_INT, "status.updatedReplicas", NULL },
    { "apps", "deployments", "Available", "integer", 0, G_INT, "status.availableReplicas", NULL },
    { "apps", "deployments", "Age", "string", 0, G_AGE, NULL, NULL },
    { "apps", "replicasets", "Desired", "integer", 0, G_INT, "spec.replicas", NULL },
    { "apps", "replicasets", "Current", "integer", 0, G_INT, "status.replicas", NULL },
    { "apps", "replicasets", "Ready", "integer", 0, G_INT, "status.readyReplicas", NULL },
    { "apps", "replicasets", "Age", "string", 0, G_AGE, NULL, NULL },
    { "apps", "daemonsets", "Desired", "integer", 0, G_INT, "status.desiredNumberScheduled", NULL },
    { "apps", "daemonsets", "Current", "integer", 0, G_INT, "status.currentNumberScheduled", NULL },
    { "apps", "daemonsets", "Ready", "integer", 0, G_INT, "status.numberReady", NULL },
    { "apps", "daemonsets", "Up-to-date", "integer", 0, G_INT, "status.updatedNumberScheduled",
      NULL },
    { "apps", "daemonsets", "Available", "integer", 0, G_INT, "status.numberAvailable", NULL },
    { "apps", "daemonsets", "Node Selector", "string", 0, G_SELECTOR,
      "spec.template.spec.nodeSelector", NULL },
    { "apps", "daemonsets", "Age", "string", 0, G_AGE, NULL, NULL },
    { "batch", "jobs", "Completions", "string", 0, G_RATIO, "status.succeeded",
      "spec.completions" },
    { "batch", "jobs", "Age", "string", 0, G_AGE, NULL, NULL },
    { "batch", "cronjobs", "Schedule", "string", 0, G_STR, "spec.schedule", NULL },
    { "batch", "cronjobs", "Suspend", "boolean", 0, G_STR, "spec.suspend", NULL },
    { "batch", "cronjobs", "Active", "integer", 0, G_COUNT, "status.active", NULL },
    { "batch", "cronjobs", "Last Schedule", "string", 0, G_STR, "status.lastScheduleTime", NULL },
    { "batch", "cronjobs", "Age", "string", 0, G_AGE, NULL, NULL },
    { "coordination.k8s.io", "leases", "Holder", "string", 0, G_STR, "spec.holderIdentity", NULL },
    { "coordination.k8s.io", "leases", "Age", "string", 0, G_AGE, NULL, NULL },
    { "policy", "poddisruptionbudgets", "Min Available", "string", 0, G_STR, "spec.minAvailable",
      NULL },
    { "policy", "poddisruptionbudgets", "Max Unavailable", "string", 0, G_STR,
      "spec.maxUnavailable", NULL },
    { "policy", "poddisruptionbudgets", "Allowed Disruptions", "integer", 0, G_INT,
      "status.disruptionsAllowed", NULL },
    { "policy", "poddisruptionbudgets", "Age", "string", 0, G_AGE, NULL, NULL },
    { "rbac.authorization.k8s.io", "roles", "Created At", "string", 0, G_CREATED, NULL, NULL },
    { "rbac.authorization.k8s.io", "clusterroles", "Created At", "string", 0, G_CREATED, NULL,
      NULL },
    { "rbac.authorization.k8s.io", "rolebindings", "Role", "string", 0, G_ROLE, NULL, NULL },
    { "rbac.authorization.k8s.io", "rolebindings", "Age", "string", 0, G_AGE, NULL, NULL },
    { "rbac.authorization.k8s.io", "clusterrolebindings", "Role", "string", 0, G_ROLE, NULL, NULL },
    { "rbac.authorization.k8s.io", "clusterrolebindings", "Age", "string", 0, G_AGE, NULL, NULL },
    { "apiextensions.k8s.io", "customresourcedefinitions", "Created At", "date", 0, G_CREATED, NULL,
      NULL },
    { "admissionregistration.k8s.io", "validatingwebhookconfigurations", "Webhooks", "integer", 0,
      G_COUNT, "webhooks", NULL },
    { "admissionregistration.k8s.io", "validatingwebhookconfigurations", "Age", "string", 0, G_AGE,
      NULL, NULL },
    { "admissionregistration.k8s.io", "mutatingwebhookconfigurations", "Webhooks", "integer", 0,
      G_COUNT, "webhooks", NULL },
    { "admissionregistration.k8s.io", "mutatingwebhookconfigurations", "Age", "string", 0, G_AGE,
      NULL, NULL },
};

static const struct col default_age = { "", "", "Age", "date", 0, G_AGE, NULL, NULL };

int ksim_table_wanted(const char *accept)
{
    return accept && strstr(accept, "as=Table") && strstr(accept, "g=meta.k8s.io");
}

enum ksim_table_include ksim_table_include_of(const char *value)
{
    if (value && strcmp(value, "None") == 0)
        return KSIM_INCLUDE_NONE;
    if (value && strcmp(value, "Object") == 0)
        return KSIM_INCLUDE_OBJECT;
    return KSIM_INCLUDE_METADATA;
}

void ksim_table_human_duration(long long s, char *out, size_t size)
{
    long long m = s / 60, h = s / 3600, d = h / 24;

    if (s < -1)
        snprintf(out, size, "<invalid>");
    else if (s < 0)
        snprintf(out, size, "0s");
    else if (s < 120)
        snprintf(out, size, "%llds", s);
    else if (m < 10 && s % 60)
        snprintf(out, size, "%lldm%llds", m, s % 60);
    else if (m < 180)
        snprintf(out, size, "%lldm", m);
    else if (h < 8 && m % 60)
        snprintf(out, size, "%lldh%lldm", h, m % 60);
    else if (h < 48)
        snprintf(out, size, "%lldh", h);
    else if (h < 24 * 8 && h % 24)
        snprintf(out, size, "%lldd%lldh", d, h % 24);
    else if (h < 24 * 365 * 2)
        snprintf(out, size, "%lldd", d);
    else if (h < 24 * 365 * 8 && d % 365)
        snprintf(out, size, "%lldy%lldd", d / 365, d % 365);
    else
        snprintf(out, size, "%lldy", d / 365);
}

static void age_of(const char *ts, char *out, size_t size)
{
    struct timespec t;

    if (!ts || ktime_parse(ts, &t, NULL) != KERR_OK) {
        snprintf(out, size, "<unknown>");
        return;
    }
    ksim_table_human_duration((long long)(time(NULL) - t.tv_sec), out, size);
}

/* A timestamp field, core v1 or events.k8s.io/v1 name; NULL when absent or empty. */
static const char *event_time(const cJSON *obj, const char *core, const char *events)
{
    const char *ts = kjson_get_str(obj, core);

    if (!ts || !*ts)
        ts = kjson_get_str(obj, events);
    return ts && *ts ? ts : NULL;
}

/*
 * When an Event was last seen, as kube-apiserver's printer says: the
 * series' lastObservedTime, else lastTimestamp, else the first time
 * (firstTimestamp, else eventTime).
 */
static const char *event_last_seen(const cJSON *obj)
{
    const char *ts = event_time(obj, "series.lastObservedTime", "series.lastObservedTime");

    if (!ts && cJSON_IsObject(kjson_get(obj, "series")))
        return NULL;
    if (!ts)
        ts = event_time(obj, "lastTimestamp", "deprecatedLastTimestamp");
    if (!ts)
        ts = event_time(obj, "firstTimestamp", "deprecatedFirstTimestamp");
    return ts ? ts : event_time(obj, "eventTime", "eventTime");
}

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

static long long int_at(const cJSON *obj, const char *path)
{
    const cJSON *v = kjson_get(obj, path);

    return cJSON_IsNumber(v) ? (long long)v->valuedouble : 0;
}

static void pod_counts(const cJSON *obj, int restarts, char *out, size_t size)
{
    const cJSON *cs, *c;
    int total = cJSON_GetArraySize(kjson_get(obj, "spec.containers")), ready = 0, rs = 0;

    cs = kjson_get(obj, "status.containerStatuses");
    cJSON_ArrayForEach (c, cs) {
        ready += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "ready"));
        rs += (int)int_at(c, "restartCount");
    }
    if (restarts)
        snprintf(out, size, "%d", rs);
    else
        snprintf(out, size, "%d/%d", ready, total);
}

static void svc_ports(const cJSON *obj, char *out, size_t size)
{
    const cJSON *p;
    size_t n = 0;
    int w;

    out[0] = '\0';
    cJSON_ArrayForEach (p, kjson_get(obj, "spec.ports")) {
        const char *proto = kjson_get_str(p, "protocol");

        w = snprintf(out + n, size - n, "%s%lld/%s", n ? "," : "", int_at(p, "port"),
                     proto ? proto : "TCP");
        if (w < 0 || (size_t)w >= size - n)
            break;
        n += (size_t)w;
    }
    if (!n)
        snprintf(out, size, "<none>");
}

static void selector_text(const cJSON *obj, const char *path, char *out, size_t size)
{
    const cJSON *s = kjson_get(obj, path);
    const cJSON *it;
    size_t n = 0;
    int w;

    out[0] = '\0';
    cJSON_ArrayForEach (it, s) {
        if (!cJSON_IsString(it))
            continue;
        w = snprintf(out + n, size - n, "%s%s=%s", n ? "," : "", it->string, it->valuestring);
        if (w < 0 || (size_t)w >= size - n)
            break;
        n += (size_t)w;
    }
    if (!n)
        snprintf(out, size, "<none>");
}

/* The text of one built-in cell. */
static void cell_text(const struct col *c, const cJSON *obj, char *out, size_t size)
{
    const cJSON *ref;
    char *p;

    switch (c->g) {
    case G_NAME:
        ksim_jpath_text(kjson_get(obj, "metadata.name"), out, size);
        break;
    case G_STR: /* b: the field's name in events.k8s.io/v1 */
        ksim_jpath_text(kjson_get(obj, c->a), out, size);
        if (!*out && c->b)
            ksim_jpath_text(kjson_get(obj, c->b), out, size);
        break;
    case G_INT:
        snprintf(out, size, "%lld", int_at(obj, c->a));
        break;
    case G_AGE:
        age_of(kjson_get_str(obj, "metadata.creationTimestamp"), out, size);
        break;
    case G_CREATED:
        ksim_jpath_text(kjson_get(obj, "metadata.creationTimestamp"), out, size);
        break;
    case G_COUNT:
        snprintf(out, size, "%d",
                 cJSON_GetArraySize(kjson_get(obj, c->a)) +
                     (c->b ? cJSON_GetArraySize(kjson_get(obj, c->b)) : 0));
        break;
    case G_RATIO:
        snprintf(out, size, "%lld/%lld", int_at(obj, c->a), int_at(obj, c->b));
        break;
    case G_POD_READY:
    case G_POD_RESTARTS:
        pod_counts(obj, c->g == G_POD_RESTARTS, out, size);
        break;
    case G_SVC_PORTS:
        svc_ports(obj, out, size);
        break;
    case G_SVC_IP:
        ksim_jpath_text(kjson_get(obj, "spec.clusterIP"), out, size);
        break;
    case G_NONE:
        snprintf(out, size, "<none>");
        break;
    case G_ROLE:
        snprintf(out, size, "%s/%s", or_empty(kjson_get_str(obj, "roleRef.kind")),
                 or_empty(kjson_get_str(obj, "roleRef.name")));
        break;
    case G_EVENT_OBJ:
        ref = kjson_get(obj, "involvedObject") ? kjson_get(obj, "involvedObject")
                                               : kjson_get(obj, "regarding");
        snprintf(out, size, "%s/%s", or_empty(kjson_get_str(ref, "kind")),
                 or_empty(kjson_get_str(ref, "name")));
        for (p = out; *p && *p != '/'; p++)
            *p = (char)tolower((unsigned char)*p);
        break;
    case G_LAST_SEEN:
        age_of(event_last_seen(obj), out, size);
        break;
    case G_SELECTOR:
        selector_text(obj, c->a, out, size);
        break;
    }
}

static cJSON *column_def(const char *name, const char *type, const char *format,
                         const char *description, int priority)
{
    cJSON *c = cJSON_CreateObject();

    if (!c || !cJSON_AddStringToObject(c, "name", name) ||
        !cJSON_AddStringToObject(c, "type", type) ||
        !cJSON_AddStringToObject(c, "format", format) ||
        !cJSON_AddStringToObject(c, "description", description) ||
        !cJSON_AddNumberToObject(c, "priority", priority)) {
        cJSON_Delete(c);
        return NULL;
    }
    return c;
}

/* Events of either group: kube-apiserver prints both with the core Event printer. */
static int is_events(const struct ksim_rtype *rt)
{
    return !rt->custom && strcmp(rt->plural, "events") == 0 &&
           (!*rt->group || strcmp(rt->group, "events.k8s.io") == 0);
}

static int builtin_cols(const struct ksim_rtype *rt, const struct col **out, size_t max)
{
    size_t i, n = 0;
    const char *group = is_events(rt) ? "" : rt->group;

    for (i = 0; i < sizeof(cols) / sizeof(cols[0]) && n < max; i++)
        if (!rt->custom && strcmp(cols[i].group, group) == 0 &&
            strcmp(cols[i].plural, rt->plural) == 0)
            out[n++] = &cols[i];
    if (n == 0 && !rt->printer_columns)
        out[n++] = &default_age;
    return (int)n;
}

static cJSON *definitions(const struct ksim_rtype *rt)
{
    const struct col *bc[16];
    int i, n = builtin_cols(rt, bc, 16);
    cJSON *defs = cJSON_CreateArray(), *c;
    const cJSON *pc;
    /* kubectl get events shows no NAME column unless -o wide, as with kube-apiserver */
    int name_prio = is_events(rt);

    if (!defs || !cJSON_AddItemToArray(defs, column_def("Name", "string", "name",
                                                        "Name must be unique within a namespace.",
                                                        name_prio)))
        goto fail;
    for (i = 0; i < n; i++)
        if (!cJSON_AddItemToArray(defs,
                                  column_def(bc[i]->name, bc[i]->type, "", "", bc[i]->priority)))
            goto fail;
    cJSON_ArrayForEach (pc, rt->printer_columns) {
        const char *desc = kjson_get_str(pc, "description");
        const char *format = kjson_get_str(pc, "format");
        const cJSON *prio = kjson_get(pc, "priority");

        c = column_def(kjson_get_str(pc, "name") ? kjson_get_str(pc, "name") : "",
                       kjson_get_str(pc, "type") ? kjson_get_str(pc, "type") : "string",
                       format ? format : "", desc ? desc : "",
                       cJSON_IsNumber(prio) ? (int)prio->valuedouble : 0);
        if (!cJSON_AddItemToArray(defs, c))
            goto fail;
    }
    return defs;
fail:
    cJSON_Delete(defs);
    return NULL;
}

/* A CRD column cell, converted as apiextensions' table convertor does. */
static cJSON *custom_cell(const cJSON *pc, const cJSON *obj)
{
    const char *type = kjson_get_str(pc, "type");
    const cJSON *v = ksim_jpath_eval(obj, kjson_get_str(pc, "jsonPath"));
    char text[1024];

    if (!v || cJSON_IsNull(v))
        return cJSON_CreateNull();
    if (!type || strcmp(type, "string") == 0) {
        ksim_jpath_text(v, text, sizeof(text));
        return cJSON_CreateString(text);
    }
    if (strcmp(type, "date") == 0) {
        if (!cJSON_IsString(v))
            return cJSON_CreateNull();
        age_of(v->valuestring, text, sizeof(text));
        return cJSON_CreateString(text);
    }
    if (strcmp(type, "integer") == 0 || strcmp(type, "number") == 0)
        return cJSON_IsNumber(v) ? cJSON_CreateNumber(v->valuedouble) : cJSON_CreateNull();
    if (strcmp(type, "boolean") == 0)
        return cJSON_IsBool(v) ? cJSON_CreateBool(cJSON_IsTrue(v)) : cJSON_CreateNull();
    return cJSON_CreateNull();
}

static cJSON *row_object(const cJSON *obj, enum ksim_table_include include)
{
    cJSON *o;
    const cJSON *md;

    if (include == KSIM_INCLUDE_OBJECT)
        return cJSON_Duplicate(obj, 1);
    o = cJSON_CreateObject();
    md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    if (!o || !cJSON_AddStringToObject(o, "kind", "PartialObjectMetadata") ||
        !cJSON_AddStringToObject(o, "apiVersion", "meta.k8s.io/v1") ||
        !cJSON_AddItemToObject(o, "metadata", md ? cJSON_Duplicate(md, 1) : cJSON_CreateObject())) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static cJSON *row(const struct ksim_rtype *rt, const cJSON *obj, enum ksim_table_include include)
{
    const struct col *bc[16];
    int i, n = builtin_cols(rt, bc, 16);
    cJSON *r = cJSON_CreateObject(), *cells;
    const cJSON *pc;
    char text[1024];

    if (!r || !(cells = cJSON_AddArrayToObject(r, "cells")))
        goto fail;
    ksim_jpath_text(kjson_get(obj, "metadata.name"), text, sizeof(text));
    if (!cJSON_AddItemToArray(cells, cJSON_CreateString(text)))
        goto fail;
    for (i = 0; i < n; i++) {
        cell_text(bc[i], obj, text, sizeof(text));
        if (!cJSON_AddItemToArray(cells, strcmp(bc[i]->type, "integer") == 0
                                             ? cJSON_CreateNumber(strtod(text, NULL))
                                             : cJSON_CreateString(text)))
            goto fail;
    }
    cJSON_ArrayForEach (pc, rt->printer_columns) {
        if (!cJSON_AddItemToArray(cells, custom_cell(pc, obj)))
            goto fail;
    }
    if (include != KSIM_INCLUDE_NONE &&
        !cJSON_AddItemToObject(r, "object", row_object(obj, include)))
        goto fail;
    return r;
fail:
    cJSON_Delete(r);
    return NULL;
}

cJSON *ksim_table_build(const struct ksim_rtype *rt, const cJSON *items, const char *rv,
                        enum ksim_table_include include, int with_columns)
{
    cJSON *t = cJSON_CreateObject(), *md, *rows;
    const cJSON *it;

    if (!t || !cJSON_AddStringToObject(t, "kind", "Table") ||
        !cJSON_AddStringToObject(t, "apiVersion", "meta.k8s.io/v1") ||
        !(md = cJSON_AddObjectToObject(t, "metadata")) ||
        (rv && !cJSON_AddStringToObject(md, "resourceVersion", rv)))
        goto fail;
    if (with_columns && !cJSON_AddItemToObject(t, "columnDefinitions", definitions(rt)))
        goto fail;
    if (!(rows = cJSON_AddArrayToObject(t, "rows")))
        goto fail;
    cJSON_ArrayForEach (it, items) {
        if (!cJSON_AddItemToArray(rows, row(rt, it, include)))
            goto fail;
    }
    return t;
fail:
    cJSON_Delete(t);
    return NULL;
}
