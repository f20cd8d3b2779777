/* podjob - what the controller's Jobs share; see podjob.h. */
#include "controller/podjob.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto.h"
#include "common/kjson.h"
#include "controller/etcdspec.h"

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

int podjob_job_done(const cJSON *job)
{
    int64_t ok = 0, failed = 0;

    return !kjson_has(job, "metadata.deletionTimestamp") &&
           ((kjson_get_int64(job, "status.succeeded", &ok) == KERR_OK && ok > 0) ||
            (kjson_get_int64(job, "status.failed", &failed) == KERR_OK && failed > 0));
}

enum kerr podjob_create_job(struct k8s_client *cl, const char *ns, const cJSON *job,
                            struct kerr_info *err)
{
    enum kerr rc = k8s_create(cl, &ETCDSPEC_RES_JOB, ns, job, NULL, NULL, err);

    if (rc == KERR_EXISTS) {
        kerr_clear(err);
        rc = KERR_OK;
    }
    return rc;
}

enum kerr podjob_delete_job(struct k8s_client *cl, const char *ns, const char *name,
                            struct kerr_info *err)
{
    enum kerr rc =
        k8s_delete(cl, &ETCDSPEC_RES_JOB, ns, name,
                   &(struct k8s_delete_opts){ .propagation_policy = "Background" }, NULL, err);

    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        rc = KERR_OK;
    }
    return rc;
}
