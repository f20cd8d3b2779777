/*
 * libFuzzer target: what the controller reads of an Etcd it did not write.
 *
 * Input: JSON text taken as an Etcd (and, whole, as a cron expression and as
 * the restore-progress annotation). Properties checked:
 *   - reading, validating, naming components, building the status-backup
 *     spec and the immutability task never crash;
 *   - an Etcd that validates and has a store with a known provider and a
 *     prefix always yields a CronJob for its immutability task;
 *   - a progress annotation printed and parsed again is the same progress.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "controller/etcdspec.h"
#include "controller/imtjob.h"
#include "controller/rst.h"
#include "controller/sbk.h"

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

static void check_etcd(const cJSON *etcd)
{
    struct etcdspec s;
    cJSON *out = NULL, *task = NULL;
    int valid = etcdspec_validate(etcd, NULL) == KERR_OK;

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
    if (imtjob_cronjob_build(task, etcd, NULL, NULL, &out, NULL) != KERR_OK && valid &&
        s.has_store && s.store.provider_kind && s.store.prefix)
        abort();
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
