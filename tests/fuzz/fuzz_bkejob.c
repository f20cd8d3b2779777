/*
 * libFuzzer target: what the controller reads of a finished deletion Job's
 * Pod, whose termination message the container wrote.
 *
 * Input: bytes taken as the message of a terminated container (exit code 0),
 * and, when they are JSON, as the whole Pod. Properties checked:
 *   - reading never crashes and the message kept is a bounded C string;
 *   - a summary is only ever read from a terminated container, with counts
 *     that are never negative and an earliest time that fits its buffer.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "controller/core/podjob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const cJSON *pod)
{
    struct podjob_summary s;

    podjob_read_pod(pod, &s);
    if (strlen(s.message) >= sizeof(s.message) || strlen(s.earliest) >= sizeof(s.earliest))
        abort();
    if (s.parsed && (!s.terminated || s.deleted < 0 || s.locked < 0 || s.failed < 0 ||
                     s.remaining < 0 || s.kept < 0))
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
