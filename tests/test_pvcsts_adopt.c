/*
 * Tests of the member-volume guard on StatefulSets (webhook/pvcguard; issue 30), the claims a
 * StatefulSet takes as they are: a CREATE (after an orphaning DELETE) adopts the running pods
 * of its name and the claims left by the pods that are gone, and its template must mount
 * them where they are mounted; a claim created from a data source (a clone, a VolumeSnapshot)
 * that a CREATE or scale-up would take is refused as a planted one is. Each sent through the
 * decode - decide - encode pipeline with in-memory lookups (test_pvcsts.c: planted claims and
 * unmounts).
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

/*
 * A CREATE of the StatefulSet (after an orphaning DELETE) adopts the running pods of its name
 * and rolls them onto its template: the pods' spec (what the API server lists) says where
 * their data is, and a template that would not mount the same claim there is refused.
 */
#define POD(name, claim, ctrs)                                                                     \
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"" name "\"},\"spec\":{\"containers\":" ctrs \
    ",\"volumes\":[{\"name\":\"etcd-main\",\"persistentVolumeClaim\":{\"claimName\":\"" claim      \
    "\"}},{\"name\":\"config\",\"configMap\":{\"name\":\"c\"}}]}}"
#define PODS3                                                                                   \
    "[" POD("etcd-main-0", "etcd-main-etcd-main-0", CTRS) "," POD(                              \
        "etcd-main-1", "etcd-main-etcd-main-1",                                                 \
        CTRS) "," POD("etcd-main-2", "etcd-main-etcd-main-2",                                   \
                      CTRS) ",{\"metadata\":{\"namespace\":"                                    \
                            "\"shoot\",\"name\":\"other-0\"},\"spec\":{\"volumes\":[{\"name\":" \
                            "\"x\",\"persistentVolumeClaim\":"                                  \
                            "{\"claimName\":\"x\"}}],\"containers\":[{\"name\":\"etcd\","       \
                            "\"volumeMounts\":[{\"name\":\"x\","                                \
                            "\"mountPath\":\"/var/etcd/data\"}]}]}}]"

/* A listed claim (the arow's claim starting with "{"): name, labels and owner references. */
#define CLAIM(name, labels, refs)                                                     \
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"" name "\",\"labels\":" labels \
    ",\"ownerReferences\":" refs "}}"
#define LBL_B                                                               \
    "{\"app.kubernetes.io/managed-by\":\"etcd-druid\",\"app.kubernetes.io/" \
    "part-of\":\"b-etcd-main\"}"

struct arow {
    const char *title;
    enum wh_hook hook;
    const char *user, *etcd, *pods;
    int pods_fail;
    const char *ctrs, *vct; /* the created template's containers and claim template's name */
    int allowed;
    const char *message, *warning;
    const char *claim; /* a member claim listed (NULL: none) */
};

static const struct arow arows[] = {
    { "an emptyDir at the data directory", WH_HOOK_SCALEGUARD, PERSON, ETCD(ANN_OPEN), PODS3, 0,
      "[" CTR_ETCD("[" DATA("scratch", "") "]") "," CTR_BR "]", "etcd-main", 0,
      "creating StatefulSet shoot/etcd-main of Etcd etcd-main is refused: it adopts the running "
      "pods of its name and rolls them onto its pod template, or starts the members whose pods "
      "are gone on the claims they left (mounted as etcd-druid mounts them), and its container "
      "etcd would no longer mount claim volume etcd-main at /var/etcd/data as pod etcd-main-0 "
      "does",
      NULL, NULL },
    { "components endpoint, etcd-druid: an emptyDir at etcd's --data-dir", WH_HOOK_COMPONENTS,
      DRUID, ETCD(""), PODS3, 0,
      "[" CTR_ETCD("[" DATA("etcd-main", "") "," NEWETCD("") "]") "," CTR_BR "]", "etcd-main", 0,
      "its container etcd would mount volume scratch at /var/etcd/data/new.etcd, over the data "
      "pod etcd-main-0 keeps on claim volume etcd-main at /var/etcd/data",
      NULL, NULL },
    { "the claim template renamed", WH_HOOK_SCALEGUARD, PERSON, ETCD(ANN_OPEN), PODS3, 0,
      "[" CTR_ETCD("[" DATA("data", "") "]") ",{\"name\":\"backup-restore\",\"volumeMounts\":[" CONF
                                             "," DATA("data", "") "]}]",
      "data", 0,
      "pod etcd-main-0 keeps its data on claim etcd-main-etcd-main-0 (volume etcd-main), which "
      "no volumeClaimTemplate of it gives member 0",
      NULL, NULL },
    { "the sidecar's mount dropped", WH_HOOK_SCALEGUARD, PERSON, ETCD(ANN_OPEN), PODS3, 0,
      "[" CTR_ETCD("[" DATA("etcd-main",
                            "") "," CFG "]") ",{\"name\":\"backup-restore\",\"volumeMounts\":[" CONF
                                             "]}]",
      "etcd-main", 0, "its container backup-restore would no longer mount claim volume etcd-main",
      NULL, NULL },
    { "the pods cannot be listed", WH_HOOK_SCALEGUARD, PERSON, ETCD(ANN_OPEN), PODS3, 1, CTRS,
      "etcd-main", 0,
      "its running pods and its members' claims cannot be told (pods: connection refused)", NULL,
      NULL },
    /* allowed */
    { "the same template", WH_HOOK_SCALEGUARD, PERSON, ETCD(ANN_OPEN), PODS3, 0, CTRS, "etcd-main",
      1, "allowed", NULL, NULL },
    { "no pod of its name", WH_HOOK_SCALEGUARD, PERSON, ETCD(ANN_OPEN), "[]", 0,
      "[" CTR_ETCD("[" DATA("scratch", "") "]") "," CTR_BR "]", "etcd-main", 1, "allowed", NULL,
      NULL },
    /* the pods gone, their claims left: the members start on them (issue 30, seventh attack) */
    { "pods gone, claims left: the same template", WH_HOOK_SCALEGUARD, PERSON, ETCD(ANN_OPEN), "[]",
      0, CTRS, "etcd-main", 1, "allowed", NULL, "etcd-main-etcd-main-1" },
    { "pods gone, claims left: an emptyDir at the data directory", WH_HOOK_SCALEGUARD, PERSON,
      ETCD(ANN_OPEN), "[]", 0, "[" CTR_ETCD("[" DATA("scratch", "") "]") "," CTR_BR "]",
      "etcd-main", 0,
      "starts the members whose pods are gone on the claims they left (mounted as etcd-druid "
      "mounts them), and its container etcd would no longer mount claim volume etcd-main at "
      "/var/etcd/data as pod etcd-main-1 does",
      NULL, "etcd-main-etcd-main-1" },
    { "pods gone, claims left: the claim template renamed", WH_HOOK_SCALEGUARD, PERSON,
      ETCD(ANN_OPEN), "[]", 0, CTRS, "data", 0,
      "pod etcd-main-1 keeps its data on claim etcd-main-etcd-main-1 (volume etcd-main), which no "
      "volumeClaimTemplate of it gives member 1",
      NULL, "etcd-main-etcd-main-1" },
    /* a claim named as a member's of another StatefulSet too: whose it is decides */
    { "claims of Etcd b-etcd-main, labelled for it", WH_HOOK_SCALEGUARD, PERSON, ETCD(ANN_OPEN),
      "[]", 0, CTRS, "etcd-main", 1, "allowed", NULL,
      CLAIM("b-etcd-main-b-etcd-main-1", LBL_B, "[]") },
    { "claims of StatefulSet t-etcd-main (template t), its selector's labels and owner",
      WH_HOOK_SCALEGUARD, PERSON, ETCD(ANN_OPEN), "[]", 0, CTRS, "etcd-main", 1, "allowed", NULL,
      CLAIM("t-t-etcd-main-0", "{\"app\":\"t\"}",
            "[" REF("apps/v1", "StatefulSet", "t-etcd-main") "]") },
    { "the claim template renamed, the claim labelled for this Etcd", WH_HOOK_SCALEGUARD, PERSON,
      ETCD(ANN_OPEN), "[]", 0, CTRS, "data", 0,
      "pod etcd-main-1 keeps its data on claim etcd-main-etcd-main-1 (volume etcd-main), which no "
      "volumeClaimTemplate of it gives member 1",
      NULL, CLAIM("etcd-main-etcd-main-1", LBL_MAIN, "[]") },
    { "the claim template renamed, label instance names this Etcd", WH_HOOK_SCALEGUARD, PERSON,
      ETCD(ANN_OPEN), "[]", 0, CTRS, "data", 0, "which no volumeClaimTemplate of it gives member 2",
      NULL, CLAIM("etcd-main-etcd-main-2", "{\"instance\":\"etcd-main\"}", "[]") },
    { "another Etcd's label, but owned by this StatefulSet", WH_HOOK_SCALEGUARD, PERSON,
      ETCD(ANN_OPEN), "[]", 0, CTRS, "etcd-main", 0,
      "pod etcd-main-1 keeps its data on claim b-etcd-main-b-etcd-main-1 (volume "
      "b-etcd-main-b), which no volumeClaimTemplate of it gives member 1",
      NULL,
      CLAIM("b-etcd-main-b-etcd-main-1", LBL_B,
            "[" REF("apps/v1", "StatefulSet", "etcd-main") "]") },
    { "another Etcd's label, but owned by this member's Pod", WH_HOOK_SCALEGUARD, PERSON,
      ETCD(ANN_OPEN), "[]", 0, CTRS, "etcd-main", 0, "claim b-etcd-main-b-etcd-main-0", NULL,
      CLAIM("b-etcd-main-b-etcd-main-0", LBL_B, "[" REF("v1", "Pod", "etcd-main-0") "]") },
    { "break glass", WH_HOOK_SCALEGUARD, PERSON, ETCD(ANN_OPEN "," GLASS_OK), PODS3, 0,
      "[" CTR_ETCD("[" DATA("scratch", "") "]") "," CTR_BR "]", "etcd-main", 1, "allowed",
      "would no longer mount claim volume etcd-main at /var/etcd/data as pod etcd-main-0 does; "
      "allowed by annotation",
      NULL },
};

#define NAROWS (sizeof(arows) / sizeof(arows[0]))

ParameterizedTestParameters(pvcsts, adopts)
{
    static size_t idx[NAROWS];

    return testutil_row_params(idx, NAROWS);
}

ParameterizedTest(size_t *i, pvcsts, adopts)
{
    const struct arow *t = &arows[*i];
    char *body = review_with("CREATE", t->user, 1, 3, 3, CTRS, t->ctrs), *vct;
    cJSON *pvcs =
        t->claim && t->claim[0] == '{' ? cJSON_CreateArray() : pvc_list(t->claim, "shoot", NULL);
    cJSON *doc, *rv = cJSON_Parse(body);
    const char *w;

    if (t->claim && t->claim[0] == '{')
        cJSON_AddItemToArray(pvcs, cJSON_Parse(t->claim));
    cJSON_SetValuestring(
        cJSON_GetArrayItem(
            cJSON_GetArrayItem(cJSON_GetObjectItem(
                                   cJSON_GetObjectItem(kjson_get_obj(rv, "request.object"), "spec"),
                                   "volumeClaimTemplates"),
                               0)
                ->child,
            0),
        t->vct);
    vct = cJSON_PrintUnformatted(rv);
    pods_text = t->pods;
    pods_fail = t->pods_fail;
    doc = decide(t->hook, t->etcd, pvcs, 0, vct);
    pods_text = NULL;
    pods_fail = 0;
    w = kjson_get_str(doc, "response.warnings.0");
    guardfix_expect(doc, t->title, t->allowed, t->message);
    if (t->warning)
        cr_expect(w && strstr(w, t->warning), "%s: warning %s", t->title, w ? w : "(none)");
    cJSON_Delete(doc);
    cJSON_Delete(pvcs);
    cJSON_Delete(rv);
    free(vct);
    free(body);
}

/*
 * Issue 30, sixth attack: a claim created with spec.dataSource or spec.dataSourceRef (a clone
 * of another claim, a VolumeSnapshot) that a StatefulSet CREATE or scale-up would take is
 * refused as a planted one is, for everyone, unless break glass on the Etcd counts: the
 * member would start on that data instead of its own or its final snapshot's. volumeName is
 * not read there (every bound claim carries it).
 */
struct srow {
    const char *title;
    enum wh_hook hook;
    const char *op, *etcd;
    int from, to;
    const char *pvc, *spec; /* the PVC listed and its spec (JSON text) */
    int allowed;
    const char *message;
};

#define CLONE "{\"dataSource\":{\"kind\":\"PersistentVolumeClaim\",\"name\":\"stale-copy\"}}"
#define GLASS_ON                                                                   \
    "\"etcd-warden.io/allow-scale-down-without-snapshot\":\"2026-11-20T00:00:00Z " \
    "restore from a volume snapshot\""

static const struct srow srows[] = {
    { "W: the wake takes a claim cloned while asleep", WH_HOOK_COMPONENTS, "UPDATE", ETCD(""), 0, 3,
      "etcd-main-etcd-main-1", CLONE, 0,
      "its member etcd-main-1 would use PersistentVolumeClaim shoot/etcd-main-etcd-main-1, "
      "created with spec.dataSource" },
    { "guard only: a new Etcd's StatefulSet over a VolumeSnapshot", WH_HOOK_SCALEGUARD, "CREATE",
      ETCD(""), 0, 3, "etcd-main-etcd-main-0",
      "{\"dataSourceRef\":{\"kind\":\"VolumeSnapshot\",\"name\":\"s\"}}", 0, "spec.dataSourceRef" },
    { "kubectl scale over a clone", WH_HOOK_SCALEGUARD, "SCALE", ETCD(""), 1, 2,
      "etcd-main-etcd-main-1", CLONE, 0, "Delete the claim" },
    { "a bound claim (volumeName) is a member's own", WH_HOOK_SCALEGUARD, "UPDATE", ETCD(""), 0, 3,
      "etcd-main-etcd-main-0", "{\"volumeName\":\"pv-1\"}", 1, "allowed" },
    { "a clone of an ordinal the scale-up does not bring", WH_HOOK_SCALEGUARD, "UPDATE", ETCD(""),
      0, 3, "etcd-main-etcd-main-3", CLONE, 1, "allowed" },
    { "break glass: the clone is meant", WH_HOOK_SCALEGUARD, "CREATE", ETCD(GLASS_ON), 0, 3,
      "etcd-main-etcd-main-0", CLONE, 1, "allowed" },
};

#define NSROWS (sizeof(srows) / sizeof(srows[0]))

ParameterizedTestParameters(pvcsts, seeded)
{
    static size_t idx[NSROWS];

    return testutil_row_params(idx, NSROWS);
}

ParameterizedTest(size_t *i, pvcsts, seeded)
{
    const struct srow *t = &srows[*i];
    char *body = review(t->op, GUARDFIX_DRUID, 1, t->from, t->to);
    cJSON *pvcs = pvc_list_spec(t->pvc, "shoot", NULL, t->spec);
    cJSON *doc = decide(t->hook, t->etcd, pvcs, 0, body);
    const char *warning = kjson_get_str(doc, "response.warnings.0");

    guardfix_expect(doc, t->title, t->allowed, t->message);
    if (strstr(t->title, "break glass"))
        cr_expect(warning && strstr(warning, "allowed by annotation"), "%s: warning %s", t->title,
                  warning ? warning : "(none)");
    cJSON_Delete(doc);
    cJSON_Delete(pvcs);
    free(body);
}
