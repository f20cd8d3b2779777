/*
 * Tests of the claim-in-use rule (webhook/pvcguard's pvcguard_in_use; issue 30, fifth attack):
 * a StatefulSet deleted with its pods orphaned (etcd-druid does it before re-creating one; a
 * tenant with protection disabled may) leaves claims no StatefulSet holds while the member
 * pods still mount them. A DELETE of such a claim is refused for everyone while a pod
 * "<Etcd>-<n>" of a live Etcd mounts it, as the API server lists the pods; break glass aside.
 * Each sent through the decode - decide - encode pipeline with in-memory lookups, on both
 * endpoints and through both review decoders.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "tests/support/guardfix.h"
#include "tests/support/testutil.h"
#include "webhook/protect.h"
#include "webhook/wh_dispatch.h"

#define DRUID    GUARDFIX_DRUID
#define WARDEN   GUARDFIX_WARDEN
#define PERSON   GUARDFIX_PERSON
#define ANN_OPEN "\"druid.gardener.cloud/disable-etcd-component-protection\":\"\""
#define GLASS    "\"etcd-warden.io/allow-scale-down-without-snapshot\":"
#define GLASS_OK GLASS "\"2026-11-20T00:00:00Z volume lost\""
#define ETCD(ann, extra)                                                                    \
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"uid\":\"uid-e\"" extra \
    ",\"annotations\":{" ann "}},\"spec\":{\"replicas\":3}}"
#define LBL_MAIN                                                            \
    "{\"app.kubernetes.io/managed-by\":\"etcd-druid\",\"app.kubernetes.io/" \
    "part-of\":\"etcd-main\"}"

/* Pod name mounting claim (NULL: none), being deleted when deleting. */
static cJSON *pod(const char *name, const char *claim, int deleting)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"%s\"%s},\"spec\":{\"volumes\":["
             "{\"name\":\"config\",\"configMap\":{\"name\":\"c\"}}%s%s%s]}}",
             name, deleting ? ",\"deletionTimestamp\":\"2026-11-18T00:00:00Z\"" : "",
             claim ? ",{\"name\":\"etcd-main\",\"persistentVolumeClaim\":{\"claimName\":\"" : "",
             claim ? claim : "", claim ? "\"}}" : "");
    return cJSON_Parse(text);
}

/* A DELETE of PVC name (labels: a JSON object or NULL) by user. */
static char *pvc_delete(const char *name, const char *labels, const char *user)
{
    char *body = malloc(2048);

    cr_assert_not_null(body);
    snprintf(body, 2048,
             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
             "\"uid\":\"0000-5555\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":"
             "\"PersistentVolumeClaim\"},\"resource\":{\"group\":\"\",\"version\":\"v1\","
             "\"resource\":\"persistentvolumeclaims\"},\"name\":\"%s\",\"namespace\":\"shoot\","
             "\"operation\":\"DELETE\",\"userInfo\":{\"username\":\"%s\"},\"object\":null,"
             "\"oldObject\":{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"%s\"%s%s}}}}",
             name, user, name, labels ? ",\"labels\":" : "", labels ? labels : "");
    return body;
}

struct row {
    const char *title;
    enum wh_hook hook;
    const char *pvc, *labels, *user, *etcd;
    const char *pod, *mounted; /* a pod of that name mounting claim mounted (NULL: none) */
    int pod_deleting;
    int fail; /* the pod LIST fails */
    int allowed;
    const char *message;
};

#define INUSE      "mounts it (its StatefulSet does not hold it"
#define LIVE_CLAIM "of Etcd etcd-main, which is not being deleted"

static const struct row rows[] = {
    { "O1: etcd-druid orphaned the StatefulSet, a person deletes member 0's claim",
      WH_HOOK_COMPONENTS, "etcd-main-etcd-main-0", LBL_MAIN, PERSON, ETCD("", ""), "etcd-main-0",
      "etcd-main-etcd-main-0", 0, 0, 0, "pod etcd-main-0, member 0 of Etcd etcd-main, " INUSE },
    { "O2: protection disabled, by label", WH_HOOK_COMPONENTS, "etcd-main-etcd-main-2", LBL_MAIN,
      PERSON, ETCD(ANN_OPEN, ""), "etcd-main-2", "etcd-main-etcd-main-2", 0, 0, 0, INUSE },
    { "guard only: etcd-druid itself", WH_HOOK_SCALEGUARD, "data-etcd-main-1", NULL, DRUID,
      ETCD("", ""), "etcd-main-1", "data-etcd-main-1", 0, 0, 0, INUSE },
    { "break glass lets it through", WH_HOOK_SCALEGUARD, "data-etcd-main-1", NULL, PERSON,
      ETCD(GLASS_OK, ""), "etcd-main-1", "data-etcd-main-1", 0, 0, 1, "is no running member's" },
    { "the pod mounts another claim: a claim past the Etcd's replicas is still the live Etcd's",
      WH_HOOK_SCALEGUARD, "data-etcd-main-5", NULL, PERSON, ETCD("", ""), "etcd-main-1",
      "data-etcd-main-9", 0, 0, 0,
      "it is the claim of member etcd-main-5 of Etcd etcd-main, which is not being deleted" },
    { "the pod mounts another claim: still the live Etcd's claim", WH_HOOK_SCALEGUARD,
      "data-etcd-main-1", NULL, PERSON, ETCD("", ""), "etcd-main-1", "data-etcd-main-9", 0, 0, 0,
      LIVE_CLAIM },
    { "P2: the pod is being deleted: still the live Etcd's claim", WH_HOOK_SCALEGUARD,
      "data-etcd-main-1", NULL, PERSON, ETCD("", ""), "etcd-main-1", "data-etcd-main-1", 1, 0, 0,
      LIVE_CLAIM },
    { "the Etcd is being deleted", WH_HOOK_SCALEGUARD, "data-etcd-main-1", NULL, DRUID,
      ETCD("", ",\"deletionTimestamp\":\"2026-11-18T00:00:00Z\""), "etcd-main-1",
      "data-etcd-main-1", 0, 0, 1, "is no running member's" },
    { "a pod of no Etcd's name", WH_HOOK_SCALEGUARD, "data-web-1", NULL, PERSON, ETCD("", ""),
      "web-1", "data-web-1", 0, 0, 1, "is no running member's" },
    { "the pods cannot be listed: 500", WH_HOOK_SCALEGUARD, "data-etcd-main-1", NULL, PERSON,
      ETCD("", ""), NULL, NULL, 0, 1, 0, "could not be listed" },
    { "not a member claim's shape: nothing listed", WH_HOOK_SCALEGUARD, "scratch", NULL, PERSON,
      ETCD("", ""), NULL, NULL, 0, 1, 1, "" },
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* The pod LIST failing (the API server unreachable). */
static enum kerr no_pods(void *ctx, const char *ns, cJSON **items, struct kerr_info *err)
{
    (void)ctx;
    (void)ns;
    *items = NULL;
    return kerr_set(err, KERR_TIMEOUT, "the API server did not answer");
}

/* The break glass uses decide records (mem.glass), NULL: none recorded. */
static cJSON *glass_store;

static cJSON *decide(const struct row *t, const char *body)
{
    struct protect_config cfg;
    struct lookup_mem mem = { 0 };
    struct lookup lk;
    cJSON *etcds = cJSON_CreateArray(), *sts = cJSON_CreateArray(), *tasks = cJSON_CreateArray();
    cJSON *pods = cJSON_CreateArray(), *doc;

    guardfix_config(&cfg);
    cJSON_AddItemToArray(etcds, cJSON_Parse(t->etcd));
    if (t->pod)
        cJSON_AddItemToArray(pods, pod(t->pod, t->mounted, t->pod_deleting));
    mem.etcds = etcds;
    mem.stses = sts;
    mem.tasks = tasks;
    mem.pods = pods;
    mem.glass = glass_store;
    lookup_mem_bind(&mem, &lk);
    if (t->fail)
        lk.pod_items = no_pods;
    doc = guardfix_dispatch(&cfg, &mem, &lk, t->hook, !t->fail && !glass_store, body);
    cJSON_Delete(etcds);
    cJSON_Delete(sts);
    cJSON_Delete(tasks);
    cJSON_Delete(pods);
    return doc;
}

ParameterizedTestParameters(pvcinuse, rows)
{
    static size_t idx[NROWS];

    return testutil_row_params(idx, NROWS);
}

ParameterizedTest(size_t *i, pvcinuse, rows)
{
    const struct row *t = &rows[*i];
    char *body = pvc_delete(t->pvc, t->labels, t->user);
    cJSON *doc = decide(t, body);

    guardfix_expect(doc, t->title, t->allowed, t->message);
    cJSON_Delete(doc);
    free(body);
}

/*
 * Break glass once: a claim a member still mounts deleted on the value is recorded, and the
 * next on the value is refused saying it was used, on either endpoint.
 */
Test(pvcinuse, break_glass_lets_one_deletion_through)
{
    static const struct row steps[] = {
        { "the first", WH_HOOK_COMPONENTS, "data-etcd-main-1", NULL, PERSON, ETCD(GLASS_OK, ""),
          "etcd-main-1", "data-etcd-main-1", 0, 0, 1, "is not supported by EtcdComponents" },
        { "the second", WH_HOOK_SCALEGUARD, "data-etcd-main-2", NULL, DRUID, ETCD(GLASS_OK, ""),
          "etcd-main-2", "data-etcd-main-2", 0, 0, 0, "its value was used at " },
        { "the second, components", WH_HOOK_COMPONENTS, "data-etcd-main-2", NULL, DRUID,
          ETCD(GLASS_OK, ""), "etcd-main-2", "data-etcd-main-2", 0, 0, 0,
          "its value was used at " },
    };
    static const int recorded[] = { 1, 1, 1 };
    cJSON *doc;
    char *body;

    glass_store = cJSON_CreateArray();
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        body = pvc_delete(steps[i].pvc, steps[i].labels, steps[i].user);
        doc = decide(&steps[i], body);
        guardfix_expect(doc, steps[i].title, steps[i].allowed, steps[i].message);
        cr_expect_eq(cJSON_GetArraySize(glass_store), recorded[i], "%s", steps[i].title);
        cJSON_Delete(doc);
        free(body);
    }
    cJSON_Delete(glass_store);
    glass_store = NULL;
}
