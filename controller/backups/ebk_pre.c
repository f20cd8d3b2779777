/* ebk_pre - what comes before an EtcdBackup's copy Job; see ebk_pre.h. */
#include "controller/backups/ebk_pre.h"

#include <stdio.h>
#include <string.h>

#include "common/blocal.h"
#include "common/kjson.h"
#include "common/log.h"
#include "common/pclaim.h"
#include "common/lowner.h"
#include "controller/core/claims.h"
#include "controller/core/etcdspec.h"
#include "controller/core/podjob.h"

static const char *str(const cJSON *obj, const char *path)
{
    const char *s = kjson_get_str(obj, path);

    return s ? s : "";
}

enum kerr ebk_dest_part(const struct ebk_env *env, const cJSON *b, const cJSON *dsecret, char *why,
                        size_t n, struct kerr_info *err)
{
    struct bstore_claim c = { "", NULL };
    struct kerr_info e = { 0 };
    char hostpath[BLOCAL_HOSTPATH_MAX + 1], w[1024];
    enum kerr rc;

    why[0] = '\0';
    if ((rc = claims_of_placed(b, "spec.destination", dsecret, &c, &e)) == KERR_NOMEM)
        return kerr_set(err, rc, "%s", e.msg);
    if (rc != KERR_OK) {
        snprintf(why, n, "spec.destination: %.400s", e.msg);
        return KERR_OK;
    }
    rc = strcmp(c.key, BLOCAL_KEY) == 0
             ? lowner_part_now(env->client, str(b, "metadata.namespace"), c.prefix, "a copy writes",
                               w, sizeof(w), err)
             : KERR_OK;
    if (rc == KERR_OK && strcmp(c.key, BLOCAL_KEY) == 0 && *w) {
        if (blocal_hostpath(dsecret, hostpath, sizeof(hostpath), NULL) != KERR_OK)
            snprintf(hostpath, sizeof(hostpath), "(not read)");
        snprintf(why, n,
                 "spec.destination: the copy Job would mount the hostPath \"%.300s\" of Secret "
                 "%.253s (read now; admitted by what it said then): %s",
                 hostpath, str(b, "spec.destination.secretRef.name"), w);
    }
    bstore_claim_release(&c);
    return rc;
}

/*
 * The copy's claim recorded in its destination store's claim Lease (controller/core/claims.h's
 * claims_take), atomic with warden-webhook's admissions: KERR_OK with *why set when a live
 * record of another owner overlaps (the backup fails), *held set when the Lease could not be
 * read or written (status.error, a Warning event ClaimNotRecorded, looked at again: no copy
 * meanwhile).
 */
enum kerr ebk_take_claim(const struct ebk_env *env, const cJSON *b, const cJSON *dsecret, char *why,
                         size_t n, int *held, long *requeue, struct kerr_info *err)
{
    struct bstore_claim c = { "", NULL };
    char other[CLAIMS_WHY_MAX];
    struct kerr_info e = { 0 };
    cJSON *nb;
    enum kerr rc;

    *held = 0;
    if (claims_of_placed(b, "spec.destination", dsecret, &c, &e) != KERR_OK) {
        snprintf(why, n, "spec.destination: %.400s", e.msg);
        return KERR_OK;
    }
    rc = claims_take(env->client,
                     &(struct pclaim){ str(b, "metadata.namespace"), str(b, "metadata.name"), c.key,
                                       c.prefix, PCLAIM_KIND_BACKUP, str(b, "spec.etcdName"), NULL,
                                       NULL, NULL },
                     str(b, "metadata.namespace"), other, &e);
    if (rc == KERR_OK && *other)
        snprintf(why, n,
                 "spec.destination.prefix \"%.120s\" overlaps %.250s in the same store: one "
                 "prefix, one owner",
                 c.prefix, other);
    bstore_claim_release(&c);
    if (rc == KERR_OK)
        return KERR_OK;
    *held = 1;
    ebk_requeue_min(requeue, EBK_WAIT_MS);
    log_warn("copy claim not recorded", "namespace", str(b, "metadata.namespace"), "name",
             str(b, "metadata.name"), "error", e.msg);
    nb = cJSON_Duplicate(b, 1);
    if (!nb || kjson_set_str(nb, "status.error", e.msg, err)) {
        cJSON_Delete(nb);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    rc = ebk_put_status(env, b, nb, err);
    cJSON_Delete(nb);
    if (rc == KERR_OK)
        ebk_event(env, b, 1, "ClaimNotRecorded",
                  "no copy: its destination's claim could not be recorded (retried): %s", e.msg);
    return rc;
}

/*
 * A copy Job of b's (jname, owned by it) before any is recorded: deleted with propagation
 * Foreground (gone only once its Pod is), *there set and looked at again until it is gone.
 */
enum kerr ebk_stray_job(const struct ebk_env *env, const cJSON *b, const char *jname, long *requeue,
                        int *there, struct kerr_info *err)
{
    struct k8s_delete_opts o = { .propagation_policy = "Foreground" };
    const char *ns = str(b, "metadata.namespace");
    cJSON *job = NULL;
    enum kerr rc = ebk_get_opt(env, &ETCDSPEC_RES_JOB, ns, jname, &job, err);

    *there = rc == KERR_OK && job && podjob_owned(job, str(b, "metadata.uid"));
    if (*there && !kjson_has(job, "metadata.deletionTimestamp")) {
        o.precondition_uid = str(job, "metadata.uid");
        rc = k8s_delete(env->client, &ETCDSPEC_RES_JOB, ns, jname, &o, NULL, err);
        if (rc == KERR_NOTFOUND) {
            kerr_clear(err);
            rc = KERR_OK;
        }
        if (rc == KERR_OK)
            ebk_event(env, b, 1, "CopyJobUnrecorded",
                      "Job %s/%s of this backup's copy exists and the status records none: "
                      "deleted first, nothing else until it is gone",
                      ns, jname);
    }
    if (*there)
        ebk_requeue_min(requeue, EBK_POLL_MS);
    cJSON_Delete(job);
    return rc;
}

/*
 * The finalizer onto the stored backup before its copy is written; *b then the updated one.
 * With deletionPolicy Delete it deletes the copy; with Retain it hands the copy's prefix to a
 * BackupEntry (controller/backups/ebk_keep.h).
 */
enum kerr ebk_add_finalizer(const struct ebk_env *env, cJSON **b, struct kerr_info *err)
{
    const cJSON *f;
    cJSON *nb, *out = NULL;
    enum kerr rc;

    cJSON_ArrayForEach (f, kjson_get_arr(*b, "metadata.finalizers"))
        if (cJSON_IsString(f) && strcmp(f->valuestring, EBK_FINALIZER) == 0)
            return KERR_OK;
    nb = cJSON_Duplicate(*b, 1);
    if (!nb)
        return kerr_set(err, KERR_NOMEM, NULL);
    if (!kjson_get_arr(nb, "metadata.finalizers"))
        kjson_set(nb, "metadata.finalizers", cJSON_CreateArray(), NULL);
    if (!cJSON_AddItemToArray((cJSON *)kjson_get_arr(nb, "metadata.finalizers"),
                              cJSON_CreateString(EBK_FINALIZER))) {
        cJSON_Delete(nb);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    rc = k8s_update(env->client, &EBK_RES_BACKUP, str(nb, "metadata.namespace"),
                    str(nb, "metadata.name"), nb, NULL, &out, err);
    cJSON_Delete(nb);
    if (rc == KERR_OK) {
        cJSON_Delete(*b);
        *b = out;
    }
    return rc;
}
