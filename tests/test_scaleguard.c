/*
 * Tests of the scale-down guard of webhook/protect: an UPDATE of a managed
 * StatefulSet, or of its scale subresource, taking spec.replicas from above
 * 0 to 0 for an Etcd with a backup store is refused, whoever asks, unless a
 * full snapshot of that Etcd Succeeded after its traffic cut or the Etcd
 * carries the break-glass annotation; one lowering it to fewer members is
 * refused whoever asks, break glass aside. One row per rule, each sent through
 * the decode - decide - encode pipeline with in-memory lookups, and through
 * both review decoders (whdiff). The label and DELETE rules are
 * test_scaleguard_labels.c.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hibguard.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "tests/support/guardfix.h"
#include "tests/support/scaleguardfix.h"
#include "tests/support/testutil.h"
#include "tests/support/whdiff.h"
#include "webhook/protect.h"

enum target { STS, SCALE };

struct row {
    const char *title;
    enum target target;
    const char *user;
    int old_replicas, new_replicas; /* -1: field absent */
    const char *etcd;               /* the Etcd etcd-main (one object) */
    const char *tasks;              /* JSON array */
    int allowed;
    const char *message; /* a substring of status.message */
    const char *warning; /* a substring of the first warning; NULL: none */
};

static const struct row rows[] = {
    { "reconciler refused without a snapshot", STS, DRUID, 3, 0,
      ETCD("etcd-main", ANN_CUT, "," STORE), "[]", 0, DENIED, NULL },
    { "the message says what is missing and how to break glass", STS, WARDEN, 3, 0,
      ETCD("etcd-main", ANN_SCALING, "," STORE), "[]", 0,
      "no full snapshot EtcdOpsTask of it has Succeeded since its traffic cut at " CUT
      ". Wait for the snapshot or, if the backups of Etcd etcd-main are broken, allow the "
      "scale-down without one: kubectl annotate etcd -n shoot etcd-main " HIBGUARD_ANN_BREAK_GLASS
      "=\"<RFC 3339 expiry, at most 24h ahead> <reason>\"",
      NULL },
    { "controller refused too", STS, WARDEN, 1, 0, ETCD("etcd-main", ANN_CUT, "," STORE), "[]", 0,
      DENIED, NULL },
    { "person refused even with protection disabled", STS, PERSON, 3, 0,
      ETCD("etcd-main", ANN_CUT "," ANN_OPEN, "," STORE), "[]", 0, DENIED, NULL },
    { "scale subresource refused", SCALE, DRUID, 3, 0, ETCD("etcd-main", ANN_CUT, "," STORE), "[]",
      0, DENIED, NULL },
    { "scale to 0 omits spec.replicas", SCALE, DRUID, 3, -1, ETCD("etcd-main", ANN_CUT, "," STORE),
      "[]", 0, DENIED, NULL },
    { "no traffic cut yet", STS, DRUID, 3, 0, ETCD("etcd-main", "", "," STORE), "[" FRESH "]", 0,
      "its traffic has not been cut yet (no annotation " HIBGUARD_ANN_CUT_AT ")", NULL },
    { "malformed cut", STS, DRUID, 3, 0,
      ETCD("etcd-main", "\"" HIBGUARD_ANN_CUT_AT "\":\"soon\"", "," STORE), "[" FRESH "]", 0,
      "is not an RFC 3339 time", NULL },
    { "a checked snapshot lets warden-controller through", STS, WARDEN, 3, 0,
      ETCD("etcd-main", ANN_SCALING, "," STORE), "[" FRESH "]", 1,
      "update of managed resources by etcd-druid is allowed", NULL },
    /* issue 30: only warden-controller's scale-down right after its revision check counts */
    { "a fresh snapshot does not let another reconciler through", STS, DRUID, 3, 0,
      ETCD("etcd-main", ANN_SCALING, "," STORE), "[" FRESH "]", 0,
      "only warden-controller scales to 0 on a final snapshot", NULL },
    { "a fresh snapshot in FinalSnapshot does not count", STS, WARDEN, 3, 0,
      ETCD("etcd-main", ANN_CUT "," CHECKED("uid-sts/7"), "," STORE), "[" FRESH "]", 0,
      "hibernation phase is \"FinalSnapshot\", not ScalingDown", NULL },
    { "a fresh snapshot does not let the scale subresource through", SCALE, WARDEN, 3, -1,
      ETCD("etcd-main", ANN_SCALING, "," STORE), "[" FRESH "]", 0,
      "which a scale subresource does not show", NULL },
    { "a StatefulSet scaled up since the check", STS, WARDEN, 3, 0,
      ETCD("etcd-main", ANN_STALE "," PHASE("ScalingDown") "," CHECKED("uid-sts/6"), "," STORE),
      "[" FRESH "]", 0, "it was scaled up or changed since", NULL },
    { "another StatefulSet than the one checked", STS, WARDEN, 3, 0,
      ETCD("etcd-main", ANN_STALE "," PHASE("ScalingDown") "," CHECKED("uid-old/7"), "," STORE),
      "[" FRESH "]", 0, "is not the one the final snapshot was checked against", NULL },
    { "ScalingDown without the check's stamp", STS, WARDEN, 3, 0,
      ETCD("etcd-main", ANN_STALE "," PHASE("ScalingDown"), "," STORE), "[" FRESH "]", 0,
      "is not the one the final snapshot was checked against", NULL },
    { "a malformed stamp", STS, WARDEN, 3, 0,
      ETCD("etcd-main", ANN_STALE "," PHASE("ScalingDown") "," CHECKED("uid-sts/07"), "," STORE),
      "[" FRESH "]", 0, "is not the one the final snapshot was checked against", NULL },
    { "a fresh snapshot: a person still meets the guard", STS, PERSON, 3, 0,
      ETCD("etcd-main", ANN_SCALING, "," STORE), "[" FRESH "]", 0, DENIED, NULL },
    { "a snapshot created in the cut's second does not count", STS, WARDEN, 3, 0,
      ETCD("etcd-main", ANN_SCALING, "," STORE),
      "[" TASK("etcd-main", "full", "Succeeded", CUT) "]", 0, DENIED, NULL },
    { "a snapshot created a second after the cut counts", STS, WARDEN, 3, 0,
      ETCD("etcd-main", ANN_SCALING, "," STORE),
      "[" TASK("etcd-main", "full", "Succeeded", "2026-11-24T20:00:01Z") "]", 1, "", NULL },
    { "a snapshot of the earlier cycle does not count", STS, WARDEN, 3, 0,
      ETCD("etcd-main", ANN_SCALING, "," STORE),
      "[" TASK("etcd-main", "full", "Succeeded", BEFORE) "]", 0, DENIED, NULL },
    { "another Etcd's snapshot does not count", STS, WARDEN, 3, 0,
      ETCD("etcd-main", ANN_SCALING, "," STORE),
      "[" TASK("etcd-events", "full", "Succeeded", AFTER) "]", 0, DENIED, NULL },
    { "a delta snapshot does not count", STS, WARDEN, 3, 0,
      ETCD("etcd-main", ANN_SCALING, "," STORE),
      "[" TASK("etcd-main", "delta", "Succeeded", AFTER) "]", 0, DENIED, NULL },
    { "a failed snapshot does not count", STS, WARDEN, 3, 0,
      ETCD("etcd-main", ANN_SCALING, "," STORE), "[" TASK("etcd-main", "full", "Failed", AFTER) "]",
      0, DENIED, NULL },
    { "break glass allows with a warning", STS, DRUID, 3, 0,
      ETCD("etcd-main", ANN_CUT "," ANN_BREAK, "," STORE), "[]", 1,
      "update of managed resources by etcd-druid is allowed",
      "StatefulSet shoot/etcd-main is scaled to 0 without a snapshot of Etcd etcd-main taken for "
      "this hibernation, allowed by annotation " HIBGUARD_ANN_BREAK_GLASS
      ": bucket deleted by the provider" },
    { "break glass without a cut", SCALE, DRUID, 3, 0, ETCD("etcd-main", ANN_BREAK, "," STORE),
      "[]", 1, "", "allowed by annotation" },
    { "without a backup store there is nothing to wait for", STS, DRUID, 3, 0,
      ETCD("etcd-main", "", ""), "[]", 1, "update of managed resources by etcd-druid is allowed",
      NULL },
    { "scaling up is not guarded", STS, DRUID, 0, 3, ETCD("etcd-main", "", "," STORE), "[]", 1, "",
      NULL },
    { "0 to 0 is not guarded", STS, DRUID, 0, 0, ETCD("etcd-main", "", "," STORE), "[]", 1, "",
      NULL },
    /* issue 30, a partial scale-down: etcd-druid never does it, so nobody's is admitted, with
     * a backup store or without, snapshot or not, component protection disabled or not */
    { "3 to 1 is refused, etcd-druid's included", STS, DRUID, 3, 1,
      ETCD("etcd-main", ANN_CUT, "," STORE), "[" FRESH "]", 0,
      "scaling StatefulSet shoot/etcd-main from 3 to 1 replicas (its members 1..2 are deleted) "
      "is refused",
      NULL },
    { "3 to 2 through the scale subresource is refused", SCALE, PERSON, 3, 2,
      ETCD("etcd-main", ANN_OPEN, "," STORE), "[]", 0,
      "from 3 to 2 replicas (its member 2 is deleted) is refused", NULL },
    { "3 to 1 without a backup store is refused", STS, DRUID, 3, 1, ETCD("etcd-main", "", ""), "[]",
      0, "Replicas can either be increased or be downscaled to 0.", NULL },
    { "3 to spec.replicas removed (1) is refused", STS, PERSON, 3, -1,
      ETCD("etcd-main", ANN_OPEN, ""), "[]", 0, "from 3 to 1 replicas", NULL },
    { "3 to 1 with break glass is allowed with a warning", STS, DRUID, 3, 1,
      ETCD("etcd-main", ANN_BREAK, "," STORE), "[]", 1, "",
      "from 3 to 1 replicas (its members 1..2 are deleted) of Etcd etcd-main allowed by "
      "annotation " HIBGUARD_ANN_BREAK_GLASS },
    { "3 to 1 with an expired break glass is refused", STS, DRUID, 3, 1,
      ETCD("etcd-main", GLASS("2026-11-24T20:00:00Z old"), "," STORE), "[]", 0,
      "annotation " HIBGUARD_ANN_BREAK_GLASS " expired at", NULL },
    { "a StatefulSet without spec.replicas has 1", STS, DRUID, -1, 0,
      ETCD("etcd-main", ANN_CUT, "," STORE), "[]", 0, DENIED, NULL },
    /* a cut belongs to one sleep: woken after it (phase Hibernated, StatefulSet above 0) */
    { "a cut of an earlier sleep does not count (Hibernated, scaled up since)", STS, DRUID, 3, 0,
      ETCD("etcd-main", ANN_STALE "," PHASE("Hibernated"), "," STORE), "[" FRESH "]", 0,
      "its traffic cut at " CUT " belongs to an earlier sleep (hibernation phase \"Hibernated\"",
      NULL },
    { "a cut without a hibernation under way does not count", SCALE, DRUID, 3, 0,
      ETCD("etcd-main", ANN_STALE, "," STORE), "[" FRESH "]", 0, "belongs to an earlier sleep",
      NULL },
    { "a cut while waking up does not count", STS, WARDEN, 3, 0,
      ETCD("etcd-main", ANN_STALE "," PHASE("WakingUp") "," CHECKED("uid-sts/7"), "," STORE),
      "[" FRESH "]", 0, DENIED, NULL },
    { "a cut in ScalingDown counts", STS, WARDEN, 3, 0, ETCD("etcd-main", ANN_SCALING, "," STORE),
      "[" FRESH "]", 1, "", NULL },
    { "a cut in Failed does not count: etcd moved on since the snapshot", STS, WARDEN, 3, 0,
      ETCD("etcd-main", ANN_STALE "," PHASE("Failed") "," CHECKED("uid-sts/7"), "," STORE),
      "[" FRESH "]", 0, "hibernation phase is \"Failed\", not ScalingDown", NULL },
    /* break glass once: an expiry, past which it is ignored */
    { "an expired break glass is ignored", STS, DRUID, 3, 0,
      ETCD("etcd-main", ANN_CUT "," GLASS("2026-11-24T20:04:59Z bucket lost"), "," STORE), "[]", 0,
      "annotation " HIBGUARD_ANN_BREAK_GLASS " expired at 2026-11-24T20:04:59Z", NULL },
    { "a break glass without an expiry is ignored", SCALE, DRUID, 3, 0,
      ETCD("etcd-main", ANN_CUT "," GLASS("bucket lost"), "," STORE), "[]", 0,
      "is ignored: its value is not \"<RFC 3339 expiry> <reason>\"", NULL },
    { "a stale cut with a live break glass is let through", STS, DRUID, 3, 0,
      ETCD("etcd-main", ANN_STALE "," PHASE("Hibernated") "," ANN_BREAK, "," STORE), "[]", 1, "",
      "allowed by annotation" },
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

static cJSON *object(const struct row *t, int replicas)
{
    cJSON *o = cJSON_CreateObject(), *spec;

    cJSON_AddStringToObject(o, "apiVersion", t->target == SCALE ? "autoscaling/v1" : "apps/v1");
    cJSON_AddStringToObject(o, "kind", t->target == SCALE ? "Scale" : "StatefulSet");
    if (t->target == STS)
        cJSON_AddItemToObject(
            o, "metadata",
            cJSON_Parse("{\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"uid\":\"uid-sts\","
                        "\"generation\":7,\"labels\":{"
                        "\"app.kubernetes.io/managed-by\":\"etcd-druid\","
                        "\"app.kubernetes.io/part-of\":\"etcd-main\"}}"));
    else
        cJSON_AddItemToObject(o, "metadata",
                              cJSON_Parse("{\"namespace\":\"shoot\",\"name\":\"etcd-main\"}"));
    spec = cJSON_AddObjectToObject(o, "spec");
    if (replicas >= 0)
        cJSON_AddNumberToObject(spec, "replicas", replicas);
    return o;
}

static char *review_body(const struct row *t)
{
    cJSON *root = cJSON_CreateObject(), *req, *k;
    char *text;

    cJSON_AddStringToObject(root, "apiVersion", "admission.k8s.io/v1");
    cJSON_AddStringToObject(root, "kind", "AdmissionReview");
    req = cJSON_AddObjectToObject(root, "request");
    cJSON_AddStringToObject(req, "uid", "0000-1111");
    k = cJSON_AddObjectToObject(req, "kind");
    cJSON_AddStringToObject(k, "group", t->target == SCALE ? "autoscaling" : "apps");
    cJSON_AddStringToObject(k, "version", "v1");
    cJSON_AddStringToObject(k, "kind", t->target == SCALE ? "Scale" : "StatefulSet");
    k = cJSON_AddObjectToObject(req, "resource");
    cJSON_AddStringToObject(k, "group", "apps");
    cJSON_AddStringToObject(k, "version", "v1");
    cJSON_AddStringToObject(k, "resource", "statefulsets");
    if (t->target == SCALE)
        cJSON_AddStringToObject(req, "subResource", "scale");
    cJSON_AddStringToObject(req, "name", "etcd-main");
    cJSON_AddStringToObject(req, "namespace", "shoot");
    cJSON_AddStringToObject(req, "operation", "UPDATE");
    k = cJSON_AddObjectToObject(req, "userInfo");
    cJSON_AddStringToObject(k, "username", t->user);
    cJSON_AddItemToObject(req, "object", object(t, t->new_replicas));
    cJSON_AddItemToObject(req, "oldObject", object(t, t->old_replicas));
    text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}

/* t decided with the Etcd cache holding t->etcd and the API server, when fresh, that one. */
static cJSON *decide_row_fresh(const struct row *t, const char *fresh)
{
    struct protect_config cfg = { reconcilers, 2, NULL, 0, NULL, controllers, 1, fixed_clock };
    struct review_req req;
    struct review_resp resp;
    struct lookup_mem mem = { 0 };
    struct lookup lk;
    struct kerr_info err;
    cJSON *etcds = cJSON_CreateArray(), *sts = cJSON_Parse(stses), *tasks = cJSON_Parse(t->tasks);
    cJSON *doc = NULL, *e = cJSON_Parse(t->etcd), *api = fresh ? cJSON_CreateArray() : NULL;
    char *body = review_body(t), *out = NULL;
    size_t len = 0;

    cr_assert_not_null(e, "%s: the Etcd does not parse", t->title);
    cr_assert_not_null(tasks, "%s: the tasks do not parse", t->title);
    cJSON_AddItemToArray(etcds, e);
    mem.etcds = etcds;
    mem.stses = sts;
    mem.tasks = tasks;
    if (api) {
        cJSON_AddItemToArray(api, cJSON_Parse(fresh));
        cr_assert_not_null(cJSON_GetArrayItem(api, 0), "%s: the API's Etcd does not parse",
                           t->title);
        mem.fresh_etcds = api;
    }
    lookup_mem_bind(&mem, &lk);
    review_req_init(&req);
    review_resp_init(&resp);
    cr_assert_eq(review_req_decode(&req, body, strlen(body), &err), KERR_OK, "%s", err.msg);
    if (!api)
        whdiff_same(&cfg, &mem, WH_HOOK_COMPONENTS, body);
    cr_assert_eq(protect_decide(&cfg, &lk, &req, &resp, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(review_encode(&req, &resp, &out, &len, &err), KERR_OK);
    cr_assert_eq(kjson_parse(out, len, NULL, &doc, NULL, NULL), KERR_OK);
    free(out);
    free(body);
    review_resp_release(&resp);
    review_req_release(&req);
    cJSON_Delete(etcds);
    cJSON_Delete(api);
    cJSON_Delete(sts);
    cJSON_Delete(tasks);
    return doc;
}

static cJSON *decide_row(const struct row *t)
{
    return decide_row_fresh(t, NULL);
}

ParameterizedTestParameters(scaleguard, rows)
{
    static size_t idx[NROWS];

    return testutil_row_params(idx, NROWS);
}

ParameterizedTest(size_t *i, scaleguard, rows)
{
    const struct row *t = &rows[*i];
    const cJSON *w;
    const char *msg;
    bool allowed = false;
    cJSON *doc = decide_row(t);

    cr_assert_eq(kjson_get_bool(doc, "response.allowed", &allowed), KERR_OK);
    cr_expect_eq(allowed, t->allowed != 0, "%s: allowed", t->title);
    msg = kjson_get_str(doc, "response.status.message");
    cr_expect(msg && strstr(msg, t->message), "%s: message %s", t->title, msg ? msg : "(none)");
    w = cJSON_GetArrayItem(kjson_get_arr(doc, "response.warnings"), 0);
    if (t->warning)
        cr_expect(cJSON_IsString(w) && strstr(w->valuestring, t->warning), "%s: warning %s",
                  t->title, cJSON_IsString(w) ? w->valuestring : "(none)");
    else
        cr_expect_null(w, "%s: unexpected warning %s", t->title,
                       cJSON_IsString(w) ? w->valuestring : "");
    if (!allowed) {
        int64_t code = 0;

        cr_expect_eq(kjson_get_int64(doc, "response.status.code", &code), KERR_OK);
        cr_expect_eq(code, 403, "%s: code", t->title);
    }
    cJSON_Delete(doc);
}

/*
 * The guard alone (/webhooks/scaleguard, registered where etcd-druid's own component webhook
 * runs): the same refusals of a scale-down to 0, and nothing of component protection, which
 * etcd-druid's webhook applies once already.
 */
struct guard_row {
    const struct row r;
    int protected_allowed; /* what /webhooks/etcdcomponents answers the same review */
};

static const struct guard_row guard_rows[] = {
    { { "reconciler refused without a snapshot", STS, DRUID, 3, 0,
        ETCD("etcd-main", ANN_CUT, "," STORE), "[]", 0, DENIED, NULL },
      0 },
    { { "scale subresource refused", SCALE, PERSON, 3, -1, ETCD("etcd-main", ANN_CUT, "," STORE),
        "[]", 0, DENIED, NULL },
      0 },
    { { "refused with protection disabled", STS, PERSON, 3, 0,
        ETCD("etcd-main", ANN_CUT "," ANN_OPEN, "," STORE), "[]", 0, DENIED, NULL },
      0 },
    { { "a fresh snapshot does not let a person through", STS, PERSON, 3, 0,
        ETCD("etcd-main", ANN_SCALING, "," STORE), "[" FRESH "]", 0,
        "only warden-controller scales to 0 on a final snapshot", NULL },
      0 },
    { { "break glass allows with a warning", SCALE, PERSON, 3, 0,
        ETCD("etcd-main", ANN_CUT "," ANN_BREAK, "," STORE), "[]", 1, "allowed",
        "allowed by annotation " HIBGUARD_ANN_BREAK_GLASS ": bucket deleted by the provider" },
      0 },
    { { "a person's UPDATE that is no scale-down is allowed", STS, PERSON, 3, 3,
        ETCD("etcd-main", ANN_CUT, "," STORE), "[]", 1, "not a scale-down to 0 replicas", NULL },
      0 },
    { { "a person scaling up is allowed", SCALE, PERSON, 0, 3, ETCD("etcd-main", "", "," STORE),
        "[]", 1, "update of StatefulSet", NULL },
      0 },
    { { "without a backup store there is nothing to wait for", STS, PERSON, 3, 0,
        ETCD("etcd-main", "", ""), "[]", 1, "allowed", NULL },
      0 },
    { { "warden-controller with a checked snapshot", STS, WARDEN, 3, 0,
        ETCD("etcd-main", ANN_SCALING, "," STORE), "[" FRESH "]", 1,
        "scale-down of StatefulSet shoot/etcd-main allowed", NULL },
      1 },
};

#define NGUARD (sizeof(guard_rows) / sizeof(guard_rows[0]))

/* The answer of webhook h to t's review through wh_dispatch, as the server gives it. */
static cJSON *dispatch_row(const struct row *t, enum wh_hook h)
{
    struct protect_config cfg = { reconcilers, 2, NULL, 0, NULL, controllers, 1, fixed_clock };
    struct lookup_mem mem = { 0 };
    struct lookup lk;
    cJSON *etcds = cJSON_CreateArray(), *sts = cJSON_Parse(stses), *tasks = cJSON_Parse(t->tasks);
    cJSON *doc;
    char *body = review_body(t);

    cJSON_AddItemToArray(etcds, cJSON_Parse(t->etcd));
    mem.etcds = etcds;
    mem.stses = sts;
    mem.tasks = tasks;
    lookup_mem_bind(&mem, &lk);
    doc = guardfix_dispatch(&cfg, &mem, &lk, h, true, body);
    free(body);
    cJSON_Delete(etcds);
    cJSON_Delete(sts);
    cJSON_Delete(tasks);
    return doc;
}

ParameterizedTestParameters(scaleguard, guard_only)
{
    static size_t idx[NGUARD];

    return testutil_row_params(idx, NGUARD);
}

ParameterizedTest(size_t *i, scaleguard, guard_only)
{
    const struct row *t = &guard_rows[*i].r;
    const cJSON *w;
    const char *msg;
    bool allowed = false;
    cJSON *doc;

    cr_assert_str_eq(wh_hook_path(WH_HOOK_SCALEGUARD), "/webhooks/scaleguard");
    doc = dispatch_row(t, WH_HOOK_SCALEGUARD);
    cr_assert_eq(kjson_get_bool(doc, "response.allowed", &allowed), KERR_OK);
    cr_expect_eq(allowed, t->allowed != 0, "%s: allowed", t->title);
    msg = kjson_get_str(doc, "response.status.message");
    cr_expect(msg && strstr(msg, t->message), "%s: message %s", t->title, msg ? msg : "(none)");
    w = cJSON_GetArrayItem(kjson_get_arr(doc, "response.warnings"), 0);
    if (t->warning)
        cr_expect(cJSON_IsString(w) && strstr(w->valuestring, t->warning), "%s: warning %s",
                  t->title, cJSON_IsString(w) ? w->valuestring : "(none)");
    else
        cr_expect_null(w, "%s: unexpected warning", t->title);
    cJSON_Delete(doc);
    /* what component protection alone would answer: the guard-only path is not it */
    doc = dispatch_row(t, WH_HOOK_COMPONENTS);
    cr_assert_eq(kjson_get_bool(doc, "response.allowed", &allowed), KERR_OK);
    cr_expect_eq(allowed, guard_rows[*i].protected_allowed != 0, "%s: etcdcomponents allowed",
                 t->title);
    cJSON_Delete(doc);
}

/* A lookup whose Etcd is a cache miss nothing confirmed (the fallback limit reached). */
static enum kerr unconfirmed_etcd(void *ctx, const char *ns, const char *name,
                                  struct lookup_etcd *out, struct kerr_info *err)
{
    (void)ctx;
    (void)ns;
    memset(out, 0, sizeof(*out));
    kerr_set(err, KERR_NOTFOUND, "etcds.druid.gardener.cloud \"%s\" not found", name);
    snprintf(err->reason, sizeof(err->reason), "%s", LOOKUP_REASON_UNCONFIRMED);
    return KERR_NOTFOUND;
}

/* A guarded request is not admitted on a miss nobody confirmed: 500, fail closed. */
Test(scaleguard, an_unconfirmed_miss_on_a_guarded_path_is_500)
{
    static const struct row r = { "", STS, DRUID, 3, 0, "", "[]", 0, "", NULL };
    struct protect_config cfg = { reconcilers, 2, NULL, 0, NULL, controllers, 1, fixed_clock };
    struct lookup lk = { .etcd = unconfirmed_etcd };
    enum wh_hook hooks[] = { WH_HOOK_COMPONENTS, WH_HOOK_SCALEGUARD };
    struct review_req req;
    struct review_resp resp;
    struct kerr_info err;
    char *body = review_body(&r);
    size_t i;

    for (i = 0; i < 2; i++) {
        review_req_init(&req);
        review_resp_init(&resp);
        cr_assert_eq(review_req_decode(&req, body, strlen(body), &err), KERR_OK, "%s", err.msg);
        if (hooks[i] == WH_HOOK_COMPONENTS)
            cr_assert_eq(protect_decide(&cfg, &lk, &req, &resp, &err), KERR_OK);
        else
            cr_assert_eq(protect_guard_decide(&cfg, &lk, &req, &resp, &err), KERR_OK);
        cr_expect_not(resp.allowed, "hook %zu allowed on an unconfirmed miss", i);
        cr_expect_eq(resp.code, 500);
        cr_expect(resp.message && strstr(resp.message, "not admitted on an unconfirmed miss"), "%s",
                  resp.message ? resp.message : "");
        review_resp_release(&resp);
        review_req_release(&req);
    }
    free(body);
}

/*
 * warden-controller writes phase ScalingDown and scales right after: a webhook whose Etcd
 * cache still shows FinalSnapshot asks the API server before refusing (a refusal there
 * made every hibernation fail once and retry). Another reconciler's scale-down is refused
 * whatever the API says, and the API's FinalSnapshot keeps warden-controller's refused.
 */
Test(scaleguard, a_cache_behind_on_scaling_down_is_confirmed_with_the_api)
{
    static const struct row behind = {
        "cache behind",
        STS,
        WARDEN,
        3,
        0,
        ETCD("etcd-main", ANN_CUT "," CHECKED("uid-sts/7"), "," STORE),
        "[" FRESH "]",
        1,
        "",
        NULL
    };
    struct row druid = behind;
    const char *api = ETCD("etcd-main", ANN_SCALING, "," STORE);
    bool allowed = true;
    cJSON *doc;

    doc = decide_row_fresh(&behind, api);
    cr_assert_eq(kjson_get_bool(doc, "response.allowed", &allowed), KERR_OK);
    cr_expect(allowed, "warden-controller's checked scale-down refused on a stale cache: %s",
              kjson_get_str(doc, "response.status.message"));
    cJSON_Delete(doc);

    doc = decide_row_fresh(&behind, behind.etcd);
    cr_assert_eq(kjson_get_bool(doc, "response.allowed", &allowed), KERR_OK);
    cr_expect(!allowed, "admitted although the API server says FinalSnapshot too");
    cJSON_Delete(doc);

    druid.user = DRUID;
    doc = decide_row_fresh(&druid, api);
    cr_assert_eq(kjson_get_bool(doc, "response.allowed", &allowed), KERR_OK);
    cr_expect(!allowed, "etcd-druid's scale-down admitted on the checked snapshot");
    cJSON_Delete(doc);
}
