/* imtjob's credentials as etcd-druid gives them to its backup sidecar: web identity in the
 * store Secret (roleARN + token) mounted as any other Secret; no secretRef (ambient
 * credentials, etcd-druid #1371): no volume, the provider's variables as etcd-druid sets
 * them, and the pod runs as the Etcd's ServiceAccount (without its API token) so the
 * cloud's identity webhook gives it the sidecar's identity; providers whose ambient
 * credentials warden-snapshot cannot read are refused without a Secret. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "controller/core/etcdspec.h"
#include "controller/core/imtjob.h"
#include "tests/support/cfix.h"
#include "tests/support/jsonfix.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)
#define POD      "spec.jobTemplate.spec.template.spec"
#define CTR      POD ".containers[0]"

static cJSON *build(const char *store, const char *annotation, struct kerr_info *err,
                    enum kerr want)
{
    cJSON *e = cfix_etcd("main", store, "0 */12 * * *"), *t = NULL, *cj = NULL;
    struct kerr_info e2;

    cr_assert_eq(kjson_set_str(e, "metadata.uid", "etcd-uid", &e2), KERR_OK);
    if (annotation)
        cr_assert_eq(
            kjson_setv(e, (const char *const[]){ "metadata", "annotations", annotation, NULL },
                       cJSON_CreateString(""), &e2),
            KERR_OK);
    cr_assert_eq(imtjob_task_build(e, &t, &e2), KERR_OK, "%s", e2.msg);
    cr_assert_eq(kjson_set_str(t, "metadata.uid", "task-uid", &e2), KERR_OK);
    cr_assert_eq(kjson_set_str(t, "metadata.creationTimestamp", "2026-11-23T10:00:00Z", &e2),
                 KERR_OK);
    cr_assert_eq(imtjob_cronjob_build(t, e, "img:1", NULL, &cj, err), want, "%s", err->msg);
    cJSON_Delete(t);
    cJSON_Delete(e);
    return cj;
}

Test(imtcreds, s3_without_secret_runs_as_the_etcd_service_account)
{
    struct kerr_info err;
    cJSON *cj =
        build("{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":\"p\"}", NULL, &err, KERR_OK);

    cr_assert_null(kjson_get(cj, POD ".volumes"));
    cr_assert_null(kjson_get(cj, CTR ".volumeMounts"));
    cr_assert_str_eq(jsonfix_str(cj, POD ".serviceAccountName"), "main");
    cr_assert(cJSON_IsFalse(kjson_get(cj, POD ".automountServiceAccountToken")));
    /* etcd-druid sets the variable whether or not a Secret is mounted */
    cr_assert_str_eq(jsonfix_str(cj, CTR ".env[3].name"), "AWS_APPLICATION_CREDENTIALS");
    cr_assert_str_eq(jsonfix_str(cj, CTR ".env[3].value"), "/var/etcd-backup");
    cJSON_Delete(cj);

    /* etcd-druid's pod has no account of its own when runtime components are not created */
    cj = build("{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":\"p\"}",
               ETCDSPEC_ANN_RUNTIME_DISABLED, &err, KERR_OK);
    cr_assert_str_eq(jsonfix_str(cj, POD ".serviceAccountName"), "default");
    cJSON_Delete(cj);
}

Test(imtcreds, a_secret_is_mounted_and_no_account_is_taken)
{
    struct kerr_info err;
    cJSON *cj = build("{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":\"p\","
                      "\"secretRef\":{\"name\":\"etcd-backup-wi\"}}",
                      NULL, &err, KERR_OK);

    cr_assert_str_eq(jsonfix_str(cj, POD ".volumes[0].secret.secretName"), "etcd-backup-wi");
    cr_assert_str_eq(jsonfix_str(cj, CTR ".volumeMounts[0].mountPath"), "/var/etcd-backup");
    cr_assert_null(kjson_get(cj, POD ".serviceAccountName"));
    cr_assert_null(kjson_get(cj, POD ".automountServiceAccountToken"));
    cJSON_Delete(cj);
}

Test(imtcreds, providers_without_ambient_credentials_need_a_secret)
{
    static const char *const need[][2] = {
        { "azure", "ABS" }, { "gcp", "GCS" }, { "ECS", "ECS" }, { "OCS", "OCS" }
    };
    char store[160], want[96];
    struct kerr_info err;
    size_t i;

    for (i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
        snprintf(store, sizeof(store), "{\"provider\":\"%s\",\"container\":\"b\",\"prefix\":\"p\"}",
                 need[i][0]);
        cr_assert_null(build(store, NULL, &err, KERR_INVAL));
        snprintf(want, sizeof(want), "spec.backup.store.secretRef: required for %s", need[i][1]);
        cr_assert(strstr(err.msg, want), "%s", err.msg);
    }
    /* Local needs none: its Secret only names the host directory */
    cJSON *cj =
        build("{\"provider\":\"local\",\"container\":\"b\",\"prefix\":\"p\"}", NULL, &err, KERR_OK);
    cr_assert_null(kjson_get(cj, POD ".serviceAccountName"));
    cJSON_Delete(cj);
}
