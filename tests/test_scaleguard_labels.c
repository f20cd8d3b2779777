/*
 * Tests of the scale-down guard of webhook/protect, decided from the old
 * object: the labels that decide whether a StatefulSet is checked, a DELETE
 * that takes its pods, a CREATE over member pods that still run. One row per
 * rule, each answered by warden-webhook's dispatcher over in-memory lookups.
 * test_scaleguard.c holds the scale-down rows.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "tests/support/guardfix.h"
#include "tests/support/scaleguardfix.h"
#include "tests/support/testutil.h"
#include "webhook/protect.h"

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
