/* erd_sum - a restore drill Job's summary and verdict; see erd_sum.h. */
#include "controller/backups/erd_sum.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "controller/core/podjob.h"

/* A whole number from 0 to 2^53 at key of o, else -1. */
static int64_t num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= 9007199254740992.0) ||
        floor(v->valuedouble) != v->valuedouble)
        return -1;
    return (int64_t)v->valuedouble;
}

/* The string at key of o, printable ASCII and UTF-8 kept, control characters as '?', cut. */
static void text(char *dst, size_t n, const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    size_t i = 0;

    dst[0] = '\0';
    if (!cJSON_IsString(v) || !v->valuestring)
        return;
    for (const unsigned char *s = (const unsigned char *)v->valuestring; *s && i + 1 < n; s++)
        dst[i++] = *s < 0x20 || *s == 0x7f ? '?' : (char)*s;
    /* not inside a UTF-8 sequence */
    while (i > 0 && ((unsigned char)dst[i - 1] & 0x80) && v->valuestring[i] != '\0' &&
           ((unsigned char)v->valuestring[i] & 0xC0) == 0x80)
        i--;
    dst[i] = '\0';
}

int erd_sum_parse(const char *line, size_t len, struct erd_sum *out)
{
    cJSON *o = line ? cJSON_ParseWithLength(line, len) : NULL;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "restorable");
    struct timespec ts;

    memset(out, 0, sizeof(*out));
    out->revision = out->keys = out->chain_length = out->snapshots = -1;
    out->restored_revision = out->restored_keys = -1;
    if (cJSON_IsObject(o) && cJSON_IsBool(r)) {
        out->parsed = 1;
        out->restorable = cJSON_IsTrue(r);
        out->revision = num(o, "revision");
        out->keys = num(o, "keys");
        out->has_figures = out->revision >= 0 && out->keys >= 0;
        out->chain_length = num(o, "chainLength");
        out->snapshots = num(o, "snapshots");
        out->restored_revision = num(o, "restoredRevision");
        out->restored_keys = num(o, "restoredKeys");
        out->has_restored = out->restored_revision >= 0 && out->restored_keys >= 0;
        text(out->newest, sizeof(out->newest), o, "newestSnapshot");
        text(out->newest_time, sizeof(out->newest_time), o, "newestSnapshotTime");
        if (out->newest_time[0] && ktime_parse(out->newest_time, &ts, NULL) != KERR_OK)
            out->newest_time[0] = '\0';
        text(out->failed_object, sizeof(out->failed_object), o, "failedObject");
        text(out->reason, sizeof(out->reason), o, "reason");
    } else if (cJSON_IsObject(o)) {
        text(out->reason, sizeof(out->reason), o, "error");
    }
    cJSON_Delete(o);
    return out->parsed;
}

const char *erd_verdict_str(enum erd_verdict v)
{
    switch (v) {
    case ERD_RESTORABLE:
        return "Restorable";
    case ERD_NOT_RESTORABLE:
        return "NotRestorable";
    case ERD_FAILED:
        return "Failed";
    default:
        return "";
    }
}

/* The init container "restore" of pod: its exit code (-1: none, not ended) and last line. */
static int restore_exit(const cJSON *pod, char *line, size_t n)
{
    const cJSON *st;
    const char *msg;
    int64_t code = -1;

    line[0] = '\0';
    cJSON_ArrayForEach (st, kjson_get_arr(pod, "status.initContainerStatuses")) {
        const char *name = kjson_get_str(st, "name");

        if (!name || strcmp(name, ERD_RESTORE_CONTAINER) != 0 ||
            !cJSON_IsObject(kjson_get(st, "state.terminated")))
            continue;
        if (kjson_get_int64(st, "state.terminated.exitCode", &code) != KERR_OK || code < 0 ||
            code > 255)
            code = -1;
        msg = kjson_get_str(st, "state.terminated.message");
        if (msg) {
            const char *end = msg + strlen(msg), *start;

            while (end > msg && (end[-1] == '\n' || end[-1] == '\r'))
                end--;
            for (start = end; start > msg && start[-1] != '\n';)
                start--;
            snprintf(line, n, "%.*s", (int)(end - start), start);
        }
        return (int)code;
    }
    return -1;
}

/* The verify container's message into out->sum; out->exit_code. */
static void read_verify(const cJSON *pod, struct erd_outcome *out, char *raw, size_t n)
{
    const char *line = NULL;
    size_t len = 0;

    out->exit_code = -1;
    raw[0] = '\0';
    erd_sum_parse(NULL, 0, &out->sum);
    if (!pod || !podjob_terminated(pod, &out->exit_code, &line, &len) || !line)
        return;
    snprintf(raw, n, "%.*s", (int)(len < 400 ? len : 400), line);
    erd_sum_parse(line, len, &out->sum);
}

void erd_sum_verdict(const cJSON *job, const cJSON *pod, const char *job_failed,
                     struct erd_outcome *out)
{
    char rline[400], raw[512];
    int64_t ok = 0;
    int succeeded = kjson_get_int64(job, "status.succeeded", &ok) == KERR_OK && ok > 0;
    const struct erd_sum *s = &out->sum;

    memset(out, 0, sizeof(*out));
    out->restore_exit = pod ? restore_exit(pod, rline, sizeof(rline)) : -1;
    read_verify(pod, out, raw, sizeof(raw));
    if (!pod)
        rline[0] = '\0';
    if (out->restore_exit > 0) {
        out->verdict = ERD_NOT_RESTORABLE;
        snprintf(out->message, sizeof(out->message), "etcdbrctl restore exited with %d: %s",
                 out->restore_exit, rline[0] ? rline : "(no message)");
    } else if (s->parsed && s->restorable && succeeded && s->has_figures) {
        out->verdict = ERD_RESTORABLE;
        snprintf(out->message, sizeof(out->message),
                 "restorable: revision %lld, %lld keys, newest snapshot %s", (long long)s->revision,
                 (long long)s->keys, s->newest[0] ? s->newest : "?");
    } else if (s->parsed && !s->restorable && !succeeded && out->exit_code == 1) {
        out->verdict = ERD_NOT_RESTORABLE;
        snprintf(out->message, sizeof(out->message), "%.500s%s%.500s",
                 s->failed_object[0] ? s->failed_object : "", s->failed_object[0] ? ": " : "",
                 s->reason[0] ? s->reason : "not restorable");
    } else {
        out->verdict = ERD_FAILED;
        snprintf(out->message, sizeof(out->message), "the drill could not run: %.990s",
                 job_failed && *job_failed ? job_failed
                 : s->reason[0]            ? s->reason
                 : raw[0]                  ? raw
                                           : "the Job ended without a summary");
    }
}
