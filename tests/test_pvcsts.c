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
 * on both endpoints and through both review decoders.
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
#define ETCD(ann)                                                                      \
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"uid\":\"uid-e\"," \
    "\"annotations\":{" ann "}},\"spec\":{\"replicas\":3}}"
#define LBL_MAIN                                                            \
    "{\"app.kubernetes.io/managed-by\":\"etcd-druid\",\"app.kubernetes.io/" \
    "part-of\":\"etcd-main\"}"
#define REF(av, kind, name) \
    "{\"apiVersion\":\"" av "\",\"kind\":\"" kind "\",\"name\":\"" name "\",\"uid\":\"u\"}"
#define BAIT "[" REF("v1", "ConfigMap", "bait") "]"

/* etcd's configuration, mounted in the sidecar as etcd-druid mounts it (webhook/cfgvol). */
#define CONF "{\"name\":\"etcd-config-file\",\"mountPath\":\"/var/etcd/config\"}"

/* The containers of etcd-druid's pod template: both mount the claim's volume. */
#define CTRS                                                                                    \
    "[{\"name\":\"etcd\",\"image\":\"etcd-wrapper\",\"volumeMounts\":[{\"name\":\"etcd-main\"," \
    "\"mountPath\":\"/var/etcd/data\"},{\"name\":\"config\",\"mountPath\":\"/etc/cfg\"}]},"     \
    "{\"name\":\"backup-restore\",\"volumeMounts\":[{\"name\":\"etcd-main\",\"mountPath\":"     \
    "\"/var/etcd/data\"}," CONF "]}]"

/* StatefulSet etcd-main with replicas and the pod template's containers (JSON). */
static cJSON *sts_object_with(int replicas, int labelled, const char *containers)
{
    cJSON *o = cJSON_CreateObject(), *meta, *spec, *tspec;

    meta = cJSON_AddObjectToObject(o, "metadata");
    cJSON_AddStringToObject(meta, "namespace", "shoot");
    cJSON_AddStringToObject(meta, "name", "etcd-main");
    if (labelled)
        cJSON_AddItemToObject(meta, "labels", cJSON_Parse(LBL_MAIN));
    spec = cJSON_AddObjectToObject(o, "spec");
    cJSON_AddNumberToObject(spec, "replicas", replicas);
    tspec = cJSON_AddObjectToObject(cJSON_AddObjectToObject(spec, "template"), "spec");
    cJSON_AddItemToObject(tspec, "containers", cJSON_Parse(containers));
    cJSON_AddItemToObject(tspec, "volumes",
                          cJSON_Parse("[{\"name\":\"etcd-config-file\",\"configMap\":{\"name\":"
                                      "\"etcd-main-config\"}}]"));
    cJSON_AddItemToObject(spec, "volumeClaimTemplates",
                          cJSON_Parse("[{\"metadata\":{\"name\":\"etcd-main\"}}]"));
    return o;
}

/* A Scale of StatefulSet etcd-main at replicas. */
static cJSON *scale_object(int replicas)
{
    cJSON *o = cJSON_CreateObject(), *meta;

    meta = cJSON_AddObjectToObject(o, "metadata");
    cJSON_AddStringToObject(meta, "namespace", "shoot");
    cJSON_AddStringToObject(meta, "name", "etcd-main");
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(o, "spec"), "replicas", replicas);
    return o;
}

/*
 * A review of StatefulSet etcd-main (or of its scale, op "SCALE"): from old to new replicas,
 * its pod template's containers from octrs to nctrs.
 */
static char *review_with(const char *op, const char *user, int labelled, int from, int to,
                         const char *octrs, const char *nctrs)
{
    int scale = strcmp(op, "SCALE") == 0;
    cJSON *root = cJSON_CreateObject(), *req, *k;
    char *text;

    cJSON_AddStringToObject(root, "apiVersion", "admission.k8s.io/v1");
    cJSON_AddStringToObject(root, "kind", "AdmissionReview");
    req = cJSON_AddObjectToObject(root, "request");
    cJSON_AddStringToObject(req, "uid", "0000-5555");
    k = cJSON_AddObjectToObject(req, "kind");
    cJSON_AddStringToObject(k, "group", scale ? "autoscaling" : "apps");
    cJSON_AddStringToObject(k, "version", "v1");
    cJSON_AddStringToObject(k, "kind", scale ? "Scale" : "StatefulSet");
    k = cJSON_AddObjectToObject(req, "resource");
    cJSON_AddStringToObject(k, "group", "apps");
    cJSON_AddStringToObject(k, "version", "v1");
    cJSON_AddStringToObject(k, "resource", "statefulsets");
    if (scale)
        cJSON_AddStringToObject(req, "subResource", "scale");
    cJSON_AddStringToObject(req, "name", "etcd-main");
    cJSON_AddStringToObject(req, "namespace", "shoot");
    cJSON_AddStringToObject(req, "operation", scale ? "UPDATE" : op);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(req, "userInfo"), "username", user);
    cJSON_AddItemToObject(req, "object",
                          scale ? scale_object(to) : sts_object_with(to, labelled, nctrs));
    if (strcmp(op, "CREATE") == 0)
        cJSON_AddNullToObject(req, "oldObject");
    else
        cJSON_AddItemToObject(req, "oldObject",
                              scale ? scale_object(from) : sts_object_with(from, labelled, octrs));
    text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}

static char *review(const char *op, const char *user, int labelled, int from, int to)
{
    return review_with(op, user, labelled, from, to, CTRS, CTRS);
}

/* The PVCs the API server lists: pvc (in namespace ns) with owner references refs and spec
 * (JSON text; NULL: none). */
static cJSON *pvc_list_spec(const char *pvc, const char *ns, const char *refs, const char *spec)
{
    cJSON *list = cJSON_CreateArray(), *p, *meta;

    if (!pvc)
        return list;
    p = cJSON_CreateObject();
    meta = cJSON_AddObjectToObject(p, "metadata");
    cJSON_AddStringToObject(meta, "namespace", ns);
    cJSON_AddStringToObject(meta, "name", pvc);
    if (refs)
        cJSON_AddItemToObject(meta, "ownerReferences", cJSON_Parse(refs));
    if (spec)
        cJSON_AddItemToObject(p, "spec", cJSON_Parse(spec));
    cJSON_AddItemToArray(list, p);
    return list;
}

static cJSON *pvc_list(const char *pvc, const char *ns, const char *refs)
{
    return pvc_list_spec(pvc, ns, refs, NULL);
}

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

static const char stses[] = "[{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\","
                            "\"labels\":" LBL_MAIN "},\"spec\":{\"replicas\":1}}]";

/* A PVC lookup the API server does not answer. */
static enum kerr no_pvcs(void *ctx, const char *ns, cJSON **items, struct kerr_info *err)
{
    (void)ctx;
    (void)ns;
    *items = NULL;
    return kerr_set(err, KERR_HTTP, "connection refused");
}

/* The break glass uses decide records (mem.glass), NULL: none recorded. */
static cJSON *glass_store;

/* The pods the API server lists (JSON text, NULL: none); pods_fail: the list is not answered. */
static const char *pods_text;
static int pods_fail;

/* A pod lookup the API server does not answer. */
static enum kerr no_pods(void *ctx, const char *ns, cJSON **items, struct kerr_info *err)
{
    (void)ctx;
    (void)ns;
    *items = NULL;
    return kerr_set(err, KERR_HTTP, "pods: connection refused");
}

/* Decide body through h; pvcs lists the PVCs (fail: the list is not answered). */
static cJSON *decide(enum wh_hook h, const char *etcd, const cJSON *pvcs, int fail,
                     const char *body)
{
    struct protect_config cfg;
    struct lookup_mem mem = { 0 };
    struct lookup lk;
    cJSON *etcds = cJSON_CreateArray(), *sts = cJSON_Parse(stses), *doc;
    cJSON *tasks = cJSON_CreateArray(),
          *pods = pods_text ? cJSON_Parse(pods_text) : cJSON_CreateArray();

    guardfix_config(&cfg);
    cJSON_AddItemToArray(etcds, cJSON_Parse(etcd));
    mem.etcds = etcds;
    mem.stses = sts;
    mem.tasks = tasks;
    mem.pods = pods;
    mem.pvcs = pvcs;
    mem.glass = glass_store;
    lookup_mem_bind(&mem, &lk);
    if (fail)
        lk.pvcs = no_pvcs;
    if (pods_fail)
        lk.pod_items = no_pods;
    doc = guardfix_dispatch(&cfg, &mem, &lk, h, !fail && !glass_store && !pods_fail, body);
    cJSON_Delete(etcds);
    cJSON_Delete(sts);
    cJSON_Delete(tasks);
    cJSON_Delete(pods);
    return doc;
}

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

#define GLASS_OK \
    "\"etcd-warden.io/allow-scale-down-without-snapshot\":\"2026-11-20T00:00:00Z disk moved\""
#define UNMOUNTED(c) "its container " c " would no longer mount the members' claim volume etcd-main"
#define CTR_ETCD(mounts) \
    "{\"name\":\"etcd\",\"image\":\"etcd-wrapper\",\"volumeMounts\":" mounts "}"
#define CTR_BR                                                                                     \
    "{\"name\":\"backup-restore\",\"volumeMounts\":[{\"name\":\"etcd-main\",\"mountPath\":\"/var/" \
    "etcd/data\"}," CONF "]}"
#define DATA(name, extra) "{\"name\":\"" name "\",\"mountPath\":\"/var/etcd/data\"" extra "}"
#define CFG               "{\"name\":\"config\",\"mountPath\":\"/etc/cfg\"}"
#define NEWETCD(extra)    "{\"name\":\"scratch\",\"mountPath\":\"/var/etcd/data/new.etcd\"" extra "}"
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
