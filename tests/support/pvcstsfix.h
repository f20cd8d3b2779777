/*
 * pvcstsfix - the harness of the member-volume guard's table tests (test_pvcsts,
 * test_pvcsts_adopt): reviews of StatefulSet shoot/etcd-main (or of its scale) with
 * etcd-druid's pod template, the PVCs and pods the API server lists, and the answer of
 * warden-webhook's dispatcher over in-memory lookups. Each test file has its own copy of the
 * state below (glass_store, pods_text, pods_fail): Criterion runs each test in a process of
 * its own.
 */
#ifndef TESTS_SUPPORT_PVCSTSFIX_H
#define TESTS_SUPPORT_PVCSTSFIX_H

#include <cjson/cJSON.h>
#include <string.h>

#include "common/kerr.h"
#include "tests/support/guardfix.h"
#include "webhook/lookup.h"
#include "webhook/protect.h"
#include "webhook/wh_dispatch.h"

#define DRUID    GUARDFIX_DRUID
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

/* etcd's configuration, mounted in the sidecar as etcd-druid mounts it (webhook/cfgvol). */
#define CONF "{\"name\":\"etcd-config-file\",\"mountPath\":\"/var/etcd/config\"}"

/* The containers of etcd-druid's pod template: both mount the claim's volume. */
#define CTRS                                                                                    \
    "[{\"name\":\"etcd\",\"image\":\"etcd-wrapper\",\"volumeMounts\":[{\"name\":\"etcd-main\"," \
    "\"mountPath\":\"/var/etcd/data\"},{\"name\":\"config\",\"mountPath\":\"/etc/cfg\"}]},"     \
    "{\"name\":\"backup-restore\",\"volumeMounts\":[{\"name\":\"etcd-main\",\"mountPath\":"     \
    "\"/var/etcd/data\"}," CONF "]}]"

/* Break glass set on the Etcd (an annotation). */
#define GLASS_OK \
    "\"etcd-warden.io/allow-scale-down-without-snapshot\":\"2026-11-20T00:00:00Z disk moved\""

/* The containers of a pod template, by the mounts they make. */
#define CTR_ETCD(mounts) \
    "{\"name\":\"etcd\",\"image\":\"etcd-wrapper\",\"volumeMounts\":" mounts "}"
#define CTR_BR                                                                                     \
    "{\"name\":\"backup-restore\",\"volumeMounts\":[{\"name\":\"etcd-main\",\"mountPath\":\"/var/" \
    "etcd/data\"}," CONF "]}"
#define DATA(name, extra) "{\"name\":\"" name "\",\"mountPath\":\"/var/etcd/data\"" extra "}"
#define CFG               "{\"name\":\"config\",\"mountPath\":\"/etc/cfg\"}"
#define NEWETCD(extra)    "{\"name\":\"scratch\",\"mountPath\":\"/var/etcd/data/new.etcd\"" extra "}"

/* StatefulSet etcd-main with replicas and the pod template's containers (JSON). */
static inline cJSON *sts_object_with(int replicas, int labelled, const char *containers)
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
static inline cJSON *scale_object(int replicas)
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
static inline char *review_with(const char *op, const char *user, int labelled, int from, int to,
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

static inline char *review(const char *op, const char *user, int labelled, int from, int to)
{
    return review_with(op, user, labelled, from, to, CTRS, CTRS);
}

/* The PVCs the API server lists: pvc (in namespace ns) with owner references refs and spec
 * (JSON text; NULL: none). */
static inline cJSON *pvc_list_spec(const char *pvc, const char *ns, const char *refs,
                                   const char *spec)
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

static inline cJSON *pvc_list(const char *pvc, const char *ns, const char *refs)
{
    return pvc_list_spec(pvc, ns, refs, NULL);
}

static const char stses[] = "[{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\","
                            "\"labels\":" LBL_MAIN "},\"spec\":{\"replicas\":1}}]";

/* A PVC lookup the API server does not answer. */
static inline enum kerr no_pvcs(void *ctx, const char *ns, cJSON **items, struct kerr_info *err)
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
static inline enum kerr no_pods(void *ctx, const char *ns, cJSON **items, struct kerr_info *err)
{
    (void)ctx;
    (void)ns;
    *items = NULL;
    return kerr_set(err, KERR_HTTP, "pods: connection refused");
}

/* Decide body through h; pvcs lists the PVCs (fail: the list is not answered). */
static inline cJSON *decide(enum wh_hook h, const char *etcd, const cJSON *pvcs, int fail,
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

#endif
