/* controller/hibernation/smember: which pods' sidecars warden-controller asks (issue 30). */
#include "controller/hibernation/smember.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tests/support/jsonfix.h"

#define TEMPLATE                                                                                 \
    "\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"etcd\",\"ports\":[{\"name\":" \
    "\"server\",\"containerPort\":2380}]},{\"name\":\"backup-restore\",\"ports\":[{\"name\":"    \
    "\"metrics\",\"containerPort\":9000},{\"name\":\"server\",\"containerPort\":8443}]}]}}}"

static const char *STS = "{\"metadata\":{\"name\":\"etcd-main\",\"uid\":\"u-sts\"}," TEMPLATE "}";

/* A pod: name, controller owner kind and uid, phase, podIP (NULL: absent). */
static void add_pod(cJSON *pods, const char *name, const char *kind, const char *uid,
                    const char *phase, const char *ip)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"%s\",\"ownerReferences\":[{\"kind\":\"Etcd\",\"uid\":"
             "\"u-etcd\"},{\"kind\":\"%s\",\"uid\":\"%s\",\"controller\":true}]},\"status\":{"
             "\"phase\":\"%s\"%s%s%s}}",
             name, kind, uid, phase, ip ? ",\"podIP\":\"" : "", ip ? ip : "", ip ? "\"" : "");
    cJSON_AddItemToArray(pods, jsonfix_parse(text));
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

Test(smember, only_the_statefulsets_running_members_in_ordinal_order)
{
    cJSON *sts = jsonfix_parse(STS), *pods = cJSON_CreateArray();
    struct smember m[SMEMBER_MAX];
    struct kerr_info e;
    int n = -1;

    add_pod(pods, "etcd-main-10", "StatefulSet", "u-sts", "Running", "10.0.0.10");
    add_pod(pods, "etcd-main-2", "StatefulSet", "u-sts", "Running", "10.0.0.2");
    add_pod(pods, "etcd-main-0", "StatefulSet", "u-sts", "Running", "10.0.0.1");
    add_pod(pods, "etcd-main-0", "StatefulSet", "u-sts", "Running", "10.6.6.5");   /* twice */
    add_pod(pods, "etcd-main-1", "StatefulSet", "u-sts", "Pending", "10.0.0.5");   /* not Running */
    add_pod(pods, "etcd-main-3", "StatefulSet", "u-sts", "Running", NULL);         /* no IP */
    add_pod(pods, "etcd-main-4", "StatefulSet", "u-other", "Running", "10.6.6.6"); /* other sts */
    add_pod(pods, "etcd-main-5", "ReplicaSet", "u-sts", "Running", "10.6.6.7");    /* other kind */
    add_pod(pods, "etcd-main-06", "StatefulSet", "u-sts", "Running", "10.6.6.8");  /* not <n> */
    add_pod(pods, "tenant-0", "StatefulSet", "u-sts", "Running", "10.6.6.9");      /* name */
    add_pod(pods, "etcd-main-client", "StatefulSet", "u-sts", "Running", "10.6.6.1"); /* name */
    cr_assert_eq(smember_pick(sts, pods, m, SMEMBER_MAX, &n, &e), KERR_OK, "%s", e.msg);
    cr_assert_eq(n, 3);
    cr_assert_str_eq(m[0].pod, "etcd-main-0");
    cr_assert_str_eq(m[0].ip, "10.0.0.1");
    cr_assert_str_eq(m[1].pod, "etcd-main-2");
    cr_assert_str_eq(m[2].pod, "etcd-main-10");
    cr_assert_eq(m[2].port, 8443);
    /* at most max: the lowest ordinals stay */
    cr_assert_eq(smember_pick(sts, pods, m, 2, &n, &e), KERR_OK);
    cr_assert_eq(n, 2);
    cr_assert(m[0].ordinal == 0 && m[1].ordinal == 2);
    cJSON_Delete(pods);
    cJSON_Delete(sts);
}

Test(smember, no_member_or_no_port_is_an_error)
{
    cJSON *sts = jsonfix_parse(STS), *pods = cJSON_CreateArray(), *noport;
    struct smember m[SMEMBER_MAX];
    struct kerr_info e;
    int n = -1;

    add_pod(pods, "etcd-main-0", "StatefulSet", "u-other", "Running", "10.0.0.1");
    cr_assert_eq(smember_pick(sts, pods, m, SMEMBER_MAX, &n, &e), KERR_INVAL);
    cr_assert_eq(n, 0);
    cr_assert(strstr(e.msg, "no member pod"), "%s", e.msg);
    noport = jsonfix_parse("{\"metadata\":{\"name\":\"etcd-main\",\"uid\":\"u-sts\"}}");
    cr_assert_eq(smember_pick(noport, pods, m, SMEMBER_MAX, &n, &e), KERR_INVAL);
    cr_assert(strstr(e.msg, "declares no port server"), "%s", e.msg);
    cJSON_Delete(noport);
    cJSON_Delete(pods);
    cJSON_Delete(sts);
}
