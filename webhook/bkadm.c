/* bkadm - backup, schedule and restore destinations at admission; see bkadm.h. */
#include "webhook/bkadm.h"

#include <stdio.h>
#include <string.h>

#include "common/bstore.h"
#include "common/kjson.h"
#include "webhook/pclaim.h"

/* What one destination is and found. */
struct dest {
    const char *ns, *etcd; /* the requester's namespace and the Etcd it backs up */
    char store[BSTORE_KEY_MAX];
    char *prefix; /* canonical; OWNS */
    char other[512], other_ns[256];
};

static const char *s_or(const cJSON *o, const char *path, const char *dflt)
{
    const char *s = kjson_get_str(o, path);

    return s ? s : dflt;
}

static enum kerr found(struct dest *d, const cJSON *c, const char *what)
{
    snprintf(d->other, sizeof(d->other), "%s", what);
    snprintf(d->other_ns, sizeof(d->other_ns), "%s", s_or(c, "namespace", ""));
    return KERR_EXISTS;
}

static int overlapping(const struct dest *d, const cJSON *c)
{
    return c && kjson_get_str(c, "prefix") &&
           bstore_overlap(d->store, d->prefix, kjson_get_str(c, "prefix"));
}

static enum kerr view_etcd(void *ctx, const char *key, const cJSON *obj)
{
    struct dest *d = ctx;
    const cJSON *c = kjson_get(obj, "claim");
    char w[512];

    (void)key;
    if (!overlapping(d, c))
        return KERR_OK;
    snprintf(w, sizeof(w), "the prefix \"%s\" of Etcd %s/%s", kjson_get_str(c, "prefix"),
             s_or(c, "namespace", ""), s_or(c, "name", ""));
    return found(d, c, w);
}

static enum kerr view_entry(void *ctx, const char *key, const cJSON *obj)
{
    struct dest *d = ctx;
    const cJSON *c = kjson_get(obj, "claim");
    char w[512];

    (void)key;
    if (!overlapping(d, c))
        return KERR_OK;
    snprintf(w, sizeof(w), "the prefix \"%s\" of BackupEntry %s of Etcd %s/%s",
             kjson_get_str(c, "prefix"), s_or(obj, "metadata.name", ""), s_or(c, "namespace", ""),
             s_or(c, "name", ""));
    return found(d, c, w);
}

static enum kerr view_backup(void *ctx, const char *key, const cJSON *obj)
{
    struct dest *d = ctx;
    const cJSON *c = kjson_get(obj, "claim");
    char w[512];

    (void)key;
    if (!overlapping(d, c) || (d->etcd && strcmp(s_or(c, "namespace", ""), d->ns) == 0 &&
                               strcmp(s_or(c, "etcd", ""), d->etcd) == 0))
        return KERR_OK;
    snprintf(w, sizeof(w), "the prefix \"%s\" of the copies of EtcdBackup %s/%s",
             kjson_get_str(c, "prefix"), s_or(c, "namespace", ""), s_or(c, "name", ""));
    return found(d, c, w);
}

/* The destination of obj by kind into the paths; 0 when obj is of no kind checked here. */
static int paths_of(const char *kind, const char **base, const char **etcd)
{
    if (strcmp(kind, "EtcdBackup") == 0) {
        *base = "spec.destination";
        *etcd = "spec.etcdName";
    } else if (strcmp(kind, "EtcdBackupSchedule") == 0) {
        *base = "spec.backupTemplate.destination";
        *etcd = "spec.backupTemplate.etcdName";
    } else if (strcmp(kind, "EtcdRestore") == 0) {
        *base = "spec.target.store";
        *etcd = NULL;
    } else {
        return 0;
    }
    return 1;
}

/* An EtcdRestore's target provider and endpoint when not its own: the template's, else the
 * source Etcd's cached claim ("<family>|<container>|<endpoint>"), else the source store's.
 * 0 when unknown. */
static int restore_store(struct store *etcds, struct store *backups, const cJSON *obj,
                         const char **provider, const char **endpoint, char fam[32],
                         char ep[BSTORE_KEY_MAX])
{
    const char *src = kjson_get_str(obj, "spec.source.etcdName");
    const char *ns = kjson_get_str(obj, "metadata.namespace");
    const char *bk = kjson_get_str(obj, "spec.source.backupName");
    char key[512], srcbuf[256];
    cJSON *cached = NULL;
    const char *k, *bar1, *bar2;
    int ok = 0;

    if (!*provider)
        *provider = kjson_get_str(obj, "spec.etcdTemplate.backup.store.provider");
    if (!*endpoint)
        *endpoint = kjson_get_str(obj, "spec.etcdTemplate.backup.store.endpointOverride");
    if (*provider)
        return 1;
    /* from an EtcdBackup: its Etcd's store (the live spec the restore takes as its template) */
    if (!src && bk && ns && backups && (snprintf(key, sizeof(key), "%s/%s", ns, bk), 1) &&
        store_get(backups, key, &cached, NULL) == KERR_OK && cached) {
        if (kjson_get_str(cached, "etcdName")) {
            snprintf(srcbuf, sizeof(srcbuf), "%s", kjson_get_str(cached, "etcdName"));
            src = srcbuf;
        }
        cJSON_Delete(cached);
        cached = NULL;
    }
    if (!etcds || !src || !ns ||
        (snprintf(key, sizeof(key), "%s/%s", ns, src),
         store_get(etcds, key, &cached, NULL) != KERR_OK || !cached)) {
        *provider = kjson_get_str(obj, "spec.source.store.provider");
        if (*provider && !*endpoint)
            *endpoint = kjson_get_str(obj, "spec.source.store.endpointOverride");
        return *provider != NULL;
    }
    k = kjson_get_str(cached, "claim.store");
    bar1 = k ? strchr(k, '|') : NULL;
    bar2 = bar1 ? strchr(bar1 + 1, '|') : NULL;
    if (bar2 && (size_t)(bar1 - k) < 32) {
        /* every object store of one container is one key (common/bstore): S3 spells it */
        snprintf(fam, 32, "%.*s", (int)(bar1 - k), k);
        if (strcmp(fam, BSTORE_OBJECT) == 0)
            snprintf(fam, 32, "S3");
        snprintf(ep, BSTORE_KEY_MAX, "%s", bar2 + 1);
        *provider = fam;
        if (!*endpoint)
            *endpoint = ep;
        ok = 1;
    }
    cJSON_Delete(cached);
    return ok;
}

/* 1 when obj and old have one destination at base (an UPDATE claiming nothing new). */
static int same_destination(const cJSON *obj, const cJSON *old, const char *base)
{
    static const char *const f[] = { "provider", "container", "prefix", "endpointOverride" };
    char p[128];

    if (!old)
        return 0;
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof(p), "%s.%s", base, f[i]);
        if (strcmp(s_or(obj, p, ""), s_or(old, p, "")) != 0)
            return 0;
    }
    return 1;
}

static enum kerr deny(struct review_resp *resp, const char *field, const char *prefix,
                      const struct dest *d)
{
    int mine = strcmp(d->ns, d->other_ns) == 0;

    return review_deny(resp,
                       "%s.prefix \"%s\" overlaps %s in the same store (%s): the backup sidecar "
                       "lists a prefix as a plain string, so a restore of either could read the "
                       "other's snapshots, and a deletion of one delete the other's; one prefix, "
                       "one owner%s",
                       field, prefix, mine ? d->other : PREFIX_OTHER_NAMESPACE, d->store,
                       mine ? ""
                            : " (the operator finds the owner with warden-snapshot "
                              "check-prefixes and in warden-webhook's log)");
}

/* bkadm_check; the store key of a new destination claim it allowed into key ("" when none). */
static enum kerr check(struct prefix_cache *pc, struct store *etcds, struct store *entries,
                       struct store *backups, const struct review_req *req,
                       struct review_resp *resp, char key[BSTORE_KEY_MAX],
                       char cp[BSTORE_PREFIX_MAX + 1], struct kerr_info *err)
{
    const cJSON *obj = req->object;
    const char *base, *etcd_path, *provider, *container, *endpoint, *prefix;
    char fam[32], ep[BSTORE_KEY_MAX];
    struct dest d;
    struct bstore_claim c = { "", NULL };
    struct kerr_info why = { 0 };
    enum kerr rc = KERR_OK;

    memset(&d, 0, sizeof(d));
    if ((req->op != REVIEW_OP_CREATE && req->op != REVIEW_OP_UPDATE) || !obj ||
        !paths_of(req->kind_kind ? req->kind_kind : "", &base, &etcd_path) ||
        (req->op == REVIEW_OP_UPDATE && same_destination(obj, req->old_object, base)))
        return KERR_OK;
    provider = kjson_get_str(kjson_get(obj, base), "provider");
    container = kjson_get_str(kjson_get(obj, base), "container");
    endpoint = kjson_get_str(kjson_get(obj, base), "endpointOverride");
    prefix = s_or(kjson_get(obj, base), "prefix", "");
    d.ns = s_or(obj, "metadata.namespace", "");
    d.etcd = etcd_path ? kjson_get_str(obj, etcd_path) : NULL;
    if (!etcd_path && !restore_store(etcds, backups, obj, &provider, &endpoint, fam, ep)) {
        /* fail closed: a target whose store cannot be told claims nothing while it copies */
        rc = review_deny(resp,
                         "%s: no provider, and none to take: spec.etcdTemplate has no "
                         "backup.store.provider, the source Etcd %s is not known here and "
                         "spec.source has no store; set %s.provider (the store the copy writes "
                         "to is claimed from admission)",
                         base,
                         s_or(obj, "spec.source.etcdName",
                              kjson_get_str(obj, "spec.source.backupName")
                                  ? "(of the EtcdBackup in spec.source.backupName)"
                                  : "(none)"),
                         base);
        goto out;
    }
    /* the source is read, never claimed: its container must still name one bucket, or the
     * copy reads another bucket's or another prefix's snapshots */
    if (!etcd_path && kjson_get_str(obj, "spec.source.store.container") &&
        bstore_container_check(s_or(obj, "spec.source.store.provider", provider),
                               kjson_get_str(obj, "spec.source.store.container"),
                               &why) != KERR_OK) {
        rc = review_deny(resp, "spec.source.store: %s", why.msg);
        goto out;
    }
    rc = bstore_claim_init(&c, provider, container, endpoint, prefix, &why);
    if (rc == KERR_INVAL || rc == KERR_TOOBIG) {
        rc = review_deny(resp, "%s: %s", base, why.msg[0] ? why.msg : "no usable store");
        goto out;
    }
    if (rc != KERR_OK)
        goto out;
    if (!*c.prefix || strncmp(c.prefix, "..", 2) == 0) {
        rc = review_deny(resp,
                         "%s.prefix \"%s\" is %s: a copy or restore target is a prefix of its "
                         "own, never the whole container",
                         base, prefix,
                         *c.prefix ? "outside its container once cleaned" : "the whole container");
        goto out;
    }
    if (bstore_prefix_unparsable(c.prefix)) {
        rc = review_deny(resp,
                         "%s.prefix \"%s\": a segment ends in \"v1\", so the backup sidecar "
                         "takes every snapshot under it for a version-1 one it cannot parse and "
                         "could never restore from it; choose a prefix without one",
                         base, prefix);
        goto out;
    }
    /* the bucket owner's authority (webhook/bauth), before any other claim is read */
    if (pc && ((rc = prefix_cache_authorise(pc, d.ns, c.key, c.prefix, resp, err)) != KERR_OK ||
               !resp->allowed))
        goto out;
    snprintf(d.store, sizeof(d.store), "%s", c.key);
    snprintf(key, BSTORE_KEY_MAX, "%s", c.key);
    snprintf(cp, BSTORE_PREFIX_MAX + 1, "%s", c.prefix);
    d.prefix = c.prefix;
    if (etcds)
        rc = store_index_view(etcds, PREFIX_INDEX_STORE, d.store, view_etcd, &d, &why);
    if (entries && rc == KERR_OK && !*d.other)
        rc = store_index_view(entries, PREFIX_INDEX_STORE, d.store, view_entry, &d, &why);
    if (backups && rc == KERR_OK && !*d.other)
        rc = store_index_view(backups, PREFIX_INDEX_STORE, d.store, view_backup, &d, &why);
    if (*d.other) {
        key[0] = '\0';
        rc = deny(resp, base, prefix, &d);
    } else if (rc != KERR_OK) /* fail closed */
        rc = review_errored(resp, 500, "checking %s against the caches: %s", base,
                            why.msg[0] ? why.msg : kerr_str(rc))
                 ? KERR_NOMEM
                 : KERR_OK;
out:
    bstore_claim_release(&c);
    return rc == KERR_OK ? rc : kerr_set(err, rc, "building the answer");
}

/*
 * The claim Lease of store key (webhook/pclaim): an EtcdRestore's target recorded there (it
 * claims from admission, while its copy is written), an EtcdBackup's or schedule's destination
 * refused when it overlaps an in-flight restore's target. Refused (500) when unreadable.
 */
static enum kerr in_flight(struct prefix_cache *pc, const struct review_req *req, const char *key,
                           const char *cprefix, struct review_resp *resp, struct kerr_info *err)
{
    const cJSON *obj = req->object;
    const char *base = NULL, *etcd_path = NULL, *lease_ns = NULL, *prefix;
    int restore = strcmp(req->kind_kind, "EtcdRestore") == 0;
    struct k8s_client *k = NULL;
    struct pclaim_other other;
    struct kerr_info why = { 0 };
    struct pclaim c;
    enum kerr rc;

    prefix_cache_claims(pc, &k, &lease_ns);
    if (!lease_ns || !*lease_ns || (restore && req->dry_run) ||
        !paths_of(req->kind_kind, &base, &etcd_path))
        return KERR_OK;
    prefix = s_or(kjson_get(obj, base), "prefix", "");
    c = (struct pclaim){ s_or(obj, "metadata.namespace", ""),
                         s_or(obj, "metadata.name", ""),
                         key,
                         cprefix,
                         restore ? PCLAIM_KIND_RESTORE : NULL,
                         restore ? kjson_get_str(obj, "spec.target.etcdName")
                                 : kjson_get_str(obj, etcd_path) };
    rc = restore ? pclaim_take(k, lease_ns, &c, &other, &why)
                 : pclaim_restores(k, lease_ns, &c, &other, &why);
    if (rc == KERR_OK && *other.what) {
        struct dest d = { .ns = c.ns };

        snprintf(d.other, sizeof(d.other), "%s", other.what);
        snprintf(d.other_ns, sizeof(d.other_ns), "%s", other.ns);
        snprintf(d.store, sizeof(d.store), "%s", key);
        rc = deny(resp, base, prefix, &d);
    } else if (rc == KERR_OK && *other.refused)
        rc = review_deny(resp, "%s.prefix: %s", base, other.refused);
    else if (rc != KERR_OK) /* fail closed */
        rc = review_errored(resp, 500, "reading the claims of %s: %s", key,
                            why.msg[0] ? why.msg : kerr_str(rc))
                 ? KERR_NOMEM
                 : KERR_OK;
    return rc == KERR_OK ? rc : kerr_set(err, rc, "building the answer");
}

enum kerr bkadm_check(struct store *etcds, struct store *entries, struct store *backups,
                      const struct review_req *req, struct review_resp *resp, struct kerr_info *err)
{
    char key[BSTORE_KEY_MAX] = "", cp[BSTORE_PREFIX_MAX + 1] = "";

    return check(NULL, etcds, entries, backups, req, resp, key, cp, err);
}

enum kerr bkadm_decide(struct prefix_cache *c, const struct review_req *req,
                       struct review_resp *resp, struct kerr_info *err)
{
    struct store *etcds = NULL, *entries = NULL, *backups = NULL;
    char key[BSTORE_KEY_MAX] = "", cp[BSTORE_PREFIX_MAX + 1] = "";
    enum kerr rc;

    if (!prefix_cache_stores(c, &etcds, &entries, &backups)) {
        if (review_errored(resp, 500, "the claim caches have not synced yet"))
            return kerr_set(err, KERR_NOMEM, "building the answer");
        return KERR_OK;
    }
    if (review_allow(resp, "%s %s: destination checked", req->operation, req->kind_kind) !=
        KERR_OK) /* unless refused below */
        return kerr_set(err, KERR_NOMEM, "building the answer");
    rc = check(c, etcds, entries, backups, req, resp, key, cp, err);
    if (rc == KERR_OK && resp->allowed && *key)
        rc = in_flight(c, req, key, cp, resp, err);
    if (rc == KERR_OK)
        prefix_cache_count(c, kjson_get_str(req->object, "metadata.namespace"), resp);
    return rc;
}
