/*
 * Tests of the member-volume guard on StatefulSets (webhook/pvcguard; issue 30).
 * pvcguard_planted: a claim named "<template>-<StatefulSet>-<n>" planted with an owner of one's own
 * before the Etcd existed (pvcguard_owners refuses it only while the Etcd exists) would be
 * taken by member n as it is, and the garbage collector would delete it with that owner. So
 * a CREATE of an Etcd's StatefulSet, or an UPDATE (or scale) that brings ordinals in, is
 * refused while such a claim of an ordinal it brings in exists in its namespace, as the API
 * server lists the PVCs (lookup.pvcs). mntguard_mounts: an UPDATE of a StatefulSet with
 * running members after which a container no longer mounts a claim's volume as it did (an
 * emptyDir put at the data directory) is refused for everyone, as a running member's PVC
 * DELETE is. Each sent through the decode - decide - encode pipeline with in-memory lookups,
 * on both endpoints and through both review decoders. The adoption of running pods and the
 * claims made from a data source are test_pvcsts_adopt.c.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "tests/support/guardfix.h"
#include "tests/support/pvcstsfix.h"
#include "tests/support/testutil.h"
#include "webhook/protect.h"
#include "webhook/wh_dispatch.h"

#define WARDEN GUARDFIX_WARDEN
#define BAIT   "[" REF("v1", "ConfigMap", "bait") "]"

struct row {
    const char *title;
    enum wh_hook hook;
    const char *op, *user, *etcd;
    int labelled, from, to;
    const char *pvc, *ns, *refs; /* the PVC listed (pvc NULL: none) */
    int allowed;
    const char *message;
};

#define PLANTED "which is owned by ConfigMap bait"

static const struct row rows[] = {
    { "etcd-druid creates the StatefulSet over a claim planted before the Etcd", WH_HOOK_COMPONENTS,
      "CREATE", DRUID, ETCD(""), 1, 0, 3, "etcd-main-etcd-main-0", "shoot", BAIT, 0,
      "creating StatefulSet shoot/etcd-main of Etcd etcd-main is refused: its member "
      "etcd-main-0 would use PersistentVolumeClaim shoot/etcd-main-etcd-main-0, " PLANTED },
    { "guard only: the same", WH_HOOK_SCALEGUARD, "CREATE", DRUID, ETCD(""), 1, 0, 3,
      "etcd-main-etcd-main-2", "shoot", BAIT, 0, "its member etcd-main-2 would use" },
    { "without etcd-druid's labels (an Etcd of its name)", WH_HOOK_COMPONENTS, "CREATE", PERSON,
      ETCD(""), 0, 0, 3, "etcd-main-etcd-main-1", "shoot", BAIT, 0, PLANTED },
    { "protection disabled: still refused", WH_HOOK_COMPONENTS, "CREATE", PERSON, ETCD(ANN_OPEN), 1,
      0, 3, "etcd-main-etcd-main-1", "shoot", BAIT, 0, PLANTED },
    { "kubectl scale: a Scale names no template, every name counts", WH_HOOK_SCALEGUARD, "SCALE",
      PERSON, ETCD(""), 1, 1, 2, "data-etcd-main-1", "shoot", BAIT, 0,
      "PersistentVolumeClaim shoot/data-etcd-main-1" },
    { "owned by another StatefulSet", WH_HOOK_SCALEGUARD, "CREATE", DRUID, ETCD(""), 1, 0, 3,
      "etcd-main-etcd-main-0", "shoot", "[" REF("apps/v1", "StatefulSet", "mine") "]", 0,
      "which is owned by StatefulSet mine" },
    { "owned by another member's Pod", WH_HOOK_SCALEGUARD, "CREATE", DRUID, ETCD(""), 1, 0, 3,
      "etcd-main-etcd-main-0", "shoot", "[" REF("v1", "Pod", "etcd-main-1") "]", 0,
      "which is owned by Pod etcd-main-1" },
    { "a scale-up brings a planted claim in", WH_HOOK_COMPONENTS, "UPDATE", DRUID, ETCD(""), 1, 1,
      3, "etcd-main-etcd-main-2", "shoot", BAIT, 0,
      "scaling up StatefulSet shoot/etcd-main of Etcd etcd-main is refused: its member "
      "etcd-main-2" },
    { "guard only: a scale-up without labels", WH_HOOK_SCALEGUARD, "UPDATE", PERSON, ETCD(""), 0, 1,
      3, "etcd-main-etcd-main-1", "shoot", BAIT, 0, PLANTED },
    { "kubectl scale brings a planted claim in", WH_HOOK_SCALEGUARD, "SCALE", PERSON, ETCD(""), 1,
      1, 2, "etcd-main-etcd-main-1", "shoot", BAIT, 0, PLANTED },
    /* allowed */
    { "owned by its StatefulSet and its Pod", WH_HOOK_COMPONENTS, "CREATE", DRUID, ETCD(""), 1, 0,
      3, "etcd-main-etcd-main-0", "shoot",
      "[" REF("apps/v1", "StatefulSet", "etcd-main") "," REF("v1", "Pod", "etcd-main-0") "]", 1,
      "allowed" },
    { "owned by its Etcd", WH_HOOK_SCALEGUARD, "CREATE", DRUID, ETCD(""), 1, 0, 3,
      "etcd-main-etcd-main-0", "shoot",
      "[" REF("druid.gardener.cloud/v1alpha1", "Etcd", "etcd-main") "]", 1, "allowed" },
    { "a claim without owners", WH_HOOK_SCALEGUARD, "CREATE", DRUID, ETCD(""), 1, 0, 3,
      "etcd-main-etcd-main-0", "shoot", NULL, 1, "allowed" },
    { "an ordinal it does not run", WH_HOOK_SCALEGUARD, "CREATE", DRUID, ETCD(""), 1, 0, 3,
      "etcd-main-etcd-main-3", "shoot", BAIT, 1, "allowed" },
    { "another namespace's claim", WH_HOOK_COMPONENTS, "CREATE", DRUID, ETCD(""), 1, 0, 3,
      "etcd-main-etcd-main-0", "other", BAIT, 1, "allowed" },
    { "another StatefulSet's claim", WH_HOOK_COMPONENTS, "CREATE", DRUID, ETCD(""), 1, 0, 3,
      "etcd-main-etcd-other-0", "shoot", BAIT, 1, "allowed" },
    { "a scale-up keeps the ordinals it had", WH_HOOK_COMPONENTS, "UPDATE", DRUID, ETCD(""), 1, 2,
      3, "etcd-main-etcd-main-1", "shoot", BAIT, 1, "allowed" },
    { "an UPDATE that brings no ordinal in", WH_HOOK_SCALEGUARD, "UPDATE", PERSON, ETCD(""), 0, 3,
      3, "etcd-main-etcd-main-1", "shoot", BAIT, 1, "not a scale-down" },
    { "a PVC without a name in the list", WH_HOOK_SCALEGUARD, "CREATE", DRUID, ETCD(""), 1, 0, 3,
      "", "shoot", BAIT, 1, "allowed" },
    { "a scale-up: a template the StatefulSet has not", WH_HOOK_SCALEGUARD, "UPDATE", DRUID,
      ETCD(""), 1, 1, 3, "data-etcd-main-1", "shoot", BAIT, 1, "allowed" },
    { "the claim of StatefulSet t-etcd-main (template t), named as one of etcd-main's",
      WH_HOOK_COMPONENTS, "UPDATE", DRUID, ETCD(""), 1, 0, 3, "t-t-etcd-main-0", "shoot",
      "[" REF("apps/v1", "StatefulSet", "t-etcd-main") "]", 1, "allowed" },
    { "a CREATE at 0 replicas runs no member", WH_HOOK_SCALEGUARD, "CREATE", DRUID, ETCD(""), 1, 0,
      0, "etcd-main-etcd-main-0", "shoot", BAIT, 1, "allowed" },
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

ParameterizedTestParameters(pvcsts, planted)
{
    static size_t idx[NROWS];

    return testutil_row_params(idx, NROWS);
}

ParameterizedTest(size_t *i, pvcsts, planted)
{
    const struct row *t = &rows[*i];
    char *body = review(t->op, t->user, t->labelled, t->from, t->to);
    cJSON *pvcs = pvc_list(t->pvc, t->ns, t->refs);
    cJSON *doc = decide(t->hook, t->etcd, pvcs, 0, body);
    const char *msg = kjson_get_str(doc, "response.status.message");

    guardfix_expect(doc, t->title, t->allowed, t->message);
    if (!t->allowed)
        cr_expect(msg && strstr(msg, "kubectl patch pvc -n shoot ") &&
                      strstr(msg, "or delete the claim"),
                  "%s: what to do: %s", t->title, msg ? msg : "(none)");
    cJSON_Delete(doc);
    cJSON_Delete(pvcs);
    free(body);
}

/* No answer from the API server: the claims cannot be told, and nothing is admitted unchecked. */
Test(pvcsts, an_unanswered_pvc_list_is_500)
{
    static const enum wh_hook hooks[] = { WH_HOOK_COMPONENTS, WH_HOOK_SCALEGUARD };
    char *bodies[] = { review("CREATE", DRUID, 1, 0, 3), review("UPDATE", DRUID, 1, 1, 3) };
    int64_t code = 0;
    size_t i, j;

    for (i = 0; i < 2; i++) {
        for (j = 0; j < 2; j++) {
            cJSON *doc = decide(hooks[i], ETCD(""), NULL, 1, bodies[j]);
            const char *msg = kjson_get_str(doc, "response.status.message");
            bool allowed = true;

            cr_assert_eq(kjson_get_bool(doc, "response.allowed", &allowed), KERR_OK);
            cr_expect(!allowed, "hook %zu body %zu: admitted", i, j);
            cr_assert_eq(kjson_get_int64(doc, "response.status.code", &code), KERR_OK);
            cr_expect_eq(code, 500, "hook %zu body %zu: code %lld", i, j, (long long)code);
            cr_expect(msg && strstr(msg, "connection refused") &&
                          strstr(msg, "not admitted unchecked"),
                      "hook %zu body %zu: message %s", i, j, msg ? msg : "(none)");
            cJSON_Delete(doc);
        }
    }
    free(bodies[0]);
    free(bodies[1]);
}

#define UNMOUNTED(c) "its container " c " would no longer mount the members' claim volume etcd-main"
#define CTR_BR_WITH(mount)                                                                  \
    "{\"name\":\"backup-restore\",\"volumeMounts\":[{\"name\":\"etcd-main\",\"mountPath\":" \
    "\"/var/etcd/data\"}," CONF "," mount "]}"
#define COVERED(c, path)                                                                       \
    "its container " c " would mount volume scratch at " path ", at or below where it mounts " \
    "the members' claim volume etcd-main (/var/etcd/data)"

struct mrow {
    const char *title;
    enum wh_hook hook;
    const char *user, *etcd;
    int labelled, replicas;
    const char *ctrs; /* the new template's containers (the old one's: CTRS) */
    int allowed;
    const char *message, *warning;
};

static const struct mrow mrows[] = {
    { "a tenant (protection disabled) puts an emptyDir at the data directory", WH_HOOK_COMPONENTS,
      PERSON, ETCD(ANN_OPEN), 1, 3,
      "[" CTR_ETCD("[" DATA("scratch", "") "," CFG "]") "," CTR_BR "]", 0,
      "updating StatefulSet shoot/etcd-main of Etcd etcd-main is refused: " UNMOUNTED(
          "etcd") " at /var/etcd/data",
      NULL },
    { "guard only: etcd-druid itself", WH_HOOK_SCALEGUARD, DRUID, ETCD(""), 1, 3,
      "[" CTR_ETCD("[" DATA("scratch", "") "]") "," CTR_BR "]", 0, UNMOUNTED("etcd"), NULL },
    { "guard only: without etcd-druid's labels", WH_HOOK_SCALEGUARD, PERSON, ETCD(ANN_OPEN), 0, 3,
      "[" CTR_ETCD("[" DATA("scratch", "") "]") "," CTR_BR "]", 0, UNMOUNTED("etcd"), NULL },
    { "the sidecar's mount dropped", WH_HOOK_COMPONENTS, PERSON, ETCD(ANN_OPEN), 1, 3,
      "[" CTR_ETCD("[" DATA("etcd-main",
                            "") "," CFG "]") ",{\"name\":\"backup-restore\",\"volumeMounts\":[" CONF
                                             "]}]",
      0, UNMOUNTED("backup-restore"), NULL },
    { "the etcd container removed", WH_HOOK_SCALEGUARD, PERSON, ETCD(ANN_OPEN), 1, 3,
      "[" CTR_BR "]", 0, UNMOUNTED("etcd"), NULL },
    { "a subPath put in", WH_HOOK_SCALEGUARD, PERSON, ETCD(ANN_OPEN), 1, 3,
      "[" CTR_ETCD("[" DATA("etcd-main", ",\"subPath\":\"new\"") "," CFG "]") "," CTR_BR "]", 0,
      UNMOUNTED("etcd"), NULL },
    { "the claim mounted elsewhere", WH_HOOK_SCALEGUARD, PERSON, ETCD(ANN_OPEN), 1, 3,
      "[" CTR_ETCD("[{\"name\":\"etcd-main\",\"mountPath\":\"/data\"}," CFG "]") "," CTR_BR "]", 0,
      UNMOUNTED("etcd"), NULL },
    { "hibernated: the members wake on the new template", WH_HOOK_SCALEGUARD, PERSON,
      ETCD(ANN_OPEN), 1, 0, "[" CTR_ETCD("[" DATA("scratch", "") "]") "," CTR_BR "]", 0,
      UNMOUNTED("etcd"), NULL },
    { "an emptyDir at etcd's --data-dir under the claim's mount", WH_HOOK_COMPONENTS, PERSON,
      ETCD(ANN_OPEN), 1, 3,
      "[" CTR_ETCD("[" DATA("etcd-main", "") "," CFG "," NEWETCD("") "]") "," CTR_BR "]", 0,
      COVERED("etcd", "/var/etcd/data/new.etcd"), NULL },
    { "guard only: the sidecar's data directory covered", WH_HOOK_SCALEGUARD, DRUID, ETCD(""), 1, 3,
      "[" CTR_ETCD("[" DATA("etcd-main", "") "," CFG "]") "," CTR_BR_WITH(NEWETCD("")) "]", 0,
      COVERED("backup-restore", "/var/etcd/data/new.etcd"), NULL },
    { "the same path spelled with slashes and a dot", WH_HOOK_SCALEGUARD, PERSON, ETCD(ANN_OPEN), 1,
      3,
      "[" CTR_ETCD("[" DATA("etcd-main", "") "," CFG ",{\"name\":\"scratch\",\"mountPath\":"
                                             "\"//var/etcd//data/./new.etcd/\"}]") "," CTR_BR "]",
      0, COVERED("etcd", "//var/etcd//data/./new.etcd/"), NULL },
    { "a second mount of the claim's volume with a sub path over it", WH_HOOK_SCALEGUARD, PERSON,
      ETCD(ANN_OPEN), 1, 3,
      "[" CTR_ETCD("[" DATA("etcd-main", "") "," CFG
                                             ",{\"name\":\"etcd-main\",\"mountPath\":\"/var/etcd/"
                                             "data/new.etcd\",\"subPath\":\"x\"}]") "," CTR_BR "]",
      0, "its container etcd would mount volume etcd-main at /var/etcd/data/new.etcd, at or below",
      NULL },
    /* allowed */
    { "break glass lets a covering mount through", WH_HOOK_SCALEGUARD, PERSON,
      ETCD(ANN_OPEN "," GLASS_OK), 1, 3,
      "[" CTR_ETCD("[" DATA("etcd-main", "") "," CFG "," NEWETCD("") "]") "," CTR_BR "]", 1,
      "allowed",
      "mounts volume scratch at /var/etcd/data/new.etcd over the claim volume etcd-main" },
    { "a mount above the data directory, or beside it", WH_HOOK_SCALEGUARD, PERSON, ETCD(ANN_OPEN),
      1, 3,
      "[" CTR_ETCD("[" DATA(
          "etcd-main",
          "") "," CFG ",{\"name\":\"a\",\"mountPath\":"
              "\"/var/etcd\"},{\"name\":\"b\",\"mountPath\":\"/var/etcd/database\"}]") "," CTR_BR
                                                                                       "]",
      1, "not a scale-down", NULL },
    { "break glass lets it through", WH_HOOK_SCALEGUARD, PERSON, ETCD(ANN_OPEN "," GLASS_OK), 1, 3,
      "[" CTR_ETCD("[" DATA("scratch", "") "]") "," CTR_BR "]", 1, "allowed",
      "no longer mounts the claim volume etcd-main at /var/etcd/data, allowed by annotation" },
    { "the same template", WH_HOOK_COMPONENTS, DRUID, ETCD(""), 1, 3, CTRS, 1, "allowed", NULL },
    { "another volume's mount changed", WH_HOOK_COMPONENTS, PERSON, ETCD(ANN_OPEN), 1, 3,
      "[" CTR_ETCD("[" DATA("etcd-main", "") "]") "," CTR_BR "]", 1, "allowed", NULL },
    { "a mount added, the mounts reordered", WH_HOOK_SCALEGUARD, PERSON, ETCD(ANN_OPEN), 1, 3,
      "[" CTR_BR
      "," CTR_ETCD("[" CFG ",{\"name\":\"x\",\"mountPath\":\"/x\"}," DATA("etcd-main", "") "]") "]",
      1, "not a scale-down", NULL },

};

#define NMROWS (sizeof(mrows) / sizeof(mrows[0]))

ParameterizedTestParameters(pvcsts, mounts)
{
    static size_t idx[NMROWS];

    return testutil_row_params(idx, NMROWS);
}

ParameterizedTest(size_t *i, pvcsts, mounts)
{
    const struct mrow *t = &mrows[*i];
    char *body =
        review_with("UPDATE", t->user, t->labelled, t->replicas, t->replicas, CTRS, t->ctrs);
    cJSON *pvcs = pvc_list(NULL, NULL, NULL);
    cJSON *doc = decide(t->hook, t->etcd, pvcs, 0, body);
    const char *w = kjson_get_str(doc, "response.warnings.0");

    guardfix_expect(doc, t->title, t->allowed, t->message);
    if (t->warning)
        cr_expect(w && strstr(w, t->warning), "%s: warning %s", t->title, w ? w : "(none)");
    cJSON_Delete(doc);
    cJSON_Delete(pvcs);
    free(body);
}

/*
 * Break glass once on an unmount: one component protection refuses (a person, protection
 * on) does not use the value up; the first admitted is recorded; the next on the value is
 * refused saying it was used, on either endpoint.
 */
Test(pvcsts, break_glass_lets_one_unmount_through)
{
    static const struct mrow steps[] = {
        { "refused by component protection", WH_HOOK_COMPONENTS, PERSON, ETCD(GLASS_OK), 1, 3,
          "[" CTR_ETCD("[" DATA("scratch", "") "]") "," CTR_BR "]", 0,
          "changes from service account " PERSON, NULL },
        { "the first", WH_HOOK_SCALEGUARD, PERSON, ETCD(GLASS_OK), 1, 3,
          "[" CTR_ETCD("[" DATA("scratch", "") "]") "," CTR_BR "]", 1, "allowed", NULL },
        { "the second", WH_HOOK_COMPONENTS, DRUID, ETCD(GLASS_OK), 1, 3,
          "[" CTR_ETCD("[" DATA(
              "etcd-main", "") "," CFG "]") ",{\"name\":\"backup-restore\",\"volumeMounts\":[" CONF
                                            "]}]",
          0, "its value was used at ", NULL },
        { "the second, guard only", WH_HOOK_SCALEGUARD, DRUID, ETCD(GLASS_OK), 1, 3, "[" CTR_BR "]",
          0, "its value was used at ", NULL },
    };
    static const int recorded[] = { 0, 1, 1, 1 };
    cJSON *pvcs, *doc;
    char *body;

    glass_store = cJSON_CreateArray();
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        body = review_with("UPDATE", steps[i].user, steps[i].labelled, steps[i].replicas,
                           steps[i].replicas, CTRS, steps[i].ctrs);
        pvcs = pvc_list(NULL, NULL, NULL);
        doc = decide(steps[i].hook, steps[i].etcd, pvcs, 0, body);
        guardfix_expect(doc, steps[i].title, steps[i].allowed, steps[i].message);
        cr_expect_eq(cJSON_GetArraySize(glass_store), recorded[i], "%s", steps[i].title);
        cJSON_Delete(doc);
        cJSON_Delete(pvcs);
        free(body);
    }
    cr_expect(strstr(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                         cJSON_GetArrayItem(glass_store, 0), "what")),
                     "unmounting claim volume etcd-main"));
    cJSON_Delete(glass_store);
    glass_store = NULL;
}
