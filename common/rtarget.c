/* rtarget - the store an EtcdRestore's target is in; see rtarget.h. */
#include "common/rtarget.h"

#include <stddef.h>
#include <string.h>

#include "common/kjson.h"

static enum rtarget_from take(const cJSON *store, enum rtarget_from f, struct rtarget *out)
{
    const char *p = kjson_get_str(store, "provider");

    if (!p || !*p)
        return RTARGET_UNKNOWN;
    out->provider = p;
    out->endpoint = kjson_get_str(store, "endpointOverride");
    return f;
}

enum rtarget_from rtarget_resolve(const cJSON *restore, const cJSON *etcd_store, int etcd_known,
                                  const cJSON *source_store, struct rtarget *out)
{
    const cJSON *tmpl = kjson_get_obj(restore, "spec.etcdTemplate");
    enum rtarget_from f;

    out->provider = NULL;
    out->endpoint = NULL;
    if ((f = take(kjson_get_obj(restore, "spec.target.store"), RTARGET_OWN, out)))
        return f;
    if (tmpl) {
        if ((f = take(kjson_get_obj(tmpl, "backup.store"), RTARGET_TEMPLATE, out)))
            return f;
    } else if ((f = take(etcd_store, RTARGET_ETCD, out))) {
        return f;
    } else if (!etcd_known) {
        return RTARGET_UNKNOWN;
    }
    return take(source_store, RTARGET_SOURCE, out);
}

const char *rtarget_source_etcd(const cJSON *restore, const cJSON *backup)
{
    const char *src = kjson_get_str(restore, "spec.source.etcdName");

    if ((!src || !*src) && backup)
        src = kjson_get_str(backup, "spec.etcdName");
    return src && *src ? src : NULL;
}

enum rtarget_from rtarget_resolve_objs(const cJSON *restore, const cJSON *etcd, int etcd_known,
                                       const cJSON *backup, struct rtarget *out)
{
    const cJSON *source = kjson_get_obj(restore, "spec.source.store");

    if (!source && backup)
        source = kjson_get_obj(backup, "spec.destination");
    return rtarget_resolve(restore, etcd ? kjson_get_obj(etcd, "spec.backup.store") : NULL,
                           etcd_known, source, out);
}

/* The object of items in namespace ns named name, or NULL. */
static const cJSON *find(const cJSON *items, const char *ns, const char *name)
{
    const cJSON *o;
    const char *ons, *oname;

    if (!ns || !name || !*name)
        return NULL;
    cJSON_ArrayForEach (o, items) {
        ons = kjson_get_str(o, "metadata.namespace");
        oname = kjson_get_str(o, "metadata.name");
        if (ons && oname && strcmp(ons, ns) == 0 && strcmp(oname, name) == 0)
            return o;
    }
    return NULL;
}

enum rtarget_from rtarget_resolve_in(const cJSON *restore, const cJSON *etcds, const cJSON *backups,
                                     struct rtarget *out)
{
    const char *ns = kjson_get_str(restore, "metadata.namespace");
    const cJSON *backup = find(backups, ns, kjson_get_str(restore, "spec.source.backupName"));
    const char *src = rtarget_source_etcd(restore, backup);
    const cJSON *etcd = src ? find(etcds, ns, src) : NULL;

    return rtarget_resolve_objs(restore, etcd, !src || etcd, backup, out);
}

const char *rtarget_from_str(enum rtarget_from f)
{
    switch (f) {
    case RTARGET_OWN:
        return "spec.target.store";
    case RTARGET_TEMPLATE:
        return "spec.etcdTemplate.backup.store";
    case RTARGET_ETCD:
        return "the source Etcd's spec.backup.store";
    case RTARGET_SOURCE:
        return "the source store";
    case RTARGET_UNKNOWN:
        break;
    }
    return "(unknown)";
}

int rtarget_claims(const cJSON *restore)
{
    const char *phase = kjson_get_str(restore, "status.phase");
    const char *job = kjson_get_str(restore, "status.jobName");

    if (phase && strcmp(phase, "Completed") == 0)
        return 0;
    if (phase && strcmp(phase, "Failed") == 0)
        return job && *job;
    return 1;
}

int rtarget_local_secret(const cJSON *restore, rtarget_find_fn lookup, void *ctx,
                         const char **secret)
{
    const char *ns = kjson_get_str(restore, "metadata.namespace");
    const char *bk = kjson_get_str(restore, "spec.source.backupName");
    const char *src = kjson_get_str(restore, "spec.source.etcdName");

    *secret = kjson_get_str(restore, "spec.target.store.secretRef.name");
    if (!*secret)
        *secret = kjson_get_str(restore, "spec.etcdTemplate.backup.store.secretRef.name");
    if (*secret)
        return 1;
    if (kjson_get_obj(restore, "spec.source.store")) {
        *secret = kjson_get_str(restore, "spec.source.store.secretRef.name");
        return 1;
    }
    if (bk)
        return lookup(ctx, 1, ns, bk, secret);
    if (src)
        return lookup(ctx, 0, ns, src, secret);
    return 0; /* no source named: nothing tells it */
}

/* The lists rtarget_local_secret_in looks in. */
struct lists {
    const cJSON *etcds, *backups;
};

static int find_in(void *ctx, int backup, const char *ns, const char *name, const char **secret)
{
    const struct lists *l = ctx;
    const cJSON *o = find(backup ? l->backups : l->etcds, ns, name);

    *secret = kjson_get_str(o, backup ? "spec.destination.secretRef.name"
                                      : "spec.backup.store.secretRef.name");
    return o != NULL;
}

int rtarget_local_secret_in(const cJSON *restore, const cJSON *etcds, const cJSON *backups,
                            const char **secret)
{
    struct lists l = { etcds, backups };

    return rtarget_local_secret(restore, find_in, &l, secret);
}
