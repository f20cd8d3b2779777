/* bkebucket - a BackupBucket's finalizer and status; see bkebucket.h. */
#include "controller/entries/bkebucket.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/kjson.h"
#include "common/kobj.h"
#include "common/ktime.h"
#include "common/log.h"
#include "controller/core/etcdspec.h"

static const char *str_or_empty(const cJSON *obj, const char *path)
{
    const char *s = kjson_get_str(obj, path);

    return s ? s : "";
}

enum kerr bkebucket_secret(const struct bke_ctx *x, const cJSON *bucket, char *why, size_t n,
                           cJSON **secret, struct kerr_info *err)
{
    const char *ns = kjson_get_str(bucket, "spec.secretRef.namespace");
    const char *name = kjson_get_str(bucket, "spec.secretRef.name");
    enum kerr rc;

    why[0] = '\0';
    *secret = NULL;
    if (!ns || !*ns || !name || !*name) {
        snprintf(why, n, "spec.secretRef: namespace and name are required");
        return KERR_OK;
    }
    rc = k8s_get(x->client, &ETCDSPEC_RES_SECRET, ns, name, NULL, secret, err);
    if (rc != KERR_OK) {
        cJSON_Delete(*secret);
        *secret = NULL;
    }
    if (rc == KERR_NOTFOUND) {
        snprintf(why, n,
                 "Secret %s/%s (spec.secretRef) not found: no entries are kept and no backups "
                 "deleted until it exists",
                 ns, name);
        return KERR_OK;
    }
    return rc;
}

/* The status for count entries; invalid: why not Ready (NULL: Ready unless deleting), with
 * reason nr_reason. */
static enum kerr sync(const struct bke_ctx *x, const cJSON *bucket, int count, const char *names,
                      const char *nr_reason, const char *invalid, struct kerr_info *err)
{
    const char *name = kjson_get_str(bucket, "metadata.name");
    const cJSON *obj = bucket, *f;
    int deleting = kjson_has(obj, "metadata.deletionTimestamp"), has = 0, ready;
    const char *reason, *ltt = NULL;
    char msg[768], now[KTIME_LEN + 1] = "";
    cJSON *copy, *fins, *cond, *stored = NULL;
    int64_t gen = 0;
    enum kerr rc = KERR_OK;

    cJSON_ArrayForEach (f, kjson_get_arr(obj, "metadata.finalizers"))
        has |= cJSON_IsString(f) && strcmp(f->valuestring, BKE_FINALIZER) == 0;
    if ((count > 0) != has) {
        copy = cJSON_Duplicate(obj, 1);
        fins = copy ? cJSON_CreateArray() : NULL;
        if (!fins) {
            cJSON_Delete(copy);
            return kerr_set(err, KERR_NOMEM, NULL);
        }
        cJSON_ArrayForEach (f, kjson_get_arr(obj, "metadata.finalizers"))
            if (cJSON_IsString(f) && strcmp(f->valuestring, BKE_FINALIZER) != 0)
                cJSON_AddItemToArray(fins, cJSON_CreateString(f->valuestring));
        if (count > 0)
            cJSON_AddItemToArray(fins, cJSON_CreateString(BKE_FINALIZER));
        rc = kjson_set(copy, "metadata.finalizers", fins, err);
        if (rc == KERR_OK)
            rc = k8s_update(x->client, &BKE_RES_BUCKET, NULL, name, copy, NULL, &stored, err);
        cJSON_Delete(copy);
        if (rc == KERR_NOTFOUND || (rc == KERR_OK && count == 0 && deleting)) {
            cJSON_Delete(stored);
            return KERR_OK; /* gone with its last finalizer */
        }
        if (rc != KERR_OK)
            return rc;
        obj = stored;
    }
    ready = !invalid && !(deleting && count > 0);
    reason = invalid ? nr_reason : ready ? "EntriesKept" : "EntriesRemain";
    if (invalid)
        snprintf(msg, sizeof(msg), "%s", invalid);
    else if (!ready)
        snprintf(msg, sizeof(msg), "the bucket is kept until its %d BackupEntries are gone: %s",
                 count, names);
    else
        snprintf(msg, sizeof(msg), "%d BackupEntries", count);
    f = kobj_condition(obj, "Ready");
    if (strcmp(str_or_empty(f, "status"), ready ? "True" : "False") == 0)
        ltt = kjson_get_str(f, "lastTransitionTime");
    if (!ltt && ktime_format(time(NULL), now) == KERR_OK)
        ltt = now;
    (void)kjson_get_int64(obj, "metadata.generation", &gen);
    copy = cJSON_Duplicate(obj, 1);
    cond = cJSON_CreateObject();
    if (!copy || !cond || !cJSON_AddStringToObject(cond, "type", "Ready") ||
        !cJSON_AddStringToObject(cond, "status", ready ? "True" : "False") ||
        !cJSON_AddStringToObject(cond, "reason", reason) ||
        !cJSON_AddStringToObject(cond, "message", msg) ||
        !cJSON_AddStringToObject(cond, "lastTransitionTime", ltt ? ltt : "") ||
        kjson_set_int(copy, "status.entryCount", count, err) != KERR_OK ||
        kjson_set_int(copy, "status.observedGeneration", gen, err) != KERR_OK ||
        kjson_set(copy, "status.conditions", cJSON_CreateArray(), err) != KERR_OK ||
        !cJSON_AddItemToArray((cJSON *)kjson_get_arr(copy, "status.conditions"), cond)) {
        cJSON_Delete(copy);
        cJSON_Delete(stored);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    if (!cJSON_Compare(kjson_get(obj, "status"), kjson_get(copy, "status"), 1)) {
        if (!ready)
            log_warn("backup bucket not ready", "bucket", name, "reason", reason, "message", msg);
        if (!ready)
            bke_event(x, obj, "BackupBucket", EV_WARNING, invalid ? nr_reason : "DeletionBlocked",
                      "KeepBucket", "%s", msg);
        rc = k8s_update(x->client, &BKE_RES_BUCKET, NULL, name, copy,
                        &(struct k8s_write_opts){ .subresource = "status" }, NULL, err);
        rc = rc == KERR_NOTFOUND ? KERR_OK : rc;
    }
    cJSON_Delete(copy);
    cJSON_Delete(stored);
    return rc;
}

enum kerr bkebucket_sync(const struct bke_ctx *x, const cJSON *bucket, int count, const char *names,
                         const char *invalid, struct kerr_info *err)
{
    return sync(x, bucket, count, names, "InvalidSpec", invalid, err);
}

enum kerr bkebucket_sync_secret(const struct bke_ctx *x, const cJSON *bucket, int count,
                                const char *why, struct kerr_info *err)
{
    return sync(x, bucket, count, "", "SecretNotFound", why, err);
}
