/* imtuntil - a hibernated snapshot's immutable-until from the CronJob's last run; see imtuntil.h.
 */
#include "controller/immutability/imtuntil.h"

#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "controller/core/etcdspec.h"
#include "controller/core/podjob.h"

enum kerr imtuntil_parse(const char *line, size_t len, char out[KTIME_LEN + 1],
                         struct kerr_info *err)
{
    cJSON *o = NULL;
    const char *u;
    struct timespec ts;
    enum kerr rc;

    out[0] = '\0';
    if (!line || len == 0)
        return kerr_set(err, KERR_INVAL, "no termination message");
    if (kjson_parse(line, len, NULL, &o, NULL, NULL) != KERR_OK || !cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return kerr_set(err, KERR_INVAL, "the termination message is no summary");
    }
    u = kjson_get_str(o, "immutableUntil");
    if (!u || strlen(u) > 64 || ktime_parse(u, &ts, NULL) != KERR_OK)
        rc = kerr_set(err, KERR_INVAL, "the summary has no immutableUntil of RFC 3339");
    else if (ktime_format(ts.tv_sec, out) != KERR_OK)
        rc = kerr_set(err, KERR_INVAL, "immutableUntil out of range");
    else
        rc = KERR_OK;
    if (rc != KERR_OK)
        out[0] = '\0';
    cJSON_Delete(o);
    return rc;
}

/* Whether job's controller is the object of uid. */
static int controlled_by(const cJSON *job, const char *uid)
{
    const cJSON *r;

    cJSON_ArrayForEach (r, kjson_get_arr(job, "metadata.ownerReferences")) {
        const char *u = kjson_get_str(r, "uid");

        if (cJSON_IsTrue(kjson_get(r, "controller")) && u && strcmp(u, uid) == 0)
            return 1;
    }
    return 0;
}

/* When job finished (completionTime, else creationTimestamp), "" when unknown. */
static const char *finished_at(const cJSON *job)
{
    const char *t = kjson_get_str(job, "status.completionTime");

    if (!t)
        t = kjson_get_str(job, "metadata.creationTimestamp");
    return t ? t : "";
}

/* The last Job of ns the CronJob of uid controls that succeeded; BORROWED from list. */
static const cJSON *last_success(const cJSON *list, const char *uid)
{
    const cJSON *job, *best = NULL;
    int64_t ok;

    cJSON_ArrayForEach (job, kjson_get_arr(list, "items")) {
        ok = 0;
        if (!controlled_by(job, uid) || kjson_get_int64(job, "status.succeeded", &ok) != KERR_OK ||
            ok <= 0 || !kjson_get_str(job, "metadata.uid"))
            continue;
        if (!best || strcmp(finished_at(job), finished_at(best)) > 0)
            best = job;
    }
    return best;
}

enum kerr imtuntil_read(struct k8s_client *cl, const char *ns, const cJSON *cronjob,
                        char out[KTIME_LEN + 1], struct kerr_info *err)
{
    const char *uid = kjson_get_str(cronjob, "metadata.uid");
    cJSON *jobs = NULL, *pods = NULL;
    const cJSON *job, *pod;
    char sel[160];
    enum kerr rc;

    out[0] = '\0';
    if (!uid)
        return KERR_OK;
    rc = k8s_list(cl, &ETCDSPEC_RES_JOB, ns, NULL, &jobs, err);
    job = rc == KERR_OK ? last_success(jobs, uid) : NULL;
    if (job) {
        snprintf(sel, sizeof(sel), "controller-uid=%s", kjson_get_str(job, "metadata.uid"));
        rc = k8s_list(cl, &ETCDSPEC_RES_POD, ns, &(struct k8s_list_opts){ .label_selector = sel },
                      &pods, err);
    }
    cJSON_ArrayForEach (pod, kjson_get_arr(pods, "items")) {
        const char *line = NULL;
        size_t len = 0;
        int code = -1;

        if (podjob_terminated(pod, &code, &line, &len) && code == 0 &&
            imtuntil_parse(line, len, out, NULL) == KERR_OK)
            break;
    }
    cJSON_Delete(pods);
    cJSON_Delete(jobs);
    return rc;
}
