/* podjob - what the controller's Jobs share; see podjob.h. */
#include "controller/core/podjob.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto.h"
#include "common/kjson.h"
#include "common/kobj.h"
#include "controller/core/etcdspec.h"

void podjob_local_root(const cJSON *secret, char *out, size_t n)
{
    const char *b64 = kjson_get_str(secret, "data.hostPath");
    unsigned char *raw = NULL;
    size_t len = 0;

    if (b64 && crypto_b64_decode(b64, strlen(b64), &raw, &len, NULL) == KERR_OK && len > 0 &&
        raw[0] == '/' && !memchr(raw, '\0', len)) {
        while (len > 1 && raw[len - 1] == '/')
            len--;
        snprintf(out, n, "%.*s", (int)len, (const char *)raw);
    } else {
        snprintf(out, n, "%s", PODJOB_LOCAL_HOST_ROOT);
    }
    free(raw);
}

cJSON *podjob_split_words(const char *command, int max)
{
    cJSON *arr = cJSON_CreateArray(), *w;
    const char *p = command, *s;
    char *word;
    int n = 0;

    while (arr && *p) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        s = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        word = strndup(s, (size_t)(p - s));
        w = word ? cJSON_CreateString(word) : NULL;
        free(word);
        if (!w || ++n > max || !cJSON_AddItemToArray(arr, w)) {
            cJSON_Delete(w);
            cJSON_Delete(arr);
            return NULL;
        }
    }
    if (arr && n == 0) {
        cJSON_Delete(arr);
        return NULL;
    }
    return arr;
}

int podjob_secure_container(cJSON *ctr)
{
    cJSON *caps;

    if (kjson_set_bool(ctr, "securityContext.allowPrivilegeEscalation", false, NULL) ||
        kjson_set_bool(ctr, "securityContext.readOnlyRootFilesystem", true, NULL) ||
        kjson_set_bool(ctr, "securityContext.runAsNonRoot", true, NULL))
        return 0;
    caps = cJSON_CreateArray();
    if (!caps || !cJSON_AddItemToArray(caps, cJSON_CreateString("ALL"))) {
        cJSON_Delete(caps);
        return 0;
    }
    return kjson_set(ctr, "securityContext.capabilities.drop", caps, NULL) == KERR_OK;
}

int podjob_secure_pod(cJSON *pod, int run_as)
{
    return !kjson_set_bool(pod, "securityContext.runAsNonRoot", true, NULL) &&
           !kjson_set_int(pod, "securityContext.runAsUser", run_as, NULL) &&
           !kjson_set_int(pod, "securityContext.runAsGroup", run_as, NULL) &&
           !kjson_set_int(pod, "securityContext.fsGroup", run_as, NULL) &&
           !kjson_set_str(pod, "securityContext.seccompProfile.type", "RuntimeDefault", NULL);
}

int podjob_terminated(const cJSON *pod, int *exit_code, const char **line, size_t *len)
{
    const cJSON *t = kjson_get(pod, "status.containerStatuses.0.state.terminated");
    const char *msg, *nl;
    int64_t code = -1;
    size_t end;

    if (!cJSON_IsObject(t))
        return 0;
    *exit_code = kjson_get_int64(t, "exitCode", &code) == KERR_OK && code >= 0 && code <= 255
                     ? (int)code
                     : -1;
    *line = NULL;
    *len = 0;
    msg = kjson_get_str(t, "message");
    if (!msg)
        return 1;
    end = strlen(msg);
    while (end > 0 && (msg[end - 1] == '\n' || msg[end - 1] == '\r'))
        end--;
    *line = msg;
    for (nl = msg; (nl = memchr(nl, '\n', (size_t)(msg + end - nl))) != NULL; nl++)
        *line = nl + 1;
    *len = (size_t)(msg + end - *line);
    return 1;
}

/* The condition type of job with status "True", or NULL. */
static const cJSON *condition_true(const cJSON *job, const char *type)
{
    const cJSON *c = kobj_condition(job, type);
    const char *st = kjson_get_str(c, "status");

    return st && strcmp(st, "True") == 0 ? c : NULL;
}

int podjob_job_finished(const cJSON *job)
{
    int64_t ok = 0, failed = 0;

    return (kjson_get_int64(job, "status.succeeded", &ok) == KERR_OK && ok > 0) ||
           (kjson_get_int64(job, "status.failed", &failed) == KERR_OK && failed > 0) ||
           condition_true(job, "Complete") || condition_true(job, "Failed");
}

int podjob_job_done(const cJSON *job)
{
    return !kjson_has(job, "metadata.deletionTimestamp") && podjob_job_finished(job);
}

int podjob_job_failed(const cJSON *job, char *out, size_t n)
{
    const cJSON *c = condition_true(job, "Failed");
    const char *reason = c ? kjson_get_str(c, "reason") : NULL;
    const char *msg = c ? kjson_get_str(c, "message") : NULL;

    if (n)
        out[0] = '\0';
    if (!c)
        return 0;
    if (n)
        snprintf(out, n, "%s%s%s", reason ? reason : "Failed", msg && *msg ? ": " : "",
                 msg ? msg : "");
    return 1;
}

int podjob_deadline_exceeded(const cJSON *job)
{
    const cJSON *c = condition_true(job, "Failed");
    const char *reason = c ? kjson_get_str(c, "reason") : NULL;

    return reason && strcmp(reason, "DeadlineExceeded") == 0;
}

const char *podjob_owner_uid(const cJSON *job)
{
    const cJSON *r;
    bool ctl = false;

    cJSON_ArrayForEach (r, kjson_get_arr(job, "metadata.ownerReferences")) {
        ctl = false;
        if (kjson_get_bool(r, "controller", &ctl) == KERR_OK && ctl)
            return kjson_get_str(r, "uid");
    }
    return kjson_get_str(job, "metadata.annotations[" PODJOB_ANN_OWNER_UID "]");
}

int podjob_owned(const cJSON *job, const char *uid)
{
    const char *have = podjob_owner_uid(job);

    return uid && *uid && have && strcmp(have, uid) == 0;
}

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

void podjob_foreign(const cJSON *job, char *out, size_t n)
{
    const cJSON *r, *ctl_ref = NULL;
    const char *uid = podjob_owner_uid(job);
    const char *ns = or_empty(kjson_get_str(job, "metadata.namespace"));
    const char *name = or_empty(kjson_get_str(job, "metadata.name"));
    bool ctl = false;

    cJSON_ArrayForEach (r, kjson_get_arr(job, "metadata.ownerReferences"))
        if (!ctl_ref && kjson_get_bool(r, "controller", &ctl) == KERR_OK && ctl)
            ctl_ref = r;
    if (ctl_ref)
        snprintf(out, n, "Job %s/%s exists and is not ours: its owner is %s %s (uid %s)", ns, name,
                 or_empty(kjson_get_str(ctl_ref, "kind")), or_empty(kjson_get_str(ctl_ref, "name")),
                 uid ? uid : "none");
    else if (uid)
        snprintf(out, n, "Job %s/%s exists and is not ours: it belongs to uid %s", ns, name, uid);
    else
        snprintf(out, n, "Job %s/%s exists and is not ours: it has no owner", ns, name);
}

enum kerr podjob_create_job(struct k8s_client *cl, const char *ns, const cJSON *job,
                            struct kerr_info *err)
{
    const char *name = or_empty(kjson_get_str(job, "metadata.name"));
    char msg[512];
    cJSON *cur = NULL;
    enum kerr rc = k8s_create(cl, &ETCDSPEC_RES_JOB, ns, job, NULL, NULL, err);

    if (rc != KERR_EXISTS)
        return rc;
    kerr_clear(err);
    rc = k8s_get(cl, &ETCDSPEC_RES_JOB, ns, name, NULL, &cur, err);
    if (rc == KERR_NOTFOUND)
        rc = kerr_set(err, KERR_CONFLICT, "Job %s/%s went while it was read", ns, name);
    else if (rc == KERR_OK && !podjob_owned(cur, podjob_owner_uid(job))) {
        podjob_foreign(cur, msg, sizeof(msg));
        rc = kerr_set(err, KERR_EXISTS, "%s", msg);
    }
    cJSON_Delete(cur);
    return rc;
}

enum kerr podjob_delete_job(struct k8s_client *cl, const char *ns, const char *name,
                            const char *owner_uid, struct kerr_info *err)
{
    struct k8s_delete_opts o = { .propagation_policy = "Background" };
    cJSON *cur = NULL;
    enum kerr rc = k8s_get(cl, &ETCDSPEC_RES_JOB, ns, name, NULL, &cur, err);

    if (rc == KERR_OK && podjob_owned(cur, owner_uid)) {
        o.precondition_uid = kjson_get_str(cur, "metadata.uid");
        rc = k8s_delete(cl, &ETCDSPEC_RES_JOB, ns, name, &o, NULL, err);
    }
    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        rc = KERR_OK;
    }
    cJSON_Delete(cur);
    return rc;
}

long podjob_backoff_ms(long failures)
{
    long ms = PODJOB_BACKOFF_MS;

    while (--failures > 0 && ms < PODJOB_BACKOFF_MAX_MS)
        ms *= 2;
    return ms < PODJOB_BACKOFF_MAX_MS ? ms : PODJOB_BACKOFF_MAX_MS;
}

/* A count of the summary: a whole number from 0 to 2^53, else -1 (never a cast out of range). */
static long num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= 9007199254740992.0))
        return -1;
    return (long)v->valuedouble;
}

void podjob_read_pod(const cJSON *pod, struct podjob_summary *s)
{
    const char *line = NULL;
    const cJSON *e;
    cJSON *sum;
    size_t len = 0;

    memset(s, 0, sizeof(*s));
    s->exit_code = -1;
    s->terminated = podjob_terminated(pod, &s->exit_code, &line, &len);
    if (!line)
        return;
    snprintf(s->message, sizeof(s->message), "%.*s", (int)len, line);
    sum = cJSON_ParseWithLength(line, len);
    if (cJSON_IsObject(sum) && (s->deleted = num(sum, "deleted")) >= 0 &&
        (s->locked = num(sum, "locked")) >= 0 && (s->failed = num(sum, "failed")) >= 0 &&
        (s->remaining = num(sum, "remaining")) >= 0) {
        s->parsed = 1;
        s->kept = cJSON_HasObjectItem(sum, "kept") ? num(sum, "kept") : 0;
        if (s->kept < 0)
            s->kept = 0;
        e = cJSON_GetObjectItemCaseSensitive(sum, "earliestDeletable");
        if (cJSON_IsString(e))
            snprintf(s->earliest, sizeof(s->earliest), "%s", e->valuestring);
        s->foreign = num(sum, "foreign") > 0 ? num(sum, "foreign") : 0;
        e = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(sum, "foreignKeys"), 0);
        if (cJSON_IsString(e))
            snprintf(s->foreign_key, sizeof(s->foreign_key), "%s", e->valuestring);
    }
    cJSON_Delete(sum);
}

enum kerr podjob_job_pod(struct k8s_client *cl, const char *ns, const char *juid,
                         struct podjob_summary *s, struct kerr_info *err)
{
    char sel[128];
    cJSON *list = NULL;
    const cJSON *pod;
    enum kerr rc;

    memset(s, 0, sizeof(*s));
    s->exit_code = -1;
    snprintf(sel, sizeof(sel), "controller-uid=%s", juid);
    rc = k8s_list(cl, &ETCDSPEC_RES_POD, ns, &(struct k8s_list_opts){ .label_selector = sel },
                  &list, err);
    cJSON_ArrayForEach (pod, cJSON_GetObjectItemCaseSensitive(list, "items")) {
        podjob_read_pod(pod, s);
        if (s->terminated)
            break;
    }
    cJSON_Delete(list);
    return rc;
}
