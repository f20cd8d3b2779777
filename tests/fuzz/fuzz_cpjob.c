/*
 * libFuzzer target: what the controller reads of a finished copy Job's Pod,
 * whose termination message the container wrote (controller/backups/cpjob.h).
 *
 * Input: bytes taken as the message of a terminated container (exit code 0),
 * and, when they are JSON, as the whole Pod. Properties checked:
 *   - reading never crashes and every string kept is a bounded C string;
 *   - no more snapshots than CPJOB_SNAPS_MAX are kept, and a summary is only
 *     ever read from a terminated container.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "controller/backups/cpjob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const cJSON *pod)
{
    struct cpjob_summary s;
    size_t i;

    memset(&s, 0, sizeof(s));
    cpjob_read_pod(pod, &s);
    if (strlen(s.error) >= sizeof(s.error) || s.n > CPJOB_SNAPS_MAX)
        abort();
    if (s.parsed && s.exit_code < 0)
        abort();
    for (i = 0; i < s.n; i++)
        if (strlen(s.snaps[i].name) >= sizeof(s.snaps[i].name) ||
            strlen(s.snaps[i].kind) >= sizeof(s.snaps[i].kind) ||
            strlen(s.snaps[i].md5) >= sizeof(s.snaps[i].md5) ||
            strlen(s.snaps[i].destination) >= sizeof(s.snaps[i].destination))
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    cJSON *pod = cJSON_CreateObject(), *arr, *cs, *t, *whole;

    if (!text || !pod) {
        free(text);
        cJSON_Delete(pod);
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    arr = cJSON_AddArrayToObject(cJSON_AddObjectToObject(pod, "status"), "containerStatuses");
    cs = cJSON_CreateObject();
    if (arr && cs && cJSON_AddItemToArray(arr, cs)) {
        t = cJSON_AddObjectToObject(cJSON_AddObjectToObject(cs, "state"), "terminated");
        if (t && cJSON_AddNumberToObject(t, "exitCode", 0) &&
            cJSON_AddStringToObject(t, "message", text))
            check(pod);
    } else {
        cJSON_Delete(cs);
    }
    whole = cJSON_ParseWithLength(text, size);
    if (whole)
        check(whole);
    cJSON_Delete(whole);
    cJSON_Delete(pod);
    free(text);
    return 0;
}
