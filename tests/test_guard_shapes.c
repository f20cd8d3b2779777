/*
 * Tests of the request shapes the scale-down guard (webhook/protect) judges beyond a
 * scale to 0 (issue 30): spec.ordinals.start set by a CREATE or changed by an UPDATE; a PVC known
 * only by its StatefulSet owner whose owner reference an UPDATE drops; a CREATE whose pods cannot
 * be listed. Each sent through the decode - decide - encode pipeline with in-memory lookups and
 * through both review decoders (whdiff).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "common/ktime.h"
#include "tests/support/guardfix.h"
#include "tests/support/testutil.h"
#include "webhook/protect.h"

#define DRUID    GUARDFIX_DRUID
#define WARDEN   GUARDFIX_WARDEN
#define PERSON   GUARDFIX_PERSON
#define ANN_OPEN "\"druid.gardener.cloud/disable-etcd-component-protection\":\"\""
#define STORE    "\"backup\":{\"store\":{\"container\":\"b\",\"prefix\":\"p\",\"provider\":\"S3\"}}"
#define ETCD(name, ann, spec)                                                          \
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"" name "\",\"uid\":\"uid-" name \
    "\",\"annotations\":{" ann "}},\"spec\":{\"replicas\":3" spec "}}"
#define LBL_MAIN                                                            \
    "{\"app.kubernetes.io/managed-by\":\"etcd-druid\",\"app.kubernetes.io/" \
    "part-of\":\"etcd-main\"}"

static const char stses[] = "[{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\","
                            "\"labels\":" LBL_MAIN "}}]";

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

/* StatefulSet etcd-main with replicas and spec.ordinals.start (-1: absent). */
static cJSON *sts_object(int replicas, int start)
{
    cJSON *o = guardfix_sts(LBL_MAIN, replicas);

    if (start >= 0)
        cJSON_AddNumberToObject(
            cJSON_AddObjectToObject(cJSON_GetObjectItemCaseSensitive(o, "spec"), "ordinals"),
            "start", start);
    return o;
}

/* A review of StatefulSet etcd-main: op (UPDATE or CREATE) by user. */
static char *sts_review(const char *op, const char *user, int old_start, int old_replicas,
                        int new_start, int new_replicas)
{
    cJSON *root =
        guardfix_sts_review(op, user, sts_object(new_replicas, new_start),
                            strcmp(op, "CREATE") == 0 ? NULL : sts_object(old_replicas, old_start));
    char *text = cJSON_PrintUnformatted(root);

    cJSON_Delete(root);
    return text;
}

/*
 * Decide body (a review) through hook h with the Etcd etcd, the StatefulSets sts_list and pods
 * etcd-main-0..npods-1; glass, when not NULL, records the break glass uses (an array, written
 * to; the decoders' differential check is left out then, as it would use them up).
 */
static cJSON *decide_with(enum wh_hook h, const char *etcd, const char *sts_list, int npods,
                          cJSON *glass, const char *body)
{
    struct protect_config cfg;
    struct lookup_mem mem = { 0 };
    struct lookup lk;
    cJSON *etcds = cJSON_CreateArray(), *sts = cJSON_Parse(sts_list), *tasks = cJSON_CreateArray();
    cJSON *pods = member_pods(npods), *doc;

    guardfix_config(&cfg);
    cJSON_AddItemToArray(etcds, cJSON_Parse(etcd));
    mem.etcds = etcds;
    mem.stses = sts;
    mem.tasks = tasks;
    mem.pods = pods;
    mem.glass = glass;
    lookup_mem_bind(&mem, &lk);
    doc = guardfix_dispatch(&cfg, &mem, &lk, h, glass == NULL, body);
    cJSON_Delete(etcds);
    cJSON_Delete(sts);
    cJSON_Delete(tasks);
    cJSON_Delete(pods);
    return doc;
}

/* Decide body (a review) through hook h with the Etcd etcd and pods etcd-main-0..npods-1. */
static cJSON *decide_body(enum wh_hook h, const char *etcd, int npods, const char *body)
{
    return decide_with(h, etcd, stses, npods, NULL, body);
}

struct orow {
    const char *title;
    enum wh_hook hook;
    const char *op, *user, *etcd;
    int old_start, old_replicas, new_start, new_replicas; /* start -1: absent */
    int pods;                                             /* etcd-main-0..pods-1 run */
    int allowed;
    const char *message;
};

#define REFUSED " is refused: etcd-druid never sets spec.ordinals; the members of Etcd etcd-main"
#define MOVED   "changing spec.ordinals.start of StatefulSet shoot/etcd-main from "
#define GLASS_MOVE                                                                 \
    "\"etcd-warden.io/allow-scale-down-without-snapshot\":\"2026-11-20T00:00:00Z " \
    "claims restored\""

/*
 * Issue 30: etcd-druid never sets spec.ordinals; a CREATE from another ordinal, or an UPDATE
 * that changes spec.ordinals.start, starts the members on other, empty claims: refused whoever
 * asks, at 0 replicas too, with a backup store or without, break glass aside.
 */
static const struct orow orows[] = {
    { "a person moving ordinals.start past the members, protection disabled", WH_HOOK_COMPONENTS,
      "UPDATE", PERSON, ETCD("etcd-main", ANN_OPEN, "," STORE), -1, 3, 3, 3, 3, 0,
      MOVED "0 (absent) to 3" REFUSED },
    { "etcd-druid moving ordinals.start past the members", WH_HOOK_SCALEGUARD, "UPDATE", DRUID,
      ETCD("etcd-main", "", "," STORE), 0, 3, 3, 3, 3, 0, MOVED "0 to 3" REFUSED },
    { "moving ordinals.start by one", WH_HOOK_SCALEGUARD, "UPDATE", DRUID,
      ETCD("etcd-main", "", "," STORE), 0, 3, 1, 3, 3, 0, MOVED "0 to 1" REFUSED },
    { "moving ordinals.start down while growing", WH_HOOK_SCALEGUARD, "UPDATE", DRUID,
      ETCD("etcd-main", "", "," STORE), 2, 3, 0, 5, 3, 0, MOVED "2 to 0" REFUSED },
    { "ordinals moved at 0 replicas: the wake starts members 3..5", WH_HOOK_SCALEGUARD, "UPDATE",
      DRUID, ETCD("etcd-main", "", "," STORE), 0, 0, 3, 0, 0, 0, MOVED "0 to 3" REFUSED },
    { "ordinals moved at 0 replicas without a backup store, protection disabled",
      WH_HOOK_COMPONENTS, "UPDATE", PERSON, ETCD("etcd-main", ANN_OPEN, ""), -1, 0, 3, 0, 0, 0,
      MOVED "0 (absent) to 3" REFUSED },
    { "ordinals moved without a backup store", WH_HOOK_SCALEGUARD, "UPDATE", DRUID,
      ETCD("etcd-main", "", ""), 0, 3, 3, 3, 3, 0, MOVED "0 to 3" REFUSED },
    { "ordinals.start 0 written out is no change", WH_HOOK_SCALEGUARD, "UPDATE", DRUID,
      ETCD("etcd-main", "", "," STORE), -1, 3, 0, 3, 3, 1, "not a scale-down to 0 replicas" },
    { "break glass lets one move through", WH_HOOK_SCALEGUARD, "UPDATE", DRUID,
      ETCD("etcd-main", GLASS_MOVE, "," STORE), 0, 0, 3, 0, 0, 1, "allowed" },
    { "re-created from ordinal 3 while pods 0..2 run", WH_HOOK_COMPONENTS, "CREATE", PERSON,
      ETCD("etcd-main", ANN_OPEN, "," STORE), -1, 0, 3, 3, 3, 0,
      "creating StatefulSet shoot/etcd-main with spec.ordinals.start 3" REFUSED },
    { "guard only: re-created from ordinal 3 while pods run", WH_HOOK_SCALEGUARD, "CREATE", DRUID,
      ETCD("etcd-main", "", "," STORE), -1, 0, 3, 3, 3, 0, "spec.ordinals.start 3" REFUSED },
    { "created from ordinal 3 with no pod to adopt", WH_HOOK_SCALEGUARD, "CREATE", DRUID,
      ETCD("etcd-main", "", "," STORE), -1, 0, 3, 3, 0, 0, "spec.ordinals.start 3" REFUSED },
    { "created from ordinal 1 over pods 1..2 only", WH_HOOK_SCALEGUARD, "CREATE", DRUID,
      ETCD("etcd-main", "", "," STORE), -1, 0, 1, 2, 0, 0, "spec.ordinals.start 1" REFUSED },
    { "created from ordinal 0 written out", WH_HOOK_SCALEGUARD, "CREATE", DRUID,
      ETCD("etcd-main", "", "," STORE), -1, 0, 0, 3, 0, 1,
      "creation of StatefulSet shoot/etcd-main allowed" },
};

#define NOROWS (sizeof(orows) / sizeof(orows[0]))

ParameterizedTestParameters(guard_shapes, ordinals)
{
    static size_t idx[NOROWS];

    return testutil_row_params(idx, NOROWS);
}

ParameterizedTest(size_t *i, guard_shapes, ordinals)
{
    const struct orow *t = &orows[*i];
    char *body =
        sts_review(t->op, t->user, t->old_start, t->old_replicas, t->new_start, t->new_replicas);
    cJSON *doc = decide_body(t->hook, t->etcd, t->pods, body);

    guardfix_expect(doc, t->title, t->allowed, t->message);
    cJSON_Delete(doc);
    free(body);
}

#define PVC_FMT "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"data-e-0\"%s%s}}"

/* A PVC review: UPDATE from old_refs to new_refs (ownerReferences JSON, NULL: none). */
static char *pvc_review(const char *old_refs, const char *new_refs)
{
    char *body = malloc(2048);
    char o[512], n[512];

    cr_assert_not_null(body);
    snprintf(o, sizeof(o), PVC_FMT, old_refs ? ",\"ownerReferences\":" : "",
             old_refs ? old_refs : "");
    snprintf(n, sizeof(n), PVC_FMT, new_refs ? ",\"ownerReferences\":" : "",
             new_refs ? new_refs : "");
    snprintf(body, 2048,
             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
             "\"uid\":\"0000-3333\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":"
             "\"PersistentVolumeClaim\"},\"resource\":{\"group\":\"\",\"version\":\"v1\","
             "\"resource\":\"persistentvolumeclaims\"},\"name\":\"data-e-0\",\"namespace\":"
             "\"shoot\",\"operation\":\"UPDATE\",\"userInfo\":{\"username\":\"" PERSON "\"},"
             "\"object\":%s,\"oldObject\":%s}}",
             n, o);
    return body;
}

/*
 * Issue 30, second attack: a PVC known as a member only by its StatefulSet owner (named
 * unlike a member, unlabelled) keeps its protection: an UPDATE that drops or rewrites the
 * owner reference is judged on the old object, as a relabel is.
 */
Test(guard_shapes, a_pvc_owner_reference_change_is_judged_on_the_old_object)
{
    static const char owned[] =
        "[{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"name\":\"etcd-main\","
        "\"uid\":\"uid-sts\"}]";
    static const char other[] =
        "[{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"name\":\"nope\","
        "\"uid\":\"uid-nope\"}]";
    const char *etcd = ETCD("etcd-main", "", "," STORE);
    const char *denied = "changes from service account " PERSON " are disallowed";
    char *body;
    cJSON *doc;

    body = pvc_review(owned, NULL);
    doc = decide_body(WH_HOOK_COMPONENTS, etcd, 0, body);
    guardfix_expect(doc, "owner reference removed", 0, denied);
    cJSON_Delete(doc);
    free(body);

    body = pvc_review(owned, other);
    doc = decide_body(WH_HOOK_COMPONENTS, etcd, 0, body);
    guardfix_expect(doc, "owner reference rewritten", 0, denied);
    cJSON_Delete(doc);
    free(body);

    body = pvc_review(owned, owned);
    doc = decide_body(WH_HOOK_COMPONENTS, etcd, 0, body);
    guardfix_expect(doc, "owner reference kept (a resize)", 1,
                    "update of PersistentVolumeClaim shoot/data-e-0 allowed");
    cJSON_Delete(doc);
    free(body);

    body = pvc_review(NULL, owned);
    doc = decide_body(WH_HOOK_COMPONENTS, etcd, 0, body);
    guardfix_expect(doc, "owner reference added: the new object is no member yet", 1,
                    "is not supported by EtcdComponents webhook");
    cJSON_Delete(doc);
    free(body);
}

/* A guarded CREATE whose pods cannot be listed fails closed: 500, never an admission. */
Test(guard_shapes, a_create_whose_pods_cannot_be_listed_is_500)
{
    struct protect_config cfg;
    struct lookup_mem mem = { 0 };
    struct lookup lk;
    struct review_req req;
    struct review_resp resp;
    struct kerr_info err;
    cJSON *etcds = cJSON_CreateArray(), *sts = cJSON_Parse(stses);
    char *body = sts_review("CREATE", DRUID, -1, 0, -1, 0);

    guardfix_config(&cfg);
    cJSON_AddItemToArray(etcds, cJSON_Parse(ETCD("etcd-main", "", "," STORE)));
    mem.etcds = etcds;
    mem.stses = sts;
    lookup_mem_bind(&mem, &lk);
    lk.pods = NULL;
    review_req_init(&req);
    review_resp_init(&resp);
    cr_assert_eq(review_req_decode(&req, body, strlen(body), &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(protect_guard_decide(&cfg, &lk, &req, &resp, &err), KERR_OK);
    cr_expect_not(resp.allowed);
    cr_expect_eq(resp.code, 500);
    cr_expect(resp.message && strstr(resp.message, "its pods cannot be told"), "%s",
              resp.message ? resp.message : "");
    review_resp_release(&resp);
    review_req_release(&req);
    cJSON_Delete(etcds);
    cJSON_Delete(sts);
    free(body);
}

/* The StatefulSet controller's member names: "<sts>-<digits>", nothing else. */
Test(guard_shapes, a_pod_ordinal_is_read_from_the_member_name_only)
{
    static const struct {
        const char *pod;
        int member;
        int64_t ord;
    } names[] = {
        { "etcd-main-0", 1, 0 },   { "etcd-main-12", 1, 12 },
        { "etcd-main-007", 1, 7 }, { "etcd-main-99999999999999999999999", 1, INT64_MAX },
        { "etcd-main-", 0, 0 },    { "etcd-main", 0, 0 },
        { "etcd-main-x", 0, 0 },   { "etcd-main-1x", 0, 0 },
        { "etcd-main-0-1", 0, 0 }, { "etcd-mainx-1", 0, 0 },
        { "etcd-main--1", 0, 0 },  { "", 0, 0 },
    };
    size_t i;
    int64_t ord;

    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        ord = -1;
        cr_expect_eq(lookup_pod_ordinal(names[i].pod, "etcd-main", &ord), names[i].member, "%s",
                     names[i].pod);
        if (names[i].member)
            cr_expect_eq(ord, names[i].ord, "%s: %lld", names[i].pod, (long long)ord);
    }
    cr_expect_eq(lookup_pod_ordinal(NULL, "etcd-main", &ord), 0);
}

/* Pods outside [lo, hi) are counted, the lowest named; other namespaces' are not listed. */
Test(guard_shapes, pods_outside_the_ordinals_are_counted)
{
    cJSON *pods = member_pods(3);
    int64_t first = 0;

    cr_expect_eq(lookup_pods_outside(pods, "etcd-main", 3, 6, &first), 4); /* "other" too */
    cr_expect_eq(first, 0);
    cr_expect_eq(lookup_pods_outside(pods, "etcd-main", 0, 3, &first), 0);
    cr_expect_eq(first, -1);
    cr_expect_eq(lookup_pods_outside(pods, "etcd-main", 1, 3, &first), 2);
    cr_expect_eq(first, 0);
    cr_expect_eq(lookup_pods_outside(NULL, "etcd-main", 0, 0, &first), 0);
    cJSON_Delete(pods);
}

/* StatefulSet etcd-main at 3 replicas from ordinal start (-1: absent). */
static void sts_at(int start, char *out, size_t size)
{
    cJSON *list = cJSON_CreateArray();
    char *text;

    cJSON_AddItemToArray(list, sts_object(3, start));
    text = cJSON_PrintUnformatted(list);
    snprintf(out, size, "%s", text);
    free(text);
    cJSON_Delete(list);
}

/* A DELETE of PVC name (labels: a JSON object or NULL) by user. */
static char *pvc_delete(const char *name, const char *labels, const char *user)
{
    char *body = malloc(2048);

    cr_assert_not_null(body);
    snprintf(body, 2048,
             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
             "\"uid\":\"0000-3333\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":"
             "\"PersistentVolumeClaim\"},\"resource\":{\"group\":\"\",\"version\":\"v1\","
             "\"resource\":\"persistentvolumeclaims\"},\"name\":\"%s\",\"namespace\":\"shoot\","
             "\"operation\":\"DELETE\",\"userInfo\":{\"username\":\"%s\"},\"object\":null,"
             "\"oldObject\":{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"%s\"%s%s}}}}",
             name, user, name, labels ? ",\"labels\":" : "", labels ? labels : "");
    return body;
}

#define GLASS     "\"etcd-warden.io/allow-scale-down-without-snapshot\":"
#define GLASS_OK  GLASS "\"2026-11-20T00:00:00Z volume lost\""
#define GLASS_OLD GLASS "\"2026-11-01T00:00:00Z too late\""
#define LIVE      "it is the volume of running member etcd-main-"

struct prow {
    const char *title;
    enum wh_hook hook;
    const char *pvc, *labels, *user, *etcd;
    int start; /* of etcd-main at 3 replicas; -1 absent, -2 no StatefulSet */
    int allowed;
    const char *message;
};

/*
 * Issue 30, third attack: a DELETE of a running member's PVC (its ordinal inside the
 * StatefulSet's) is refused for everyone in both modes, etcd-druid and an Etcd with
 * protection disabled included; break glass alone lets it through. A claim past the
 * ordinals, or of a StatefulSet that is gone, is judged as before.
 */
static const struct prow prows[] = {
    { "etcd-druid deletes member 1's PVC", WH_HOOK_COMPONENTS, "data-etcd-main-1", LBL_MAIN, DRUID,
      ETCD("etcd-main", "", ""), -1, 0, LIVE "1 of Etcd etcd-main" },
    { "a person, protection disabled, by name only", WH_HOOK_COMPONENTS, "data-etcd-main-2", NULL,
      PERSON, ETCD("etcd-main", ANN_OPEN, ""), -1, 0, "ordinals [0, 3)" },
    { "guard only: a person deletes a relabelled member PVC", WH_HOOK_SCALEGUARD,
      "data-etcd-main-0", "{\"x\":\"y\"}", PERSON, ETCD("etcd-main", "", ""), -1, 0,
      LIVE "0 of Etcd etcd-main" },
    { "guard only: etcd-druid", WH_HOOK_SCALEGUARD, "data-etcd-main-2", LBL_MAIN, DRUID,
      ETCD("etcd-main", "", ""), -1, 0, LIVE "2" },
    { "ordinal past the replicas: still the live Etcd's, etcd-druid too", WH_HOOK_COMPONENTS,
      "data-etcd-main-3", LBL_MAIN, DRUID, ETCD("etcd-main", "", ""), -1, 0,
      "it is the claim of member etcd-main-3 of Etcd etcd-main, which is not being deleted" },
    { "guard only: ordinal past the replicas, still the live Etcd's", WH_HOOK_SCALEGUARD,
      "data-etcd-main-3", LBL_MAIN, PERSON, ETCD("etcd-main", "", ""), -1, 0,
      "it is the claim of member etcd-main-3 of Etcd etcd-main, which is not being deleted" },
    { "ordinals from 2: ordinal 1 is no running member's, but the live Etcd's claim",
      WH_HOOK_SCALEGUARD, "data-etcd-main-1", LBL_MAIN, DRUID, ETCD("etcd-main", "", ""), 2, 0,
      "it is the claim of member etcd-main-1 of Etcd etcd-main, which is not being deleted" },
    { "ordinals from 2: ordinal 4 is", WH_HOOK_SCALEGUARD, "data-etcd-main-4", LBL_MAIN, DRUID,
      ETCD("etcd-main", "", ""), 2, 0, "ordinals [2, 5)" },
    { "a leading zero is no member's ordinal", WH_HOOK_SCALEGUARD, "data-etcd-main-01", LBL_MAIN,
      DRUID, ETCD("etcd-main", "", ""), -1, 1, "is no running member's" },
    { "the StatefulSet gone, the Etcd live: its claim stays", WH_HOOK_SCALEGUARD,
      "data-etcd-main-0", NULL, DRUID, ETCD("etcd-main", "", ""), -2, 0,
      "it is the claim of member etcd-main-0 of Etcd etcd-main" },
    { "the StatefulSet gone, the Etcd being deleted: etcd-druid deletes its PVCs",
      WH_HOOK_SCALEGUARD, "data-etcd-main-0", NULL, DRUID,
      "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"uid\":\"uid-e\","
      "\"deletionTimestamp\":\"2026-11-18T00:00:00Z\"},\"spec\":{\"replicas\":3}}",
      -2, 1, "is no running member's" },
    { "break glass lets etcd-druid through", WH_HOOK_COMPONENTS, "data-etcd-main-0", LBL_MAIN,
      DRUID, ETCD("etcd-main", GLASS_OK, ""), -1, 1, "by etcd-druid is allowed" },
    { "guard only: break glass", WH_HOOK_SCALEGUARD, "data-etcd-main-0", LBL_MAIN, PERSON,
      ETCD("etcd-main", GLASS_OK, ""), -1, 1,
      "deletion of PersistentVolumeClaim shoot/data-etcd-main-0 allowed" },
    { "an expired break glass does not count", WH_HOOK_COMPONENTS, "data-etcd-main-0", LBL_MAIN,
      DRUID, ETCD("etcd-main", GLASS_OLD, ""), -1, 0, "expired at 2026-11-01T00:00:00Z" },
    { "break glass does not lift component protection", WH_HOOK_COMPONENTS, "data-etcd-main-0",
      LBL_MAIN, PERSON, ETCD("etcd-main", GLASS_OK, ""), -1, 0,
      "changes from service account " PERSON " are disallowed" },
};

#define NPROWS (sizeof(prows) / sizeof(prows[0]))

ParameterizedTestParameters(guard_shapes, member_pvcs)
{
    static size_t idx[NPROWS];

    return testutil_row_params(idx, NPROWS);
}

ParameterizedTest(size_t *i, guard_shapes, member_pvcs)
{
    const struct prow *t = &prows[*i];
    char sts[1024] = "[]";
    char *body = pvc_delete(t->pvc, t->labels, t->user);
    cJSON *doc;
    const char *warning;

    if (t->start > -2)
        sts_at(t->start, sts, sizeof(sts));
    doc = decide_with(t->hook, t->etcd, sts, 3, NULL, body);
    guardfix_expect(doc, t->title, t->allowed, t->message);
    warning = kjson_get_str(doc, "response.warnings.0");
    if (strstr(t->title, "break glass lets") || strstr(t->title, "guard only: break glass"))
        cr_expect(warning && strstr(warning, "allowed by annotation"), "%s: warning %s", t->title,
                  warning ? warning : "(none)");
    cJSON_Delete(doc);
    free(body);
}

/* A CREATE (or an UPDATE from no owners) of PVC name with owner references refs, by user. */
static char *pvc_write(const char *op, const char *name, const char *refs, const char *user)
{
    char *body = malloc(4096);

    cr_assert_not_null(body);
    snprintf(body, 4096,
             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
             "\"uid\":\"0000-4444\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":"
             "\"PersistentVolumeClaim\"},\"resource\":{\"group\":\"\",\"version\":\"v1\","
             "\"resource\":\"persistentvolumeclaims\"},\"name\":\"%s\",\"namespace\":\"shoot\","
             "\"operation\":\"%s\",\"userInfo\":{\"username\":\"%s\"},\"object\":{\"metadata\":{"
             "\"namespace\":\"shoot\",\"name\":\"%s\",\"ownerReferences\":%s}},\"oldObject\":%s}}",
             name, op, user, name, refs,
             strcmp(op, "UPDATE") == 0 ? "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"x\"}}"
                                       : "null");
    return body;
}

#define REF(av, kind, name) \
    "{\"apiVersion\":\"" av "\",\"kind\":\"" kind "\",\"name\":\"" name "\",\"uid\":\"u\"}"
#define BAIT "cannot be owned by ConfigMap bait"

struct wrow {
    const char *title;
    enum wh_hook hook;
    const char *op, *pvc, *refs, *user;
    int allowed;
    const char *message;
};

/*
 * Issue 30, third attack: a claim planted with a member's name and an owner of one's own
 * goes with that owner (the garbage collector). A member-named PVC is owned only by its
 * StatefulSet, its Etcd or its Pod, whoever writes it.
 */
static const struct wrow wrows[] = {
    { "a tenant plants a member claim owned by her ConfigMap", WH_HOOK_COMPONENTS, "CREATE",
      "data-etcd-main-0", "[" REF("v1", "ConfigMap", "bait") "]", PERSON, 0, BAIT },
    { "guard only: the same", WH_HOOK_SCALEGUARD, "CREATE", "data-etcd-main-4",
      "[" REF("v1", "ConfigMap", "bait") "]", PERSON, 0, "claim of member etcd-main-4" },
    { "etcd-druid adds a ConfigMap owner", WH_HOOK_COMPONENTS, "UPDATE", "data-etcd-main-1",
      "[" REF("apps/v1", "StatefulSet", "etcd-main") "," REF("v1", "ConfigMap", "bait") "]", DRUID,
      0, BAIT },
    { "owned by another StatefulSet", WH_HOOK_SCALEGUARD, "CREATE", "data-etcd-main-0",
      "[" REF("apps/v1", "StatefulSet", "mine") "]", PERSON, 0, "by StatefulSet mine" },
    { "owned by another member's Pod", WH_HOOK_SCALEGUARD, "CREATE", "data-etcd-main-0",
      "[" REF("v1", "Pod", "etcd-main-1") "]", PERSON, 0, "by Pod etcd-main-1" },
    { "a Pod kind of another group", WH_HOOK_SCALEGUARD, "CREATE", "data-etcd-main-0",
      "[" REF("example.com/v1", "Pod", "etcd-main-0") "]", PERSON, 0, "by Pod etcd-main-0" },
    { "owned by its StatefulSet and its Pod (retention policy)", WH_HOOK_COMPONENTS, "CREATE",
      "data-etcd-main-0",
      "[" REF("apps/v1", "StatefulSet", "etcd-main") "," REF("v1", "Pod", "etcd-main-0") "]",
      PERSON, 1, "operation CREATE is allowed" },
    { "owned by its Etcd", WH_HOOK_SCALEGUARD, "CREATE", "data-etcd-main-2",
      "[" REF("druid.gardener.cloud/v1alpha1", "Etcd", "etcd-main") "]", PERSON, 1,
      "not a scale-down to 0" },
    { "no Etcd of that name", WH_HOOK_COMPONENTS, "CREATE", "data-nope-0",
      "[" REF("v1", "ConfigMap", "bait") "]", PERSON, 1, "operation CREATE is allowed" },
    { "no ordinal in the name", WH_HOOK_COMPONENTS, "CREATE", "data-etcd-main",
      "[" REF("v1", "ConfigMap", "bait") "]", PERSON, 1, "operation CREATE is allowed" },
};

#define NWROWS (sizeof(wrows) / sizeof(wrows[0]))

ParameterizedTestParameters(guard_shapes, member_pvc_owners)
{
    static size_t idx[NWROWS];

    return testutil_row_params(idx, NWROWS);
}

ParameterizedTest(size_t *i, guard_shapes, member_pvc_owners)
{
    const struct wrow *t = &wrows[*i];
    char *body = pvc_write(t->op, t->pvc, t->refs, t->user);
    cJSON *doc = decide_body(t->hook, ETCD("etcd-main", "", ""), 0, body);

    guardfix_expect(doc, t->title, t->allowed, t->message);
    cJSON_Delete(doc);
    free(body);
}

/*
 * Issue 30, break glass once: one value lets one member PVC deletion through; a request
 * refused for another reason (component protection) does not use it up, and the second
 * request on the value is refused saying when it was used and by whom.
 */
Test(guard_shapes, break_glass_lets_one_request_through)
{
    static const struct {
        const char *pvc, *user;
        int allowed, recorded;
        const char *message;
    } steps[] = {
        { "data-etcd-main-0", PERSON, 0, 0, "changes from service account " PERSON },
        { "data-etcd-main-0", DRUID, 1, 1, "by etcd-druid is allowed" },
        { "data-etcd-main-1", DRUID, 0, 1, "its value was used at " },
    };
    cJSON *store = cJSON_CreateArray(), *doc;
    char sts[1024], *body;

    sts_at(-1, sts, sizeof(sts));
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        body = pvc_delete(steps[i].pvc, LBL_MAIN, steps[i].user);
        doc = decide_with(WH_HOOK_COMPONENTS, ETCD("etcd-main", GLASS_OK, ""), sts, 3, store, body);
        guardfix_expect(doc, steps[i].pvc, steps[i].allowed, steps[i].message);
        cr_expect_eq(cJSON_GetArraySize(store), steps[i].recorded, "step %zu", i);
        cJSON_Delete(doc);
        free(body);
    }
    cr_expect(strstr(cJSON_GetStringValue(
                         cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(store, 0), "user")),
                     "etcd-druid"));
    cJSON_Delete(store);
}

/*
 * Break glass once on the scale-down guard's paths: a partial scale-down admitted on the
 * value is recorded, through the components webhook and the guard-only one alike; one
 * refused by component protection (a person) records nothing; the next on the value is
 * refused saying it was used.
 */
Test(guard_shapes, break_glass_lets_one_scale_down_through)
{
    static const struct {
        enum wh_hook hook;
        const char *user;
        int to, allowed, recorded;
        const char *message;
    } steps[] = {
        { WH_HOOK_COMPONENTS, PERSON, 2, 0, 0, "changes from service account " PERSON },
        { WH_HOOK_SCALEGUARD, PERSON, 2, 1, 1,
          "scale-down of StatefulSet shoot/etcd-main allowed" },
        { WH_HOOK_SCALEGUARD, DRUID, 1, 0, 1, "its value was used at " },
        { WH_HOOK_COMPONENTS, DRUID, 2, 0, 1, "its value was used at " },
    };
    cJSON *store = cJSON_CreateArray(), *doc;
    char *body;

    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        body = sts_review("UPDATE", steps[i].user, -1, 3, -1, steps[i].to);
        doc = decide_with(steps[i].hook, ETCD("etcd-main", GLASS_OK, ""), stses, 3, store, body);
        guardfix_expect(doc, "etcd-main", steps[i].allowed, steps[i].message);
        cr_expect_eq(cJSON_GetArraySize(store), steps[i].recorded, "step %zu", i);
        cJSON_Delete(doc);
        free(body);
    }
    cr_expect(strstr(cJSON_GetStringValue(
                         cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(store, 0), "what")),
                     "from 3 to 2 replicas"));
    cJSON_Delete(store);
}
