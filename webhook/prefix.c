/* prefix - one prefix, one cluster; see prefix.h. */
#include "webhook/prefix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/blocal.h"
#include "common/bstore.h"
#include "common/kjson.h"
#include "common/log.h"
#include "webhook/bauth.h"
#include "common/pclaim.h"
#include "common/pborn.h"
#include "webhook/plocal.h"
#include "webhook/pmove.h"

/* A Local claim's claim.local (webhook/plocal): what its directory is resolved from. */
static int add_local(enum prefix_kind k, const cJSON *obj, const char *base, cJSON *out)
{
    const cJSON *st = kjson_get(obj, base);
    const char *secret = k == PREFIX_ETCD ? kjson_get_str(st, "secretRef.name")
                         : k == PREFIX_BACKUP
                             ? kjson_get_str(obj, "spec.destination.secretRef.name")
                             : NULL;
    const char *prefix =
        k == PREFIX_ENTRY ? kjson_get_str(obj, "spec.prefix") : kjson_get_str(st, "prefix");
    cJSON *l;

    if (!bstore_provider_kind(kjson_get_str(st, "provider")) ||
        strcmp(bstore_provider_kind(kjson_get_str(st, "provider")), "Local") != 0)
        return 1;
    l = cJSON_AddObjectToObject(out, "local");
    /* a copy's directory as its Job mounted it, recorded then (warden-controller's) */
    if (l && k == PREFIX_BACKUP && kjson_get_str(obj, "status.destination.hostPath") &&
        !cJSON_AddStringToObject(l, "hostPath", kjson_get_str(obj, "status.destination.hostPath")))
        return 0;
    /* an entry's directory as etcd-warden recorded it (a retained copy's, a moved Etcd's) */
    if (l && k == PREFIX_ENTRY &&
        kjson_get_str(obj, "metadata.annotations[" BLOCAL_HOSTPATH_ANNOTATION "]") &&
        !cJSON_AddStringToObject(
            l, "hostPath",
            kjson_get_str(obj, "metadata.annotations[" BLOCAL_HOSTPATH_ANNOTATION "]")))
        return 0;
    return l && (!secret || cJSON_AddStringToObject(l, "secret", secret)) &&
           (k != PREFIX_ENTRY || cJSON_AddStringToObject(l, "bucket",
                                                         kjson_get_str(obj, "spec.bucketName")
                                                             ? kjson_get_str(obj, "spec.bucketName")
                                                             : "")) &&
           cJSON_AddStringToObject(l, "container", kjson_get_str(st, "container")) &&
           cJSON_AddStringToObject(l, "prefix", prefix ? prefix : "");
}

/*
 * The claim {namespace, name, store, prefix, deletedAt, deleting} of obj into out (store
 * and prefix canonical, common/bstore; deleting: an entry whose backups are being deleted);
 * 0 when it has none (no store at all). A store whose claim cannot be computed (an unknown
 * provider, no container, a prefix leaving its container, too long) gets {namespace, name,
 * invalid: reason, container (when it has one)}: it is refused when it is the candidate, and
 * overlaps everything in its container when it is another's (bstore_unkeyed_overlap).
 */
int prefix_claim_of(enum prefix_kind k, const cJSON *obj, cJSON *out)
{
    const char *ns, *name, *prefix, *deleted = NULL, *base, *phase = NULL, *provider, *container;
    const char *etcd = NULL;
    struct bstore_claim c = { "", NULL };
    struct kerr_info err = { 0 };
    enum kerr rc;
    int ok;

    base = k == PREFIX_ETCD ? "spec.backup.store" : "spec.store";
    if (k == PREFIX_ETCD) {
        ns = kjson_get_str(obj, "metadata.namespace");
        name = kjson_get_str(obj, "metadata.name");
        prefix = kjson_get_str(obj, "spec.backup.store.prefix");
    } else if (k == PREFIX_BACKUP) { /* the copies, once written: never before */
        base = "status.destination";
        ns = kjson_get_str(obj, "metadata.namespace");
        name = kjson_get_str(obj, "metadata.name");
        prefix = kjson_get_str(kjson_get(obj, base), "prefix");
        etcd = kjson_get_str(obj, "spec.etcdName");
    } else {
        ns = kjson_get_str(obj, "spec.etcd.namespace");
        name = kjson_get_str(obj, "spec.etcd.name");
        prefix = kjson_get_str(obj, "spec.prefix");
        deleted = kjson_get_str(obj, "spec.etcdDeletedAt");
        phase = kjson_get_str(obj, "status.phase");
    }
    if (!ns || !name || !cJSON_IsObject(kjson_get(obj, base)))
        return 0;
    provider = kjson_get_str(kjson_get(obj, base), "provider");
    container = kjson_get_str(kjson_get(obj, base), "container");
    if (k == PREFIX_ETCD && bstore_no_store(provider))
        return 0; /* no provider: etcd-druid runs the sidecar without a store, nothing written */
    rc = bstore_claim_init(&c, provider, container,
                           kjson_get_str(kjson_get(obj, base), "endpointOverride"), prefix, &err);
    if (rc != KERR_OK && rc != KERR_NOMEM) /* fail closed: refused, or in everyone's way */
        return cJSON_AddStringToObject(out, "namespace", ns) &&
               cJSON_AddStringToObject(out, "name", name) &&
               (!container || cJSON_AddStringToObject(out, "container", container)) &&
               cJSON_AddStringToObject(out, "store", PREFIX_STORE_UNKEYED) &&
               cJSON_AddStringToObject(out, "invalid", err.msg[0] ? err.msg : kerr_str(rc)) &&
               cJSON_AddStringToObject(out, "field",
                                       !bstore_provider_kind(provider) ? "provider"
                                       : !container || !*container     ? "container"
                                                                       : "prefix");
    ok = rc == KERR_OK && add_local(k, obj, base, out) &&
         cJSON_AddStringToObject(out, "namespace", ns) &&
         cJSON_AddStringToObject(out, "name", name) &&
         cJSON_AddStringToObject(out, "store", c.key) &&
         cJSON_AddStringToObject(out, "prefix", c.prefix) &&
         (!deleted || cJSON_AddStringToObject(out, "deletedAt", deleted)) &&
         (k != PREFIX_ENTRY || !kjson_get_str(obj, "metadata.creationTimestamp") ||
          cJSON_AddStringToObject(out, "createdAt",
                                  kjson_get_str(obj, "metadata.creationTimestamp"))) &&
         (!etcd || cJSON_AddStringToObject(out, "etcd", etcd)) &&
         (k != PREFIX_ENTRY ||
          !kjson_get_str(obj, "metadata.annotations[" BSTORE_RETAINED_COPY_ANNOTATION "]") ||
          cJSON_AddTrueToObject(out, "retainedCopy")) &&
         (k != PREFIX_ENTRY ||
          (kjson_get_str(obj, "spec.bucketName") && *kjson_get_str(obj, "spec.bucketName")) ||
          cJSON_AddTrueToObject(out, "bucketless")) &&
         (!phase || strcmp(phase, BSTORE_ENTRY_DELETING) != 0 ||
          cJSON_AddTrueToObject(out, "deleting"));
    bstore_claim_release(&c);
    return ok;
}

/* 1 when the claim c of another object is in the way of the candidate's (p->self). */
static int in_the_way(const cJSON *self, const cJSON *c)
{
    if (!c || !kjson_get_str(c, "store"))
        return 0;
    if (kjson_has(c, "invalid"))
        return bstore_unkeyed_overlap(kjson_get_str(self, "store"), kjson_get_str(c, "container"));
    return bstore_overlap(kjson_get_str(self, "store"), kjson_get_str(self, "prefix"),
                          kjson_get_str(c, "prefix"));
}

/* c's prefix for a message: its own, or why it has none. */
static const char *shown_prefix(const cJSON *c)
{
    return kjson_has(c, "invalid") ? "(none: its store is not understood)"
                                   : kjson_get_str(c, "prefix");
}

enum kerr prefix_project(void *ctx, const cJSON *obj, cJSON **out)
{
    enum prefix_kind k = *(const enum prefix_kind *)ctx;
    const char *ns = kjson_get_str(obj, "metadata.namespace");
    const char *name = kjson_get_str(obj, "metadata.name");
    cJSON *o = cJSON_CreateObject(), *md = cJSON_AddObjectToObject(o, "metadata"), *claim;

    *out = NULL;
    if (!md || (name && !cJSON_AddStringToObject(md, "name", name)) ||
        (ns && !cJSON_AddStringToObject(md, "namespace", ns))) {
        cJSON_Delete(o);
        return KERR_NOMEM;
    }
    /* an Etcd's backup Secret: a restore from it without a Secret of its own copies with it */
    if (k == PREFIX_ETCD && kjson_get_str(obj, "spec.backup.store.secretRef.name") &&
        !cJSON_AddStringToObject(o, "secret",
                                 kjson_get_str(obj, "spec.backup.store.secretRef.name"))) {
        cJSON_Delete(o);
        return KERR_NOMEM;
    }
    /* an EtcdBackup's Etcd: the store an EtcdRestore from it writes to when it names none */
    if (k == PREFIX_BACKUP && kjson_get_str(obj, "spec.etcdName") &&
        !cJSON_AddStringToObject(o, "etcdName", kjson_get_str(obj, "spec.etcdName"))) {
        cJSON_Delete(o);
        return KERR_NOMEM;
    }
    /* its destination's store: the source store of an EtcdRestore from it (common/rtarget) */
    if (k == PREFIX_BACKUP && kjson_get_obj(obj, "spec.destination")) {
        const cJSON *dst = kjson_get_obj(obj, "spec.destination");
        cJSON *d = cJSON_AddObjectToObject(o, "destination");

        if (!d ||
            (kjson_get_str(dst, "provider") &&
             !cJSON_AddStringToObject(d, "provider", kjson_get_str(dst, "provider"))) ||
            (kjson_get_str(dst, "endpointOverride") &&
             !cJSON_AddStringToObject(d, "endpointOverride",
                                      kjson_get_str(dst, "endpointOverride"))) ||
            (kjson_get_str(dst, "secretRef.name") &&
             !cJSON_AddStringToObject(d, "secret", kjson_get_str(dst, "secretRef.name")))) {
            cJSON_Delete(o);
            return KERR_NOMEM;
        }
    }
    claim = cJSON_CreateObject();
    if (claim && prefix_claim_of(k, obj, claim))
        cJSON_AddItemToObject(o, "claim", claim);
    else
        cJSON_Delete(claim);
    *out = o;
    return KERR_OK;
}

enum kerr prefix_index_store(void *ctx, const cJSON *obj, struct strlist *values)
{
    const char *s = kjson_get_str(obj, "claim.store");

    (void)ctx;
    return s ? strlist_add(values, s) : KERR_OK;
}

/* What one check looks for and found. */
struct probe {
    const cJSON *self;     /* the candidate's claim */
    char other[512];       /* the conflicting owner, described; "" when none */
    char other_ns[256];    /* its namespace */
    struct k8s_client *k;  /* NULL: Local claims compared with etcd-druid's default hostPath */
    struct store *buckets; /* the cached BackupBuckets, or NULL */
    int routed;            /* prefix_check_local's */
    cJSON *own;            /* OWNS: {entry, namespace, name, createdAt} of the candidate's own
                            * entry it reattaches to, copied out of the cache */
};

/* 1 when the claim c of another object is in the way of the candidate's, its Local directory
 * read now (webhook/plocal: one not known is in the way, one no StatefulSet may mount above the
 * candidate's part of a partitioned bucket is not). */
static int in_the_way_of(const struct probe *p, const cJSON *c)
{
    if (!p->k || !c || kjson_has(c, "invalid") ||
        strcmp(kjson_get_str(p->self, "store"), BLOCAL_KEY) != 0 ||
        strcmp(kjson_get_str(c, "store"), BLOCAL_KEY) != 0)
        return in_the_way(p->self, c);
    return plocal_in_the_way(p->k, p->buckets,
                             p->routed ? kjson_get_str(p->self, "namespace") : NULL,
                             kjson_get_str(p->self, "prefix"), c);
}

/*
 * How a refusal names the claim c in the way, into buf (n bytes; the result is buf): a Local
 * claim compared by its directory read now (p->k) by that directory, "the Local directory
 * \"/<dir>\"" as its own Secret, recorded hostPath or bucket places it (webhook/plocal's
 * plocal_other), or that it cannot be placed; never the spelling the cache keeps, which is
 * placed at etcd-druid's default hostPath. Any other claim: "the prefix \"<prefix>\"".
 */
static const char *shown_claim(const struct probe *p, const cJSON *c, char *buf, size_t n)
{
    char dir[BLOCAL_HOSTPATH_MAX + 2 * BSTORE_PREFIX_MAX];

    if (!p->k || kjson_has(c, "invalid") || !kjson_get(c, "local") ||
        strcmp(kjson_get_str(p->self, "store"), BLOCAL_KEY) != 0 ||
        strcmp(kjson_get_str(c, "store"), BLOCAL_KEY) != 0)
        snprintf(buf, n, "the prefix \"%.300s\"", shown_prefix(c));
    else if (plocal_other(p->k, p->buckets, c, dir, sizeof(dir)))
        snprintf(buf, n, "the Local directory \"/%.300s\"", dir);
    else
        snprintf(buf, n, "a Local directory that cannot be placed (its hostPath not read)");
    return buf;
}

/* Note the namespace of the owner found (c: its claim). */
static void found_in(struct probe *p, const cJSON *c)
{
    snprintf(p->other_ns, sizeof(p->other_ns), "%s", kjson_get_str(c, "namespace"));
}

static int same_owner(const cJSON *a, const cJSON *b)
{
    return strcmp(kjson_get_str(a, "namespace"), kjson_get_str(b, "namespace")) == 0 &&
           strcmp(kjson_get_str(a, "name"), kjson_get_str(b, "name")) == 0;
}

/* store_view_fn over Etcds: stops (KERR_EXISTS) at the first other Etcd in the way. */
static enum kerr view_etcd(void *ctx, const char *key, const cJSON *obj)
{
    struct probe *p = ctx;
    const cJSON *c = kjson_get(obj, "claim");
    char what[400];

    (void)key;
    if (!c || same_owner(p->self, c) || !in_the_way_of(p, c))
        return KERR_OK;
    snprintf(p->other, sizeof(p->other), "%s of Etcd %s/%s", shown_claim(p, c, what, sizeof(what)),
             kjson_get_str(c, "namespace"), kjson_get_str(c, "name"));
    found_in(p, c);
    return KERR_EXISTS;
}

/* 1 when the claim c (of the candidate's own Etcd) is the candidate's: the same prefix; of a
 * Local store, the same directory (read now). */
static int same_claim(const struct probe *p, const cJSON *c)
{
    char dir[BLOCAL_HOSTPATH_MAX + 2 * BSTORE_PREFIX_MAX];

    if (!kjson_get_str(c, "prefix"))
        return 0;
    if (!p->k || strcmp(kjson_get_str(p->self, "store"), BLOCAL_KEY) != 0 ||
        strcmp(kjson_get_str(c, "store"), BLOCAL_KEY) != 0)
        return strcmp(kjson_get_str(p->self, "prefix"), kjson_get_str(c, "prefix")) == 0;
    return plocal_other(p->k, p->buckets, c, dir, sizeof(dir)) &&
           strcmp(kjson_get_str(p->self, "prefix"), dir) == 0;
}

/* store_view_fn over BackupEntries: as view_etcd. */
static enum kerr view_entry(void *ctx, const char *key, const cJSON *obj)
{
    struct probe *p = ctx;
    const cJSON *c = kjson_get(obj, "claim");
    const char *deleted;
    char what[400];

    (void)key;
    /* the Etcd's own entry of the same prefix reattaches, unless its backups are being
     * deleted (the new cluster's snapshots would be deleted with them); one of an earlier,
     * other prefix of the same Etcd still holds snapshots its sidecar would list */
    if (c && same_owner(p->self, c) && !kjson_has(c, "deleting") && same_claim(p, c)) {
        cJSON_Delete(p->own); /* judged once the scan is over (common/pborn) */
        p->own = cJSON_Duplicate(c, 1);
        if (!p->own || !cJSON_AddStringToObject(p->own, "entry",
                                                kjson_get_str(obj, "metadata.name")
                                                    ? kjson_get_str(obj, "metadata.name")
                                                    : ""))
            return KERR_NOMEM;
        return KERR_OK;
    }
    if (!c || !in_the_way_of(p, c))
        return KERR_OK;
    deleted = kjson_get_str(c, "deletedAt");
    snprintf(p->other, sizeof(p->other), "%s of BackupEntry %s of Etcd %s/%s%s%s",
             shown_claim(p, c, what, sizeof(what)), kjson_get_str(obj, "metadata.name"),
             kjson_get_str(c, "namespace"), kjson_get_str(c, "name"),
             deleted ? ", deleted at " : "", deleted ? deleted : "");
    if (kjson_has(c, "deleting"))
        snprintf(p->other + strlen(p->other), sizeof(p->other) - strlen(p->other),
                 ", whose backups are being deleted (create it once the entry is gone)");
    else if (deleted && kjson_has(c, "bucketless"))
        snprintf(p->other + strlen(p->other), sizeof(p->other) - strlen(p->other),
                 " and kept, in a store no BackupBucket owns, until the operator deletes the "
                 "entry");
    else if (deleted)
        snprintf(p->other + strlen(p->other), sizeof(p->other) - strlen(p->other),
                 " and kept until the bucket's deletion grace period ends");
    found_in(p, c);
    return KERR_EXISTS;
}

/* store_view_fn over EtcdBackups: as view_etcd, for any owner. */
static enum kerr view_backup(void *ctx, const char *key, const cJSON *obj)
{
    struct probe *p = ctx;
    const cJSON *c = kjson_get(obj, "claim");
    char what[400];

    (void)key;
    if (!c || !in_the_way_of(p, c))
        return KERR_OK;
    snprintf(p->other, sizeof(p->other), "%s of the copies of EtcdBackup %s/%s",
             shown_claim(p, c, what, sizeof(what)), kjson_get_str(c, "namespace"),
             kjson_get_str(c, "name"));
    found_in(p, c);
    return KERR_EXISTS;
}

enum kerr prefix_deny(struct review_resp *resp, const struct review_req *req, const char *other,
                      const char *other_ns, const char *store)
{
    const char *ns = kjson_get_str(req->object, "metadata.namespace");
    const char *prefix = kjson_get_str(req->object, "spec.backup.store.prefix");
    int mine = ns && strcmp(ns, other_ns) == 0;

    /* the whole story for the operator's log; the tenant learns only of its own namespace */
    log_info("prefix claim refused", "namespace", ns ? ns : "", "prefix", prefix ? prefix : "",
             "overlaps", other, "store", store);
    return review_deny(resp,
                       "spec.backup.store.prefix \"%s\" overlaps %s in the same store (%s): "
                       "the backup sidecar lists a prefix as a plain string, so either "
                       "cluster's restore could read the other's snapshots; one prefix, one "
                       "cluster (stores compare by container, whatever the provider or endpoint: "
                       "docs/backup-entries.md)%s",
                       prefix ? prefix : "", mine ? other : PREFIX_OTHER_NAMESPACE, store,
                       mine ? ""
                            : " (the operator finds the owner with warden-snapshot "
                              "check-prefixes and in warden-webhook's log)");
}

enum kerr prefix_check(struct store *etcds, struct store *entries, const struct review_req *req,
                       struct review_resp *resp, struct kerr_info *err)
{
    return prefix_check3(etcds, entries, NULL, req, resp, err);
}

/*
 * A Local candidate's claim prefix made its directory on the node, its hostPath read now
 * (webhook/plocal); *denied when it cannot be known (resp then says why). Not Local, or k
 * NULL: as it was.
 */
static enum kerr local_self(struct k8s_client *k, const cJSON *etcd, cJSON *self,
                            struct review_resp *resp, int *denied)
{
    char dir[BLOCAL_HOSTPATH_MAX + 2 * BSTORE_PREFIX_MAX], why[768];
    const cJSON *l = kjson_get(self, "local");
    enum kerr rc;

    *denied = 0;
    if (!k || !l || strcmp(kjson_get_str(self, "store"), BLOCAL_KEY) != 0)
        return KERR_OK;
    rc = plocal_dir(k, kjson_get_str(etcd, "metadata.namespace"), kjson_get_str(l, "secret"),
                    kjson_get_str(l, "container"), kjson_get_str(l, "prefix"), dir, sizeof(dir),
                    why, sizeof(why));
    if (rc != KERR_OK)
        return rc;
    if (*why) {
        *denied = 1;
        return review_deny(resp,
                           "spec.backup.store: a Local store is the directory hostPath + \"/\" "
                           "+ container + \"/\" + prefix on the node, and %s",
                           why);
    }
    return cJSON_ReplaceItemInObject(self, "prefix", cJSON_CreateString(dir)) ? KERR_OK
                                                                              : KERR_NOMEM;
}

/* A Local candidate's directory (self's prefix, placed) in its namespace's part of every
 * partitioned Local bucket (webhook/plocal); *denied when not, or when the buckets cannot
 * answer (500). Not Local, or k NULL: nothing. */
static enum kerr local_part(struct k8s_client *k, struct store *buckets, const cJSON *self,
                            struct review_resp *resp, int *denied)
{
    char why[PLOCAL_WHY_MAX];
    struct kerr_info e = { 0 };
    enum kerr rc;

    if (!k || !kjson_get(self, "local") || strcmp(kjson_get_str(self, "store"), BLOCAL_KEY) != 0)
        return KERR_OK;
    rc = plocal_part(k, buckets, kjson_get_str(self, "namespace"), kjson_get_str(self, "prefix"),
                     why, &e);
    if (rc == KERR_NOMEM)
        return rc;
    *denied = rc != KERR_OK || *why;
    if (rc != KERR_OK)
        return review_errored(resp, 500,
                              "checking the Local directory against the "
                              "BackupBuckets: %s",
                              e.msg[0] ? e.msg : kerr_str(rc))
                   ? KERR_NOMEM
                   : KERR_OK;
    return *why ? review_deny(resp, "spec.backup.store: %s", why) : KERR_OK;
}

enum kerr prefix_check3(struct store *etcds, struct store *entries, struct store *backups,
                        const struct review_req *req, struct review_resp *resp,
                        struct kerr_info *err)
{
    return prefix_check_local(etcds, entries, backups, NULL, NULL, 0, req, resp, err);
}

/* The candidate reattaching to its own entry (c: view_entry's copy of its claim): refused,
 * *denied, when its namespace was created after the entry (common/pborn). */
static enum kerr reattach(struct k8s_client *k, const cJSON *c, struct review_resp *resp,
                          int *denied)
{
    char why[PBORN_WHY_MAX];
    enum kerr rc =
        pborn_check(k, kjson_get_str(c, "namespace"), kjson_get_str(c, "name"),
                    kjson_get_str(c, "entry"), kjson_get_str(c, "createdAt"), why, sizeof(why));

    if (rc != KERR_OK || !*why)
        return rc;
    *denied = 1;
    return review_deny(resp, "spec.backup.store.prefix: %s", why);
}

enum kerr prefix_check_local(struct store *etcds, struct store *entries, struct store *backups,
                             struct k8s_client *k, struct store *buckets, int routed,
                             const struct review_req *req, struct review_resp *resp,
                             struct kerr_info *err)
{
    cJSON *self = cJSON_CreateObject(), *old = cJSON_CreateObject();
    struct probe p = { NULL, "", "", k, buckets, routed, NULL };
    int denied = 0;
    struct kerr_info lookup = { 0 };
    enum kerr rc = self && old ? KERR_OK : KERR_NOMEM;
    const char *store;

    if (rc != KERR_OK || (req->op != REVIEW_OP_CREATE && req->op != REVIEW_OP_UPDATE) ||
        !prefix_claim_of(PREFIX_ETCD, req->object, self))
        goto out;
    /* an UPDATE keeping the store as it was, word for word: nothing new is claimed */
    if (req->op == REVIEW_OP_UPDATE && req->old_object &&
        cJSON_Compare(kjson_get(req->object, "spec.backup.store"),
                      kjson_get(req->old_object, "spec.backup.store"), 1))
        goto out;
    if (kjson_get_str(self, "invalid")) {
        rc = review_deny(resp, "spec.backup.store.%s: %s", kjson_get_str(self, "field"),
                         kjson_get_str(self, "invalid"));
        goto out;
    }
    /* an UPDATE keeping the store and prefix as they were: nothing new is claimed */
    if (req->op == REVIEW_OP_UPDATE && req->old_object &&
        prefix_claim_of(PREFIX_ETCD, req->old_object, old) && kjson_get_str(old, "prefix") &&
        strcmp(kjson_get_str(old, "store"), kjson_get_str(self, "store")) == 0 &&
        strcmp(kjson_get_str(old, "prefix"), kjson_get_str(self, "prefix")) == 0)
        goto out;
    if (bstore_prefix_unparsable(kjson_get_str(self, "prefix"))) {
        rc = review_deny(resp,
                         "spec.backup.store.prefix \"%s\": a segment ends in \"v1\", so the "
                         "backup sidecar takes every snapshot under it for a version-1 one it "
                         "cannot parse and could never restore it; choose a prefix without one",
                         kjson_get_str(req->object, "spec.backup.store.prefix"));
        goto out;
    }
    if ((rc = local_self(k, req->object, self, resp, &denied)) != KERR_OK || denied)
        goto out;
    if ((rc = local_part(k, buckets, self, resp, &denied)) != KERR_OK || denied)
        goto out;
    p.self = self;
    store = kjson_get_str(self, "store");
    for (int i = 0; i < 2 && rc == KERR_OK && !*p.other; i++) {
        const char *key = i ? PREFIX_STORE_UNKEYED : store;

        if (etcds)
            rc = store_index_view(etcds, PREFIX_INDEX_STORE, key, view_etcd, &p, &lookup);
        if (entries && rc == KERR_OK && !*p.other)
            rc = store_index_view(entries, PREFIX_INDEX_STORE, key, view_entry, &p, &lookup);
        if (backups && rc == KERR_OK && !*p.other)
            rc = store_index_view(backups, PREFIX_INDEX_STORE, key, view_backup, &p, &lookup);
    }
    if (rc == KERR_OK && !*p.other && p.own && k)
        rc = reattach(k, p.own, resp, &denied);
    if (denied)
        goto out;
    if (*p.other)
        rc = prefix_deny(resp, req, p.other, p.other_ns, store);
    else if (rc != KERR_OK)
        /* fail closed: an unchecked claim could share another cluster's backups */
        rc = review_errored(resp, 500, "checking the prefix against the caches: %s",
                            lookup.msg[0] ? lookup.msg : kerr_str(rc))
                 ? KERR_NOMEM
                 : KERR_OK;
    else
        rc = KERR_OK;
out:
    cJSON_Delete(p.own);
    cJSON_Delete(self);
    cJSON_Delete(old);
    return rc == KERR_OK ? rc : kerr_set(err, rc, "building the answer");
}

static int same_or_both_absent(const char *a, const char *b)
{
    return a && b ? strcmp(a, b) == 0 : a == b;
}

enum kerr prefix_lock(struct k8s_client *k, const char *ns, const struct review_req *req,
                      struct review_resp *resp, struct kerr_info *err)
{
    cJSON *self = cJSON_CreateObject(), *old = cJSON_CreateObject();
    struct pclaim_other other;
    struct kerr_info why = { 0 };
    enum kerr rc = self && old ? KERR_OK : KERR_NOMEM;
    struct pclaim pc;
    int denied = 0;

    if (rc != KERR_OK || (req->op != REVIEW_OP_CREATE && req->op != REVIEW_OP_UPDATE) ||
        !prefix_claim_of(PREFIX_ETCD, req->object, self) || !kjson_get_str(self, "store"))
        goto out;
    if (req->op == REVIEW_OP_UPDATE && req->old_object &&
        prefix_claim_of(PREFIX_ETCD, req->old_object, old) && kjson_get_str(old, "store") &&
        strcmp(kjson_get_str(old, "store"), kjson_get_str(self, "store")) == 0 &&
        same_or_both_absent(kjson_get_str(old, "prefix"), kjson_get_str(self, "prefix")))
        goto out; /* nothing new claimed (a store not understood has no prefix) */
    if (!kjson_get_str(self, "prefix")) { /* fail closed: no claim to record */
        rc = review_deny(resp, "spec.backup.store: a store not understood claims no prefix");
        goto out;
    }
    if ((rc = local_self(k, req->object, self, resp, &denied)) != KERR_OK || denied)
        goto out;
    pc = (struct pclaim){ kjson_get_str(self, "namespace"),
                          kjson_get_str(self, "name"),
                          kjson_get_str(self, "store"),
                          kjson_get_str(self, "prefix"),
                          NULL,
                          NULL,
                          NULL,
                          NULL,
                          NULL };
    rc = pclaim_take(k, ns, &pc, &other, &why);
    if (rc == KERR_OK && *other.what)
        rc = prefix_deny(resp, req, other.what, other.ns, pc.store);
    else if (rc == KERR_OK && *other.refused)
        rc = review_deny(resp, "spec.backup.store.prefix: %s", other.refused);
    else if (rc != KERR_OK) { /* fail closed: an unrecorded claim could be admitted twice */
        rc = review_errored(resp, 500, "recording the prefix claim: %s",
                            why.msg[0] ? why.msg : kerr_str(rc))
                 ? KERR_NOMEM
                 : KERR_OK;
    }
out:
    cJSON_Delete(self);
    cJSON_Delete(old);
    return rc == KERR_OK ? rc : kerr_set(err, rc, "building the answer");
}
