/* bkeadm - what warden-webhook recorded at admission, checked against the API server; see
 * bkeadm.h. */
#include "controller/entries/bkeadm.h"

#include <string.h>
#include <time.h>

#include "common/bentry.h"
#include "common/kjson.h"
#include "controller/core/etcdspec.h"

static const char *str_or_empty(const cJSON *obj, const char *path)
{
    const char *s = kjson_get_str(obj, path);

    return s ? s : "";
}

/* etcd (cached) read from the API server now into *now (OWNS; NULL when gone, or another uid
 * holds its name). Errors of the GET but KERR_NOTFOUND are returned. */
static enum kerr read_again(struct k8s_client *k, const cJSON *etcd, cJSON **now,
                            struct kerr_info *err)
{
    enum kerr rc = k8s_get(k, &ETCDSPEC_RES_ETCD, kjson_get_str(etcd, "metadata.namespace"),
                           kjson_get_str(etcd, "metadata.name"), NULL, now, err);

    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        rc = KERR_OK;
    }
    if (rc != KERR_OK || (*now && strcmp(str_or_empty(*now, "metadata.uid"),
                                         str_or_empty(etcd, "metadata.uid")) != 0)) {
        cJSON_Delete(*now);
        *now = NULL;
    }
    return rc;
}

enum kerr bkeadm_admitted_stale(struct k8s_client *k, const cJSON *entry, const cJSON *etcd,
                                int *stale, struct kerr_info *err)
{
    const char *uid = str_or_empty(etcd, "metadata.uid");
    int64_t at = 0, sent = (int64_t)time(NULL);
    cJSON *now = NULL;
    enum kerr rc;

    *stale = 0;
    if (!kjson_has(entry, BENTRY_DELETE_ADMITTED))
        return KERR_OK;
    (void)bkealive_admitted(entry, &at); /* not a time: 0, stale once the Etcd is read alive */
    if (strcmp(str_or_empty(entry, "spec.etcd.uid"), uid) != 0) {
        *stale = 1;
        return KERR_OK;
    }
    if (sent <= at + BKEALIVE_SETTLE_S) /* another webhook may still hold the DELETE */
        return KERR_OK;
    rc = read_again(k, etcd, &now, err);
    *stale = now && !kjson_has(now, "metadata.deletionTimestamp");
    cJSON_Delete(now);
    return rc;
}

enum kerr bkeadm_store_change(struct k8s_client *k, const cJSON *entry, const cJSON *etcd,
                              enum bkealive_change *c, struct kerr_info *err)
{
    int64_t sent = (int64_t)time(NULL);
    cJSON *now = NULL;
    enum kerr rc;

    *c = bkealive_change(entry, etcd, sent);
    if (*c != BKEALIVE_CHANGE_SETTLED)
        return KERR_OK;
    rc = read_again(k, etcd, &now, err);
    *c = now ? bkealive_change(entry, now, sent) : BKEALIVE_CHANGE_PENDING;
    cJSON_Delete(now);
    return rc;
}
