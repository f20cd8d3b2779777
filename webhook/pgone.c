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

/* 1 when entry is claim c's entry recording Etcd uid without a time at path yet. */
static int wants_time(const cJSON *entry, enum bentry_found f, const char *uid, const char *path)
{
    return f == BENTRY_CLAIMS && strcmp(str_or_empty(entry, "spec.etcd.uid"), uid) == 0 &&
           !kjson_has(entry, path);
}

/*
 * Write now at path into the stored entry of claim c when it wants it; KERR_CONFLICT when
 * another writer came first (read again and retry), other errors as the API server's.
 */
static enum kerr write_time(struct k8s_client *k, const struct bstore_claim *c, const char *uid,
                            const char *path, const char *now, const cJSON *gen,
                            struct kerr_info *why)
{
    char name[BSTORE_ENTRY_NAME_MAX + 1];
    enum bentry_found f = BENTRY_NONE;
    cJSON *entry = NULL;
    enum kerr rc = bentry_find(bentry_get_stored, k, c, &f, &entry, name, why);

    if (rc == KERR_OK && wants_time(entry, f, uid, path)) {
        rc = kjson_set_str(entry, path, now, why);
        if (rc == KERR_OK && gen) {
            cJSON *g = cJSON_Duplicate(gen, 0);

            rc = g ? kjson_set(entry, BENTRY_STORE_CHANGED_GEN, g, why)
                   : kerr_set(why, KERR_NOMEM, NULL);
        }
        if (rc == KERR_OK)
            rc = k8s_update(k, &BENTRY_RES, NULL, name, entry, NULL, NULL, why);
        if (rc == KERR_OK)
            log_info("etcd change recorded", "entry", name, "field", path, "at", now);
    }
    cJSON_Delete(entry);
    return rc;
}

/* The object-store claim of etcd into *c: 1, or 0 when it has none understood (nothing to
 * record: no entry of one). */
static int claim_of(const cJSON *etcd, struct bstore_claim *c)
{
    return etcd &&
           bstore_claim_init(c, kjson_get_str(etcd, "spec.backup.store.provider"),
                             kjson_get_str(etcd, "spec.backup.store.container"),
                             kjson_get_str(etcd, "spec.backup.store.endpointOverride"),
                             kjson_get_str(etcd, "spec.backup.store.prefix"), NULL) == KERR_OK;
}

/* Write now at path (and gen) into claim c's stored entry as write_time, retried over
 * conflicts. */
static enum kerr record(struct k8s_client *k, const struct bstore_claim *c, const char *uid,
                        const char *path, const char *now, const cJSON *gen, struct kerr_info *why)
{
    enum kerr rc = KERR_CONFLICT;
    int i;

    for (i = 0; rc == KERR_CONFLICT && i < ATTEMPTS; i++) {
        kerr_clear(why);
        rc = write_time(k, c, uid, path, now, gen, why);
    }
    return rc;
}

/* The DELETE of old: its claim's entry records the time (the cache first, pgone.h). */
static enum kerr record_delete(struct k8s_client *k, struct store *entries, const cJSON *old,
                               const char *uid, const char *now, struct kerr_info *why)
{
    struct bstore_claim c;
    enum kerr rc;
    int any = 1;

    if (!claim_of(old, &c))
        return KERR_OK;
    rc = entries ? bentry_named(bentry_get_cached, entries, &c, &any, why) : KERR_OK;
    /* no entry of either name in the cache: none was there a moment ago; when one is (the
     * cache keeps a projection, which cannot tell whose it is), or the cache cannot tell, the
     * entry as stored decides */
    if (rc != KERR_OK || any)
        rc = record(k, &c, uid, BENTRY_DELETE_ADMITTED, now, NULL, why);
    bstore_claim_release(&c);
    return rc;
}

/* An UPDATE of spec.backup.store: the entries of its earlier and its new claim, as stored. */
static enum kerr record_change(struct k8s_client *k, const struct review_req *req, const char *uid,
                               const char *now, struct kerr_info *why)
{
    const cJSON *objs[2] = { req->old_object, req->object };
    const cJSON *gen = kjson_get(req->old_object, "metadata.generation");
    struct bstore_claim c;
    enum kerr rc = KERR_OK;
    size_t i;

    if (!cJSON_IsNumber(gen)) /* the change cannot be told stored or not: never taken for so */
        gen = NULL;
    for (i = 0; rc == KERR_OK && i < 2; i++)
        if (claim_of(objs[i], &c)) {
            rc = record(k, &c, uid, BENTRY_STORE_CHANGED, now, gen, why);
            bstore_claim_release(&c);
        }
    return rc;
}

int pgone_store_changed(const struct review_req *req)
{
    return req->op == REVIEW_OP_UPDATE && req->old_object && req->object &&
           !cJSON_Compare(kjson_get(req->old_object, "spec.backup.store"),
                          kjson_get(req->object, "spec.backup.store"), 1);
}

enum kerr pgone_record(struct k8s_client *k, struct store *entries, const struct review_req *req,
                       struct review_resp *resp, struct kerr_info *err)
{
    const cJSON *old = req->old_object;
    const char *uid = str_or_empty(old, "metadata.uid");
    const char *what = req->op == REVIEW_OP_DELETE ? "when it was deleted" : "its store's change";
    char now[KTIME_LEN + 1];
    struct kerr_info why;
    enum kerr rc;

    if (req->dry_run || !old || !*uid ||
        !(req->op == REVIEW_OP_DELETE ? !kjson_has(old, "metadata.deletionTimestamp")
                                      : pgone_store_changed(req)))
        return KERR_OK;
    kerr_clear(&why);
    if (ktime_format(time(NULL), now) != KERR_OK)
        rc = kerr_set(&why, KERR_INTERNAL, "cannot format the time");
    else if (req->op == REVIEW_OP_DELETE)
        rc = record_delete(k, entries, old, uid, now, &why);
    else
        rc = record_change(k, req, uid, now, &why);
    if (rc == KERR_NOMEM)
        return kerr_set(err, rc, "recording %s", what);
    if (rc != KERR_OK && review_errored(resp, 500,
                                        "the BackupEntry of this Etcd's prefix cannot record %s "
                                        "(%s); retry",
                                        what, why.msg))
        return kerr_set(err, KERR_NOMEM, "building the answer");
    return KERR_OK;
}
