/* prefix_cache - the watch-fed caches of the prefix rule; see prefix_cache.h. */
#include "webhook/prefix_cache.h"

#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "webhook/bauth.h"
#include "webhook/pgone.h"
#include "webhook/pmove.h"
#include "webhook/prefix.h"

static const struct k8s_resource res_etcd = { "druid.gardener.cloud", "v1alpha1", "etcds", 1 };
static const struct k8s_resource res_entry = { "etcd-warden.io", "v1alpha1", "backupentries", 0 };
static const struct k8s_resource res_backup = { "etcd-warden.io", "v1alpha1", "etcdbackups", 1 };
static const struct k8s_resource res_bucket = { "etcd-warden.io", "v1alpha1", "backupbuckets", 0 };
static const enum prefix_kind kind_etcd = PREFIX_ETCD, kind_entry = PREFIX_ENTRY,
                              kind_backup = PREFIX_BACKUP;

struct prefix_cache {
    struct k8s_client *client;             /* BORROWED */
    char *ns;                              /* OWNS or NULL */
    char *claims_ns;                       /* OWNS or NULL: no claim lock */
    struct inf *etcds, *entries, *backups; /* backups NULL without opts.backups */
    struct inf *buckets;                   /* BackupBuckets, whole (webhook/bauth) */
    struct metrics_vec *cross;             /* BORROWED or NULL */
    int routed;                            /* opts.routed */
};

static enum kerr new_informer(struct prefix_cache *c, const struct k8s_resource *res,
                              const enum prefix_kind *k, struct inf **out, struct kerr_info *err)
{
    struct inf_opts o;
    enum kerr rc;

    memset(&o, 0, sizeof(o));
    o.res = res;
    o.ns = res->namespaced ? c->ns : NULL;
    o.name = *k == PREFIX_ETCD    ? "Etcd (prefixes)"
             : *k == PREFIX_ENTRY ? "BackupEntry"
                                  : "EtcdBackup";
    o.project = prefix_project;
    o.project_ctx = (void *)k;
    if ((rc = inf_new(c->client, &o, out, err)) != KERR_OK)
        return rc;
    return store_add_index(inf_store(*out), PREFIX_INDEX_STORE, prefix_index_store, NULL, err);
}

enum kerr prefix_cache_new(const struct prefix_cache_opts *o, struct prefix_cache **out,
                           struct kerr_info *err)
{
    struct prefix_cache *c = calloc(1, sizeof(*c));
    enum kerr rc = KERR_OK;

    *out = NULL;
    if (!c)
        return kerr_set(err, KERR_NOMEM, "allocating the prefix caches");
    c->client = o->client;
    c->cross = o->cross;
    c->routed = o->routed;
    if (o->ns && *o->ns && !(c->ns = strdup(o->ns)))
        rc = kerr_set(err, KERR_NOMEM, "allocating the prefix caches");
    if (o->claims_ns && *o->claims_ns && !(c->claims_ns = strdup(o->claims_ns)))
        rc = kerr_set(err, KERR_NOMEM, "allocating the prefix caches");
    if (rc == KERR_OK)
        rc = new_informer(c, &res_etcd, &kind_etcd, &c->etcds, err);
    if (rc == KERR_OK)
        rc = new_informer(c, &res_entry, &kind_entry, &c->entries, err);
    if (rc == KERR_OK && o->backups)
        rc = new_informer(c, &res_backup, &kind_backup, &c->backups, err);
    if (rc == KERR_OK)
        rc = inf_new(c->client, &(struct inf_opts){ .res = &res_bucket, .name = "BackupBucket" },
                     &c->buckets, err);
    if (rc != KERR_OK) {
        prefix_cache_free(c);
        return rc;
    }
    *out = c;
    return KERR_OK;
}

enum kerr prefix_cache_start(struct prefix_cache *c, struct kerr_info *err)
{
    enum kerr rc = inf_start(c->etcds, err);

    if (rc == KERR_OK)
        rc = inf_start(c->entries, err);
    if (rc == KERR_OK)
        rc = inf_start(c->buckets, err);
    return rc == KERR_OK && c->backups ? inf_start(c->backups, err) : rc;
}

int prefix_cache_synced(struct prefix_cache *c)
{
    return inf_has_synced(c->etcds) && inf_has_synced(c->entries) && inf_has_synced(c->buckets) &&
           (!c->backups || inf_has_synced(c->backups));
}

enum kerr prefix_cache_authorise(struct prefix_cache *c, const char *ns, const char *key,
                                 const char *prefix, struct review_resp *resp,
                                 struct kerr_info *err)
{
    char why[BAUTH_WHY_MAX];
    struct kerr_info e = { 0 };
    enum kerr rc =
        bauth_check(inf_store(c->buckets), c->client, ns, key, prefix, why, sizeof(why), &e);

    if (rc == KERR_OK && !*why)
        return KERR_OK;
    if (rc == KERR_OK)
        rc = review_deny(resp, "%s", why);
    else /* fail closed: the owner's authority could not be read */
        rc = review_errored(resp, 500, "reading the BackupBuckets' namespaceSelector: %s",
                            e.msg[0] ? e.msg : kerr_str(rc))
                 ? KERR_NOMEM
                 : KERR_OK;
    return rc == KERR_OK ? rc : kerr_set(err, rc, "building the answer");
}

/* The bucket owner's authority over a new claim of req's Etcd (webhook/bauth). */
static enum kerr authorise(struct prefix_cache *c, const struct review_req *req,
                           struct review_resp *resp, struct kerr_info *err)
{
    cJSON *self = cJSON_CreateObject(), *old = cJSON_CreateObject();
    enum kerr rc = self && old ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);

    if (rc == KERR_OK && (req->op == REVIEW_OP_CREATE || req->op == REVIEW_OP_UPDATE) &&
        prefix_claim_of(PREFIX_ETCD, req->object, self) && kjson_get_str(self, "prefix") &&
        !(req->op == REVIEW_OP_UPDATE && req->old_object &&
          prefix_claim_of(PREFIX_ETCD, req->old_object, old) && kjson_get_str(old, "prefix") &&
          strcmp(kjson_get_str(old, "store"), kjson_get_str(self, "store")) == 0 &&
          strcmp(kjson_get_str(old, "prefix"), kjson_get_str(self, "prefix")) == 0))
        rc = prefix_cache_authorise(c, kjson_get_str(self, "namespace"),
                                    kjson_get_str(self, "store"), kjson_get_str(self, "prefix"),
                                    resp, err);
    cJSON_Delete(self);
    cJSON_Delete(old);
    return rc;
}

enum kerr prefix_cache_decide(struct prefix_cache *c, const struct review_req *req,
                              struct review_resp *resp, struct kerr_info *err)
{
    struct store *etcds, *entries, *backups;
    struct k8s_client *client;
    const char *claims_ns;
    enum kerr rc;

    if (!prefix_cache_stores(c, &etcds, &entries, &backups)) {
        if (review_errored(resp, 500, "the Etcd and BackupEntry caches have not synced yet"))
            return kerr_set(err, KERR_NOMEM, "building the answer");
        return KERR_OK;
    }
    prefix_cache_claims(c, &client, &claims_ns);
    /* the owner's authority first: it reads no other claim, so a claim it refuses is refused
     * whatever the others claim (spec.prefixScope Namespace: probes learn nothing) */
    rc = authorise(c, req, resp, err);
    if (rc == KERR_OK && resp->allowed)
        rc = prefix_check_local(etcds, entries, backups, client, prefix_cache_buckets(c), c->routed,
                                req, resp, err);
    if (rc == KERR_OK && resp->allowed && claims_ns && !req->dry_run)
        rc = prefix_lock(client, claims_ns, req, resp, err);
    if (rc == KERR_OK) /* a move: the earlier prefix keeps its entry */
        rc = pmove_keep(client, entries, prefix_cache_buckets(c), req, resp, err);
    if (rc == KERR_OK && resp->allowed) /* a deletion: the entry records when */
        rc = pgone_record(client, entries, req, resp, err);
    if (rc == KERR_OK)
        prefix_cache_count(c, kjson_get_str(req->object, "metadata.namespace"), resp);
    return rc;
}

void prefix_cache_count(struct prefix_cache *c, const char *ns, const struct review_resp *resp)
{
    const char *v[2] = { ns ? ns : "", NULL };

    if (c->cross && !resp->allowed && resp->message &&
        strstr(resp->message, PREFIX_OTHER_NAMESPACE))
        (void)metrics_vec_add(c->cross, v, 1); /* past its children bound: not counted */
}

int prefix_cache_stores(struct prefix_cache *c, struct store **etcds, struct store **entries,
                        struct store **backups)
{
    *etcds = *entries = *backups = NULL;
    if (!c || !prefix_cache_synced(c))
        return 0;
    *etcds = inf_store(c->etcds);
    *entries = inf_store(c->entries);
    *backups = c->backups ? inf_store(c->backups) : NULL;
    return 1;
}

struct store *prefix_cache_buckets(struct prefix_cache *c)
{
    return c && c->buckets ? inf_store(c->buckets) : NULL;
}

void prefix_cache_report_rv(struct prefix_cache *c, inf_rv_fn fn, void *ctx)
{
    inf_report_rv(c->etcds, fn, ctx);
    inf_report_rv(c->entries, fn, ctx);
    inf_report_rv(c->backups, fn, ctx);
    inf_report_rv(c->buckets, fn, ctx);
}

void prefix_cache_claims(struct prefix_cache *c, struct k8s_client **client, const char **ns)
{
    *client = c->client;
    *ns = c->claims_ns;
}

int prefix_cache_routed(struct prefix_cache *c)
{
    return c->routed;
}

void prefix_cache_free(struct prefix_cache *c)
{
    if (!c)
        return;
    inf_free(c->etcds);
    inf_free(c->entries);
    inf_free(c->backups);
    inf_free(c->buckets);
    free(c->ns);
    free(c->claims_ns);
    free(c);
}
