/*
 * libFuzzer target: where a BackupEntry's deletion window begins (controller/entries/bkeseen.h)
 * and the window given to the deletion Job (controller/entries/bkejob.h), read from an entry the
 * API server returns.
 *
 * Input: bytes taken as a BackupEntry (JSON). Properties checked:
 *   - reading never crashes;
 *   - a start is only ever found with a claim time, never before spec.claimedAt;
 *   - the Job built for it, when it is built, gets --written-since and --written-before, and
 *     when nothing was shown written (BKESEEN_NONE) the window is empty (since after before).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "common/ktime.h"
#include "controller/entries/bkejob.h"
#include "controller/entries/bkeseen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char BUCKET[] = "{\"metadata\":{\"name\":\"b\"},\"spec\":{\"provider\":\"aws\","
                             "\"container\":\"bkt\",\"secretRef\":{\"namespace\":\"ops\","
                             "\"name\":\"creds\"}}}";

/* The time of the argument "<flag>=<time>" of job's container into *t: 1, else 0. */
static int arg_time(const cJSON *job, const char *flag, int64_t *t)
{
    const cJSON *a;
    struct timespec ts;
    size_t n = strlen(flag);

    cJSON_ArrayForEach (a, kjson_get_arr(job, "spec.template.spec.containers.0.args")) {
        if (cJSON_IsString(a) && strncmp(a->valuestring, flag, n) == 0 &&
            ktime_parse(a->valuestring + n, &ts, NULL) == KERR_OK) {
            *t = (int64_t)ts.tv_sec;
            return 1;
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *entry = cJSON_ParseWithLength((const char *)data, size), *bucket, *job = NULL;
    struct timespec claimed;
    int64_t t1 = 0, since, before;
    enum bkeseen from;

    if (!entry)
        return 0;
    from = bkeseen_start(entry, &t1);
    (void)bkeseen_needed(entry);
    if (from != BKESEEN_NONE &&
        ktime_parse(kjson_get_str(entry, "spec.claimedAt"), &claimed, NULL) == KERR_OK &&
        t1 < (int64_t)claimed.tv_sec)
        abort();
    bucket = cJSON_Parse(BUCKET);
    if (bucket && bkejob_build(entry, bucket, NULL, "img", NULL, &job, NULL) == KERR_OK) {
        if (!arg_time(job, "--written-since=", &since) ||
            !arg_time(job, "--written-before=", &before))
            abort();
        if (from == BKESEEN_NONE && since <= before)
            abort();
    }
    cJSON_Delete(job);
    cJSON_Delete(bucket);
    cJSON_Delete(entry);
    return 0;
}
