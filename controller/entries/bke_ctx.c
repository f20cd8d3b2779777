/* bke_ctx - what the BackupEntry reconcile and its parts share; see bke_ctx.h. */
#include "controller/entries/bke_ctx.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "controller/core/ctl.h"
#include "controller/core/ctl_config.h"
#include "common/kjson.h"
#include "controller/core/etcdspec.h"

const struct k8s_resource BKE_RES_BUCKET = { "etcd-warden.io", "v1alpha1", "backupbuckets", 0 };
const struct k8s_resource BKE_RES_ENTRY = { "etcd-warden.io", "v1alpha1", "backupentries", 0 };

void bke_ctx_of(struct ctl *c, struct bke_ctx *x)
{
    x->client = ctl_client(c);
    x->events = ctl_events(c);
    x->etcds = ctl_store(c, CTL_CACHE_ETCDS);
    x->entries = ctl_store(c, BKE_CACHE_ENTRIES);
    x->watch_ns = ctl_cfg(c)->watch_namespace;
    x->job_image = ctl_cfg(c)->bke_image;
    x->job_command = ctl_cfg(c)->bke_command;
    x->since = ctl_working_since(c);
}

void bke_event(const struct bke_ctx *x, const cJSON *obj, const char *kind, enum ev_type type,
               const char *reason, const char *action, const char *fmt, ...)
{
    struct ev_ref ref;
    char note[EV_NOTE_MAX];
    va_list ap;

    if (!x->events || ev_ref_from_object(obj, &ref) != KERR_OK)
        return;
    ref.kind = kind;
    ref.api_version = ETCDSPEC_WARDEN_API;
    va_start(ap, fmt);
    vsnprintf(note, sizeof(note), fmt, ap);
    va_end(ap);
    (void)ev_emitf(x->events, &ref, type, reason, action, "%s", note);
}

void bke_etcd_warning(const struct bke_ctx *x, const cJSON *etcd, const char *reason,
                      const char *note)
{
    struct ev_ref ref;

    if (!x->events || ev_ref_from_object(etcd, &ref) != KERR_OK)
        return;
    ref.kind = "Etcd";
    ref.api_version = ETCDSPEC_API_VERSION;
    (void)ev_emitf(x->events, &ref, EV_WARNING, reason, "KeepEntry", "%s", note);
}

static const char *str_or_empty(const cJSON *obj, const char *path)
{
    const char *s = kjson_get_str(obj, path);

    return s ? s : "";
}

/* status.conditions of obj set to conflict's PrefixConflict condition. */
static enum kerr set_conflict(cJSON *obj, const char *conflict, struct kerr_info *err)
{
    cJSON *conds = cJSON_CreateArray(), *c = cJSON_CreateObject();

    if (!conds || !c || !cJSON_AddItemToArray(conds, c) ||
        !cJSON_AddStringToObject(c, "type", "PrefixConflict") ||
        !cJSON_AddStringToObject(c, "status", "True") ||
        !cJSON_AddStringToObject(c, "reason", "PrefixOverlaps") ||
        !cJSON_AddStringToObject(c, "message", conflict)) {
        if (!cJSON_IsArray(conds) || !cJSON_GetArraySize(conds))
            cJSON_Delete(c);
        cJSON_Delete(conds);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    return kjson_set(obj, "status.conditions", conds, err);
}

enum kerr bke_write_status(const struct bke_ctx *x, const cJSON *entry, const struct bke_status *st,
                           struct kerr_info *err)
{
    const char *had = kjson_get_str(entry, "status.conditions.0.message");
    const char *conflict = st->conditions ? st->conflict : NULL;
    int same_conds = !st->conditions || (!had == !conflict && (!had || strcmp(had, conflict) == 0));
    cJSON *obj;
    enum kerr rc;

    if (strcmp(str_or_empty(entry, "status.phase"), st->phase) == 0 &&
        strcmp(str_or_empty(entry, "status.message"), st->message) == 0 && same_conds)
        return KERR_OK;
    obj = cJSON_Duplicate(entry, 1);
    if (!obj)
        return kerr_set(err, KERR_NOMEM, NULL);
    rc = kjson_set_str(obj, "apiVersion", ETCDSPEC_WARDEN_API, err);
    if (rc == KERR_OK)
        rc = kjson_set_str(obj, "kind", "BackupEntry", err);
    if (rc == KERR_OK)
        rc = kjson_set_str(obj, "status.phase", st->phase, err);
    if (rc == KERR_OK)
        rc = kjson_set_str(obj, "status.message", st->message, err);
    if (st->conditions)
        (void)kjson_delete(obj, "status.conditions");
    if (rc == KERR_OK && conflict)
        rc = set_conflict(obj, conflict, err);
    if (rc == KERR_OK && conflict && (!had || strcmp(had, conflict) != 0))
        bke_event(x, entry, "BackupEntry", EV_WARNING, "PrefixConflict", "KeepEntry", "%s",
                  conflict);
    if (rc == KERR_OK)
        rc = k8s_update(x->client, &BKE_RES_ENTRY, NULL, kjson_get_str(entry, "metadata.name"), obj,
                        &(struct k8s_write_opts){ .subresource = "status" }, NULL, err);
    cJSON_Delete(obj);
    return rc;
}
