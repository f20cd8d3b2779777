/* controller/core/smport: the sidecar's port only from a pod spec etcd-druid builds (issue 30). */
#include "controller/core/smport.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tests/support/jsonfix.h"

/* A pod spec as etcd-druid builds it, with extra containers and backup-restore args. */
static int check(const char *extra, const char *init, const char *args, char *why, size_t size)
{
    char text[2048];
    cJSON *spec;
    int port;

    snprintf(text, sizeof(text),
             "{\"containers\":[{\"name\":\"etcd\",\"image\":\"etcd-wrapper\",\"ports\":[{\"name\":"
             "\"server\",\"containerPort\":2380},{\"name\":\"client\",\"containerPort\":2379}]},"
             "{\"name\":\"backup-restore\",\"image\":\"etcdbrctl\",\"args\":%s,\"ports\":[{"
             "\"name\":\"server\",\"containerPort\":8080}]}%s],\"initContainers\":[%s]}",
             args, extra, init);
    spec = jsonfix_parse(text);
    port = smport_check(spec, why, size);
    cJSON_Delete(spec);
    return port;
}

Test(smport, etcd_druids_specs_give_the_declared_port)
{
    static const char *const ok[] = {
        "[\"server\"]", /* etcd-druid before v0.31: etcdbrctl's default 8080 */
        "[\"server\",\"--server-port=8080\",\"--storage-provider=S3\"]",
        "[\"server\",\"--server-port\",\"8080\"]",
        "[\"server\",\"-p\",\"8080\"]",
        "[\"server\",\"-p8080\"]",
        "[\"server\",\"-p=8080\",\"-\"]",
    };
    char why[256];
    size_t i;

    for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        cr_assert_eq(check("", "", ok[i], why, sizeof(why)), 8080, "%s: %s", ok[i], why);
    cr_assert_eq(check("", "{\"name\":\"change-backup-bucket-permissions\",\"image\":\"alpine\"}",
                       "[\"server\"]", why, sizeof(why)),
                 8080, "%s", why);
}

Test(smport, anything_else_is_refused_naming_the_container)
{
    static const struct {
        const char *extra, *init, *args, *why;
    } rows[] = {
        { ",{\"name\":\"tools\"}", "", "[\"server\"]",
          "runs container tools, which etcd-druid does not make" },
        { ",{\"name\":\"etcd\"}", "", "[\"server\"]", "container etcd twice" },
        { "", "{\"name\":\"seed\"}", "[\"server\"]",
          "runs init container seed, which etcd-druid does not make" },
        { "", "{\"name\":\"change-permissions\",\"ports\":[{\"containerPort\":8080}]}", "[]",
          "init container change-permissions declares the sidecar's port 8080" },
        { "", "", "[\"server\",\"--server-port=9999\"]", "(--server-port=9999) do not make" },
        { "", "", "[\"server\",\"--server-port=8080\",\"-p\",\"9999\"]", "(-p) do not make" },
        { "", "", "[\"server\",\"--server-port=0x1f90\"]", "do not make it listen" },
        { "", "", "[\"server\",\"--server-port=08080\"]", "do not make it listen" },
        { "", "", "[\"server\",\"--server-port\"]", "do not make it listen" },
        { "", "", "[\"server\",\"-vp9999\"]", "(-vp9999) do not make" },
        { "", "", "[\"server\",1]", "an arg that is not a string" },
        { "", "", "[\"server\",\"--server-port=8080\",\"--\",\"-p\"]", "(-p) do not make" },
        { "", "", "\"server\"", "args are not a list" },
    };
    char why[256];
    size_t i;

    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        cr_assert_eq(check(rows[i].extra, rows[i].init, rows[i].args, why, sizeof(why)), -1,
                     "row %zu", i);
        cr_assert(strstr(why, rows[i].why), "row %zu: %s", i, why);
    }
}

/* The first port of container i in spec. BORROWED. */
static cJSON *port0(cJSON *spec, int i)
{
    cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(spec, "containers"), i);

    return cJSON_GetArrayItem(cJSON_GetObjectItem(c, "ports"), 0);
}

Test(smport, the_port_on_etcd_a_command_or_the_nodes_network_is_refused)
{
    cJSON *spec = jsonfix_parse(
        "{\"containers\":[{\"name\":\"etcd\",\"ports\":[{\"containerPort\":2380,\"hostPort\":"
        "8080}]},{\"name\":\"backup-restore\",\"ports\":[{\"name\":\"server\",\"containerPort\":"
        "8080}]}]}");
    char why[256];

    cr_assert_eq(smport_declared(spec), 8080);
    cr_assert_eq(smport_check(spec, why, sizeof(why)), -1);
    cr_assert(strstr(why, "container etcd declares the sidecar's port 8080"), "%s", why);
    cJSON_DeleteItemFromObject(port0(spec, 0), "hostPort");
    cr_assert_eq(smport_check(spec, why, sizeof(why)), 8080, "%s", why);
    cJSON_AddItemToObject(cJSON_GetArrayItem(cJSON_GetObjectItem(spec, "containers"), 1), "command",
                          jsonfix_parse("[\"/bin/sh\"]"));
    cr_assert_eq(smport_check(spec, why, sizeof(why)), -1);
    cr_assert(strstr(why, "has a command"), "%s", why);
    cJSON_DeleteItemFromObject(cJSON_GetArrayItem(cJSON_GetObjectItem(spec, "containers"), 1),
                               "command");
    cJSON_AddTrueToObject(spec, "hostNetwork");
    cr_assert_eq(smport_check(spec, why, sizeof(why)), -1);
    cr_assert(strstr(why, "hostNetwork"), "%s", why);
    cJSON_DeleteItemFromObject(spec, "hostNetwork");
    /* no --server-port: etcdbrctl listens on 8080, whatever the template declares */
    cJSON_SetNumberValue(cJSON_GetObjectItem(port0(spec, 1), "containerPort"), 9999);
    cr_assert_eq(smport_declared(spec), 9999);
    cr_assert_eq(smport_check(spec, why, sizeof(why)), -1);
    cr_assert(strstr(why, "set no --server-port: it listens on 8080, not on its declared port "
                          "server 9999"),
              "%s", why);
    cr_assert_eq(smport_check(NULL, why, sizeof(why)), -1);
    cr_assert_eq(smport_check(NULL, NULL, 0), -1);
    cJSON_Delete(spec);
}
