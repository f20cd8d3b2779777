/* ebk_env - what the EtcdBackup reconcile and its finalizer share; see ebk_env.h. */
#include "controller/backups/ebk_env.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/events.h"
#include "common/kjson.h"
#include "controller/core/etcdspec.h"
#include "controller/core/podjob.h"

const struct k8s_resource EBK_RES_BACKUP = { "etcd-warden.io", "v1alpha1", "etcdbackups", 1 };

/* What the executor of otask.c writes to lastOperation.description on success. */
#define DESC_PREFIX "full snapshot "
#define DESC_SUFFIX " taken"

/* What the EtcdOpsTask executor writes to lastOperation.description on success. */
#define DESC_PREFIX "full snapshot "
#define DESC_SUFFIX " taken"

static const char *str(const cJSON *obj, const char *path)
{
    const char *s = kjson_get_str(obj, path);

    return s ? s : "";
}

int ebk_copy_reported(const cJSON *b)
{
    bool reported = false;

    return *str(b, "status.destinationKey") ||
           (kjson_get_bool(b, "status.copyReported", &reported) == KERR_OK && reported);
}

int ebk_copy_window(const cJSON *b, const char **since, char until[KTIME_LEN + 1])
{
    const char *end = str(b, "status.completionTime");
    int read = ebk_copy_reported(b);
    struct timespec from, to;
    time_t last;

    *since = *str(b, "status.copyStartedAt") ? str(b, "status.copyStartedAt")
             : *str(b, "status.startTime")   ? str(b, "status.startTime")
                                             : str(b, "metadata.creationTimestamp");
    /* the end: the completion of a copy read back, else the failure time or now */
    if (*end && ktime_parse(end, &to, NULL) == KERR_OK)
        last = to.tv_sec;
    else
        last = time(NULL);
    /* a copy never read: its Job's deadline when that is later */
    if (!read && ktime_parse(*since, &from, NULL) == KERR_OK &&
        from.tv_sec + PODJOB_COPY_DEADLINE_S > last)
        last = from.tv_sec + PODJOB_COPY_DEADLINE_S;
    if (ktime_format(last, until) != KERR_OK)
        snprintf(until, KTIME_LEN + 1, "%s", *end ? end : "");
    return read || *str(b, "status.jobName") || *str(b, "status.copyStartedAt");
}

enum kerr ebk_task_name(const char *backup, char out[KNAME_SUBDOMAIN_MAX + 1])
{
    return kname_join(backup, "", KNAME_SUBDOMAIN_MAX, out, KNAME_SUBDOMAIN_MAX + 1);
}

enum kerr ebk_job_name(const char *backup, char out[KNAME_LABEL_MAX + 1])
{
    return kname_job(backup, EBK_COPY_JOB_TAG, out);
}

enum kerr ebk_del_job_name(const char *backup, char out[KNAME_LABEL_MAX + 1])
{
    return kname_job(backup, EBK_DEL_JOB_TAG, out);
}

int ebk_snapshot_of(const cJSON *task, char *out, size_t n)
{
    const char *d = kjson_get_str(task, "status.lastOperation.description"), *end;
    size_t len;

    if (n)
        out[0] = '\0';
    if (!d || strncmp(d, DESC_PREFIX, strlen(DESC_PREFIX)) != 0)
        return 0;
    d += strlen(DESC_PREFIX);
    end = strstr(d, DESC_SUFFIX);
    len = end ? (size_t)(end - d) : 0;
    if (len == 0 || len >= n || memchr(d, ' ', len) || strncmp(d, "Full-", 5) != 0)
        return 0;
    memcpy(out, d, len);
    out[len] = '\0';
    return 1;
}

void ebk_event(const struct ebk_env *env, const cJSON *backup, int warning, const char *reason,
               const char *fmt, ...)
{
    struct ev_ref ref;
    char note[EV_NOTE_MAX];
    va_list ap;

    if (!env->events || ev_ref_from_object(backup, &ref) != KERR_OK)
        return;
    ref.kind = EBK_KIND;
    ref.api_version = ETCDSPEC_WARDEN_API;
    va_start(ap, fmt);
    vsnprintf(note, sizeof(note), fmt, ap);
    va_end(ap);
    (void)ev_emitf(env->events, &ref, warning ? EV_WARNING : EV_NORMAL, reason, "Backup", "%s",
                   note);
}

enum kerr ebk_put_status(const struct ebk_env *env, const cJSON *stored, cJSON *backup,
                         struct kerr_info *err)
{
    const cJSON *a = kjson_get(stored, "status"), *b;
    const char *rv;
    cJSON *out = NULL;
    int64_t gen = 0;
    enum kerr rc;

    if (kjson_get_int64(backup, "metadata.generation", &gen) == KERR_OK &&
        kjson_set_int(backup, "status.observedGeneration", gen, err) != KERR_OK)
        return kerr_set(err, KERR_NOMEM, NULL);
    b = kjson_get(backup, "status");
    if (a && b && cJSON_Compare(a, b, 1))
        return KERR_OK;
    rc = k8s_update(env->client, &EBK_RES_BACKUP, str(backup, "metadata.namespace"),
                    str(backup, "metadata.name"), backup,
                    &(struct k8s_write_opts){ .subresource = "status" }, &out, err);
    rv = kjson_get_str(out, "metadata.resourceVersion");
    if (rc == KERR_OK && rv) /* read back: a write that follows goes with what was stored */
        rc = kjson_set_str(backup, "metadata.resourceVersion", rv, err);
    cJSON_Delete(out);
    return rc;
}

void ebk_requeue_min(long *requeue, long ms)
{
    if (*requeue <= 0 || ms < *requeue)
        *requeue = ms;
}

enum kerr ebk_get_opt(const struct ebk_env *env, const struct k8s_resource *res, const char *ns,
                      const char *name, cJSON **out, struct kerr_info *err)
{
    enum kerr rc = k8s_get(env->client, res, ns, name, NULL, out, err);

    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        *out = NULL;
        return KERR_OK;
    }
    return rc;
}
