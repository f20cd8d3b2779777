/* pgone - when an Etcd was last known alive, recorded as it is deleted; see pgone.h. */
#include "webhook/pgone.h"

#include <string.h>
#include <time.h>

#include "common/bentry.h"
#include "common/bstore.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/log.h"

#define ATTEMPTS 5 /* writes lost to another writer of the entry before the DELETE is refused */

static const char *str_or_empty(const cJSON *obj, const char *path)
{
    const char *s = kjson_get_str(obj, path);

    return s ? s : "";
}

/* 1 when entry is claim c's entry recording Etcd uid without a time yet. */
static int wants_time(const cJSON *entry, enum bentry_found f, const char *uid)
{
    return f == BENTRY_CLAIMS && strcmp(str_or_empty(entry, "spec.etcd.uid"), uid) == 0 &&
           !kjson_has(entry, BENTRY_DELETE_ADMITTED);
}

/*
 * Write now into the stored entry of claim c when it wants it; KERR_CONFLICT when another
 * writer came first (read again and retry), other errors as the API server's.
 */
static enum kerr write_time(struct k8s_client *k, const struct bstore_claim *c, const char *uid,
                            const char *now, struct kerr_info *why)
{
    char name[BSTORE_ENTRY_NAME_MAX + 1];
    enum bentry_found f = BENTRY_NONE;
    cJSON *entry = NULL;
    enum kerr rc = bentry_find(bentry_get_stored, k, c, &f, &entry, name, why);

    if (rc == KERR_OK && wants_time(entry, f, uid)) {
        rc = kjson_set_str(entry, BENTRY_DELETE_ADMITTED, now, why);
        if (rc == KERR_OK)
            rc = k8s_update(k, &BENTRY_RES, NULL, name, entry, NULL, NULL, why);
        if (rc == KERR_OK)
            log_info("etcd deletion recorded", "entry", name, "at", now);
    }
    cJSON_Delete(entry);
    return rc;
}

enum kerr pgone_record(struct k8s_client *k, struct store *entries, const struct review_req *req,
                       struct review_resp *resp, struct kerr_info *err)
{
    const cJSON *old = req->old_object;
    const char *uid = str_or_empty(old, "metadata.uid");
    char name[BSTORE_ENTRY_NAME_MAX + 1], now[KTIME_LEN + 1];
    enum bentry_found f = BENTRY_NONE;
    struct bstore_claim c;
    struct kerr_info why;
    cJSON *cached = NULL;
    enum kerr rc;
    int i;

    if (req->op != REVIEW_OP_DELETE || req->dry_run || !old || !*uid ||
        kjson_has(old, "metadata.deletionTimestamp"))
        return KERR_OK;
    kerr_clear(&why);
    if (bstore_claim_init(&c, kjson_get_str(old, "spec.backup.store.provider"),
                          kjson_get_str(old, "spec.backup.store.container"),
                          kjson_get_str(old, "spec.backup.store.endpointOverride"),
                          kjson_get_str(old, "spec.backup.store.prefix"), NULL) != KERR_OK)
        return KERR_OK; /* no object store understood: no entry of one to write */
    rc = entries ? bentry_find(bentry_get_cached, entries, &c, &f, &cached, name, &why) : KERR_OK;
    /* no entry of either name in the cache: none was there a moment ago; when one is (the
     * cache keeps a projection, without the Etcd's uid), or the cache cannot tell, the entry
     * as stored decides */
    if (rc != KERR_OK || !entries || f != BENTRY_NONE) {
        if (ktime_format(time(NULL), now) != KERR_OK)
            rc = kerr_set(&why, KERR_INTERNAL, "cannot format the time");
        else
            for (i = 0, rc = KERR_CONFLICT; rc == KERR_CONFLICT && i < ATTEMPTS; i++) {
                kerr_clear(&why);
                rc = write_time(k, &c, uid, now, &why);
            }
    }
    cJSON_Delete(cached);
    bstore_claim_release(&c);
    if (rc == KERR_NOMEM)
        return kerr_set(err, rc, "recording the deletion");
    if (rc != KERR_OK && review_errored(resp, 500,
                                        "the BackupEntry of this Etcd's prefix cannot record "
                                        "when it was deleted (%s); retry",
                                        why.msg))
        return kerr_set(err, KERR_NOMEM, "building the answer");
    return KERR_OK;
}
