/* bkadm - backup, schedule and restore destinations at admission; see bkadm.h. */
#include "webhook/bkadm.h"

#include <stdio.h>
#include <string.h>

#include "common/bstore.h"
#include "common/kjson.h"
#include "common/rtarget.h"
#include "common/blocal.h"
#include "webhook/bauth.h"
#include "webhook/bklocal.h"
#include "webhook/bkrtgt.h"
#include "webhook/plocal.h"
#include "common/pclaim.h"
#include "webhook/rsource.h"

/* What one destination is and found. */
struct dest {
    const char *ns, *etcd; /* the requester's namespace and the Etcd it backs up */
    char store[BSTORE_KEY_MAX];
    char *prefix; /* canonical; OWNS */
    char other[512], other_ns[256];
    struct k8s_client *k;  /* NULL: a Local store compared at etcd-druid's default hostPath */
    struct store *buckets; /* the cached BackupBuckets (webhook/plocal places entries by them) */
    int routed;            /* bkadm_check_local's */
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

/* 1 when claim c overlaps d's; claim 0: d is read, not claimed (every overlap counts) */
static int overlapping(const struct dest *d, const cJSON *c, int claim)
{
    if (c && d->k && strcmp(d->store, BLOCAL_KEY) == 0 && kjson_get_str(c, "store") &&
        strcmp(kjson_get_str(c, "store"), BLOCAL_KEY) == 0) /* its directory, read now */
        return bklocal_in_the_way(d->k, d->buckets, claim && d->routed ? d->ns : NULL, d->prefix,
                                  c);
    return c && kjson_get_str(c, "prefix") &&
           bstore_overlap(d->store, d->prefix, kjson_get_str(c, "prefix"));
}

/* A Local claim c made the directory its own Secret places (webhook/bklocal); resp denied
 * when that cannot be known. Not Local, or no client: unchanged. */
static enum kerr local_dir(const struct dest *d, struct store *etcds, struct store *backups,
                           const cJSON *obj, const char *base, struct bstore_claim *c,
                           struct review_resp *resp)
{
    char why[BKLOCAL_WHY_MAX];
    enum kerr rc;

    if (!d->k || strcmp(c->key, BLOCAL_KEY) != 0)
        return KERR_OK;
    rc = bklocal_self(d->k, etcds, backups, obj, base, c, why);
    if (rc == KERR_OK && *why)
        rc = review_deny(resp,
                         "%s: a Local store is the directory hostPath + \"/\" + container + "
                         "\"/\" + prefix on the node, the hostPath read from the Secret its copy "
                         "Job mounts, and %s",
                         base, why);
    return rc;
}

/* resp denied when d->ns may not claim the Local directory dir (webhook/plocal); a bucket
 * cache that cannot answer: 500 (fail closed). */
static enum kerr local_part(const struct dest *d, const char *base, const char *dir,
                            struct review_resp *resp, struct kerr_info *why)
{
    char w[PLOCAL_WHY_MAX];
    enum kerr rc = plocal_part(d->k, d->buckets, d->ns, dir, w, why);

    if (rc == KERR_NOMEM)
        return rc;
    if (rc != KERR_OK)
        return review_errored(resp, 500, "checking %s against the BackupBuckets: %s", base,
                              why->msg[0] ? why->msg : kerr_str(rc))
                   ? KERR_NOMEM
                   : KERR_OK;
    return *w ? review_deny(resp, "%s: %s", base, w) : KERR_OK;
}

static enum kerr view_etcd(void *ctx, const char *key, const cJSON *obj)
{
    struct dest *d = ctx;
    const cJSON *c = kjson_get(obj, "claim");
    char w[512];

    (void)key;
    if (!overlapping(d, c, 1))
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
    /* a retained copy's entry holds copies of its Etcd, whose further copies may share it */
    if (!overlapping(d, c, 1) ||
        (d->etcd && kjson_has(c, "retainedCopy") && strcmp(s_or(c, "namespace", ""), d->ns) == 0 &&
         strcmp(s_or(c, "name", ""), d->etcd) == 0))
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
    if (!overlapping(d, c, 1) || (d->etcd && strcmp(s_or(c, "namespace", ""), d->ns) == 0 &&
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

/*
 * An EtcdRestore's spec.source.store read by a namespace the store's owner authorises (webhook/
 * bauth): a source holds back the deletions of every prefix it overlaps while the restore runs,
 * so a namespace that may not claim a prefix may not read it either. Checked on CREATE and on
 * an UPDATE that changes the source store; a source that cannot be keyed is left to the
 * controller (it refuses it). Nor may a restore read a prefix a BackupEntry in phase Deleting
 * overlaps: its deletion Job is emptying it (the copy would take what it has not reached yet).
 * Denies resp when refused.
 */
static enum kerr view_deleting(void *ctx, const char *key, const cJSON *obj)
{
    struct dest *d = ctx;
    const cJSON *c = kjson_get(obj, "claim");
    char w[512];

    (void)key;
    if (!overlapping(d, c, 0) || !cJSON_IsTrue(kjson_get(c, "deleting")))
        return KERR_OK;
    snprintf(w, sizeof(w), "the prefix \"%s\" of BackupEntry %s of Etcd %s/%s",
             kjson_get_str(c, "prefix"), s_or(obj, "metadata.name", ""), s_or(c, "namespace", ""),
             s_or(c, "name", ""));
    return found(d, c, w);
}

static enum kerr check_source(struct prefix_cache *pc, const struct dest *dl, struct store *etcds,
                              struct store *entries, struct store *backups,
                              const struct review_req *req, struct review_resp *resp,
                              struct kerr_info *err)
{
    static const char *const base = "spec.source.store";
    const cJSON *src = kjson_get_obj(req->object, base);
    struct bstore_claim c = { "", NULL };
    struct kerr_info why = { 0 };
    char msg[BAUTH_WHY_MAX];
    struct dest d;
    enum kerr rc;

    memset(&d, 0, sizeof(d));
    d.k = dl->k;
    d.buckets = dl->buckets;
    if (!src ||
        (req->op == REVIEW_OP_UPDATE && same_destination(req->object, req->old_object, base)))
        return KERR_OK;
    rc = bstore_claim_init(&c, kjson_get_str(src, "provider"), kjson_get_str(src, "container"),
                           kjson_get_str(src, "endpointOverride"), s_or(src, "prefix", ""), &why);
    if (rc == KERR_OK && d.k && strcmp(c.key, BLOCAL_KEY) == 0) {
        /* a Local source: its directory, and a namespace that owns it (webhook/bklocal) */
        char lwhy[BKLOCAL_WHY_MAX];
        struct k8s_client *lk = NULL;
        const char *lease_ns = NULL;

        if (pc)
            prefix_cache_claims(pc, &lk, &lease_ns);
        if ((rc = local_dir(&d, etcds, backups, req->object, base, &c, resp)) == KERR_OK &&
            resp->allowed &&
            (rc = bklocal_source_owned(d.k, d.buckets, etcds, entries, backups, lease_ns,
                                       s_or(req->object, "metadata.namespace", ""), c.prefix, lwhy,
                                       &why)) == KERR_OK &&
            *lwhy)
            rc = review_deny(resp, "%s", lwhy);
        else if (rc != KERR_OK && rc != KERR_NOMEM) /* fail closed */
            rc = review_errored(resp, 500, "checking who owns %s: %s", base,
                                why.msg[0] ? why.msg : kerr_str(rc));
        if (rc != KERR_OK || !resp->allowed) {
            bstore_claim_release(&c);
            return rc == KERR_OK ? rc : kerr_set(err, rc, "building the answer");
        }
    }
    if (rc == KERR_OK && pc)
        rc = prefix_cache_authorise(pc, s_or(req->object, "metadata.namespace", ""), c.key,
                                    c.prefix, resp, err);
    else if (rc == KERR_INVAL || rc == KERR_TOOBIG)
        rc = KERR_OK;
    else
        rc = kerr_set(err, rc, "keying %s", base);
    if (rc == KERR_OK && !resp->allowed && resp->code == 403 && resp->message) {
        snprintf(msg, sizeof(msg), "%s", resp->message);
        if (review_deny(resp,
                        "%s: a restore's source holds back the deletion of what it reads, so "
                        "only a namespace that may claim it may read it: %s",
                        base, msg) != KERR_OK)
            rc = kerr_set(err, KERR_NOMEM, "building the answer");
    }
    if (rc == KERR_OK && resp->allowed && *c.key && c.prefix && entries) {
        d.ns = s_or(req->object, "metadata.namespace", "");
        snprintf(d.store, sizeof(d.store), "%s", c.key);
        d.prefix = c.prefix;
        rc = store_index_view(entries, PREFIX_INDEX_STORE, d.store, view_deleting, &d, &why);
        if (*d.other)
            rc = review_deny(resp,
                             "%s.prefix \"%s\" overlaps %s, which is being deleted, in the "
                             "same store (%s): a restore would read whatever its deletion Job has "
                             "not reached yet; restore from it only once the deletion is stopped "
                             "(kubectl delete backupentry) or choose another source",
                             base, s_or(src, "prefix", ""),
                             strcmp(d.ns, d.other_ns) == 0 ? d.other : PREFIX_OTHER_NAMESPACE,
                             d.store);
        else if (rc != KERR_OK) /* fail closed */
            rc = review_errored(resp, 500, "checking %s against the caches: %s", base,
                                why.msg[0] ? why.msg : kerr_str(rc))
                     ? KERR_NOMEM
                     : KERR_OK;
        if (rc != KERR_OK)
            rc = kerr_set(err, rc, "building the answer");
    }
    bstore_claim_release(&c);
    return rc;
}

/* What check allowed: a new destination claim's store key ("" when none) and canonical prefix,
 * and an EtcdRestore's target provider and endpoint as resolved (recorded with its claim). */
struct allowed {
    char key[BSTORE_KEY_MAX];
    char cp[BSTORE_PREFIX_MAX + 1];
    char provider[64];
    char endpoint[BSTORE_KEY_MAX];
    int has_endpoint;
};

/* bkadm_check; what it allowed into *a. */
static enum kerr check(struct prefix_cache *pc, struct k8s_client *k, struct store *buckets,
                       int routed, struct store *etcds, struct store *entries,
                       struct store *backups, const struct review_req *req,
                       struct review_resp *resp, struct allowed *a, struct kerr_info *err)
{
    const cJSON *obj = req->object;
    const char *base, *etcd_path, *provider, *container, *endpoint, *prefix;
    struct bkrtgt_src rs = { 0 };
    struct rtarget rt = { NULL, NULL };
    struct dest d;
    struct bstore_claim c = { "", NULL };
    struct kerr_info why = { 0 };
    enum kerr rc = KERR_OK;

    memset(&d, 0, sizeof(d));
    d.k = k;
    d.buckets = buckets;
    d.routed = routed;
    if (req->op == REVIEW_OP_UPDATE && obj && req->old_object && req->kind_kind &&
        strcmp(req->kind_kind, "EtcdRestore") == 0 &&
        !cJSON_Compare(kjson_get(obj, "spec"), kjson_get(req->old_object, "spec"), 1))
        return review_deny(resp,
                           "EtcdRestore %s/%s: spec is immutable: its copy may already be "
                           "writing, or have written, the target it was admitted with; delete it "
                           "and create a new one",
                           s_or(obj, "metadata.namespace", ""), s_or(obj, "metadata.name", ""));
    if ((req->op == REVIEW_OP_CREATE || req->op == REVIEW_OP_UPDATE) && obj && req->kind_kind &&
        strcmp(req->kind_kind, "EtcdRestore") == 0 &&
        ((rc = check_source(pc, &d, etcds, entries, backups, req, resp, err)) != KERR_OK ||
         !resp->allowed))
        return rc;
    if ((req->op != REVIEW_OP_CREATE && req->op != REVIEW_OP_UPDATE) || !obj ||
        !paths_of(req->kind_kind ? req->kind_kind : "", &base, &etcd_path) ||
        (req->op == REVIEW_OP_UPDATE &&
         (etcd_path ? same_destination(obj, req->old_object, base)
                    : bkrtgt_same(etcds, backups, obj, req->old_object))))
        return KERR_OK;
    provider = kjson_get_str(kjson_get(obj, base), "provider");
    container = kjson_get_str(kjson_get(obj, base), "container");
    endpoint = kjson_get_str(kjson_get(obj, base), "endpointOverride");
    prefix = s_or(kjson_get(obj, base), "prefix", "");
    d.ns = s_or(obj, "metadata.namespace", "");
    d.etcd = etcd_path ? kjson_get_str(obj, etcd_path) : NULL;
    if (!etcd_path && !bkrtgt_resolve(etcds, backups, obj, &rs, &rt)) {
        /* fail closed: a target whose store cannot be told claims nothing while it copies */
        rc = review_deny(resp,
                         "%s: no provider, and none to take: not in spec.etcdTemplate's "
                         "backup.store, nor (without a template) in the store of the source Etcd "
                         "%s, which is not known here, nor in the source store; set %s.provider "
                         "(the store the copy writes to is claimed from admission)",
                         base,
                         s_or(obj, "spec.source.etcdName",
                              kjson_get_str(obj, "spec.source.backupName")
                                  ? "(of the EtcdBackup in spec.source.backupName)"
                                  : "(none)"),
                         base);
        goto out;
    }
    if (!etcd_path) {
        provider = rt.provider;
        endpoint = rt.endpoint;
        snprintf(a->provider, sizeof(a->provider), "%s", provider);
        snprintf(a->endpoint, sizeof(a->endpoint), "%s", endpoint ? endpoint : "");
        a->has_endpoint = endpoint != NULL;
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
    /* a Local store: the directory its copy Job mounts, its Secret read now, in the namespace's
     * part of a partitioned Local bucket (webhook/plocal) */
    if ((rc = local_dir(&d, etcds, backups, obj, base, &c, resp)) != KERR_OK || !resp->allowed)
        goto out;
    if (d.k && strcmp(c.key, BLOCAL_KEY) == 0 &&
        (rc = local_part(&d, base, c.prefix, resp, &why)) != KERR_OK)
        goto out;
    if (!resp->allowed)
        goto out;
    /* the bucket owner's authority (webhook/bauth), before any other claim is read */
    if (pc && ((rc = prefix_cache_authorise(pc, d.ns, c.key, c.prefix, resp, err)) != KERR_OK ||
               !resp->allowed))
        goto out;
    snprintf(d.store, sizeof(d.store), "%s", c.key);
    snprintf(a->key, sizeof(a->key), "%s", c.key);
    snprintf(a->cp, sizeof(a->cp), "%s", c.prefix);
    d.prefix = c.prefix;
    if (etcds)
        rc = store_index_view(etcds, PREFIX_INDEX_STORE, d.store, view_etcd, &d, &why);
    if (entries && rc == KERR_OK && !*d.other)
        rc = store_index_view(entries, PREFIX_INDEX_STORE, d.store, view_entry, &d, &why);
    if (backups && rc == KERR_OK && !*d.other)
        rc = store_index_view(backups, PREFIX_INDEX_STORE, d.store, view_backup, &d, &why);
    if (*d.other) {
        a->key[0] = '\0';
        rc = deny(resp, base, prefix, &d);
    } else if (rc != KERR_OK) /* fail closed */
        rc = review_errored(resp, 500, "checking %s against the caches: %s", base,
                            why.msg[0] ? why.msg : kerr_str(rc))
                 ? KERR_NOMEM
                 : KERR_OK;
out:
    bkrtgt_release(&rs);
    bstore_claim_release(&c);
    return rc == KERR_OK ? rc : kerr_set(err, rc, "building the answer");
}

static const struct k8s_resource res_restore = { "etcd-warden.io", "v1alpha1", "etcdrestores", 1 };

/*
 * The claim Lease of store key (common/pclaim): an EtcdRestore's target recorded there (it
 * claims from admission, while its copy is written), an EtcdBackup's or schedule's destination
 * refused when it overlaps an in-flight restore's target. Refused (500) when unreadable.
 */
static enum kerr in_flight(struct prefix_cache *pc, const struct review_req *req,
                           const struct allowed *a, struct review_resp *resp, struct kerr_info *err)
{
    const char *key = a->key, *cprefix = a->cp;
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
                                 : kjson_get_str(obj, etcd_path),
                         restore ? a->provider : NULL,
                         restore && a->has_endpoint ? a->endpoint : NULL,
                         restore ? kjson_get_str(obj, "metadata.uid") : NULL };
    /* a CREATE of a stored restore's name is answered AlreadyExists: its record would replace
     * the stored restore's, whose target is then unclaimed while its copy writes; refused
     * first, on a fresh read (fail closed) */
    if (restore && req->op == REVIEW_OP_CREATE) {
        cJSON *cur = NULL;

        rc = k8s_get(k, &res_restore, c.ns, c.name, NULL, &cur, &why);
        cJSON_Delete(cur);
        if (rc == KERR_OK)
            rc = review_deny(resp,
                             "EtcdRestore %s/%s exists: a restore's spec is immutable; delete it "
                             "first to restore again under this name",
                             c.ns, c.name)
                     ? KERR_NOMEM
                     : KERR_OK;
        else if (rc != KERR_NOTFOUND)
            rc = review_errored(resp, 500, "reading EtcdRestore %s/%s: %s", c.ns, c.name,
                                why.msg[0] ? why.msg : kerr_str(rc))
                     ? KERR_NOMEM
                     : KERR_OK;
        if (rc != KERR_NOTFOUND)
            return rc == KERR_OK ? rc : kerr_set(err, rc, "building the answer");
        kerr_clear(&why);
    }
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

/*
 * An EtcdRestore's source recorded in the claim Lease of its store (common/pclaim,
 * PCLAIM_KIND_SOURCE) once it is admitted: spec.source.store, or the written copy of the
 * EtcdBackup spec.source.backupName names (webhook/rsource.h). Until the API server stores the
 * restore (another validating webhook may still hold the request) only that record tells a
 * deletion of the prefix that it is about to be read (controller/entries waits for it). A read,
 * never a claim: it refuses nothing but a namespace over its share of the Lease. Refused (500)
 * when the Lease (or the EtcdBackup) cannot be read or written; a source that cannot be keyed
 * was left to the controller (check_source), as a backup with no written copy (nothing to read).
 */
static enum kerr record_source(struct prefix_cache *pc, const struct review_req *req,
                               struct review_resp *resp, struct kerr_info *err)
{
    static const char *const base = "spec.source.store";
    const cJSON *obj = req->object, *src = kjson_get_obj(obj, base);
    const char *bk = kjson_get_str(obj, "spec.source.backupName");
    struct store *etcds = NULL, *entries = NULL, *backups = NULL;
    struct bstore_claim c = { "", NULL };
    struct rsource from = { "", "" };
    struct k8s_client *k = NULL;
    const char *lease_ns = NULL;
    struct pclaim_other other;
    struct kerr_info why = { 0 };
    enum kerr rc = KERR_OK;

    prefix_cache_claims(pc, &k, &lease_ns);
    if ((!src && !bk) || !lease_ns || !*lease_ns || req->dry_run ||
        strcmp(req->kind_kind, "EtcdRestore") != 0 ||
        (req->op == REVIEW_OP_UPDATE && same_destination(obj, req->old_object, base) &&
         strcmp(s_or(obj, "spec.source.backupName", ""),
                s_or(req->old_object, "spec.source.backupName", "")) == 0))
        goto out;
    if (src &&
        bstore_claim_init(&c, kjson_get_str(src, "provider"), kjson_get_str(src, "container"),
                          kjson_get_str(src, "endpointOverride"), s_or(src, "prefix", ""),
                          NULL) == KERR_OK)
        rsource_set(&from, c.key, c.prefix);
    else if (!src && prefix_cache_stores(pc, &etcds, &entries, &backups))
        rc = rsource_of_backup(backups, k, s_or(obj, "metadata.namespace", ""), bk, &from, &why);
    else if (!src) /* no cache: the API server */
        rc = rsource_of_backup(NULL, k, s_or(obj, "metadata.namespace", ""), bk, &from, &why);
    if (rc == KERR_OK && *from.key)
        rc = pclaim_take(k, lease_ns,
                         &(struct pclaim){ s_or(obj, "metadata.namespace", ""),
                                           s_or(obj, "metadata.name", ""), from.key, from.prefix,
                                           PCLAIM_KIND_SOURCE, NULL, NULL, NULL,
                                           kjson_get_str(obj, "metadata.uid") },
                         &other, &why);
    if (rc == KERR_OK && *from.key && *other.refused)
        rc =
            review_deny(resp, "%s.prefix: %s", src ? base : "spec.source.backupName", other.refused)
                ? KERR_NOMEM
                : KERR_OK;
    else if (rc != KERR_OK) /* fail closed */
        rc = review_errored(resp, 500,
                            "recording the source of the restore (%s%s) in the claims: %s",
                            *from.key || !bk ? "store " : "EtcdBackup ",
                            *from.key ? from.key
                            : bk      ? bk
                                      : "?",
                            why.msg[0] ? why.msg : kerr_str(rc))
                 ? KERR_NOMEM
                 : KERR_OK;
out:
    bstore_claim_release(&c);
    return rc == KERR_OK ? rc : kerr_set(err, rc, "building the answer");
}

enum kerr bkadm_check(struct store *etcds, struct store *entries, struct store *backups,
                      const struct review_req *req, struct review_resp *resp, struct kerr_info *err)
{
    return bkadm_check_local(etcds, entries, backups, NULL, NULL, 0, req, resp, err);
}

enum kerr bkadm_check_local(struct store *etcds, struct store *entries, struct store *backups,
                            struct k8s_client *k, struct store *buckets, int routed,
                            const struct review_req *req, struct review_resp *resp,
                            struct kerr_info *err)
{
    struct allowed a = { 0 };

    return check(NULL, k, buckets, routed, etcds, entries, backups, req, resp, &a, err);
}

enum kerr bkadm_decide(struct prefix_cache *c, const struct review_req *req,
                       struct review_resp *resp, struct kerr_info *err)
{
    struct store *etcds = NULL, *entries = NULL, *backups = NULL;
    struct k8s_client *k = NULL;
    const char *lease_ns = NULL;
    struct allowed a = { 0 };
    enum kerr rc;

    if (!prefix_cache_stores(c, &etcds, &entries, &backups)) {
        if (review_errored(resp, 500, "the claim caches have not synced yet"))
            return kerr_set(err, KERR_NOMEM, "building the answer");
        return KERR_OK;
    }
    if (review_allow(resp, "%s %s: destination checked", req->operation, req->kind_kind) !=
        KERR_OK) /* unless refused below */
        return kerr_set(err, KERR_NOMEM, "building the answer");
    prefix_cache_claims(c, &k, &lease_ns);
    rc = check(c, k, prefix_cache_buckets(c), prefix_cache_routed(c), etcds, entries, backups, req,
               resp, &a, err);
    if (rc == KERR_OK && resp->allowed && *a.key)
        rc = in_flight(c, req, &a, resp, err);
    if (rc == KERR_OK && resp->allowed)
        rc = record_source(c, req, resp, err);
    if (rc == KERR_OK)
        prefix_cache_count(c, kjson_get_str(req->object, "metadata.namespace"), resp);
    return rc;
}
