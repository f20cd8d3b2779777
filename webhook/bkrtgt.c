/* bkrtgt - an EtcdRestore's target store at admission; see bkrtgt.h. */
#include "webhook/bkrtgt.h"

#include <stdio.h>
#include <string.h>

#include "common/bstore.h"
#include "common/kjson.h"

static const char *s_or(const cJSON *o, const char *path, const char *dflt)
{
    const char *s = kjson_get_str(o, path);

    return s ? s : dflt;
}

void bkrtgt_release(struct bkrtgt_src *r)
{
    cJSON_Delete(r->etcd_store);
    cJSON_Delete(r->backup);
}

/* The source Etcd's store as its cached claim ("<family>|<container>|<endpoint>") keys it. */
static cJSON *etcd_store_of(const cJSON *cached)
{
    const char *k = kjson_get_str(cached, "claim.store");
    const char *bar1 = k ? strchr(k, '|') : NULL, *bar2 = bar1 ? strchr(bar1 + 1, '|') : NULL;
    char fam[32];
    cJSON *o;

    if (!bar2 || (size_t)(bar1 - k) >= sizeof(fam))
        return NULL;
    /* every object store of one container is one key (common/bstore): S3 spells it */
    snprintf(fam, sizeof(fam), "%.*s", (int)(bar1 - k), k);
    if (strcmp(fam, BSTORE_OBJECT) == 0)
        snprintf(fam, sizeof(fam), "S3");
    o = cJSON_CreateObject();
    if (o && (!cJSON_AddStringToObject(o, "provider", fam) ||
              (bar2[1] && !cJSON_AddStringToObject(o, "endpointOverride", bar2 + 1)))) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/*
 * An EtcdRestore's target provider and endpoint (common/rtarget: the controller's rule) into
 * *t, from the caches: the source Etcd (spec.source.etcdName, else the source EtcdBackup's
 * spec.etcdName) and the source EtcdBackup's spec.destination. r OWNS what t points into.
 */
enum rtarget_from bkrtgt_resolve(struct store *etcds, struct store *backups, const cJSON *obj,
                                 struct bkrtgt_src *r, struct rtarget *t)
{
    const char *src = kjson_get_str(obj, "spec.source.etcdName");
    const char *ns = kjson_get_str(obj, "metadata.namespace");
    const char *bk = kjson_get_str(obj, "spec.source.backupName");
    const cJSON *source = kjson_get_obj(obj, "spec.source.store");
    cJSON *cached = NULL;
    char key[512];

    memset(r, 0, sizeof(*r));
    if (bk && ns && backups && (snprintf(key, sizeof(key), "%s/%s", ns, bk), 1) &&
        store_get(backups, key, &r->backup, NULL) == KERR_OK && r->backup) {
        if (!src)
            src = kjson_get_str(r->backup, "etcdName");
        if (!source)
            source = kjson_get_obj(r->backup, "destination");
    }
    r->etcd_known = !src;
    if (src && ns && etcds && (snprintf(key, sizeof(key), "%s/%s", ns, src), 1) &&
        store_get(etcds, key, &cached, NULL) == KERR_OK && cached) {
        r->etcd_known = 1;
        r->etcd_store = etcd_store_of(cached);
        cJSON_Delete(cached);
    }
    return rtarget_resolve(obj, r->etcd_store, r->etcd_known, source, t);
}

/* See bkrtgt.h. */
int bkrtgt_same(struct store *etcds, struct store *backups, const cJSON *obj, const cJSON *old)
{
    static const char *const f[] = { "spec.target.store.container", "spec.target.store.prefix" };
    struct bkrtgt_src a, b;
    struct rtarget ta, tb;
    int same;

    if (!old)
        return 0;
    bkrtgt_resolve(etcds, backups, obj, &a, &ta);
    bkrtgt_resolve(etcds, backups, old, &b, &tb);
    same = strcmp(ta.provider ? ta.provider : "", tb.provider ? tb.provider : "") == 0 &&
           strcmp(ta.endpoint ? ta.endpoint : "", tb.endpoint ? tb.endpoint : "") == 0;
    for (size_t i = 0; same && i < 2; i++)
        same = strcmp(s_or(obj, f[i], ""), s_or(old, f[i], "")) == 0;
    bkrtgt_release(&a);
    bkrtgt_release(&b);
    return same;
}
