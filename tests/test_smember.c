/* controller/core/smember: which pods' sidecars warden-controller asks (issue 30). */
#include "controller/core/smember.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/jsonfix.h"

#define ETCD_C                                                                              \
    "{\"name\":\"etcd\",\"image\":\"etcd-wrapper:v0.4.2\",\"command\":[\"/etcd-wrapper\"]," \
    "\"args\":[\"start-etcd\"],\"ports\":[{\"name\":\"server\",\"containerPort\":2380}],"   \
    "\"volumeMounts\":[{\"name\":\"etcd-main\",\"mountPath\":\"/var/etcd/data\"}]}"
#define BR_C                                                                             \
    "{\"name\":\"backup-restore\",\"image\":\"etcdbrctl:v0.34.0\",\"args\":[\"server\"," \
    "\"--server-port=8443\"],"                                                           \
    "\"ports\":[{\"name\":\"metrics\",\"containerPort\":9000},{\"name\":\"server\","     \
    "\"containerPort\":8443}],\"volumeMounts\":[{\"name\":\"etcd-main\",\"mountPath\":"  \
    "\"/var/etcd/data\"}]}"

static const char *STS =
    "{\"metadata\":{\"name\":\"etcd-main\",\"uid\":\"u-sts\"},\"spec\":{\"replicas\":3,"
    "\"serviceName\":\"etcd-main-peer\",\"template\":{\"spec\":{\"containers\":[" ETCD_C "," BR_C
    "]}},\"volumeClaimTemplates\":[{"
    "\"metadata\":{\"name\":\"etcd-main\"}}]}}";

#define TOKEN_MOUNT                                                        \
    "{\"name\":\"kube-api-access-x7k2p\",\"readOnly\":true,\"mountPath\":" \
    "\"/var/run/secrets/kubernetes.io/serviceaccount\"}"
#define TOKEN_VOLUME                                                                            \
    "{\"name\":\"kube-api-access-x7k2p\",\"projected\":{\"defaultMode\":420,\"sources\":[{"     \
    "\"serviceAccountToken\":{\"expirationSeconds\":3607,\"path\":\"token\"}},{\"configMap\":{" \
    "\"name\":\"kube-root-ca.crt\",\"items\":[{\"key\":\"ca.crt\",\"path\":\"ca.crt\"}]}},{"    \
    "\"downwardAPI\":{\"items\":[{\"path\":\"namespace\",\"fieldRef\":{\"apiVersion\":\"v1\","  \
    "\"fieldPath\":\"metadata.namespace\"}}]}}]}}"

/*
 * Member ordinal o as the StatefulSet controller, the API server (its defaults, the
 * service-account token's volume and mounts), the scheduler and the kubelet make it, at ip.
 * OWNED.
 */
static cJSON *member(int o, const char *ip)
{
    char text[4096];
    cJSON *pod, *c;

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"etcd-main-%d\",\"ownerReferences\":[{\"kind\":\"Etcd\","
             "\"uid\":\"u-etcd\"},{\"kind\":\"StatefulSet\",\"uid\":\"u-sts\",\"controller\":"
             "true}]},\"spec\":{\"containers\":[" ETCD_C "," BR_C "],\"volumes\":[{\"name\":"
             "\"etcd-main\",\"persistentVolumeClaim\":{\"claimName\":\"etcd-main-etcd-main-%d\"}}"
             "," TOKEN_VOLUME "],\"hostname\":\"etcd-main-%d\",\"subdomain\":\"etcd-main-peer\","
             "\"nodeName\":\"node-%d\",\"dnsPolicy\":\"ClusterFirst\",\"restartPolicy\":\"Always\","
             "\"schedulerName\":\"default-scheduler\",\"securityContext\":{},"
             "\"serviceAccountName\":\"default\",\"serviceAccount\":\"default\","
             "\"terminationGracePeriodSeconds\":30,\"enableServiceLinks\":true,\"priority\":0,"
             "\"preemptionPolicy\":\"PreemptLowerPriority\",\"tolerations\":[{\"key\":"
             "\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\",\"effect\":\"NoExecute\","
             "\"tolerationSeconds\":300}]},\"status\":{\"phase\":\"Running\",\"podIP\":\"%s\"}}",
             o, o, o, o, ip);
    pod = jsonfix_parse(text);
    cJSON_ArrayForEach (c, cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "spec"), "containers")) {
        cJSON_AddItemToArray(cJSON_GetObjectItem(c, "volumeMounts"), jsonfix_parse(TOKEN_MOUNT));
        cJSON_AddStringToObject(c, "terminationMessagePath", "/dev/termination-log");
        cJSON_AddStringToObject(c, "terminationMessagePolicy", "File");
        cJSON_AddStringToObject(c, "imagePullPolicy", "IfNotPresent");
        cJSON_AddItemToObject(c, "resources", cJSON_CreateObject());
    }
    return pod;
}

/* The three members 0..2, then extra (OWNED, may be NULL) first when first, else last. */
static cJSON *members(cJSON *extra, int first)
{
    cJSON *pods = cJSON_CreateArray();

    if (extra && first)
        cJSON_AddItemToArray(pods, extra);
    cJSON_AddItemToArray(pods, member(2, "10.0.0.3"));
    cJSON_AddItemToArray(pods, member(0, "10.0.0.1"));
    cJSON_AddItemToArray(pods, member(1, "10.0.0.2"));
    if (extra && !first)
        cJSON_AddItemToArray(pods, extra);
    return pods;
}

Test(smember, the_port_is_the_templates_backup_restore_server_port)
{
    cJSON *sts = jsonfix_parse(STS), *bare;

    cr_assert_eq(smember_port(sts), 8443);
    bare = jsonfix_parse("{\"metadata\":{\"name\":\"e\",\"uid\":\"u\"},\"spec\":{\"template\":{"
                         "\"spec\":{\"containers\":[{\"name\":\"backup-restore\",\"ports\":[{"
                         "\"name\":\"server\",\"containerPort\":70000}]}]}}}}");
    cr_assert_eq(smember_port(bare), -1, "a port out of range is none");
    cr_assert_eq(smember_port(NULL), -1);
    cJSON_Delete(bare);
    cJSON_Delete(sts);
}

Test(smember, every_ordinal_its_member_in_ordinal_order)
{
    cJSON *sts = jsonfix_parse(STS), *pods = members(member(3, "10.6.6.6"), 0);
    struct smember m[SMEMBER_MAX];
    struct kerr_info e;
    int n = -1;

    /* etcd-main-3 lies past the 3 replicas: never asked, whatever it carries */
    cr_assert_eq(smember_pick(sts, pods, m, SMEMBER_MAX, &n, &e), KERR_OK, "%s", e.msg);
    cr_assert_eq(n, 3);
    cr_assert_str_eq(m[0].pod, "etcd-main-0");
    cr_assert_str_eq(m[0].ip, "10.0.0.1");
    cr_assert_str_eq(m[1].pod, "etcd-main-1");
    cr_assert_str_eq(m[2].pod, "etcd-main-2");
    cr_assert_eq(m[2].port, 8443);
    cr_assert_eq(smember_pick(sts, pods, m, 2, &n, &e), KERR_INVAL, "3 members, 2 asked at most");
    cr_assert_eq(n, 0);
    cJSON_Delete(pods);
    /* spec.ordinals.start 3: members 3..5 */
    cJSON_AddItemToObject(cJSON_GetObjectItem(sts, "spec"), "ordinals",
                          jsonfix_parse("{\"start\":3}"));
    pods = cJSON_CreateArray();
    for (int o = 0; o < 6; o++)
        cJSON_AddItemToArray(pods, member(o, "10.0.0.9"));
    cr_assert_eq(smember_pick(sts, pods, m, SMEMBER_MAX, &n, &e), KERR_OK, "%s", e.msg);
    cr_assert(n == 3 && m[0].ordinal == 3 && m[2].ordinal == 5);
    cJSON_Delete(pods);
    cJSON_Delete(sts);
}

/* One mutation of member 0: a JSON merge of text into the pod at path ("" the pod). */
struct row {
    const char *what, *path, *key, *value, *why;
};

static const struct row ROWS[] = {
    { "another controller", "metadata.ownerReferences.1", "uid", "\"u-other\"", "not controlled" },
    { "not the controller", "metadata.ownerReferences.1", "controller", "false", "not controlled" },
    { "a tenant's sidecar image", "spec.containers.1", "image", "\"tenant/stand-in\"",
      "container backup-restore is not the template's" },
    { "the sidecar's args changed", "spec.containers.1", "args", "[\"server\",\"--insecure\"]",
      "container backup-restore is not the template's" },
    { "a command added to the sidecar", "spec.containers.1", "command", "[\"/bin/sh\"]",
      "container backup-restore is not the template's" },
    { "etcd's command changed", "spec.containers.0", "command", "[\"/tenant\"]",
      "container etcd is not the template's" },
    { "no etcd container", "spec.containers.0", "name", "\"etcd-x\"",
      "container etcd is not the template's" },
    { "another claim", "spec.volumes.0.persistentVolumeClaim", "claimName",
      "\"etcd-main-etcd-main-1\"", "not the member claim etcd-main-etcd-main-0" },
    { "an emptyDir in the claim's place", "spec.volumes.0", "persistentVolumeClaim", "null",
      "not the member claim" },
    { "the sidecar mounts the claim elsewhere", "spec.containers.1.volumeMounts.0", "mountPath",
      "\"/tmp\"",
      "container backup-restore does not mount claim volume etcd-main at /var/etcd/data" },
    { "etcd mounts the claim with a sub path", "spec.containers.0.volumeMounts.0", "subPath",
      "\"fresh\"", "container etcd does not mount claim volume etcd-main" },
    /* the rest of the spec decides where the sidecar writes and which etcd it reaches */
    { "the sidecar's store container from env", "spec.containers.1", "env",
      "[{\"name\":\"STORAGE_CONTAINER\",\"value\":\"alice-bucket\"}]",
      "container backup-restore differs from the template's in env" },
    { "the sidecar's env from a ConfigMap", "spec.containers.1", "envFrom",
      "[{\"configMapRef\":{\"name\":\"alice\"}}]",
      "container backup-restore differs from the template's in envFrom" },
    { "etcd's pull policy Never", "spec.containers.0", "imagePullPolicy", "\"Never\"",
      "container etcd differs from the template's in imagePullPolicy" },
    { "a mount added to the sidecar", "spec.containers.1", "volumeMounts",
      "[{\"name\":\"etcd-main\",\"mountPath\":\"/var/etcd/data\"},{\"name\":\"alice\","
      "\"mountPath\":\"/var/etcd/ssl\"}]",
      "container backup-restore differs from the template's in volumeMounts" },
    { "a host alias for <etcd>-local", "spec", "hostAliases",
      "[{\"ip\":\"10.6.6.6\",\"hostnames\":[\"etcd-main-local\"]}]",
      "differs from the template's in hostAliases" },
    { "the host's network", "spec", "hostNetwork", "true",
      "differs from the template's in hostNetwork" },
    { "DNS of her own", "spec", "dnsPolicy", "\"None\"",
      "differs from the template's in dnsPolicy" },
    { "another service account", "spec", "serviceAccountName", "\"alice\"",
      "differs from the template's in serviceAccountName" },
    { "another hostname", "spec", "hostname", "\"etcd-main-1\"",
      "differs from the template's in hostname" },
    { "a third container", "spec", "containers",
      "[" ETCD_C "," BR_C ",{\"name\":\"metrics\",\"image\":\"tenant/stand-in\"}]",
      "containers are not the template's (3, the template 2)" },
    { "the containers swapped", "spec", "containers", "[" BR_C "," ETCD_C "]",
      "container 0 is not the template's etcd" },
    { "an init container", "spec", "initContainers", "[{\"name\":\"seed\"}]",
      "init containers are not the template's (1, the template 0)" },
    { "an ephemeral container", "spec", "ephemeralContainers", "[{\"name\":\"debugger\"}]",
      "ephemeral container" },
    { "a volume of hers", "spec", "volumes",
      "[{\"name\":\"etcd-main\",\"persistentVolumeClaim\":{\"claimName\":"
      "\"etcd-main-etcd-main-0\"}},{\"name\":\"alice\",\"emptyDir\":{}}]",
      "its volume alice is not the template's" },
    { "a token volume with her ConfigMap", "spec.volumes.1.projected.sources.1.configMap", "name",
      "\"alice\"", "its volume kube-api-access-x7k2p is not the template's" },
    { "the claim read-only", "spec.volumes.0.persistentVolumeClaim", "readOnly", "true",
      "claim volume etcd-main is not the claim as it is" },
    { "Pending", "status", "phase", "\"Pending\"", "not Running" },
    { "no pod IP", "status", "podIP", "null", "not Running" },
};

/* The object at dotted path of v, array indexes as numbers. BORROWED. */
static cJSON *at(cJSON *v, const char *path)
{
    char buf[256], *tok, *save = NULL;

    snprintf(buf, sizeof(buf), "%s", path);
    for (tok = strtok_r(buf, ".", &save); tok && v; tok = strtok_r(NULL, ".", &save))
        v = cJSON_IsArray(v) ? cJSON_GetArrayItem(v, (int)strtol(tok, NULL, 10))
                             : cJSON_GetObjectItem(v, tok);
    return v;
}

Test(smember, a_pod_in_a_members_place_that_does_not_match_is_never_asked)
{
    cJSON *sts = jsonfix_parse(STS);
    struct smember m[SMEMBER_MAX];
    struct kerr_info e;
    char why[512];
    size_t i;
    int n = -1;

    for (i = 0; i < sizeof(ROWS) / sizeof(ROWS[0]); i++) {
        cJSON *pod = member(0, "10.6.6.6"), *pods, *obj = at(pod, ROWS[i].path);

        cr_assert(obj, "row %s: no %s", ROWS[i].what, ROWS[i].path);
        cJSON_DeleteItemFromObject(obj, ROWS[i].key);
        if (strcmp(ROWS[i].value, "null") != 0)
            cJSON_AddItemToObject(obj, ROWS[i].key, jsonfix_parse(ROWS[i].value));
        cr_assert_eq(smember_is_member(sts, pod, why, sizeof(why)), -1, "row %s", ROWS[i].what);
        cr_assert(strstr(why, ROWS[i].why), "row %s: %s", ROWS[i].what, why);
        /* listed first, in member 0's place: nothing is asked */
        pods = members(pod, 1);
        cr_assert_eq(smember_pick(sts, pods, m, SMEMBER_MAX, &n, &e), KERR_INVAL, "row %s",
                     ROWS[i].what);
        cr_assert_eq(n, 0);
        cr_assert(strstr(e.msg, "pod etcd-main-0 is not a member") && strstr(e.msg, ROWS[i].why),
                  "row %s: %s", ROWS[i].what, e.msg);
        cJSON_Delete(pods);
    }
    cJSON_Delete(sts);
}

/* What a VerticalPodAutoscaler, a LimitRange and Gardener's resource manager write into the
 * pods they admit decides where and how privileged a member runs, not what it runs: still a
 * member. */
Test(smember, pods_as_admission_webhooks_mutate_them_are_members)
{
    cJSON *sts = jsonfix_parse(STS), *pod = member(0, "10.0.0.1"), *spec, *c;
    char why[512];

    spec = at(pod, "spec");
    cJSON_ReplaceItemInObject(spec, "schedulerName", cJSON_CreateString("bin-packing-scheduler"));
    cJSON_ReplaceItemInObject(spec, "securityContext",
                              jsonfix_parse("{\"seccompProfile\":{\"type\":\"RuntimeDefault\"}}"));
    cJSON_AddItemToObject(spec, "topologySpreadConstraints",
                          jsonfix_parse("[{\"maxSkew\":1,\"topologyKey\":\"kubernetes.io/"
                                        "hostname\",\"whenUnsatisfiable\":\"DoNotSchedule\"}]"));
    cJSON_AddItemToObject(spec, "affinity", jsonfix_parse("{\"podAntiAffinity\":{}}"));
    cJSON_ArrayForEach (c, cJSON_GetObjectItem(spec, "containers")) {
        cJSON_ReplaceItemInObject(
            c, "resources", jsonfix_parse("{\"requests\":{\"cpu\":\"215m\",\"memory\":\"1Gi\"}}"));
        cJSON_AddItemToObject(c, "securityContext",
                              jsonfix_parse("{\"allowPrivilegeEscalation\":false}"));
    }
    cr_assert_eq(smember_is_member(sts, pod, why, sizeof(why)), 0, "%s", why);
    cJSON_Delete(pod);
    cJSON_Delete(sts);
}

Test(smember, a_member_missing_or_no_port_is_an_error)
{
    cJSON *sts = jsonfix_parse(STS), *pods = cJSON_CreateArray(), *noport;
    struct smember m[SMEMBER_MAX];
    struct kerr_info e;
    char why[256];
    int n = -1;

    cJSON_AddItemToArray(pods, member(0, "10.0.0.1"));
    cJSON_AddItemToArray(pods, member(2, "10.0.0.3"));
    cJSON_AddItemToArray(pods, member(3, "10.0.0.4"));
    cr_assert_eq(smember_pick(sts, pods, m, SMEMBER_MAX, &n, &e), KERR_INVAL);
    cr_assert_eq(n, 0);
    cr_assert(strstr(e.msg, "member pod etcd-main-1 of StatefulSet etcd-main does not exist"), "%s",
              e.msg);
    cr_assert_eq(smember_is_member(sts, cJSON_GetArrayItem(pods, 2), why, sizeof(why)), -1);
    cr_assert(strstr(why, "ordinal 3 outside the StatefulSet's [0, 3)"), "%s", why);
    cr_assert_eq(smember_is_member(sts, cJSON_GetArrayItem(pods, 1), why, sizeof(why)), 2);
    noport = jsonfix_parse("{\"metadata\":{\"name\":\"etcd-main\",\"uid\":\"u-sts\"}}");
    cr_assert_eq(smember_pick(noport, pods, m, SMEMBER_MAX, &n, &e), KERR_INVAL);
    cr_assert(strstr(e.msg, "declares no port server"), "%s", e.msg);
    cJSON_Delete(noport);
    cJSON_Delete(pods);
    cJSON_Delete(sts);
}

Test(smember, the_templates_own_volumes_and_env_are_a_members_as_they_are)
{
    cJSON *sts = jsonfix_parse(STS), *pod = member(0, "10.0.0.1"), *tspec, *br, *vols;
    const char *cfg =
                   "{\"name\":\"etcd-config-file\",\"configMap\":{\"name\":\"etcd-main-config\"}}",
               *env = "[{\"name\":\"STORAGE_CONTAINER\",\"value\":\"etcd-main-bucket\"}]";
    char why[512];

    tspec = at(sts, "spec.template.spec");
    cJSON_AddItemToObject(tspec, "volumes", jsonfix_parse("[]"));
    cJSON_AddItemToArray(cJSON_GetObjectItem(tspec, "volumes"), jsonfix_parse(cfg));
    cJSON_AddItemToObject(at(sts, "spec.template.spec.containers.1"), "env", jsonfix_parse(env));
    cr_assert_eq(smember_is_member(sts, pod, why, sizeof(why)), -1);
    cr_assert(strstr(why, "differs from the template's in env"), "%s", why);
    br = at(pod, "spec.containers.1");
    cJSON_AddItemToObject(br, "env", jsonfix_parse(env));
    cr_assert_eq(smember_is_member(sts, pod, why, sizeof(why)), -1);
    cr_assert(strstr(why, "the template's volume etcd-config-file is missing"), "%s", why);
    vols = at(pod, "spec.volumes");
    cJSON_AddItemToArray(vols, jsonfix_parse(cfg));
    cr_assert_eq(smember_is_member(sts, pod, why, sizeof(why)), 0, "%s", why);
    /* the template's ConfigMap volume pointed at hers */
    cJSON_ReplaceItemInObject(at(pod, "spec.volumes.2.configMap"), "name",
                              cJSON_CreateString("alice-config"));
    cr_assert_eq(smember_is_member(sts, pod, why, sizeof(why)), -1);
    cr_assert(strstr(why, "its volume etcd-config-file is not the template's"), "%s", why);
    cJSON_Delete(pod);
    cJSON_Delete(sts);
}

/*
 * The template is a tenant's once component protection is disabled (issue 30): her container
 * added to it and backup-restore's port server declared as the port hers listens on. The
 * members run that template exactly, and nothing is asked; the message names her container.
 */
Test(smember, a_template_with_a_tenants_container_on_the_sidecars_port_is_never_asked)
{
    cJSON *sts = jsonfix_parse(STS), *pods, *tools;
    struct smember m[SMEMBER_MAX];
    struct kerr_info e;
    char why[512];
    int n = -1, i;

    tools = jsonfix_parse("{\"name\":\"tools\",\"image\":\"busybox:1.36\",\"args\":[\"sh\",\"-c\","
                          "\"serve-snapshots --port 9999\"]}");
    cJSON_AddItemToArray(at(sts, "spec.template.spec.containers"), tools);
    cJSON_ReplaceItemInObject(at(sts, "spec.template.spec.containers.1.ports.1"), "containerPort",
                              cJSON_CreateNumber(9999));
    pods = members(NULL, 0);
    for (i = 0; i < 3; i++) { /* the rolling update: each member on the template */
        cJSON *spec = at(cJSON_GetArrayItem(pods, i), "spec");

        cJSON_AddItemToArray(cJSON_GetObjectItem(spec, "containers"), cJSON_Duplicate(tools, 1));
        cJSON_ReplaceItemInObject(at(spec, "containers.1.ports.1"), "containerPort",
                                  cJSON_CreateNumber(9999));
    }
    cr_assert_eq(smember_port(sts), 9999, "what the template declares");
    cr_assert_eq(smember_pick(sts, pods, m, SMEMBER_MAX, &n, &e), KERR_INVAL);
    cr_assert_eq(n, 0);
    cr_assert(strstr(e.msg, "runs container tools, which etcd-druid does not make"), "%s", e.msg);
    cr_assert_eq(smember_is_member(sts, cJSON_GetArrayItem(pods, 1), why, sizeof(why)), -1);
    cr_assert(strstr(why, "pod template is not etcd-druid's") && strstr(why, "tools"), "%s", why);
    /* her process in no container of its own: backup-restore's port no longer its args' */
    cJSON_DeleteItemFromArray(at(sts, "spec.template.spec.containers"), 2);
    cJSON_ReplaceItemInObject(at(sts, "spec.template.spec.containers.1"), "args",
                              jsonfix_parse("[\"server\",\"--server-port=8443\"]"));
    cr_assert_eq(smember_pick(sts, pods, m, SMEMBER_MAX, &n, &e), KERR_INVAL);
    cr_assert(strstr(e.msg, "(--server-port=8443) do not make it listen on its declared port "
                            "server 9999"),
              "%s", e.msg);
    cJSON_Delete(pods);
    cJSON_Delete(sts);
}
