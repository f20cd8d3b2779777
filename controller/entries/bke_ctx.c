/* bke_ctx - what the BackupEntry reconcile and its parts share; see bke_ctx.h. */
#include "controller/entries/bke_ctx.h"

#include <stdarg.h>
#include <stdio.h>

#include "controller/core/etcdspec.h"

const struct k8s_resource BKE_RES_BUCKET = { "etcd-warden.io", "v1alpha1", "backupbuckets", 0 };
const struct k8s_resource BKE_RES_ENTRY = { "etcd-warden.io", "v1alpha1", "backupentries", 0 };

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
