/*
 * libFuzzer target: what the controller reads of a finished restore drill Job's Pod
 * (controller/backups/erd_sum.h): the summary `warden-snapshot verify` wrote to its
 * termination message, and the restore init container's message.
 *
 * Input: bytes taken as the verify container's message (and as the restore container's,
 * exit code 1), and, when they are JSON, as the whole Pod. Properties checked:
 *   - reading never crashes, every string kept is a bounded C string free of control
 *     characters;
 *   - Restorable only from a parsed restorable summary with figures (never from a failed
 *     restore), NotRestorable or Failed always with a message.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "controller/backups/erd_sum.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void bounded(const char *s, size_t n)
{
    size_t len = strnlen(s, n);

    if (len >= n)
        abort();
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] < 0x20)
            abort();
}

static void check(const cJSON *job, const cJSON *pod)
{
    struct erd_outcome o;

    erd_sum_verdict(job, pod, "", &o);
    bounded(o.sum.newest, sizeof(o.sum.newest));
    bounded(o.sum.newest_time, sizeof(o.sum.newest_time));
    bounded(o.sum.failed_object, sizeof(o.sum.failed_object));
    bounded(o.sum.reason, sizeof(o.sum.reason));
    if (strnlen(o.message, sizeof(o.message)) >= sizeof(o.message))
        abort();
    if (o.verdict == ERD_RESTORABLE &&
        (!o.sum.parsed || !o.sum.restorable || !o.sum.has_figures || o.restore_exit > 0))
        abort();
    if (o.verdict != ERD_RESTORABLE && !o.message[0])
        abort();
    if (o.verdict == ERD_UNKNOWN)
        abort();
}

/* A Pod whose verify container (and, with init, restore container at exit 1) ended with text. */
static cJSON *pod_of(const char *text, int init)
{
    cJSON *pod = cJSON_CreateObject(), *st = cJSON_AddObjectToObject(pod, "status");
    cJSON *arr = cJSON_AddArrayToObject(st, init ? "initContainerStatuses" : "containerStatuses");
    cJSON *cs = cJSON_CreateObject(), *t;

    if (!arr || !cs || !cJSON_AddItemToArray(arr, cs)) {
        cJSON_Delete(cs);
        return pod;
    }
    cJSON_AddStringToObject(cs, "name", init ? ERD_RESTORE_CONTAINER : "verify");
    t = cJSON_AddObjectToObject(cJSON_AddObjectToObject(cs, "state"), "terminated");
    if (t) {
        cJSON_AddNumberToObject(t, "exitCode", init);
        cJSON_AddStringToObject(t, "message", text);
    }
    return pod;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    cJSON *ok = cJSON_Parse("{\"status\":{\"succeeded\":1}}");
    cJSON *bad = cJSON_Parse("{\"status\":{\"failed\":1}}");
    cJSON *p0, *p1, *whole;
    struct erd_sum s;

    if (!text || !ok || !bad) {
        free(text);
        cJSON_Delete(ok);
        cJSON_Delete(bad);
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    erd_sum_parse((const char *)data, size, &s);
    p0 = pod_of(text, 0);
    p1 = pod_of(text, 1);
    check(ok, p0);
    check(bad, p0);
    check(bad, p1);
    check(ok, NULL);
    whole = cJSON_ParseWithLength(text, size);
    if (whole) {
        check(ok, whole);
        check(whole, whole);
    }
    cJSON_Delete(whole);
    cJSON_Delete(p0);
    cJSON_Delete(p1);
    cJSON_Delete(ok);
    cJSON_Delete(bad);
    free(text);
    return 0;
}
