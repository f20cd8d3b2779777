/*
 * Tests of webhook/cfgvol: which pod templates make an Etcd's containers read etcd's
 * configuration from anything but key etcd.conf.yaml of ConfigMap <E>-config.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include <cJSON.h>

#include "webhook/cfgvol.h"

/* etcd-druid's StatefulSet etcd-main, its volumes, backup-restore's mounts and env spliced. */
#define STS(vols, brmounts, brenv)                                                              \
    "{\"metadata\":{\"name\":\"etcd-main\"},\"spec\":{\"volumeClaimTemplates\":[{\"metadata\":" \
    "{\"name\":\"etcd-main\"}}],\"template\":{\"spec\":{\"volumes\":[" vols "],"                \
    "\"containers\":[{\"name\":\"etcd\",\"volumeMounts\":[{\"name\":\"etcd-main\","             \
    "\"mountPath\":\"/var/etcd/data\"},{\"name\":\"ca\",\"mountPath\":\"/var/etcd/ssl/ca\"}]}," \
    "{\"name\":\"backup-restore\"" brenv ",\"volumeMounts\":[{\"name\":\"etcd-main\","          \
    "\"mountPath\":\"/var/etcd/data\"}" brmounts "]}]}}}}"
#define DRUID_VOL                                                                  \
    "{\"name\":\"etcd-config-file\",\"configMap\":{\"name\":\"etcd-main-config\"," \
    "\"defaultMode\":420,\"items\":[{\"key\":\"etcd.conf.yaml\",\"path\":\"etcd.conf.yaml\"}]}}"
#define DRUID_MOUNT ",{\"name\":\"etcd-config-file\",\"mountPath\":\"/var/etcd/config/\"}"

static int problem(const char *text)
{
    char why[2048] = "";
    cJSON *sts = cJSON_Parse(text);
    int rc;

    cr_assert_not_null(sts, "%s", text);
    rc = cfgvol_problem(sts, "etcd-main", why, sizeof(why));
    cr_assert(!rc || why[0], "a problem without why");
    cJSON_Delete(sts);
    return rc;
}

Test(cfgvol, druid_shape_and_none_admitted)
{
    cr_assert_eq(problem(STS(DRUID_VOL, DRUID_MOUNT, "")), 0);
    cr_assert_eq(problem("{\"metadata\":{\"name\":\"etcd-main\"},\"spec\":{}}"), 0,
                 "no containers: nothing read");
    /* items absent: every key at its own path, etcd.conf.yaml at etcd.conf.yaml */
    cr_assert_eq(
        problem(STS("{\"name\":\"etcd-config-file\",\"configMap\":{\"name\":"
                    "\"etcd-main-config\"}}",
                    ",{\"name\":\"etcd-config-file\",\"mountPath\":\"/var/etcd/config\"}", "")),
        0);
    cr_assert_eq(
        problem(STS(DRUID_VOL, DRUID_MOUNT,
                    ",\"env\":[{\"name\":\"ETCD_CONF\",\"value\":"
                    "\"/var/etcd/config/etcd.conf.yaml\"},{\"name\":\"X\",\"value\":\"1\"}]")),
        0);
}

Test(cfgvol, another_configmap_refused)
{
    /* V1 */
    cr_assert_eq(problem(STS("{\"name\":\"etcd-config-file\",\"configMap\":{\"name\":"
                             "\"etcd-main-moved\",\"items\":[{\"key\":\"etcd.conf.yaml\","
                             "\"path\":\"etcd.conf.yaml\"}]}}",
                             DRUID_MOUNT, "")),
                 1);
    /* a volume of another kind under the name */
    cr_assert_eq(problem(STS("{\"name\":\"etcd-config-file\",\"emptyDir\":{}}", DRUID_MOUNT, "")),
                 1);
    cr_assert_eq(problem(STS("", DRUID_MOUNT, "")), 1, "a volume that is not there");
}

Test(cfgvol, another_key_refused)
{
    /* V2 */
    cr_assert_eq(problem(STS("{\"name\":\"etcd-config-file\",\"configMap\":{\"name\":"
                             "\"etcd-main-config\",\"items\":[{\"key\":\"moved.yaml\","
                             "\"path\":\"etcd.conf.yaml\"}]}}",
                             DRUID_MOUNT, "")),
                 1);
    cr_assert_eq(problem(STS("{\"name\":\"etcd-config-file\",\"configMap\":{\"name\":"
                             "\"etcd-main-config\",\"items\":[{\"key\":\"etcd.conf.yaml\","
                             "\"path\":\"etcd.conf.yaml\"},{\"key\":\"x\",\"path\":\"y\"}]}}",
                             DRUID_MOUNT, "")),
                 1);
}

Test(cfgvol, another_mount_at_or_over_refused)
{
    /* V3: the configuration's mount moved, another mounted where the sidecar reads */
    cr_assert_eq(
        problem(STS(DRUID_VOL ",{\"name\":\"moved\",\"configMap\":{\"name\":\"m\"}}",
                    ",{\"name\":\"etcd-config-file\",\"mountPath\":\"/var/etcd/config-old/\"},"
                    "{\"name\":\"moved\",\"mountPath\":\"/var/etcd/config/\"}",
                    "")),
        1);
    /* over the file, above the directory, with a sub path, with a dot */
    cr_assert_eq(problem(STS(DRUID_VOL ",{\"name\":\"moved\",\"configMap\":{\"name\":\"m\"}}",
                             DRUID_MOUNT ",{\"name\":\"moved\",\"mountPath\":"
                                         "\"/var/etcd/config/etcd.conf.yaml\",\"subPath\":\"x\"}",
                             "")),
                 1);
    cr_assert_eq(problem(STS(DRUID_VOL ",{\"name\":\"moved\",\"emptyDir\":{}}",
                             DRUID_MOUNT ",{\"name\":\"moved\",\"mountPath\":\"/var/etcd\"}", "")),
                 1);
    cr_assert_eq(problem(STS(DRUID_VOL,
                             ",{\"name\":\"etcd-config-file\",\"mountPath\":\"/var/etcd/config\","
                             "\"subPath\":\"a\"}",
                             "")),
                 1);
    cr_assert_eq(problem(STS(DRUID_VOL,
                             ",{\"name\":\"etcd-config-file\",\"mountPath\":"
                             "\"/var/etcd/x/../config\"}",
                             "")),
                 1);
}

/* Issue 30: the file the sidecar reads is the judged ConfigMap's, or its image's. */
Test(cfgvol, configuration_not_mounted_refused)
{
    char why[2048] = "";
    cJSON *sts = cJSON_Parse(STS(DRUID_VOL, "", ""));

    cr_assert_eq(cfgvol_problem(sts, "etcd-main", why, sizeof(why)), 1);
    cr_expect(strstr(why, "its container backup-restore would not mount key etcd.conf.yaml of "
                          "ConfigMap etcd-main-config at /var/etcd/config"),
              "%s", why);
    cJSON_Delete(sts);
    cr_assert_eq(problem(STS("", "", "")), 1);
    /* mounted above the directory only: the image's file, or the volume's, is read */
    cr_assert_eq(problem(STS("{\"name\":\"up\",\"configMap\":{\"name\":\"etcd-main-config\"}}",
                             ",{\"name\":\"up\",\"mountPath\":\"/var/etcd\"}", "")),
                 1);
    cr_assert_eq(problem(STS(DRUID_VOL ",{\"name\":\"up\",\"projected\":{\"sources\":[]}}",
                             DRUID_MOUNT ",{\"name\":\"up\",\"mountPath\":\"/var\"}", "")),
                 1);
}

Test(cfgvol, sidecar_configuration_file_refused)
{
    cr_assert_eq(problem(STS(DRUID_VOL, DRUID_MOUNT,
                             ",\"args\":[\"server\",\"--config-file=/var/etcd/br.yaml\"]")),
                 1);
    cr_assert_eq(problem(STS(DRUID_VOL, DRUID_MOUNT,
                             ",\"command\":[\"sh\",\"-c\",\"ETCD_CONF=/tmp/x etcdbrctl server\"]")),
                 1);
    cr_assert_eq(
        problem(STS(DRUID_VOL, DRUID_MOUNT, ",\"args\":[\"server\",\"--server-port=8080\"]")), 0);
}

/* An etcd container of etcd-druid's shape (etcd-wrapper), DRUID_VOL mounted in backup-restore. */
#define ETCD_CTR(fields, mounts)                                                                   \
    "{\"metadata\":{\"name\":\"etcd-main\"},\"spec\":{\"template\":{\"spec\":{\"volumes\":"        \
    "[" DRUID_VOL ",{\"name\":\"img\",\"configMap\":{\"name\":\"m\"}}],\"containers\":[{\"name\":" \
    "\"etcd\"" fields                                                                              \
    ",\"volumeMounts\":[{\"name\":\"d\",\"mountPath\":\"/var/etcd/data\"}" mounts                  \
    "]},{\"name\":\"backup-restore\",\"volumeMounts\":[{\"name\":\"etcd-config-file\","            \
    "\"mountPath\":\"/var/etcd/config\"}]}]}}}}"

Test(cfgvol, etcd_own_configuration_file)
{
    /* etcd-druid's etcd-wrapper: the sidecar serves it */
    cr_assert_eq(problem(ETCD_CTR(",\"args\":[\"start-etcd\",\"--backup-restore-host-port="
                                  "etcd-main-local:8080\"]",
                                  "")),
                 0);
    /* etcd's own --config-file: the image's file, or another ConfigMap's */
    cr_assert_eq(problem(ETCD_CTR(",\"args\":[\"--config-file=/etc/etcd/etcd.yaml\"]", "")), 1);
    cr_assert_eq(problem(ETCD_CTR(",\"command\":[\"etcd\",\"--config-file\"],\"args\":"
                                  "[\"/var/etcd/config/etcd.conf.yaml\"]",
                                  "")),
                 1, "the judged path, not mounted in container etcd");
    cr_assert_eq(
        problem(ETCD_CTR(",\"args\":[\"-config-file=/var/etcd/config/etcd.conf.yaml\"]",
                         ",{\"name\":\"etcd-config-file\",\"mountPath\":\"/var/etcd/config\"}")),
        0, "the judged path, mounted as the sidecar mounts it");
    cr_assert_eq(
        problem(ETCD_CTR(",\"args\":[\"-config-file=/var/etcd/config/etcd.conf.yaml\"]",
                         ",{\"name\":\"etcd-config-file\",\"mountPath\":\"/var/etcd/config\"},"
                         "{\"name\":\"img\",\"mountPath\":\"/var/etcd\"}")),
        1, "a volume above the judged file");
    cr_assert_eq(
        problem(ETCD_CTR(",\"env\":[{\"name\":\"ETCD_CONFIG_FILE\",\"value\":\"/x.yaml\"}]", "")),
        1);
    cr_assert_eq(problem(ETCD_CTR(",\"envFrom\":[{\"configMapRef\":{\"name\":\"m\"}}]", "")), 1);
    cr_assert_eq(problem(ETCD_CTR(",\"command\":[\"sh\",\"-c\",\"etcd --config-file=/x\"]", "")),
                 1);
}

Test(cfgvol, etcd_container_judged_too)
{
    /* container etcd without the backup sidecar: its configuration is served by nothing judged */
    cr_assert_eq(problem("{\"metadata\":{\"name\":\"etcd-main\"},\"spec\":{\"template\":{\"spec\":"
                         "{\"volumes\":[{\"name\":\"v\",\"emptyDir\":{}}],"
                         "\"containers\":[{\"name\":\"etcd\",\"volumeMounts\":[{\"name\":\"v\","
                         "\"mountPath\":\"/var/etcd\"}]}]}}}}"),
                 1);
    cr_assert_eq(problem("{\"metadata\":{\"name\":\"etcd-main\"},\"spec\":{\"template\":{\"spec\":"
                         "{\"volumes\":[{\"name\":\"v\",\"configMap\":{\"name\":\"m\"}}],"
                         "\"containers\":[{\"name\":\"etcd\",\"volumeMounts\":[{\"name\":\"v\","
                         "\"mountPath\":\"/var/etcd/config/etcd.conf.yaml\"}]}]}}}}"),
                 1);
    cr_assert_eq(problem("{\"metadata\":{\"name\":\"etcd-main\"},\"spec\":{\"template\":{\"spec\":"
                         "{\"volumes\":[{\"name\":\"v\",\"configMap\":{\"name\":\"m\"}}],"
                         "\"containers\":[{\"name\":\"etcd\",\"volumeMounts\":[{\"name\":\"v\","
                         "\"mountPath\":\"/var/etcd/config\"}]}]}}}}"),
                 1);
}

Test(cfgvol, configuration_path_moved_refused)
{
    cr_assert_eq(
        problem(STS(DRUID_VOL, DRUID_MOUNT,
                    ",\"env\":[{\"name\":\"ETCD_CONF\",\"value\":\"/tmp/etcd.conf.yaml\"}]")),
        1);
    cr_assert_eq(problem(STS(DRUID_VOL, DRUID_MOUNT,
                             ",\"env\":[{\"name\":\"ETCD_CONF\",\"valueFrom\":{\"configMapKeyRef\":"
                             "{\"name\":\"m\",\"key\":\"k\"}}}]")),
                 1);
    cr_assert_eq(
        problem(STS(DRUID_VOL, DRUID_MOUNT, ",\"envFrom\":[{\"configMapRef\":{\"name\":\"m\"}}]")),
        1);
}

/* cfgvol_judge of a StatefulSet request (op) of object text against Etcd etcd-main. */
static int judged(enum review_op op, const char *kind, const char *text, int deleting, char *msg,
                  size_t size)
{
    struct review_req req;
    struct review_resp resp;
    struct lookup_etcd etcd;
    struct member_meta m;
    cJSON *obj = cJSON_Parse(text);
    int decided = -1;

    cr_assert_not_null(obj);
    memset(&req, 0, sizeof(req));
    memset(&etcd, 0, sizeof(etcd));
    memset(&m, 0, sizeof(m));
    req.kind_group = strcmp(kind, "StatefulSet") == 0 ? "apps" : "";
    req.kind_kind = kind;
    req.op = op;
    req.object = obj;
    m.ns = "shoot";
    m.name = "etcd-main";
    m.managed = 1;
    m.part_of = "etcd-main";
    etcd.deleting = deleting;
    etcd.protection_disabled = 1;
    review_resp_init(&resp);
    cr_assert_eq(cfgvol_judge(&req, &m, &etcd, &resp, &decided), KERR_OK);
    cr_assert(!decided || !resp.allowed);
    snprintf(msg, size, "%s", resp.message ? resp.message : "");
    review_resp_release(&resp);
    cJSON_Delete(obj);
    return decided;
}

#define MOVED_VOL                                                                             \
    "{\"name\":\"etcd-config-file\",\"configMap\":{\"name\":\"etcd-main-moved\",\"items\":[{" \
    "\"key\":\"etcd.conf.yaml\",\"path\":\"etcd.conf.yaml\"}]}}"

Test(cfgvol, judge_refuses_for_everyone_while_live)
{
    char msg[4096];

    cr_assert_eq(judged(REVIEW_OP_UPDATE, "StatefulSet", STS(MOVED_VOL, DRUID_MOUNT, ""), 0, msg,
                        sizeof(msg)),
                 1, "protection disabled: still refused");
    cr_assert_not_null(strstr(msg, "updating StatefulSet shoot/etcd-main of live Etcd etcd-main"),
                       "%s", msg);
    cr_assert_not_null(strstr(msg, "ConfigMap etcd-main-config"), "%s", msg);
    cr_assert_eq(judged(REVIEW_OP_CREATE, "StatefulSet", STS(MOVED_VOL, DRUID_MOUNT, ""), 0, msg,
                        sizeof(msg)),
                 1);
    cr_assert_not_null(strstr(msg, "creating StatefulSet"), "%s", msg);
}

Test(cfgvol, judge_admits_druid_a_deleted_etcd_and_other_kinds)
{
    char msg[4096];

    cr_assert_eq(judged(REVIEW_OP_UPDATE, "StatefulSet", STS(DRUID_VOL, DRUID_MOUNT, ""), 0, msg,
                        sizeof(msg)),
                 0);
    cr_assert_eq(judged(REVIEW_OP_UPDATE, "StatefulSet", STS(MOVED_VOL, DRUID_MOUNT, ""), 1, msg,
                        sizeof(msg)),
                 0, "an Etcd being deleted is not live");
    cr_assert_eq(judged(REVIEW_OP_DELETE, "StatefulSet", STS(MOVED_VOL, DRUID_MOUNT, ""), 0, msg,
                        sizeof(msg)),
                 0);
    cr_assert_eq(
        judged(REVIEW_OP_UPDATE, "ConfigMap", STS(MOVED_VOL, DRUID_MOUNT, ""), 0, msg, sizeof(msg)),
        0);
}
