/*
 * smspec - a pod's spec compared with its StatefulSet's pod template (see smspec.h).
 */
#include "controller/core/smspec.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/kjson.h"

/* A field's value the API server writes when the object leaves it out (JSON text). */
struct dflt {
    const char *key;
    const char *json;
};

static const struct dflt POD_DEFAULTS[] = {
    { "dnsPolicy", "\"ClusterFirst\"" },
    { "restartPolicy", "\"Always\"" },
    { "schedulerName", "\"default-scheduler\"" },
    { "terminationGracePeriodSeconds", "30" },
    { "securityContext", "{}" },
    { "enableServiceLinks", "true" },
    { "preemptionPolicy", "\"PreemptLowerPriority\"" },
    { "serviceAccountName", "\"default\"" },
};

static const struct dflt CONTAINER_DEFAULTS[] = {
    { "terminationMessagePath", "\"/dev/termination-log\"" },
    { "terminationMessagePolicy", "\"File\"" },
    { "imagePullPolicy", "\"Always\"" },
    { "imagePullPolicy", "\"IfNotPresent\"" },
    { "resources", "{}" },
};

/*
 * Pod fields admission, the scheduler and mutating webhooks write whatever the template says
 * (Gardener's resource manager sets schedulerName, the seccomp profile and topology spread
 * constraints of the pods it admits): where a pod runs and with which privileges, never where
 * its sidecar writes or which etcd it reaches.
 */
static const char *const POD_ANY[] = {
    "nodeName",       "tolerations",     "priority",
    "overhead",       "schedulerName",   "securityContext",
    "affinity",       "nodeSelector",    "topologySpreadConstraints",
    "readinessGates", "schedulingGates", "imagePullSecrets",
};

/* Container fields the same writers change (a VerticalPodAutoscaler or a LimitRange sets
 * resources): what a container may use and how it is probed, not what it runs. */
static const char *const CONTAINER_ANY[] = {
    "resources", "securityContext", "livenessProbe", "readinessProbe", "startupProbe",
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

int smspec_why(char *why, size_t size, const char *fmt, ...)
{
    va_list ap;

    if (size) {
        va_start(ap, fmt);
        if (vsnprintf(why, size, fmt, ap) < 0)
            why[0] = '\0';
        va_end(ap);
    }
    return -1;
}

static int in_list(const char *key, const char *const *list, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (strcmp(key, list[i]) == 0)
            return 1;
    }
    return 0;
}

/* v is a default of key in table t. */
static int is_default(const struct dflt *t, size_t n, const char *key, const cJSON *v)
{
    size_t i;

    for (i = 0; i < n; i++) {
        cJSON *d;
        int eq;

        if (strcmp(t[i].key, key) != 0 || !(d = cJSON_Parse(t[i].json)))
            continue;
        eq = cJSON_Compare(d, v, 1);
        cJSON_Delete(d);
        if (eq)
            return 1;
    }
    return 0;
}

/*
 * Field key of template object t and pod object p the same, a field absent on one side
 * standing for its default in table d.
 */
static int same(const cJSON *t, const cJSON *p, const char *key, const struct dflt *d, size_t n)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(t, key),
                *y = cJSON_GetObjectItemCaseSensitive(p, key);

    if (x && y)
        return cJSON_Compare(x, y, 1);
    if (!x && !y)
        return 1;
    return is_default(d, n, key, x ? x : y);
}

static const char *str_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int has_prefix(const char *s, const char *p)
{
    return s && strncmp(s, p, strlen(p)) == 0 && s[strlen(p)];
}

/* Object o has no key outside keys. */
static int keys_in(const cJSON *o, const char *const *keys, size_t n)
{
    const cJSON *f;

    if (!cJSON_IsObject(o))
        return 0;
    cJSON_ArrayForEach (f, o) {
        if (!f->string || !in_list(f->string, keys, n))
            return 0;
    }
    return 1;
}

/* Volume mount m is the service-account token's, as the API server adds it. */
static int token_mount(const cJSON *m)
{
    static const char *const keys[] = { "name", "mountPath", "readOnly" };
    const char *path = str_of(m, "mountPath");

    return keys_in(m, keys, N_OF(keys)) && has_prefix(str_of(m, "name"), SMSPEC_TOKEN_PREFIX) &&
           path && strcmp(path, SMSPEC_TOKEN_PATH) == 0 &&
           cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "readOnly"));
}

/* Volume v is the service-account token's projected volume, as the API server adds it. */
static int token_volume(const cJSON *v)
{
    static const char *const keys[] = { "name", "projected" },
                             *pkeys[] = { "sources", "defaultMode" },
                             *kinds[] = { "serviceAccountToken", "configMap", "downwardAPI" };
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(v, "projected"), *s, *src;

    if (!keys_in(v, keys, N_OF(keys)) || !has_prefix(str_of(v, "name"), SMSPEC_TOKEN_PREFIX) ||
        !keys_in(p, pkeys, N_OF(pkeys)) ||
        !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(p, "sources")))
        return 0;
    cJSON_ArrayForEach (s, cJSON_GetObjectItemCaseSensitive(p, "sources")) {
        if (!keys_in(s, kinds, N_OF(kinds)) || cJSON_GetArraySize(s) != 1)
            return 0;
        src = s->child;
        if (strcmp(src->string, "configMap") == 0 &&
            (!str_of(src, "name") || strcmp(str_of(src, "name"), "kube-root-ca.crt") != 0))
            return 0;
    }
    return 1;
}

/* Container p's mounts, the token's left out, are template container t's. */
static int same_mounts(const cJSON *t, const cJSON *p)
{
    const cJSON *tm = cJSON_GetObjectItemCaseSensitive(t, "volumeMounts"),
                *pm = cJSON_GetObjectItemCaseSensitive(p, "volumeMounts"), *m;
    int i = 0, nt = cJSON_IsArray(tm) ? cJSON_GetArraySize(tm) : 0;

    if ((tm && !cJSON_IsArray(tm)) || (pm && !cJSON_IsArray(pm)))
        return tm && pm && cJSON_Compare(tm, pm, 1);
    cJSON_ArrayForEach (m, pm) {
        if (i < nt && cJSON_Compare(cJSON_GetArrayItem(tm, i), m, 1))
            i++;
        else if (!token_mount(m))
            return 0;
    }
    return i == nt;
}

/* Container p is template container t (both objects): 0, else -1 with *why. */
static int container_differs(const cJSON *t, const cJSON *p, const char *what, char *why,
                             size_t size)
{
    const cJSON *sides[2] = { t, p }, *f;
    const char *name = str_of(t, "name") ? str_of(t, "name") : "";
    int s;

    for (s = 0; s < 2; s++) {
        cJSON_ArrayForEach (f, sides[s]) {
            if (!f->string)
                return smspec_why(why, size, "its %s %s has a field without a name", what, name);
            if (in_list(f->string, CONTAINER_ANY, N_OF(CONTAINER_ANY)))
                continue;
            if (strcmp(f->string, "volumeMounts") == 0
                    ? !same_mounts(t, p)
                    : !same(t, p, f->string, CONTAINER_DEFAULTS, N_OF(CONTAINER_DEFAULTS)))
                return smspec_why(why, size, "its %s %s differs from the template's in %s", what,
                                  name, f->string);
        }
    }
    return 0;
}

/* The containers (key) of pod spec ps are those of template spec ts: 0, else -1 with *why. */
static int containers_differ(const cJSON *ts, const cJSON *ps, const char *key, const char *what,
                             char *why, size_t size)
{
    const cJSON *tl = cJSON_GetObjectItemCaseSensitive(ts, key),
                *pl = cJSON_GetObjectItemCaseSensitive(ps, key);
    int i, nt = cJSON_GetArraySize(tl), np = cJSON_GetArraySize(pl);

    if ((tl && !cJSON_IsArray(tl)) || (pl && !cJSON_IsArray(pl)) || nt != np)
        return smspec_why(why, size, "its %ss are not the template's (%d, the template %d)", what,
                          np, nt);
    for (i = 0; i < nt; i++) {
        const cJSON *t = cJSON_GetArrayItem(tl, i), *p = cJSON_GetArrayItem(pl, i);
        const char *tn = str_of(t, "name"), *pn = str_of(p, "name");

        if (!cJSON_IsObject(t) || !cJSON_IsObject(p) || !tn || !pn || strcmp(tn, pn) != 0)
            return smspec_why(why, size, "its %s %d is not the template's %s", what, i,
                              tn ? tn : "(unnamed)");
        if (container_differs(t, p, what, why, size) < 0)
            return -1;
    }
    return 0;
}

/* The named object in array arr, or NULL. */
static const cJSON *named(const cJSON *arr, const char *name)
{
    const cJSON *o;

    cJSON_ArrayForEach (o, arr) {
        const char *n = str_of(o, "name");

        if (n && name && strcmp(n, name) == 0)
            return o;
    }
    return NULL;
}

/* A volumeClaimTemplate of sts is named name. */
static int claim_template(const cJSON *sts, const char *name)
{
    const cJSON *t;

    cJSON_ArrayForEach (t, kjson_get_arr(sts, "spec.volumeClaimTemplates")) {
        const char *tn = kjson_get_str(t, "metadata.name");

        if (tn && name && strcmp(tn, name) == 0)
            return 1;
    }
    return 0;
}

/* The volumes of pod spec ps against template spec ts of sts: 0, else -1 with *why. */
static int volumes_differ(const cJSON *sts, const cJSON *ts, const cJSON *ps, char *why,
                          size_t size)
{
    static const char *const ckeys[] = { "name", "persistentVolumeClaim" },
                             *pkeys[] = { "claimName", "readOnly" };
    const cJSON *tv = cJSON_GetObjectItemCaseSensitive(ts, "volumes"),
                *pv = cJSON_GetObjectItemCaseSensitive(ps, "volumes"), *v, *c;
    const char *n;

    if ((tv && !cJSON_IsArray(tv)) || (pv && !cJSON_IsArray(pv)))
        return smspec_why(why, size, "its volumes are not a list");
    cJSON_ArrayForEach (v, pv) {
        n = str_of(v, "name");
        if (claim_template(sts, n)) {
            c = cJSON_GetObjectItemCaseSensitive(v, "persistentVolumeClaim");
            if (!keys_in(v, ckeys, N_OF(ckeys)) || !keys_in(c, pkeys, N_OF(pkeys)) ||
                cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "readOnly")))
                return smspec_why(why, size, "its claim volume %s is not the claim as it is", n);
        } else if (!token_volume(v) && !cJSON_Compare(named(tv, n), v, 1)) {
            return smspec_why(why, size, "its volume %s is not the template's",
                              n ? n : "(unnamed)");
        }
        if (named(pv, n) != v)
            return smspec_why(why, size, "its volume %s is there twice", n ? n : "(unnamed)");
    }
    cJSON_ArrayForEach (v, tv) {
        n = str_of(v, "name");
        if (!claim_template(sts, n) && !named(pv, n))
            return smspec_why(why, size, "the template's volume %s is missing",
                              n ? n : "(unnamed)");
    }
    return 0;
}

/* Pod spec field key of ps differs from template spec ts's in a way no default explains. */
static int field_differs(const cJSON *sts, const cJSON *pod, const cJSON *ts, const cJSON *ps,
                         const char *key)
{
    const char *v = str_of(ps, key), *tsa;

    if (strcmp(key, "hostname") == 0)
        return cJSON_GetObjectItemCaseSensitive(ps, key) &&
               (!v ||
                strcmp(v, kjson_get_str(pod, "metadata.name") ? kjson_get_str(pod, "metadata.name")
                                                              : "") != 0);
    if (strcmp(key, "subdomain") == 0)
        return cJSON_GetObjectItemCaseSensitive(ps, key) &&
               (!v || !kjson_get_str(sts, "spec.serviceName") ||
                strcmp(v, kjson_get_str(sts, "spec.serviceName")) != 0);
    if (strcmp(key, "serviceAccount") == 0) {
        if (!cJSON_GetObjectItemCaseSensitive(ps, key))
            return 0;
        tsa = str_of(ts, key) ? str_of(ts, key) : str_of(ts, "serviceAccountName");
        return !v || strcmp(v, tsa ? tsa : "default") != 0;
    }
    if (strcmp(key, "priorityClassName") == 0 && !cJSON_GetObjectItemCaseSensitive(ts, key))
        return 0;
    if (in_list(key, POD_ANY, N_OF(POD_ANY)))
        return 0;
    return !same(ts, ps, key, POD_DEFAULTS, N_OF(POD_DEFAULTS));
}

int smspec_differs(const cJSON *sts, const cJSON *pod, char *why, size_t size)
{
    const cJSON *ts = kjson_get_obj(sts, "spec.template.spec"), *ps = kjson_get_obj(pod, "spec"),
                *sides[2], *f;
    int s;

    if (size)
        why[0] = '\0';
    if (!ts || !ps)
        return smspec_why(why, size, "%s has no pod spec",
                          ts ? "it" : "the StatefulSet's template");
    if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(ps, "ephemeralContainers")) ||
        (cJSON_GetObjectItemCaseSensitive(ps, "ephemeralContainers") &&
         !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(ps, "ephemeralContainers"))))
        return smspec_why(why, size, "it runs an ephemeral container");
    if (containers_differ(ts, ps, "containers", "container", why, size) < 0 ||
        containers_differ(ts, ps, "initContainers", "init container", why, size) < 0 ||
        volumes_differ(sts, ts, ps, why, size) < 0)
        return -1;
    sides[0] = ts;
    sides[1] = ps;
    for (s = 0; s < 2; s++) {
        cJSON_ArrayForEach (f, sides[s]) {
            if (!f->string)
                return smspec_why(why, size, "its spec has a field without a name");
            if (strcmp(f->string, "containers") == 0 || strcmp(f->string, "initContainers") == 0 ||
                strcmp(f->string, "volumes") == 0 || strcmp(f->string, "ephemeralContainers") == 0)
                continue;
            if (field_differs(sts, pod, ts, ps, f->string))
                return smspec_why(why, size, "its spec differs from the template's in %s",
                                  f->string);
        }
    }
    return 0;
}
