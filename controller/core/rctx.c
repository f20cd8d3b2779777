/* rctx - the controller as the restore-side steps see it. */
#include "controller/core/rctx.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/k8s.h"
#include "common/kjson.h"
#include "common/kobj.h"
#include "common/store.h"
#include "controller/core/ctl.h"
#include "controller/core/ctl_config.h"
#include "controller/core/etcdspec.h"

void rctx_from_ctl(struct ctl *c, struct rctx *out)
{
    const struct ctl_config *cfg = ctl_cfg(c);

    out->client = ctl_client(c);
    out->events = ctl_events(c);
    out->components = ctl_store(c, CTL_CACHE_COMPONENTS);
    out->opstasks = ctl_store(c, ETCDSPEC_RES_OPSTASK.resource);
    out->immtasks = ctl_store(c, ETCDSPEC_RES_IMMTASK.resource);
    out->statusbackups = ctl_store(c, ETCDSPEC_RES_STATUSBACKUP.resource);
    out->backup_cluster_status = cfg ? cfg->backup_cluster_status : 1;
    out->imm_image = cfg ? cfg->imm_image : NULL;
    out->imm_command = cfg ? cfg->imm_command : NULL;
    out->repair_slots = ctl_repair_slots(c);
}

void rctx_event(const struct rctx *x, const cJSON *obj, enum ev_type type, const char *reason,
                const char *action, const char *fmt, ...)
{
    struct ev_ref ref;
    char note[EV_NOTE_MAX];
    va_list ap;

    if (!x->events || ev_ref_from_object(obj, &ref) != KERR_OK)
        return;
    va_start(ap, fmt);
    vsnprintf(note, sizeof(note), fmt, ap);
    va_end(ap);
    (void)ev_emit(x->events, &ref, type, reason, action, note);
}

/* Append the items of one LIST of kind (labelled for ns/name) to arr, with apiVersion and kind. */
static enum kerr list_kind(const struct rctx *x, const char *kind, const char *ns,
                           const char *selector, cJSON *arr, struct kerr_info *err)
{
    struct k8s_list_opts lo = { .label_selector = selector };
    cJSON *list = NULL, *items, *it;
    enum kerr rc;

    rc = k8s_list_all(x->client, etcdspec_kind_resource(kind), ns, &lo, &list, err);
    if (rc != KERR_OK)
        return rc;
    items = cJSON_GetObjectItemCaseSensitive(list, "items");
    while (items && items->child) {
        it = cJSON_DetachItemViaPointer(items, items->child);
        cJSON_DeleteItemFromObjectCaseSensitive(it, "apiVersion");
        cJSON_DeleteItemFromObjectCaseSensitive(it, "kind");
        cJSON_AddStringToObject(it, "apiVersion", etcdspec_kind_api_version(kind));
        cJSON_AddStringToObject(it, "kind", kind);
        cJSON_AddItemToArray(arr, it);
    }
    cJSON_Delete(list);
    return KERR_OK;
}

enum kerr rctx_components(const struct rctx *x, const char *ns, const char *name, cJSON **out,
                          struct kerr_info *err)
{
    static const char *const KINDS[] = {
        "ServiceAccount",       "Service",     "ConfigMap",           "Role",
        "RoleBinding",          "StatefulSet", "PodDisruptionBudget", "Lease",
        "PersistentVolumeClaim"
    };
    char value[2 * ETCDSPEC_NAME_MAX + 128];
    cJSON *arr = NULL;
    enum kerr rc = KERR_OK;
    size_t i;

    *out = NULL;
    if (x->components) {
        snprintf(value, sizeof(value), "%s/%s", ns, name);
        return store_index_list(x->components, CTL_INDEX_PART_OF, value, out, err);
    }
    snprintf(value, sizeof(value),
             ETCDSPEC_LABEL_MANAGED_BY "=" ETCDSPEC_MANAGED_BY_DRUID "," ETCDSPEC_LABEL_PART_OF
                                       "=%s",
             name);
    arr = cJSON_CreateArray();
    if (!arr)
        return kerr_set(err, KERR_NOMEM, NULL);
    for (i = 0; rc == KERR_OK && i < sizeof(KINDS) / sizeof(KINDS[0]); i++)
        rc = list_kind(x, KINDS[i], ns, value, arr, err);
    if (rc != KERR_OK) {
        cJSON_Delete(arr);
        return rc;
    }
    *out = arr;
    return KERR_OK;
}

cJSON *rctx_ready_condition(int ready, const char *reason, const char *message, const cJSON *old,
                            const char *now)
{
    const char *status = ready ? "True" : "False", *ltt = NULL;
    const cJSON *o = kobj_condition(old, "Ready");
    const char *s = kjson_get_str(o, "status");
    cJSON *c = cJSON_CreateObject();

    if (s && strcmp(s, status) == 0)
        ltt = kjson_get_str(o, "lastTransitionTime");
    if (!c || !cJSON_AddStringToObject(c, "type", "Ready") ||
        !cJSON_AddStringToObject(c, "status", status) ||
        !cJSON_AddStringToObject(c, "reason", reason) ||
        !cJSON_AddStringToObject(c, "message", message) ||
        !cJSON_AddStringToObject(c, "lastTransitionTime", ltt ? ltt : now)) {
        cJSON_Delete(c);
        return NULL;
    }
    return c;
}
