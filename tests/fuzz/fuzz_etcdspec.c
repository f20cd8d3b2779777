/*
 * libFuzzer target: what the controller reads of an Etcd it did not write.
 *
 * Input: JSON text taken as an Etcd (and, whole, as a cron expression and as
 * the restore-progress annotation). Properties checked:
 *   - reading, validating, naming components, building the status-backup
 *     spec and the immutability task never crash;
 *   - the CronJob of its immutability task is built exactly when the
 *     controller promises one (controller/core/imtjob.c, check_inputs): a store
 *     with a provider warden-snapshot opens (imtjob_provider_supported) and
 *     a prefix, and a secretRef unless the store is S3 (ambient credentials)
 *     or Local; a refusal is KERR_UNSUPPORTED exactly for a known provider
 *     warden-snapshot cannot open, else KERR_INVAL; a CronJob built is in
 *     the Etcd's namespace and passes the provider to warden-snapshot;
 *   - a progress annotation printed and parsed again is the same progress.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "controller/core/etcdspec.h"
#include "controller/core/imtjob.h"
#include "controller/restore/rst.h"
#include "controller/restore/sbk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_progress(const char *text)
{
    struct rst_progress a, b;
    char *out = NULL;

    rst_progress_parse(text, &a);
    if (rst_progress_print(&a, &out, NULL) != KERR_OK)
        return;
    rst_progress_parse(out, &b);
    free(out);
    if (a.awaiting_status != b.awaiting_status || a.awaiting_resources != b.awaiting_resources ||
        strcmp(a.error, b.error) != 0)
        abort();
}

/* Is the CronJob of an Etcd read as s promised? 1 yes, 0 refused as KERR_INVAL, -1 refused as
 * KERR_UNSUPPORTED. */
static int cronjob_promised(const struct etcdspec *s)
{
    const char *kind = s->store.provider_kind;

    if (!s->has_store || !kind)
        return 0;
    if (!imtjob_provider_supported(kind))
        return -1;
    if (!s->store.prefix)
        return 0;
    return s->store.secret_name || strcmp(kind, "S3") == 0 || strcmp(kind, "Local") == 0;
}

/* The CronJob cj built for s: its namespace and the provider argument. */
static void check_cronjob(const cJSON *cj, const struct etcdspec *s)
{
    const cJSON *args = kjson_get(cj, "spec.jobTemplate.spec.template.spec.containers.0.args");
    const char *ns = kjson_get_str(cj, "metadata.namespace");
    const cJSON *a;
    char want[128];
    int found = 0;

    if (!ns || strcmp(ns, s->namespace) != 0)
        abort();
    snprintf(want, sizeof(want), "--storage-provider=%s", s->store.provider_kind);
    cJSON_ArrayForEach (a, args) {
        if (cJSON_IsString(a) && strcmp(a->valuestring, want) == 0)
            found = 1;
    }
    if (!found)
        abort();
}

static void check_etcd(const cJSON *etcd)
{
    struct etcdspec s;
    cJSON *out = NULL, *task = NULL;
    enum kerr rc;
    int promised;

    (void)etcdspec_validate(etcd, NULL);
    (void)etcdspec_bucket_immutability(etcd);
    if (etcdspec_components(etcd, &out, NULL) == KERR_OK)
        cJSON_Delete(out);
    if (sbk_desired_spec(etcd, kjson_get(etcd, "items"), &out, NULL) == KERR_OK)
        cJSON_Delete(out);
    if (etcdspec_read(etcd, &s, NULL) != KERR_OK || !s.namespace || !s.uid || !s.uid[0])
        return;
    if (imtjob_task_build(etcd, &task, NULL) != KERR_OK)
        return;
    kjson_set_str(task, "metadata.uid", "u", NULL);
    kjson_set_str(task, "metadata.creationTimestamp", "2026-01-01T00:00:00Z", NULL);
    out = NULL;
    rc = imtjob_cronjob_build(task, etcd, NULL, NULL, &out, NULL);
    promised = cronjob_promised(&s);
    if ((rc == KERR_OK) != (promised == 1))
        abort();
    if (rc != KERR_OK && (rc == KERR_UNSUPPORTED) != (promised == -1))
        abort();
    if (rc == KERR_OK)
        check_cronjob(out, &s);
    cJSON_Delete(out);
    cJSON_Delete(task);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    cJSON *etcd = NULL;

    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    (void)etcdspec_cron_check(text, NULL);
    check_progress(text);
    if (kjson_parse(text, size, NULL, &etcd, NULL, NULL) == KERR_OK && cJSON_IsObject(etcd))
        check_etcd(etcd);
    cJSON_Delete(etcd);
    free(text);
    return 0;
}
