/*
 * webhook/bigrev through the dispatcher: a review past the parse budget is allowed only when
 * its envelope and labels prove it none of the guard's business (a ConfigMap of no Etcd, any
 * routed kind in a namespace without an Etcd); an Etcd's ConfigMap, StatefulSet or claim over
 * the budget, and every review whose proof a lookup cannot give, stay refused (413). Issue 30;
 * e2e attack12_configmap_budget, attack12_budget_ignore.
 */
#include "webhook/bigrev.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/jarena.h"
#include "webhook/wh_dispatch.h"

#define DRUID "system:serviceaccount:druid:etcd-druid"

/* Etcd shoot/etcd-main; namespace apps holds none. */
static const char etcds_json[] = "[{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\","
                                 "\"uid\":\"u-main\"}}]";

/*
 * An UPDATE review of kind (group/kind) ns/name whose object and old object carry n data keys
 * (well past the parse budget for n = 40000) and labels (JSON members, may be "").
 */
static char *big_review(const char *group, const char *kind, const char *ns, const char *name,
                        const char *labels, size_t n, size_t *len)
{
    struct buf b;
    enum kerr rc;
    int o;
    size_t i;

    buf_init(&b, 64u * 1024 * 1024);
    rc = buf_appendf(&b,
                     "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                     "\"request\":{\"uid\":\"u-big\",\"kind\":{\"group\":\"%s\",\"version\":"
                     "\"v1\",\"kind\":\"%s\"},\"operation\":\"UPDATE\",\"namespace\":\"%s\","
                     "\"name\":\"%s\",\"userInfo\":{\"username\":\"alice\"}",
                     group, kind, ns, name);
    for (o = 0; o < 2 && rc == KERR_OK; o++) {
        rc = buf_appendf(&b,
                         ",\"%s\":{\"metadata\":{\"namespace\":\"%s\",\"name\":\"%s\","
                         "\"labels\":{%s}},\"data\":{",
                         o ? "oldObject" : "object", ns, name, labels);
        for (i = 0; i < n && rc == KERR_OK; i++)
            rc = buf_appendf(&b, "%s\"k%05zu\":\"v\"", i ? "," : "", i);
        if (rc == KERR_OK)
            rc = buf_appends(&b, "}}");
    }
    if (rc == KERR_OK)
        rc = buf_appends(&b, "}}");
    cr_assert_eq(rc, KERR_OK);
    return buf_detach(&b, len);
}

/* The answer of h to the review (status 200 asserted); the caller frees it. */
static char *answer(const struct lookup *lk, enum wh_hook h, const char *body, size_t blen)
{
    static const char *const reconcilers[] = { DRUID };
    struct protect_config cfg = { reconcilers, 1, NULL, 0, NULL, NULL, 0, NULL };
    struct wh_dispatch d;
    struct kerr_info err;
    unsigned int status = 0;
    size_t len = 0;
    char *out = NULL;

    cr_assert_eq(jarena_install(&err), KERR_OK, "%s", err.msg); /* the budget, as the server */
    cr_assert_eq(wh_dispatch_init(&d, &cfg, lk, NULL, &err), KERR_OK);
    cr_assert_eq(wh_dispatch_review(&d, h, body, blen, &out, &len, &status, &err), KERR_OK, "%s",
                 err.msg);
    cr_assert_eq(status, 200, "%.300s", out);
    return out;
}

struct row {
    const char *what, *group, *kind, *ns, *name, *labels;
    int allowed;
};

static const struct row rows[] = {
    { "a ConfigMap of a namespace without an Etcd", "", "ConfigMap", "apps", "keys-40000", "", 1 },
    { "a -config ConfigMap of a namespace without an Etcd", "", "ConfigMap", "apps",
      "etcd-main-config", "", 1 },
    { "a ConfigMap not named -config beside an Etcd", "", "ConfigMap", "shoot", "dashboards", "",
      1 },
    { "a -config ConfigMap of no Etcd beside one", "", "ConfigMap", "shoot", "other-config", "",
      1 },
    { "the Etcd's ConfigMap", "", "ConfigMap", "shoot", "etcd-main-config", "", 0 },
    { "a ConfigMap labelled etcd-druid's beside an Etcd", "", "ConfigMap", "shoot", "dashboards",
      "\"app.kubernetes.io/managed-by\":\"etcd-druid\"", 0 },
    { "a StatefulSet of a namespace without an Etcd", "apps", "StatefulSet", "apps", "web", "", 1 },
    { "a StatefulSet beside an Etcd", "apps", "StatefulSet", "shoot", "web", "", 0 },
    { "the Etcd's StatefulSet", "apps", "StatefulSet", "shoot", "etcd-main", "", 0 },
    { "a PVC of a namespace without an Etcd", "", "PersistentVolumeClaim", "apps", "data-web-0", "",
      1 },
    { "a PVC beside an Etcd", "", "PersistentVolumeClaim", "shoot", "data-web-0", "", 0 },
    { "a Service (routed by etcd-druid's label only)", "", "Service", "apps", "web", "", 0 },
};

Test(bigrev, only_what_the_envelope_proves_none_of_the_guards_is_allowed)
{
    struct lookup_mem mem = { 0 };
    struct lookup lk;
    cJSON *etcds = cJSON_Parse(etcds_json);
    size_t i, blen;
    int h;

    mem.etcds = etcds;
    lookup_mem_bind(&mem, &lk);
    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const struct row *r = &rows[i];
        char *body = big_review(r->group, r->kind, r->ns, r->name, r->labels, 40000, &blen);

        for (h = 0; h < WH_HOOK__COUNT; h++) {
            /* the Etcd and mutating endpoints do not read a ConfigMap's data: no budget */
            if (h == WH_HOOK_ETCD || h == WH_HOOK_MUTATE)
                continue;
            char *out = answer(&lk, (enum wh_hook)h, body, blen);
            int components = h == WH_HOOK_COMPONENTS || h == WH_HOOK_SCALEGUARD;
            int want = components && r->allowed;

            cr_expect_not_null(strstr(out, want ? "\"allowed\":true" : "\"allowed\":false"),
                               "%s, hook %d: %.400s", r->what, h, out);
            if (!want)
                cr_expect_not_null(strstr(out, "\"code\":413"), "%s, hook %d: %.400s", r->what, h,
                                   out);
            else
                cr_expect_not_null(strstr(out, "no business"), "%s: %.400s", r->what, out);
            free(out);
        }
        free(body);
    }
    cJSON_Delete(etcds);
}

Test(bigrev, a_lookup_that_cannot_answer_proves_nothing)
{
    struct lookup_mem mem = { 0 };
    struct lookup lk;
    cJSON *etcds = cJSON_Parse(etcds_json);
    size_t blen;
    char *body = big_review("", "ConfigMap", "apps", "etcd-main-config", "", 40000, &blen), *out;

    mem.etcds = etcds;
    mem.fail = KERR_IO;
    lookup_mem_bind(&mem, &lk);
    out = answer(&lk, WH_HOOK_COMPONENTS, body, blen);
    cr_expect_not_null(strstr(out, "\"code\":413"), "a failing lookup: %.400s", out);
    free(out);
    free(body);
    /* a ConfigMap whose name is no Etcd's configuration's needs no lookup */
    body = big_review("", "ConfigMap", "apps", "keys-40000", "", 40000, &blen);
    out = answer(&lk, WH_HOOK_COMPONENTS, body, blen);
    cr_expect_not_null(strstr(out, "\"allowed\":true"), "not named -config: %.400s", out);
    free(out);
    /* no lookup of a namespace's Etcds at all: the -config rule alone, from the Etcd lookup */
    mem.fail = KERR_OK;
    lk.etcd_any = NULL;
    out = answer(&lk, WH_HOOK_COMPONENTS, body, blen);
    cr_expect_not_null(strstr(out, "\"allowed\":true"), "not named -config: %.400s", out);
    free(out);
    free(body);
    body = big_review("apps", "StatefulSet", "apps", "web", "", 40000, &blen);
    out = answer(&lk, WH_HOOK_COMPONENTS, body, blen);
    cr_expect_not_null(strstr(out, "\"code\":413"), "a StatefulSet, unproven: %.400s", out);
    free(out);
    free(body);
    cJSON_Delete(etcds);
}

Test(bigrev, labels_past_the_budget_are_refused)
{
    struct lookup_mem mem = { 0 };
    struct lookup lk;
    struct buf labels;
    size_t i, blen;
    char *body, *out;

    buf_init(&labels, 64u * 1024 * 1024);
    for (i = 0; i < 100000; i++)
        cr_assert_eq(buf_appendf(&labels, "%s\"l%zu\":\"\"", i ? "," : "", i), KERR_OK);
    lookup_mem_bind(&mem, &lk);
    body = big_review("", "ConfigMap", "apps", "keys", buf_str(&labels), 1, &blen);
    out = answer(&lk, WH_HOOK_COMPONENTS, body, blen);
    cr_expect_not_null(strstr(out, "\"code\":413"), "%.400s", out);
    free(out);
    free(body);
    buf_release(&labels);
}
