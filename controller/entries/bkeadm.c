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
    rc = k8s_get(k, &ETCDSPEC_RES_ETCD, kjson_get_str(etcd, "metadata.namespace"),
                 kjson_get_str(etcd, "metadata.name"), NULL, &now, err);
    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        return KERR_OK;
    }
    *stale = rc == KERR_OK && strcmp(str_or_empty(now, "metadata.uid"), uid) == 0 &&
             !kjson_has(now, "metadata.deletionTimestamp");
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
    rc = k8s_get(k, &ETCDSPEC_RES_ETCD, kjson_get_str(etcd, "metadata.namespace"),
                 kjson_get_str(etcd, "metadata.name"), NULL, &now, err);
    *c = BKEALIVE_CHANGE_PENDING;
    if (rc == KERR_NOTFOUND)
        kerr_clear(err);
    else if (rc == KERR_OK &&
             strcmp(str_or_empty(now, "metadata.uid"), str_or_empty(etcd, "metadata.uid")) == 0)
        *c = bkealive_change(entry, now, sent);
    cJSON_Delete(now);
    return rc == KERR_NOTFOUND ? KERR_OK : rc;
}
