/* etcdspec: reading an Etcd, the retention type, validation messages, the cron check, component
 * names and kinds, the owner reference etcd-druid writes. */
#include "controller/core/etcdspec.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "controller/core/cron.h"
#include "tests/support/jsonfix.h"

static const char ETCD[] =
    "{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"Etcd\","
    "\"metadata\":{\"name\":\"main\",\"namespace\":\"shoot\",\"uid\":\"u-1\","
    "\"annotations\":{}},"
    "\"spec\":{\"replicas\":3,\"backup\":{\"port\":8081,\"tls\":{},"
    "\"fullSnapshotSchedule\":\"0 */6 * * *\",\"store\":{\"provider\":\"aws\","
    "\"container\":\"bkt\",\"prefix\":\"shoot--main\",\"secretRef\":{\"name\":\"s\"}}}}}";

static cJSON *etcd_with(const char *path, const char *json)
{
    cJSON *e = jsonfix_parse(ETCD);

    if (json)
        cr_assert_eq(kjson_set(e, path, jsonfix_parse(json), NULL), KERR_OK);
    else
        (void)kjson_delete(e, path);
    return e;
}

Test(etcdspec, reads_store_schedule_replicas_tls_port)
{
    cJSON *e = jsonfix_parse(ETCD);
    struct etcdspec s;

    cr_assert_eq(etcdspec_read(e, &s, NULL), KERR_OK);
    cr_assert_str_eq(s.name, "main");
    cr_assert_str_eq(s.namespace, "shoot");
    cr_assert_str_eq(s.uid, "u-1");
    cr_assert_eq(s.replicas, 3);
    cr_assert(s.has_store);
    cr_assert_str_eq(s.store.provider, "aws");
    cr_assert_str_eq(s.store.provider_kind, "S3");
    cr_assert_str_eq(s.store.container, "bkt");
    cr_assert_str_eq(s.store.prefix, "shoot--main");
    cr_assert_str_eq(s.store.secret_name, "s");
    cr_assert_null(s.store.secret_namespace);
    cr_assert_str_eq(s.full_snapshot_schedule, "0 */6 * * *");
    cr_assert(s.backup_tls);
    cr_assert_eq(s.backup_port, 8081);
    cr_assert_null(s.retention_type);
    cJSON_Delete(e);
}

Test(etcdspec, no_store_no_name)
{
    cJSON *e = etcd_with("spec.backup", "{}");
    struct kerr_info err;
    struct etcdspec s;

    cr_assert_eq(etcdspec_read(e, &s, NULL), KERR_OK);
    cr_assert_not(s.has_store);
    cr_assert_eq(s.backup_port, 8080);
    cr_assert_not(s.backup_tls);
    cJSON_Delete(e);
    e = etcd_with("metadata.name", NULL);
    cr_assert_eq(etcdspec_read(e, &s, &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "metadata.name"), "%s", err.msg);
    cJSON_Delete(e);
}

Test(etcdspec, retention_type_field_wins_over_annotation)
{
    cJSON *e = etcd_with("spec.backup.store.immutability", "{\"retentionType\":\"bucket\"}");

    cr_assert(etcdspec_bucket_immutability(e));
    cr_assert_eq(kjson_setv(e,
                            (const char *const[]){ "metadata", "annotations",
                                                   ETCDSPEC_ANN_RETENTION_TYPE, NULL },
                            cJSON_CreateString("none"), NULL),
                 KERR_OK);
    cr_assert(etcdspec_bucket_immutability(e), "the field wins");
    cJSON_Delete(e);
    e = jsonfix_parse(ETCD);
    cr_assert_not(etcdspec_bucket_immutability(e));
    cr_assert_eq(kjson_setv(e,
                            (const char *const[]){ "metadata", "annotations",
                                                   ETCDSPEC_ANN_RETENTION_TYPE, NULL },
                            cJSON_CreateString("bucket"), NULL),
                 KERR_OK);
    cr_assert(etcdspec_bucket_immutability(e), "the annotation where the CRD lacks the field");
    cJSON_Delete(e);
}

Test(etcdspec, bucket_state_for_hibernation)
{
    struct kerr_info err = { 0 };
    cJSON *e = jsonfix_parse(ETCD);

    cr_assert_eq(etcdspec_bucket_state(e, &err), 0, "no immutability setting");
    cJSON_Delete(e);
    e = etcd_with("spec.backup.store.immutability", "{\"retentionType\":\"bucket\"}");
    cr_assert_eq(etcdspec_bucket_state(e, &err), 1);
    cJSON_Delete(e);
    e = etcd_with("spec.backup.store.immutability", "{\"retentionType\":7}");
    cr_assert_eq(etcdspec_bucket_state(e, &err), -1, "a malformed block is not read as none");
    cr_assert(strstr(err.msg, "must be a string"), "%s", err.msg);
    cJSON_Delete(e);
}

struct bad {
    const char *path, *json, *want;
};

Test(etcdspec, validation_names_the_field)
{
    static const struct bad rows[] = {
        { "spec.backup.store.immutability", "\"bucket\"", "immutability: must be an object" },
        { "spec.backup.store.immutability", "{\"retentionType\":7}", "must be a string" },
        { "spec.backup.store.immutability", "{\"retentionType\":\"object\"}",
          "unsupported value \"object\"" },
        { "spec.backup.fullSnapshotSchedule", "\"every day\"",
          "spec.backup.fullSnapshotSchedule: \"every day\" is not a cron expression" },
        { "spec.backup.fullSnapshotSchedule", "\"61 * * * *\"",
          "\"61 * * * *\" is not a cron expression: minute: 61 is outside 0-59" },
        { "spec.backup.fullSnapshotSchedule", "5", "fullSnapshotSchedule: must be a string" },
        { "spec.backup.store.provider", "\"dropbox\"", "unsupported provider \"dropbox\"" },
        { "spec.backup.store.prefix", NULL, "spec.backup.store.prefix: required" },
        { "spec.backup.store", "[]", "spec.backup.store: must be an object" },
    };
    struct kerr_info err;
    size_t i;

    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        cJSON *e = etcd_with(rows[i].path, rows[i].json);

        cr_assert_eq(etcdspec_validate(e, &err), KERR_INVAL, "row %zu", i);
        cr_assert(strstr(err.msg, rows[i].want), "row %zu: %s", i, err.msg);
        cJSON_Delete(e);
    }
}

Test(etcdspec, validation_of_the_annotation_and_good_etcds)
{
    cJSON *e = jsonfix_parse(ETCD);
    struct kerr_info err;

    cr_assert_eq(etcdspec_validate(e, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(kjson_setv(e,
                            (const char *const[]){ "metadata", "annotations",
                                                   ETCDSPEC_ANN_RETENTION_TYPE, NULL },
                            cJSON_CreateString("forever"), NULL),
                 KERR_OK);
    cr_assert_eq(etcdspec_validate(e, &err), KERR_INVAL);
    cr_assert(strstr(err.msg, ETCDSPEC_ANN_RETENTION_TYPE ": unsupported value \"forever\""), "%s",
              err.msg);
    cJSON_Delete(e);
    e = etcd_with("spec.backup", "{}");
    cr_assert_eq(etcdspec_validate(e, &err), KERR_OK, "no store is fine: %s", err.msg);
    cr_assert_eq(kjson_setv(e,
                            (const char *const[]){ "metadata", "annotations",
                                                   ETCDSPEC_ANN_RETENTION_TYPE, NULL },
                            cJSON_CreateString("bucket"), NULL),
                 KERR_OK);
    cr_assert_eq(etcdspec_validate(e, &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "needs a backup store"), "%s", err.msg);
    cJSON_Delete(e);
}

Test(etcdspec, cron_expressions)
{
    static const char *const good[] = {
        "0 0 * * *",   "*/5 * * * *",     "0 */24 * * *",  "0-59/15 1,2,3 1-31 JAN-dec sun",
        " 1 2 3 4 5 ", "0 0 ? * MON-FRI", "59 23 31 12 6", "0 0 1 */3 *",
        "0 0 30 2 *", /* parses; it never fires (the schedule controller says so) */
    };
    static const char *const bad[] = {
        "",
        "* * * *",
        "* * * * * *",
        "60 * * * *",
        "* 24 * * *",
        "* * 0 * *",
        "* * * 13 *",
        "* * * * 7",
        "*/0 * * * *",
        "5-1 * * * *",
        "a * * * *",
        "1,,2 * * * *",
        "* * * FOO *",
        "@every 1h",
        "@often",
        "TZ=UTC 0 0 * * *",
        NULL,
    };
    struct kerr_info err;
    size_t i;

    for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        cr_assert_eq(etcdspec_cron_check(good[i], &err), KERR_OK, "\"%s\": %s", good[i], err.msg);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(etcdspec_cron_check(bad[i], &err), KERR_INVAL, "\"%s\" accepted", bad[i]);
    cr_assert_eq(etcdspec_cron_check("* * * 13 *", &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "\"* * * 13 *\" is not a cron expression: month: 13 is outside 1-12"),
              "%s", err.msg);
    cr_assert_eq(etcdspec_cron_check("* * *", &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "is not a cron expression: expected exactly 5 fields"), "%s",
              err.msg);
}

/* One parser: what a Kubernetes CronJob (robfig/cron's ParseStandard) accepts, etcdspec accepts,
 * and the schedule of the immutability CronJob is never refused by one and taken by the other. */
Test(etcdspec, cron_as_kubernetes_reads_it)
{
    static const char *const robfig[] = {
        "@daily",    "@hourly",   "@weekly",   "@monthly",     "@yearly",
        "@annually", "@midnight", "? * * * *", "*/61 * * * *", "0 0 * * 0/9",
    };
    struct kerr_info err;
    struct cron c;
    size_t i;

    for (i = 0; i < sizeof(robfig) / sizeof(robfig[0]); i++) {
        cr_assert_eq(cron_parse(robfig[i], &c, &err), KERR_OK, "\"%s\": %s", robfig[i], err.msg);
        cr_assert_eq(etcdspec_cron_check(robfig[i], &err), KERR_OK, "\"%s\": %s", robfig[i],
                     err.msg);
    }
}

Test(etcdspec, providers_as_etcd_druid_maps_them)
{
    static const char *const rows[][2] = {
        { "aws", "S3" },        { "S3", "S3" },        { "stackit", "S3" },      { "azure", "ABS" },
        { "gcp", "GCS" },       { "alicloud", "OSS" }, { "openstack", "Swift" }, { "dell", "ECS" },
        { "openshift", "OCS" }, { "local", "Local" },  { "Local", "Local" },
    };
    size_t i;

    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        cr_assert_str_eq(etcdspec_provider_kind(rows[i][0]), rows[i][1], "%s", rows[i][0]);
    cr_assert_null(etcdspec_provider_kind("AWS"));
    cr_assert_null(etcdspec_provider_kind(NULL));
}

/* The "name" fields of an array of references, joined by commas. */
static const char *ref_names(const cJSON *arr, char *out, size_t n)
{
    const cJSON *c;
    size_t used = 0;

    out[0] = '\0';
    cJSON_ArrayForEach (c, arr) {
        int w = snprintf(out + used, n - used, "%s%s", used ? "," : "", jsonfix_str(c, "name"));

        cr_assert(w > 0 && (size_t)w < n - used);
        used += (size_t)w;
    }
    return out;
}

Test(etcdspec, components_named_as_etcd_druid)
{
    cJSON *e = jsonfix_parse(ETCD), *list = NULL;
    char names[1024];

    cr_assert_eq(etcdspec_components(e, &list, NULL), KERR_OK);
    cr_assert_str_eq(ref_names(list, names, sizeof(names)),
                     "main,main-client,main-peer,main-config,main,druid.gardener.cloud:etcd:main,"
                     "druid.gardener.cloud:etcd:main,main,main-0,main-1,main-2,main-full-snap,"
                     "main-delta-snap");
    cr_assert_str_eq(jsonfix_str(list, "[0].kind"), "StatefulSet");
    cr_assert_str_eq(jsonfix_str(list, "[0].apiVersion"), "apps/v1");
    cr_assert_str_eq(jsonfix_str(list, "[5].kind"), "Role");
    cr_assert_str_eq(jsonfix_str(list, "[5].apiVersion"), "rbac.authorization.k8s.io/v1");
    cr_assert_str_eq(jsonfix_str(list, "[12].kind"), "Lease");
    cJSON_Delete(list);
    cJSON_Delete(e);
}

Test(etcdspec, kinds_and_owner_reference)
{
    cJSON *e = jsonfix_parse(ETCD), *ref = NULL;
    char name[16];

    cr_assert(etcdspec_kind_owned("StatefulSet"));
    cr_assert(etcdspec_kind_owned("Lease"));
    cr_assert_not(etcdspec_kind_owned("PersistentVolumeClaim"), "PVCs are not owned by the Etcd");
    cr_assert_not(etcdspec_kind_owned("Secret"));
    cr_assert_str_eq(etcdspec_kind_resource("PodDisruptionBudget")->resource,
                     "poddisruptionbudgets");
    cr_assert_str_eq(etcdspec_kind_resource("Lease")->group, "coordination.k8s.io");
    cr_assert_null(etcdspec_kind_resource("Pod"));
    cr_assert_eq(etcdspec_owner_ref(e, &ref, NULL), KERR_OK);
    jsonfix_assert_sorted(ref, "{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\","
                               "\"blockOwnerDeletion\":true,\"controller\":true,\"kind\":\"Etcd\","
                               "\"name\":\"main\",\"uid\":\"u-1\"}");
    cJSON_Delete(ref);
    cr_assert_eq(etcdspec_client_service_name("main", name, sizeof(name)), KERR_OK);
    cr_assert_str_eq(name, "main-client");
    cr_assert_eq(etcdspec_client_service_name("a-very-long-etcd-name", name, sizeof(name)),
                 KERR_TOOBIG);
    (void)kjson_delete(e, "metadata.uid");
    cr_assert_eq(etcdspec_owner_ref(e, &ref, NULL), KERR_INVAL);
    cJSON_Delete(e);
}
