/* bkestop - the stop of a deleted BackupEntry's deletion Job; see bkestop.h. */
#include "controller/entries/bkestop.h"

#include <string.h>

#include "common/k8s.h"
#include "common/kjson.h"
#include "common/log.h"
#include "controller/core/etcdspec.h"
#include "controller/core/kname.h"
#include "controller/core/podjob.h"
#include "controller/entries/bkefin.h"
#include "controller/entries/bkejob.h"

static const char *str_or_empty(const cJSON *obj, const char *path)
{
    const char *s = kjson_get_str(obj, path);

    return s ? s : "";
}

static void requeue_min(long *requeue, long ms)
{
    if (*requeue <= 0 || ms < *requeue)
        *requeue = ms;
}

enum kerr bkestop_step(const struct bke_ctx *x, const cJSON *bucket, const cJSON *cached,
                       long *requeue, struct kerr_info *err)
{
    const char *ename = kjson_get_str(cached, "metadata.name");
    const char *ns;
    char jname[KNAME_LABEL_MAX + 1];
    cJSON *entry = NULL, *job = NULL;
    const char *uid;
    enum kerr rc;

    if (!ename || bkejob_name(ename, jname) != KERR_OK)
        return kerr_set(err, KERR_INVAL, "no Job name for BackupEntry %s", ename ? ename : "");
    rc = k8s_get(x->client, &BKE_RES_ENTRY, NULL, ename, NULL, &entry, err);
    if (rc == KERR_NOTFOUND || (rc == KERR_OK && !bkefin_has(entry))) {
        kerr_clear(err);
        cJSON_Delete(entry);
        return KERR_OK; /* gone, or never had a Job */
    }
    uid = str_or_empty(entry, "metadata.uid");
    ns = bkejob_namespace(entry, bucket);
    if (rc == KERR_OK && ns && *ns)
        rc = k8s_get(x->client, &ETCDSPEC_RES_JOB, ns, jname, NULL, &job, err);
    else if (rc == KERR_OK)
        rc = KERR_NOTFOUND; /* no namespace: the Job cannot have been made */
    if (rc == KERR_OK && podjob_owned(job, uid)) {
        if (!kjson_has(job, "metadata.deletionTimestamp")) {
            struct k8s_delete_opts o = { .propagation_policy = "Foreground",
                                         .precondition_uid = kjson_get_str(job, "metadata.uid") };

            rc = k8s_delete(x->client, &ETCDSPEC_RES_JOB, ns, jname, &o, NULL, err);
            if (rc == KERR_OK) {
                bke_event(x, entry, "BackupEntry", EV_NORMAL, "DeletionStopping", "DeleteEntry",
                          "BackupEntry deleted: its deletion Job %s/%s is stopped (its Pods "
                          "first); the objects it has not deleted stay",
                          ns, jname);
                log_info("backup deletion job stopping", "entry", ename, "job", jname);
            }
        }
        if (rc == KERR_OK || rc == KERR_NOTFOUND || rc == KERR_CONFLICT) {
            kerr_clear(err);
            rc = KERR_OK;
            requeue_min(requeue, BKESTOP_POLL_MS);
        }
        cJSON_Delete(job);
        cJSON_Delete(entry);
        return rc;
    }
    if (rc == KERR_OK || rc == KERR_NOTFOUND) { /* no Job of the entry's left */
        kerr_clear(err);
        rc = bkefin_remove(x, entry, err);
        if (rc == KERR_OK && job == NULL) {
            bke_event(x, entry, "BackupEntry", EV_NORMAL, "DeletionStopped", "DeleteEntry",
                      "BackupEntry deleted: no deletion Job of it runs; the backups left under "
                      "\"%s\" stay",
                      str_or_empty(entry, "spec.prefix"));
            log_info("backup entry released", "entry", ename);
        }
    }
    cJSON_Delete(job);
    cJSON_Delete(entry);
    return rc;
}

enum kerr bkestop_run(const struct bke_ctx *x, const cJSON *bucket, const cJSON *entries,
                      long *requeue, struct kerr_info *err)
{
    const cJSON *e;
    struct kerr_info one;
    enum kerr rc, first = KERR_OK;

    cJSON_ArrayForEach (e, entries) {
        if (!kjson_has(e, "metadata.deletionTimestamp") || !bkefin_has(e))
            continue;
        kerr_clear(&one);
        rc = bkestop_step(x, bucket, e, requeue, &one);
        if (rc != KERR_OK && first == KERR_OK) {
            first = rc;
            if (err)
                *err = one;
        } else if (rc != KERR_OK) {
            log_warn("backup entry deletion not stopped", "entry", str_or_empty(e, "metadata.name"),
                     "error", one.msg);
        }
    }
    return first;
}
