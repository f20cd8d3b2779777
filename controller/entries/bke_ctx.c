/* bke_ctx - what the BackupEntry reconcile and its parts share; see bke_ctx.h. */
#include "controller/entries/bke_ctx.h"

#include <stdarg.h>
#include <stdio.h>

#include "controller/core/ctl.h"
#include "controller/core/ctl_config.h"
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
