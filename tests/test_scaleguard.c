/*
 * Tests of the scale-down guard of webhook/protect: an UPDATE of a managed
 * StatefulSet, or of its scale subresource, taking spec.replicas from above
 * 0 to 0 for an Etcd with a backup store is refused, whoever asks, unless a
 * full snapshot of that Etcd Succeeded after its traffic cut or the Etcd
 * carries the break-glass annotation; one lowering it to fewer members is
 * refused whoever asks, break glass aside. One row per rule, each sent through
 * the decode - decide - encode pipeline with in-memory lookups, and through
 * both review decoders (whdiff).
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
#include "tests/support/testutil.h"
#include "tests/support/whdiff.h"
#include "webhook/protect.h"

#define DRUID     GUARDFIX_DRUID
#define WARDEN    GUARDFIX_WARDEN
#define PERSON    GUARDFIX_PERSON

#define CUT       "2026-11-24T20:00:00Z"
#define BEFORE    "2026-11-24T19:59:59Z"
#define AFTER     "2026-11-24T20:03:00Z"
#define NOW       "2026-11-24T20:05:00Z" /* the guard's clock (break glass expiry) */
#define PHASE(p)  "\"" HIBGUARD_ANN_PHASE "\":\"" p "\""
#define ANN_CUT   "\"" HIBGUARD_ANN_CUT_AT "\":\"" CUT "\"," PHASE("FinalSnapshot")
#define ANN_STALE "\"" HIBGUARD_ANN_CUT_AT "\":\"" CUT "\""
/* the StatefulSet of the reviews below is uid-sts at generation 7 (its old object) */
#define CHECKED(v)  "\"" HIBGUARD_ANN_CHECKED "\":\"" v "\""
#define ANN_SCALING ANN_STALE "," PHASE("ScalingDown") "," CHECKED("uid-sts/7")
#define GLASS(v)    "\"" HIBGUARD_ANN_BREAK_GLASS "\":\"" v "\""
#define ANN_BREAK   GLASS("2026-11-24T22:00:00Z bucket deleted by the provider")
#define ANN_OPEN    "\"druid.gardener.cloud/disable-etcd-component-protection\":\"\""
#define STORE       "\"backup\":{\"store\":{\"container\":\"b\",\"prefix\":\"p\",\"provider\":\"S3\"}}"

#define ETCD(name, ann, spec)                                                          \
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"" name "\",\"uid\":\"uid-" name \
    "\",\"annotations\":{" ann "}},\"spec\":{\"replicas\":0" spec "},"                 \
    "\"status\":{\"lastOperation\":{\"type\":\"Reconcile\",\"state\":\"Succeeded\"}}}"
#define ETCD_MEMBERS(name, ann, spec)                                                  \
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"" name "\",\"uid\":\"uid-" name \
    "\",\"annotations\":{" ann "}},\"spec\":{\"replicas\":3" spec "},"                 \
    "\"status\":{\"replicas\":3,\"lastOperation\":{\"type\":\"Reconcile\",\"state\":"  \
    "\"Succeeded\"}}}"
#define TASK(etcd, type, state, created)                                       \
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"t-" etcd                \
    "\",\"creationTimestamp\":\"" created "\"},\"spec\":{\"etcdName\":\"" etcd \
    "\",\"config\":{\"onDemandSnapshot\":{"                                    \
    "\"type\":\"" type "\"}}},\"status\":{\"state\":\"" state "\"}}"
#define FRESH TASK("etcd-main", "full", "Succeeded", AFTER)

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

#define DENIED \
    "scaling StatefulSet shoot/etcd-main to 0 replicas needs a full snapshot of Etcd etcd-main"

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

static const char *const reconcilers[] = { DRUID, WARDEN };
static const char *const controllers[] = { WARDEN };

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

static const char stses[] = "[{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\","
                            "\"labels\":{\"app.kubernetes.io/managed-by\":\"etcd-druid\","
                            "\"app.kubernetes.io/part-of\":\"etcd-main\"}}}]";

static time_t fixed_clock(void)
{
    struct timespec ts;

    cr_assert_eq(ktime_parse(NOW, &ts, NULL), KERR_OK);
    return ts.tv_sec;
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

/*
 * Decided from the old object: a request that rewrites the labels deciding whether it is
 * checked (managed-by, part-of) is judged as a change of the component it was, on both
 * paths; a non-reconciler cannot change those labels; a DELETE that takes the pods of a
 * StatefulSet needs the snapshot as a scale-down does, unless the Etcd itself is being
 * deleted or the DELETE orphans the pods.
 */
#define LBL_MAIN                                                            \
    "{\"app.kubernetes.io/managed-by\":\"etcd-druid\",\"app.kubernetes.io/" \
    "part-of\":\"etcd-main\"}"
#define LBL_NO_MANAGED "{\"app.kubernetes.io/part-of\":\"etcd-main\"}"
#define LBL_NOPE                                                            \
    "{\"app.kubernetes.io/managed-by\":\"etcd-druid\",\"app.kubernetes.io/" \
    "part-of\":\"nope\"}"
#define LBL_TEAM                                                            \
    "{\"app.kubernetes.io/managed-by\":\"etcd-druid\",\"app.kubernetes.io/" \
    "part-of\":\"etcd-main\",\"example.com/team\":\"storage\"}"
#define LABEL_MSG(label, from, to) \
    "label " label " of StatefulSet shoot/etcd-main cannot be changed from " from " to " to " by "
#define DELETED_MSG "deleting StatefulSet shoot/etcd-main needs a full snapshot of Etcd etcd-main"
#define ETCD_DELETING                                                                          \
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"uid\":\"uid-etcd-main\"," \
    "\"deletionTimestamp\":\"2026-11-24T20:05:00Z\",\"annotations\":{" ANN_CUT "}},"           \
    "\"spec\":{\"replicas\":3," STORE "}}"

/* status.lastOperation Delete Processing, as anyone with etcds/status can write it */
#define ETCD_FORGED_DELETE                                                                     \
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"uid\":\"uid-etcd-main\"," \
    "\"annotations\":{" ANN_OPEN "}},\"spec\":{\"replicas\":3," STORE "},\"status\":{"         \
    "\"lastOperation\":{\"type\":\"Delete\",\"state\":\"Processing\"}}}"

struct lrow {
    const char *title;
    enum wh_hook hook;
    const char *op; /* UPDATE, DELETE or CREATE */
    const char *user;
    const char *old_labels, *new_labels; /* new_labels unused for DELETE */
    int old_replicas, new_replicas;      /* CREATE: old_replicas pods etcd-main-0.. still run */
    int orphan;                          /* DELETE with propagationPolicy Orphan */
    const char *etcd;
    const char *tasks;
    int allowed;
    const char *message;
    const char *warning;
};

static const struct lrow lrows[] = {
    /* the report's four requests, with component protection */
    { "a person's JSON patch removing managed-by and scaling to 0", WH_HOOK_COMPONENTS, "UPDATE",
      PERSON, LBL_MAIN, LBL_NO_MANAGED, 3, 0, 0, ETCD("etcd-main", ANN_CUT, "," STORE), "[]", 0,
      DENIED, NULL },
    { "a person's merge patch part-of nope and scaling to 0", WH_HOOK_COMPONENTS, "UPDATE", PERSON,
      LBL_MAIN, LBL_NOPE, 3, 0, 0, ETCD("etcd-main", ANN_CUT, "," STORE), "[]", 0, DENIED, NULL },
    { "etcd-druid's JSON patch removing managed-by and scaling to 0", WH_HOOK_COMPONENTS, "UPDATE",
      DRUID, LBL_MAIN, LBL_NO_MANAGED, 3, 0, 0, ETCD("etcd-main", ANN_CUT, "," STORE), "[]", 0,
      DENIED, NULL },
    { "a person removing managed-by", WH_HOOK_COMPONENTS, "UPDATE", PERSON, LBL_MAIN,
      LBL_NO_MANAGED, 3, 3, 0, ETCD("etcd-main", "", "," STORE), "[]", 0,
      LABEL_MSG("app.kubernetes.io/managed-by", "\"etcd-druid\"", "(removed)") PERSON
      ": the object is a component of Etcd etcd-main",
      NULL },
    /* the same four through the guard alone */
    { "guard only: a person removing managed-by and scaling to 0", WH_HOOK_SCALEGUARD, "UPDATE",
      PERSON, LBL_MAIN, LBL_NO_MANAGED, 3, 0, 0, ETCD("etcd-main", ANN_CUT, "," STORE), "[]", 0,
      DENIED, NULL },
    { "guard only: a person's part-of nope and scaling to 0", WH_HOOK_SCALEGUARD, "UPDATE", PERSON,
      LBL_MAIN, LBL_NOPE, 3, 0, 0, ETCD("etcd-main", ANN_CUT, "," STORE), "[]", 0, DENIED, NULL },
    { "guard only: etcd-druid removing managed-by and scaling to 0", WH_HOOK_SCALEGUARD, "UPDATE",
      DRUID, LBL_MAIN, LBL_NO_MANAGED, 3, 0, 0, ETCD("etcd-main", ANN_CUT, "," STORE), "[]", 0,
      DENIED, NULL },
    { "guard only: a person removing managed-by", WH_HOOK_SCALEGUARD, "UPDATE", PERSON, LBL_MAIN,
      LBL_NO_MANAGED, 3, 3, 0, ETCD("etcd-main", "", "," STORE), "[]", 0,
      LABEL_MSG("app.kubernetes.io/managed-by", "\"etcd-druid\"", "(removed)"), NULL },
    /* the label rule */
    { "a person changing part-of", WH_HOOK_COMPONENTS, "UPDATE", PERSON, LBL_MAIN, LBL_NOPE, 3, 3,
      0, ETCD("etcd-main", "", "," STORE), "[]", 0,
      LABEL_MSG("app.kubernetes.io/part-of", "\"etcd-main\"", "\"nope\""), NULL },
    { "the label rule binds with protection disabled", WH_HOOK_COMPONENTS, "UPDATE", PERSON,
      LBL_MAIN, LBL_NO_MANAGED, 3, 3, 0, ETCD("etcd-main", ANN_OPEN, "," STORE), "[]", 0,
      LABEL_MSG("app.kubernetes.io/managed-by", "\"etcd-druid\"", "(removed)"), NULL },
    { "the label rule binds without a backup store", WH_HOOK_COMPONENTS, "UPDATE", PERSON, LBL_MAIN,
      LBL_NO_MANAGED, 3, 3, 0, ETCD("etcd-main", "", ""), "[]", 0,
      LABEL_MSG("app.kubernetes.io/managed-by", "\"etcd-druid\"", "(removed)"), NULL },
    { "a reconciler may change the labels", WH_HOOK_COMPONENTS, "UPDATE", DRUID, LBL_MAIN,
      LBL_NO_MANAGED, 3, 3, 0, ETCD("etcd-main", "", "," STORE), "[]", 1,
      "update of managed resources by etcd-druid is allowed", NULL },
    { "guard only: a reconciler may change the labels", WH_HOOK_SCALEGUARD, "UPDATE", WARDEN,
      LBL_MAIN, LBL_NOPE, 3, 3, 0, ETCD("etcd-main", "", "," STORE), "[]", 1,
      "not a scale-down to 0 replicas", NULL },
    { "guard only: another label is component protection's (etcd-druid's)", WH_HOOK_SCALEGUARD,
      "UPDATE", PERSON, LBL_MAIN, LBL_TEAM, 3, 3, 0, ETCD("etcd-main", "", "," STORE), "[]", 1,
      "not a scale-down to 0 replicas", NULL },
    { "guard only: a label change of an Etcd that does not exist", WH_HOOK_SCALEGUARD, "UPDATE",
      PERSON, LBL_NOPE, LBL_NO_MANAGED, 3, 3, 0, ETCD("etcd-main", "", "," STORE), "[]", 1,
      "parent Etcd nope of resource shoot/etcd-main not found", NULL },
    { "adding the labels is judged by the new object, as etcd-druid does", WH_HOOK_COMPONENTS,
      "UPDATE", PERSON, "{}", LBL_MAIN, 3, 3, 0, ETCD("etcd-main", "", "," STORE), "[]", 0,
      "changes from service account " PERSON " are disallowed", NULL },
    { "adding the labels and scaling to 0 is guarded", WH_HOOK_SCALEGUARD, "UPDATE", DRUID, "{}",
      LBL_MAIN, 3, 0, 0, ETCD("etcd-main", ANN_CUT, "," STORE), "[]", 0, DENIED, NULL },
    /* DELETE of the StatefulSet */
    { "etcd-druid deleting the StatefulSet without a snapshot", WH_HOOK_COMPONENTS, "DELETE", DRUID,
      LBL_MAIN, NULL, 3, 0, 0, ETCD("etcd-main", ANN_CUT, "," STORE), "[]", 0, DELETED_MSG, NULL },
    { "guard only: a person deleting the StatefulSet without a snapshot", WH_HOOK_SCALEGUARD,
      "DELETE", PERSON, LBL_MAIN, NULL, 3, 0, 0, ETCD("etcd-main", "", "," STORE), "[]", 0,
      DELETED_MSG, NULL },
    { "deleting it with this hibernation's snapshot: only warden-controller", WH_HOOK_SCALEGUARD,
      "DELETE", PERSON, LBL_MAIN, NULL, 3, 0, 0, ETCD("etcd-main", ANN_SCALING, "," STORE),
      "[" FRESH "]", 0, "only warden-controller scales to 0", NULL },
    { "deleting it with this hibernation's checked snapshot", WH_HOOK_SCALEGUARD, "DELETE", WARDEN,
      LBL_MAIN, NULL, 3, 0, 0, ETCD("etcd-main", ANN_SCALING, "," STORE), "[" FRESH "]", 1,
      "deletion of StatefulSet shoot/etcd-main allowed", NULL },
    { "deleting it with break glass", WH_HOOK_COMPONENTS, "DELETE", DRUID, LBL_MAIN, NULL, 3, 0, 0,
      ETCD("etcd-main", ANN_BREAK, "," STORE), "[]", 1, "",
      "StatefulSet shoot/etcd-main is deleted without a snapshot of Etcd etcd-main" },
    { "guard only: the StatefulSet of an Etcd being deleted", WH_HOOK_SCALEGUARD, "DELETE", DRUID,
      LBL_MAIN, NULL, 3, 0, 0, ETCD_DELETING, "[]", 1, "deletion of StatefulSet", NULL },
    { "the StatefulSet of an Etcd being deleted", WH_HOOK_COMPONENTS, "DELETE", DRUID, LBL_MAIN,
      NULL, 3, 0, 0, ETCD_DELETING, "[]", 1, "", NULL },
    { "an orphaning DELETE leaves the pods: not guarded", WH_HOOK_COMPONENTS, "DELETE", DRUID,
      LBL_MAIN, NULL, 3, 0, 1, ETCD("etcd-main", ANN_CUT, "," STORE), "[]", 1, "", NULL },
    { "guard only: an orphaning DELETE", WH_HOOK_SCALEGUARD, "DELETE", PERSON, LBL_MAIN, NULL, 3, 0,
      1, ETCD("etcd-main", ANN_CUT, "," STORE), "[]", 1, "not a scale-down to 0 replicas", NULL },
    { "a StatefulSet at 0 replicas has no pods to lose", WH_HOOK_SCALEGUARD, "DELETE", PERSON,
      LBL_MAIN, NULL, 0, 0, 0, ETCD("etcd-main", ANN_CUT, "," STORE), "[]", 1,
      "not a scale-down to 0 replicas", NULL },
    { "without a backup store a DELETE is component protection's", WH_HOOK_COMPONENTS, "DELETE",
      DRUID, LBL_MAIN, NULL, 3, 0, 0, ETCD("etcd-main", "", ""), "[]", 1, "", NULL },
    /* orphan-delete, then a CREATE at 0 replicas adopts the old pods and deletes them */
    { "a StatefulSet created at 0 for an Etcd with members", WH_HOOK_COMPONENTS, "CREATE", PERSON,
      LBL_MAIN, LBL_MAIN, 3, 0, 0, ETCD_MEMBERS("etcd-main", ANN_CUT "," ANN_OPEN, "," STORE), "[]",
      0,
      "creating StatefulSet shoot/etcd-main with 0 replicas needs a full snapshot of Etcd "
      "etcd-main",
      NULL },
    { "guard only: a StatefulSet created at 0 for an Etcd with members", WH_HOOK_SCALEGUARD,
      "CREATE", DRUID, LBL_MAIN, LBL_MAIN, 3, 0, 0, ETCD_MEMBERS("etcd-main", "", "," STORE), "[]",
      0, "creating StatefulSet shoot/etcd-main with 0 replicas needs a full snapshot", NULL },
    { "created at 0 with this sleep's checked snapshot: not the StatefulSet checked",
      WH_HOOK_SCALEGUARD, "CREATE", WARDEN, LBL_MAIN, LBL_MAIN, 3, 0, 0,
      ETCD_MEMBERS("etcd-main", ANN_SCALING, "," STORE), "[" FRESH "]", 0,
      "which a creation does not show", NULL },
    { "created at 0 for an Etcd that never had members", WH_HOOK_COMPONENTS, "CREATE", DRUID,
      LBL_MAIN, LBL_MAIN, 0, 0, 0, ETCD("etcd-main", "", "," STORE), "[]", 1, "", NULL },
    { "created at 3 with no pods outside is allowed", WH_HOOK_COMPONENTS, "CREATE", PERSON,
      LBL_MAIN, LBL_MAIN, 0, 3, 0, ETCD_MEMBERS("etcd-main", "", "," STORE), "[]", 1,
      "creation of StatefulSet shoot/etcd-main allowed", NULL },
    { "created at 3 over pods 0..2 is allowed", WH_HOOK_COMPONENTS, "CREATE", PERSON, LBL_MAIN,
      LBL_MAIN, 3, 3, 0, ETCD_MEMBERS("etcd-main", ANN_OPEN, ""), "[]", 1,
      "creation of StatefulSet shoot/etcd-main allowed", NULL },
    /* issue 30: re-created at 1 over pods 0..2, it adopts them and deletes 1 and 2 */
    { "created at 1 while pods 0..2 run is refused", WH_HOOK_COMPONENTS, "CREATE", PERSON, LBL_MAIN,
      LBL_MAIN, 3, 1, 0, ETCD_MEMBERS("etcd-main", ANN_OPEN, ""), "[" FRESH "]", 0,
      "creating StatefulSet shoot/etcd-main with ordinals [0, 1) while its pod etcd-main-1 runs "
      "(2 outside them) is refused",
      NULL },
    { "created at 1 while pods 0..2 run, by etcd-druid on the guard only", WH_HOOK_SCALEGUARD,
      "CREATE", DRUID, LBL_MAIN, LBL_MAIN, 3, 1, 0, ETCD_MEMBERS("etcd-main", "", "," STORE), "[]",
      0, "is refused: etcd-druid scales an etcd cluster up or down to 0 only", NULL },
    /* issue 30, second attack: members are the pods the API server lists, not the Etcd's
     * status (etcd-druid copies currentReplicas there: 0 mid rolling update; anyone with
     * etcds/status writes it) */
    { "created at 0 while its pods run, status.replicas 0 (mid rollout)", WH_HOOK_COMPONENTS,
      "CREATE", PERSON, LBL_MAIN, LBL_MAIN, 3, 0, 0,
      ETCD("etcd-main", ANN_CUT "," ANN_OPEN, "," STORE), "[]", 0,
      "creating StatefulSet shoot/etcd-main with 0 replicas needs a full snapshot", NULL },
    { "etcd-druid creating it at 0 while its pods run, status.replicas 0", WH_HOOK_SCALEGUARD,
      "CREATE", DRUID, LBL_MAIN, LBL_MAIN, 1, 0, 0, ETCD("etcd-main", "", "," STORE), "[]", 0,
      "creating StatefulSet shoot/etcd-main with 0 replicas needs a full snapshot", NULL },
    { "created at 0 with no pod left: nothing to take, whatever status says", WH_HOOK_SCALEGUARD,
      "CREATE", PERSON, LBL_MAIN, LBL_MAIN, 0, 0, 0, ETCD_MEMBERS("etcd-main", "", "," STORE), "[]",
      1, "creation of StatefulSet shoot/etcd-main allowed", NULL },
    /* issue 30, second attack: only the API server's deletionTimestamp says the Etcd goes */
    { "a forged lastOperation Delete does not let the StatefulSet go", WH_HOOK_COMPONENTS, "DELETE",
      PERSON, LBL_MAIN, NULL, 3, 0, 0, ETCD_FORGED_DELETE, "[]", 0, DELETED_MSG, NULL },
    { "guard only: a forged lastOperation Delete", WH_HOOK_SCALEGUARD, "DELETE", DRUID, LBL_MAIN,
      NULL, 3, 0, 0, ETCD_FORGED_DELETE, "[]", 0, DELETED_MSG, NULL },
    /* without etcd-druid's labels: an Etcd's StatefulSet by its name (issue 30, hole A) */
    { "an unlabelled StatefulSet named as an Etcd created at 0", WH_HOOK_COMPONENTS, "CREATE",
      PERSON, "{}", "{}", 3, 0, 0, ETCD_MEMBERS("etcd-main", ANN_CUT "," ANN_OPEN, "," STORE), "[]",
      0, "creating StatefulSet shoot/etcd-main with 0 replicas needs a full snapshot", NULL },
    { "guard only: an unlabelled StatefulSet named as an Etcd created at 0", WH_HOOK_SCALEGUARD,
      "CREATE", PERSON, "{}", "{}", 3, 0, 0, ETCD_MEMBERS("etcd-main", "", "," STORE), "[]", 0,
      "creating StatefulSet shoot/etcd-main with 0 replicas needs a full snapshot", NULL },
    { "an unlabelled StatefulSet named as an Etcd scaled to 0", WH_HOOK_COMPONENTS, "UPDATE",
      PERSON, "{}", "{}", 3, 0, 0, ETCD("etcd-main", ANN_CUT, "," STORE), "[]", 0, DENIED, NULL },
    { "an unlabelled StatefulSet named as an Etcd deleted with its pods", WH_HOOK_COMPONENTS,
      "DELETE", PERSON, "{}", NULL, 3, 0, 0, ETCD("etcd-main", ANN_CUT, "," STORE), "[]", 0,
      DELETED_MSG, NULL },
    { "an unlabelled StatefulSet of no Etcd created at 0", WH_HOOK_COMPONENTS, "CREATE", PERSON,
      "{}", "{}", 0, 0, 0, ETCD_MEMBERS("etcd-b", "", "," STORE), "[]", 1,
      "parent Etcd etcd-main of resource shoot/etcd-main not found", NULL },
    { "an unlabelled StatefulSet updated without a change of members: no lookup",
      WH_HOOK_COMPONENTS, "UPDATE", PERSON, "{}", "{}", 3, 3, 0,
      ETCD("etcd-main", ANN_CUT, "," STORE), "[]", 1, "is not managed by druid", NULL },
    { "an unlabelled StatefulSet of an Etcd's name scaled 3 to 2 is refused", WH_HOOK_COMPONENTS,
      "UPDATE", PERSON, "{}", "{}", 3, 2, 0, ETCD("etcd-main", ANN_CUT, "," STORE), "[]", 0,
      "from 3 to 2 replicas", NULL },
};

#define NLROWS (sizeof(lrows) / sizeof(lrows[0]))

/* Pods etcd-main-0 .. n-1 of shoot (and one of another namespace), as the API lists them. */
static cJSON *member_pods(int n)
{
    cJSON *pods = cJSON_CreateArray(), *p, *meta;
    char name[32];
    int i;

    for (i = 0; i <= n; i++) {
        p = cJSON_CreateObject();
        meta = cJSON_AddObjectToObject(p, "metadata");
        snprintf(name, sizeof(name), "etcd-main-%d", i < n ? i : 0);
        cJSON_AddStringToObject(meta, "namespace", i < n ? "shoot" : "other");
        cJSON_AddStringToObject(meta, "name", name);
        cJSON_AddItemToArray(pods, p);
    }
    return pods;
}

static char *lreview_body(const struct lrow *t)
{
    int del = strcmp(t->op, "DELETE") == 0;
    cJSON *root = guardfix_sts_review(
        t->op, t->user, del ? NULL : guardfix_sts(t->new_labels, t->new_replicas),
        strcmp(t->op, "CREATE") == 0 ? NULL : guardfix_sts(t->old_labels, t->old_replicas));
    cJSON *k =
        cJSON_AddObjectToObject(cJSON_GetObjectItemCaseSensitive(root, "request"), "options");
    char *text;

    cJSON_AddStringToObject(k, "kind", del ? "DeleteOptions" : "UpdateOptions");
    cJSON_AddStringToObject(k, "apiVersion", "meta.k8s.io/v1");
    if (del)
        cJSON_AddStringToObject(k, "propagationPolicy", t->orphan ? "Orphan" : "Background");
    text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}

ParameterizedTestParameters(scaleguard, labels_and_deletes)
{
    static size_t idx[NLROWS];

    return testutil_row_params(idx, NLROWS);
}

ParameterizedTest(size_t *i, scaleguard, labels_and_deletes)
{
    const struct lrow *t = &lrows[*i];
    struct protect_config cfg = { reconcilers, 2, NULL, 0, NULL, controllers, 1, fixed_clock };
    struct lookup_mem mem = { 0 };
    struct lookup lk;
    cJSON *etcds = cJSON_CreateArray(), *sts = cJSON_Parse(stses), *tasks = cJSON_Parse(t->tasks);
    cJSON *doc, *e = cJSON_Parse(t->etcd), *pods;
    const cJSON *w;
    char *body = lreview_body(t);

    cr_assert_not_null(e, "%s: the Etcd does not parse", t->title);
    cr_assert_not_null(tasks, "%s: the tasks do not parse", t->title);
    cJSON_AddItemToArray(etcds, e);
    mem.etcds = etcds;
    mem.stses = sts;
    mem.tasks = tasks;
    mem.pods = pods = member_pods(strcmp(t->op, "CREATE") == 0 ? t->old_replicas : 0);
    lookup_mem_bind(&mem, &lk);
    doc = guardfix_dispatch(&cfg, &mem, &lk, t->hook, true, body);
    guardfix_expect(doc, t->title, t->allowed, t->message);
    w = cJSON_GetArrayItem(kjson_get_arr(doc, "response.warnings"), 0);
    if (t->warning)
        cr_expect(cJSON_IsString(w) && strstr(w->valuestring, t->warning), "%s: warning %s",
                  t->title, cJSON_IsString(w) ? w->valuestring : "(none)");
    else
        cr_expect_null(w, "%s: unexpected warning %s", t->title,
                       cJSON_IsString(w) ? w->valuestring : "");
    cJSON_Delete(doc);
    free(body);
    cJSON_Delete(etcds);
    cJSON_Delete(sts);
    cJSON_Delete(tasks);
    cJSON_Delete(pods);
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
