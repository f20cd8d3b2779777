/*
 * Tests of webhook/cfgvol: which pod templates make an Etcd's containers read etcd's
 * configuration from anything but key etcd.conf.yaml of ConfigMap <E>-config.
 */
#include <criterion/criterion.h>
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
    cr_assert_eq(problem(STS(DRUID_VOL, "", "")), 0, "nothing mounted there: nothing read");
    cr_assert_eq(problem(STS("", "", "")), 0);
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

Test(cfgvol, etcd_container_judged_too)
{
    /* container etcd mounting above the configuration's directory reads no configuration */
    cr_assert_eq(problem("{\"metadata\":{\"name\":\"etcd-main\"},\"spec\":{\"template\":{\"spec\":"
                         "{\"volumes\":[{\"name\":\"v\",\"emptyDir\":{}}],"
                         "\"containers\":[{\"name\":\"etcd\",\"volumeMounts\":[{\"name\":\"v\","
                         "\"mountPath\":\"/var/etcd\"}]}]}}}}"),
                 0);
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
