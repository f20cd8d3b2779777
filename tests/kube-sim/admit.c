#include "tests/kube-sim/admit.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto.h"
#include "common/jpatch.h"
#include "common/kjson.h"
#include "common/log.h"
#include "common/tlsx.h"
#include "tests/kube-sim/hook.h"
#include "tests/kube-sim/obj.h"
#include "tests/kube-sim/sel.h"

#define MAX_PARALLEL 32

static int contains(const cJSON *list, const char *v)
{
    const cJSON *it;

    cJSON_ArrayForEach (it, list) {
        if (cJSON_IsString(it) &&
            (strcmp(it->valuestring, "*") == 0 || strcmp(it->valuestring, v) == 0))
            return 1;
    }
    return 0;
}

static int resource_matches(const cJSON *resources, const char *plural, const char *sub)
{
    const cJSON *it;
    const char *slash;
    size_t rlen;
    int res_ok, sub_ok;

    cJSON_ArrayForEach (it, resources) {
        if (!cJSON_IsString(it))
            continue;
        slash = strchr(it->valuestring, '/');
        rlen = slash ? (size_t)(slash - it->valuestring) : strlen(it->valuestring);
        res_ok = (rlen == 1 && it->valuestring[0] == '*') ||
                 (strlen(plural) == rlen && strncmp(it->valuestring, plural, rlen) == 0);
        sub_ok = slash ? (strcmp(slash + 1, "*") == 0 || strcmp(slash + 1, sub) == 0) : !*sub;
        if (res_ok && sub_ok)
            return 1;
    }
    return 0;
}

static int scope_matches(const char *scope, const struct ksim_admit_attrs *a)
{
    int is_ns = !a->rt->custom && !*a->rt->group && strcmp(a->rt->plural, "namespaces") == 0;

    if (!scope || strcmp(scope, "*") == 0)
        return 1;
    if (strcmp(scope, "Namespaced") == 0)
        return !is_ns && *a->ns;
    if (strcmp(scope, "Cluster") == 0)
        return is_ns || !*a->ns;
    return 0;
}

/* Other served versions of the request's resource (matchPolicy Equivalent). */
struct versions {
    const char *store_key;
    const char *v[8];
    size_t n;
};

static void collect_versions(const struct ksim_rtype *rt, void *arg)
{
    struct versions *vs = arg;

    if (strcmp(rt->store_key, vs->store_key) == 0 && vs->n < 8)
        vs->v[vs->n++] = rt->version;
}

static int rule_matches(struct ksim_api *api, const cJSON *rule, const struct ksim_admit_attrs *a,
                        int equivalent)
{
    struct versions vs = { a->rt->store_key, { 0 }, 0 };
    size_t i;

    if (!contains(kjson_get(rule, "operations"), a->operation) ||
        !contains(kjson_get(rule, "apiGroups"), a->rt->group) ||
        !resource_matches(kjson_get(rule, "resources"), a->rt->plural, a->sub) ||
        !scope_matches(kjson_get_str(rule, "scope"), a))
        return 0;
    if (contains(kjson_get(rule, "apiVersions"), a->rt->version))
        return 1;
    if (!equivalent)
        return 0;
    ksim_reg_each(api->reg, collect_versions, &vs);
    for (i = 0; i < vs.n; i++)
        if (contains(kjson_get(rule, "apiVersions"), vs.v[i]))
            return 1;
    return 0;
}

static int selector_matches(const cJSON *selector, const cJSON *labels)
{
    struct ksim_sel *sel = NULL;
    int m;

    if (ksim_sel_from_json(selector, 0, &sel, NULL) != KERR_OK)
        return -1;
    m = ksim_sel_matches(sel, labels);
    ksim_sel_free(sel);
    return m;
}

int ksim_admit_matches(struct ksim_api *api, const cJSON *webhook, const struct ksim_admit_attrs *a,
                       const cJSON *obj, const cJSON *ns_labels)
{
    const char *policy = kjson_get_str(webhook, "matchPolicy");
    int equivalent = !policy || strcmp(policy, "Equivalent") == 0;
    const cJSON *rule, *osel = kjson_get(webhook, "objectSelector");
    int any = 0;

    cJSON_ArrayForEach (rule, kjson_get(webhook, "rules")) {
        any |= rule_matches(api, rule, a, equivalent);
    }
    if (!any)
        return 0;
    if (ns_labels && selector_matches(kjson_get(webhook, "namespaceSelector"), ns_labels) != 1)
        return 0;
    if (selector_matches(osel, obj ? ksim_obj_labels(obj) : NULL) == 1)
        return 1;
    return a->old && selector_matches(osel, ksim_obj_labels(a->old)) == 1;
}

/* The labels namespaceSelector is evaluated on; *skip when it does not apply. */
static cJSON *namespace_labels(struct ksim_api *api, const struct ksim_admit_attrs *a,
                               const cJSON *obj, int *skip)
{
    const struct ksim_rtype *nsrt;
    const cJSON *src = obj ? obj : a->old;
    cJSON *ns = NULL, *labels;

    *skip = 0;
    if (!a->rt->custom && !*a->rt->group && strcmp(a->rt->plural, "namespaces") == 0) {
        labels = src ? cJSON_Duplicate(ksim_obj_labels(src), 1) : NULL;
        return labels ? labels : cJSON_CreateObject();
    }
    if (!*a->ns) {
        *skip = 1;
        return NULL;
    }
    nsrt = ksim_reg_find(api->reg, "", "v1", "namespaces");
    if (nsrt && ksim_store_get(api->store, nsrt->store_key, NULL, a->ns, &ns, NULL) == KERR_OK) {
        labels = cJSON_Duplicate(ksim_obj_labels(ns), 1);
        cJSON_Delete(ns);
        return labels ? labels : cJSON_CreateObject();
    }
    return cJSON_CreateObject();
}

static cJSON *gvk(const char *group, const char *version, const char *kkey, const char *kind)
{
    cJSON *o = cJSON_CreateObject();

    if (!o || !cJSON_AddStringToObject(o, "group", group) ||
        !cJSON_AddStringToObject(o, "version", version) ||
        !cJSON_AddStringToObject(o, kkey, kind)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static cJSON *user_info(const struct ksim_user *u)
{
    cJSON *o = cJSON_CreateObject(), *g;
    size_t i;

    if (!o || !cJSON_AddStringToObject(o, "username", u ? u->name : "") ||
        (u && u->uid && *u->uid && !cJSON_AddStringToObject(o, "uid", u->uid)) ||
        !(g = cJSON_AddArrayToObject(o, "groups"))) {
        cJSON_Delete(o);
        return NULL;
    }
    for (i = 0; u && i < u->ngroups; i++)
        cJSON_AddItemToArray(g, cJSON_CreateString(u->groups[i]));
    return o;
}

static int add_dup(cJSON *to, const char *key, const cJSON *v)
{
    cJSON *c = v ? cJSON_Duplicate(v, 1) : cJSON_CreateNull();

    return c && cJSON_AddItemToObject(to, key, c) ? 0 : (cJSON_Delete(c), -1);
}

/* The AdmissionReview for one call; uid receives the request uid. */
static cJSON *review(const struct ksim_admit_attrs *a, const cJSON *obj, const char *version,
                     char uid[CRYPTO_UUID_LEN + 1])
{
    cJSON *r = cJSON_CreateObject(), *q;
    const char *g = a->scale_kind ? "autoscaling" : a->rt->group;
    const char *v = a->scale_kind ? "v1" : a->rt->version;
    const char *k = a->scale_kind ? "Scale" : a->rt->kind;
    char av[64];

    snprintf(av, sizeof(av), "admission.k8s.io/%s", version);
    if (crypto_uuid4(uid, NULL) != KERR_OK || !r ||
        !cJSON_AddStringToObject(r, "kind", "AdmissionReview") ||
        !cJSON_AddStringToObject(r, "apiVersion", av) ||
        !(q = cJSON_AddObjectToObject(r, "request")) || !cJSON_AddStringToObject(q, "uid", uid) ||
        !cJSON_AddItemToObject(q, "kind", gvk(g, v, "kind", k)) ||
        !cJSON_AddItemToObject(q, "resource",
                               gvk(a->rt->group, a->rt->version, "resource", a->rt->plural)) ||
        (*a->sub && !cJSON_AddStringToObject(q, "subResource", a->sub)) ||
        !cJSON_AddItemToObject(q, "requestKind", gvk(g, v, "kind", k)) ||
        !cJSON_AddItemToObject(q, "requestResource",
                               gvk(a->rt->group, a->rt->version, "resource", a->rt->plural)) ||
        (*a->sub && !cJSON_AddStringToObject(q, "requestSubResource", a->sub)) ||
        (a->name && *a->name && !cJSON_AddStringToObject(q, "name", a->name)) ||
        (*a->ns && !cJSON_AddStringToObject(q, "namespace", a->ns)) ||
        !cJSON_AddStringToObject(q, "operation", a->operation) ||
        !cJSON_AddItemToObject(q, "userInfo", user_info(a->user)) ||
        add_dup(q, "object", obj) != 0 || add_dup(q, "oldObject", a->old) != 0 ||
        !cJSON_AddBoolToObject(q, "dryRun", a->dry_run) || add_dup(q, "options", a->options) != 0) {
        cJSON_Delete(r);
        return NULL;
    }
    return r;
}

/* The outcome of one webhook call. */
struct outcome {
    int failed;           /* the call failed (failurePolicy decides) */
    char error[1536];     /* why it failed */
    int denied;           /* allowed == false */
    struct ksim_apierr e; /* the denial */
    cJSON *patch;         /* OWNS: a JSON patch (mutating) */
    cJSON *warnings;      /* OWNS: array of strings */
};

static void outcome_release(struct outcome *o)
{
    cJSON_Delete(o->patch);
    cJSON_Delete(o->warnings);
    o->patch = o->warnings = NULL;
}

static const char *pick_version(const cJSON *webhook)
{
    const cJSON *it;

    cJSON_ArrayForEach (it, kjson_get(webhook, "admissionReviewVersions")) {
        if (cJSON_IsString(it) &&
            (strcmp(it->valuestring, "v1") == 0 || strcmp(it->valuestring, "v1beta1") == 0))
            return it->valuestring;
    }
    return NULL;
}

/* Denial as webhookerrors.ToStatusErr builds it. */
static void denial(struct outcome *o, const char *name, const cJSON *status)
{
    char msg[sizeof(o->e.message)];
    const char *m = kjson_get_str(status, "message"), *r = kjson_get_str(status, "reason");

    ksim_apierr_from_status(&o->e, status, 400);
    if (o->e.code < 400)
        o->e.code = 400;
    if (m && *m)
        snprintf(msg, sizeof(msg), "admission webhook \"%s\" denied the request: %s", name, m);
    else if (r && *r)
        snprintf(msg, sizeof(msg), "admission webhook \"%s\" denied the request: %s", name, r);
    else
        snprintf(msg, sizeof(msg),
                 "admission webhook \"%s\" denied the request without explanation", name);
    snprintf(o->e.message, sizeof(o->e.message), "%s", msg);
    o->denied = 1;
}

/* The response of a well-formed AdmissionReview answer for uid, or NULL with o->error set. */
static const cJSON *checked_response(struct outcome *o, const cJSON *doc, const char *version,
                                     const char *uid)
{
    const char *av = kjson_get_str(doc, "apiVersion"), *kind = kjson_get_str(doc, "kind");
    const cJSON *resp = kjson_get_obj(doc, "response");
    const char *got = kjson_get_str(resp, "uid");
    char want_av[64];

    snprintf(want_av, sizeof(want_av), "admission.k8s.io/%s", version);
    if (!av || strcmp(av, want_av) != 0 || !kind || strcmp(kind, "AdmissionReview") != 0)
        snprintf(o->error, sizeof(o->error),
                 "received invalid webhook response: expected webhook response of %s, "
                 "Kind=AdmissionReview, got %s, Kind=%s",
                 want_av, av ? av : "/", kind ? kind : "");
    else if (!resp)
        snprintf(o->error, sizeof(o->error),
                 "received invalid webhook response: webhook response was absent");
    else if (!got || strcmp(got, uid) != 0)
        snprintf(o->error, sizeof(o->error),
                 "received invalid webhook response: expected response.uid=\"%s\", got \"%s\"", uid,
                 got ? got : "");
    else
        return resp;
    return NULL;
}

/* A mutating webhook's JSON patch into o->patch; -1 with o->error set when malformed. */
static int take_patch(struct outcome *o, const cJSON *resp)
{
    const char *pb64 = kjson_get_str(resp, "patch"), *ptype = kjson_get_str(resp, "patchType");
    unsigned char *raw = NULL;
    size_t rawlen = 0;
    int rc = 0;

    if (!pb64 || !*pb64)
        return 0;
    if (!ptype || strcmp(ptype, "JSONPatch") != 0) {
        snprintf(o->error, sizeof(o->error),
                 "received invalid webhook response: unsupported patch type \"%s\"",
                 ptype ? ptype : "");
        return -1;
    }
    if (crypto_b64_decode(pb64, strlen(pb64), &raw, &rawlen, NULL) != KERR_OK ||
        kjson_parse((const char *)raw, rawlen, NULL, &o->patch, NULL, NULL) != KERR_OK ||
        !cJSON_IsArray(o->patch)) {
        snprintf(o->error, sizeof(o->error),
                 "received invalid webhook response: the patch is not a JSON patch");
        rc = -1;
    }
    free(raw);
    return rc;
}

static void read_answer(struct outcome *o, const char *name, const char *version, const char *uid,
                        const char *body, size_t len, int mutating)
{
    cJSON *doc = NULL;
    const cJSON *resp = NULL;

    if (kjson_parse(body, len, NULL, &doc, NULL, NULL) != KERR_OK)
        snprintf(o->error, sizeof(o->error), "received invalid webhook response: malformed JSON");
    else
        resp = checked_response(o, doc, version, uid);
    if (!resp) {
        o->failed = 1;
        cJSON_Delete(doc);
        return;
    }
    if (kjson_get(resp, "warnings"))
        o->warnings = cJSON_Duplicate(kjson_get(resp, "warnings"), 1);
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "allowed")))
        denial(o, name, kjson_get(resp, "status"));
    else if (mutating && take_patch(o, resp) != 0)
        o->failed = 1;
    cJSON_Delete(doc);
}

/* Call one webhook; never touches shared state. */
static void call_hook(struct ksim_api *api, const cJSON *hook, const struct ksim_admit_attrs *a,
                      const cJSON *obj, int mutating, struct outcome *o)
{
    const char *name = kjson_get_str(hook, "name");
    const char *version = pick_version(hook);
    const cJSON *to = kjson_get(hook, "timeoutSeconds");
    long timeout = cJSON_IsNumber(to) ? (long)to->valuedouble : 10;
    char uid[CRYPTO_UUID_LEN + 1], *body = NULL, *answer = NULL, why[1024];
    cJSON *rv = NULL;
    size_t alen = 0;

    memset(o, 0, sizeof(*o));
    if (!version || !(rv = review(a, obj, version, uid)) || !(body = cJSON_PrintUnformatted(rv))) {
        snprintf(o->error, sizeof(o->error), "cannot build the AdmissionReview");
        o->failed = 1;
    } else if (ksim_hook_post(api, kjson_get(hook, "clientConfig"), timeout, body, strlen(body),
                              &answer, &alen, why, sizeof(why)) != 0) {
        snprintf(o->error, sizeof(o->error), "failed to call webhook: %s", why);
        o->failed = 1;
    } else {
        read_answer(o, name ? name : "", version, uid, answer, alen, mutating);
    }
    if (o->failed)
        log_info("webhook call failed", "webhook", name, "error", o->error);
    free(answer);
    free(body);
    cJSON_Delete(rv);
}

/* Turn an outcome into the request's fate: 0 to go on, else the code with e filled. */
static int settle(const cJSON *hook, struct outcome *o, struct ksim_resp *resp,
                  struct ksim_apierr *e)
{
    const char *name = kjson_get_str(hook, "name");
    const char *fp = kjson_get_str(hook, "failurePolicy");
    const cJSON *w;
    char text[600];

    cJSON_ArrayForEach (w, o->warnings) {
        if (cJSON_IsString(w) && resp) {
            snprintf(text, sizeof(text), "%s", w->valuestring);
            ksim_resp_warn(resp, text);
        }
    }
    if (o->denied) {
        *e = o->e;
        return e->code;
    }
    if (o->failed && (!fp || strcmp(fp, "Ignore") != 0))
        return ksim_apierr_internal(e, "failed calling webhook \"%s\": %s", name ? name : "",
                                    o->error);
    return 0;
}

static int dry_run_ok(const cJSON *hook, const struct ksim_admit_attrs *a, struct ksim_apierr *e)
{
    const char *se = kjson_get_str(hook, "sideEffects");

    if (!a->dry_run || (se && (strcmp(se, "None") == 0 || strcmp(se, "NoneOnDryRun") == 0)))
        return 0;
    return ksim_apierr_bad_request(e, "admission webhook \"%s\" does not support dry run",
                                   kjson_get_str(hook, "name"));
}

static int exempt(const struct ksim_admit_attrs *a)
{
    return !a->rt->custom && strcmp(a->rt->group, "admissionregistration.k8s.io") == 0;
}

/* Configurations of one kind, sorted by name as the store lists them. */
static cJSON *configs(struct ksim_api *api, const char *plural)
{
    const struct ksim_rtype *rt =
        ksim_reg_find(api->reg, "admissionregistration.k8s.io", "v1", plural);
    struct ksim_store_page page;

    if (!rt || ksim_store_list(api->store, rt->store_key, NULL, NULL, NULL, NULL, 0, &page, NULL) !=
                   KERR_OK)
        return NULL;
    free(page.next_key);
    return page.items;
}

static int apply_hook_patch(cJSON **obj, const cJSON *patch, const char *name,
                            struct ksim_apierr *e)
{
    struct kerr_info err;
    cJSON *patched = NULL;

    if (!patch || !obj || !*obj)
        return 0;
    if (jpatch_apply(*obj, patch, &patched, &err) != KERR_OK)
        return ksim_apierr_internal(e, "failed calling webhook \"%s\": JSON patch failed: %s", name,
                                    err.msg);
    cJSON_Delete(*obj);
    *obj = patched;
    return 0;
}

int ksim_admit_mutate(struct ksim_api *api, const struct ksim_admit_attrs *a, cJSON **obj,
                      struct ksim_resp *resp, struct ksim_apierr *e)
{
    cJSON *cfgs, *nsl = NULL;
    const cJSON *cfg, *hook;
    struct outcome o;
    int code = 0, skip_ns = 0, m;

    if (exempt(a) || !(cfgs = configs(api, "mutatingwebhookconfigurations")))
        return 0;
    cJSON_ArrayForEach (cfg, cfgs) {
        cJSON_ArrayForEach (hook, kjson_get(cfg, "webhooks")) {
            if (code)
                break;
            if (!nsl && !skip_ns)
                nsl = namespace_labels(api, a, obj ? *obj : NULL, &skip_ns);
            m = ksim_admit_matches(api, hook, a, obj ? *obj : NULL, skip_ns ? NULL : nsl);
            if (m == 0)
                continue;
            code = dry_run_ok(hook, a, e);
            if (code)
                break;
            call_hook(api, hook, a, obj ? *obj : NULL, 1, &o);
            code = settle(hook, &o, resp, e);
            if (!code && !o.failed)
                code = apply_hook_patch(obj, o.patch, kjson_get_str(hook, "name"), e);
            outcome_release(&o);
        }
    }
    cJSON_Delete(nsl);
    cJSON_Delete(cfgs);
    return code;
}

struct job {
    struct ksim_api *api;
    const cJSON *hook;
    const struct ksim_admit_attrs *a;
    const cJSON *obj;
    struct outcome o;
    pthread_t th;
    int started;
};

static void *run_job(void *arg)
{
    struct job *j = arg;

    call_hook(j->api, j->hook, j->a, j->obj, 0, &j->o);
    return NULL;
}

int ksim_admit_validate(struct ksim_api *api, const struct ksim_admit_attrs *a, const cJSON *obj,
                        struct ksim_resp *resp, struct ksim_apierr *e)
{
    struct job *jobs = NULL;
    cJSON *cfgs, *nsl = NULL;
    const cJSON *cfg, *hook;
    size_t n = 0, i;
    int code = 0, skip_ns = 0, m;

    if (exempt(a) || !(cfgs = configs(api, "validatingwebhookconfigurations")))
        return 0;
    jobs = calloc(MAX_PARALLEL, sizeof(*jobs));
    nsl = namespace_labels(api, a, obj, &skip_ns);
    cJSON_ArrayForEach (cfg, cfgs) {
        cJSON_ArrayForEach (hook, kjson_get(cfg, "webhooks")) {
            m = ksim_admit_matches(api, hook, a, obj, skip_ns ? NULL : nsl);
            if (m == 0 || !jobs || n == MAX_PARALLEL || code)
                continue;
            code = dry_run_ok(hook, a, e);
            jobs[n] = (struct job){ api, hook, a, obj, { 0 }, 0, 0 };
            n++;
        }
    }
    for (i = 0; !code && i < n; i++)
        jobs[i].started = pthread_create(&jobs[i].th, NULL, run_job, &jobs[i]) == 0;
    for (i = 0; !code && i < n; i++) {
        if (jobs[i].started)
            pthread_join(jobs[i].th, NULL);
        else
            call_hook(api, jobs[i].hook, a, obj, 0, &jobs[i].o);
    }
    for (i = 0; !code && i < n; i++)
        code = settle(jobs[i].hook, &jobs[i].o, resp, e);
    for (i = 0; jobs && i < n; i++)
        outcome_release(&jobs[i].o);
    free(jobs);
    cJSON_Delete(nsl);
    cJSON_Delete(cfgs);
    return code;
}
