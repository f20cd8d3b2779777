/* pmove - a moved Etcd's earlier prefix stays claimed; see pmove.h. */
#include "webhook/pmove.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/bentry.h"
#include "common/blocal.h"
#include "common/bstore.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/log.h"

static const struct k8s_resource res_secret = { "", "v1", "secrets", 1 };
static const struct k8s_resource res_etcd = { "druid.gardener.cloud", "v1alpha1", "etcds", 1 };

static const char *str_or_empty(const cJSON *obj, const char *path)
{
    const char *s = kjson_get_str(obj, path);

    return s ? s : "";
}

/* The claim of etcd's object store into *c (1), or 0 (none understood, or Local). */
static int object_claim(const cJSON *etcd, struct bstore_claim *c)
{
    *c = (struct bstore_claim){ "", NULL };
    if (!etcd || bstore_no_store(kjson_get_str(etcd, "spec.backup.store.provider")) ||
        bstore_claim_init(c, kjson_get_str(etcd, "spec.backup.store.provider"),
                          kjson_get_str(etcd, "spec.backup.store.container"),
                          kjson_get_str(etcd, "spec.backup.store.endpointOverride"),
                          kjson_get_str(etcd, "spec.backup.store.prefix"), NULL) != KERR_OK)
        return 0;
    if (strncmp(c->key, "Object|", 7) != 0) {
        bstore_claim_release(c);
        return 0;
    }
    return 1;
}

/* 1 when etcd's store is a Local one understood (common/bstore). */
static int local_store(const cJSON *etcd)
{
    struct bstore_claim c = { "", NULL };
    int local;

    if (!etcd || bstore_no_store(kjson_get_str(etcd, "spec.backup.store.provider")) ||
        bstore_claim_init(&c, kjson_get_str(etcd, "spec.backup.store.provider"),
                          kjson_get_str(etcd, "spec.backup.store.container"), NULL,
                          kjson_get_str(etcd, "spec.backup.store.prefix"), NULL) != KERR_OK)
        return 0;
    local = strcmp(c.key, BLOCAL_KEY) == 0;
    bstore_claim_release(&c);
    return local;
}

/* Set s at path of e unless rc already failed. */
static enum kerr set(cJSON *e, enum kerr rc, const char *path, const char *s, struct kerr_info *err)
{
    return rc == KERR_OK ? kjson_set_str(e, path, s, err) : rc;
}

/*
 * The BackupEntry name for old's claim, in bucket (NULL: none), of provider and endpoint, its
 * Local directory's hostPath recorded when hostpath is not NULL, made at now: *out OWNS it.
 */
static enum kerr entry_of(const cJSON *old, const char *name, const char *bucket,
                          const char *provider, const char *endpoint, const char *hostpath,
                          int64_t now, cJSON **out, struct kerr_info *err)
{
    const cJSON *gen = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(old, "metadata"), "generation");
    const char *created = kjson_get_str(old, "metadata.creationTimestamp");
    char at[KTIME_LEN + 1];
    cJSON *e;
    enum kerr rc;

    *out = NULL;
    if (ktime_format((time_t)now, at) != KERR_OK)
        return kerr_set(err, KERR_INTERNAL, "cannot format the time");
    e = cJSON_CreateObject();
    rc = e ? KERR_OK : KERR_NOMEM;
    rc = set(e, rc, "apiVersion", "etcd-warden.io/v1alpha1", err);
    rc = set(e, rc, "kind", "BackupEntry", err);
    rc = set(e, rc, "metadata.name", name, err);
    rc = set(e, rc, "metadata.labels[app.kubernetes.io/managed-by]", "etcd-warden", err);
    if (hostpath)
        rc = set(e, rc, "metadata.annotations[" BLOCAL_HOSTPATH_ANNOTATION "]", hostpath, err);
    rc = set(e, rc, "spec.bucketName", bucket ? bucket : "", err);
    rc = set(e, rc, "spec.prefix", str_or_empty(old, "spec.backup.store.prefix"), err);
    rc = set(e, rc, "spec.store.provider", provider, err);
    rc = set(e, rc, "spec.store.container", str_or_empty(old, "spec.backup.store.container"), err);
    rc = set(e, rc, "spec.store.endpointOverride", endpoint, err);
    rc = set(e, rc, "spec.etcd.namespace", str_or_empty(old, "metadata.namespace"), err);
    rc = set(e, rc, "spec.etcd.name", str_or_empty(old, "metadata.name"), err);
    rc = set(e, rc, "spec.etcd.uid", str_or_empty(old, "metadata.uid"), err);
    /* when the claim began: the Etcd's creation when the prefix is the one it was created
     * with, else the move (what was written before is not shown to be its) */
    rc = set(e, rc, "spec.claimedAt",
             cJSON_IsNumber(gen) && gen->valuedouble == 1 && created ? created : at, err);
    if (rc != KERR_OK) {
        cJSON_Delete(e);
        return rc == KERR_NOMEM ? kerr_set(err, rc, "building the BackupEntry") : rc;
    }
    *out = e;
    return KERR_OK;
}

enum kerr pmove_local_entry(const cJSON *old, const char *hostpath, int64_t now, cJSON **out,
                            char name[BSTORE_ENTRY_NAME_MAX + 1], struct bstore_claim *c,
                            struct kerr_info *err)
{
    char dir[BLOCAL_HOSTPATH_MAX + 2 * BSTORE_PREFIX_MAX];
    struct bstore_claim d = { BLOCAL_KEY, dir };
    enum kerr rc;

    *out = NULL;
    if (c)
        *c = (struct bstore_claim){ "", NULL };
    if (!local_store(old) || blocal_dir(hostpath, str_or_empty(old, "spec.backup.store.container"),
                                        str_or_empty(old, "spec.backup.store.prefix"), dir,
                                        sizeof(dir), NULL) != KERR_OK)
        return kerr_set(err, KERR_INVAL, "no Local store and directory understood");
    /* named after the directory, which the sidecar wrote, not the prefix alone */
    if ((rc = bstore_entry_name(&d, name)) != KERR_OK)
        return kerr_set(err, rc, "no BackupEntry name");
    rc = entry_of(old, name, NULL, "Local", "", hostpath, now, out, err);
    if (rc != KERR_OK || !c)
        return rc;
    c->prefix = strdup(dir);
    if (c->prefix) {
        snprintf(c->key, sizeof(c->key), "%s", BLOCAL_KEY);
        return KERR_OK;
    }
    cJSON_Delete(*out);
    *out = NULL;
    return kerr_set(err, KERR_NOMEM, NULL);
}

enum kerr pmove_entry(const cJSON *old, const char *bucket, int64_t now, cJSON **out,
                      char name[BSTORE_ENTRY_NAME_MAX + 1], struct bstore_claim *c,
                      struct kerr_info *err)
{
    const char *provider = bstore_provider_kind(kjson_get_str(old, "spec.backup.store.provider"));
    struct bstore_claim claim;
    enum kerr rc;

    *out = NULL;
    if (c)
        *c = (struct bstore_claim){ "", NULL };
    if (!object_claim(old, &claim))
        return kerr_set(err, KERR_INVAL, "no object store and prefix understood");
    if ((rc = bstore_entry_name(&claim, name)) != KERR_OK)
        rc = kerr_set(err, rc, "no BackupEntry name");
    else
        rc = entry_of(old, name, bucket, provider ? provider : "",
                      str_or_empty(old, "spec.backup.store.endpointOverride"), NULL, now, out, err);
    if (rc == KERR_OK && c)
        *c = claim; /* handed out: the caller releases it */
    else
        bstore_claim_release(&claim);
    return rc;
}

/* What owner_of looks for and finds: the oldest bucket of container, then the first by name. */
struct owner {
    const char *container;
    char name[256];
    char created[KTIME_LEN + 8];
};

static enum kerr owner_of(void *ctx, const char *key, const cJSON *b)
{
    struct owner *o = ctx;
    const char *name = str_or_empty(b, "metadata.name");
    const char *created = str_or_empty(b, "metadata.creationTimestamp");
    int cmp;

    (void)key;
    if (strcmp(str_or_empty(b, "spec.container"), o->container) != 0)
        return KERR_OK;
    cmp = strcmp(created, o->created); /* RFC 3339 in UTC: ordered as strings */
    if (!*o->name || cmp < 0 || (cmp == 0 && strcmp(name, o->name) < 0)) {
        snprintf(o->name, sizeof(o->name), "%s", name);
        snprintf(o->created, sizeof(o->created), "%s", created);
    }
    return KERR_OK;
}

/* 1 when req changes the Etcd's object store or prefix (as claims compare them). */
static int moves(const struct review_req *req)
{
    struct bstore_claim a, b;
    int r;

    if (req->op != REVIEW_OP_UPDATE || !req->old_object || !req->object)
        return 0;
    if (local_store(req->old_object)) /* anything of the store changed may move its directory */
        return !cJSON_Compare(kjson_get(req->old_object, "spec.backup.store"),
                              kjson_get(req->object, "spec.backup.store"), 1);
    if (!object_claim(req->old_object, &a))
        return 0;
    if (!object_claim(req->object, &b)) {
        bstore_claim_release(&a);
        return 1; /* moved out of the object store, or to one not understood */
    }
    r = strcmp(a.key, b.key) != 0 || strcmp(a.prefix, b.prefix) != 0;
    bstore_claim_release(&a);
    bstore_claim_release(&b);
    return r;
}

/* The hostPath the Secret of old (a Local Etcd) names now into out (n bytes); an error (err
 * says why) when it cannot be read: the move is refused, its directory would be nobody's. */
static enum kerr local_hostpath(struct k8s_client *k, const cJSON *old, char *out, size_t n,
                                struct kerr_info *err)
{
    const char *secret = kjson_get_str(old, "spec.backup.store.secretRef.name");
    cJSON *obj = NULL;
    enum kerr rc = KERR_OK;

    if (secret && *secret)
        rc = k8s_get(k, &res_secret, str_or_empty(old, "metadata.namespace"), secret, NULL, &obj,
                     err);
    if (rc == KERR_OK)
        rc = blocal_hostpath(obj, out, n, err);
    cJSON_Delete(obj);
    return rc;
}

/*
 * The review's oldObject is the Etcd the API server stores (its uid and resourceVersion), or an
 * error (err says why): an entry is made only for a move of a stored Etcd, never on a review
 * posted to the webhook by anyone else. A real update whose Etcd changed meanwhile is re-reviewed
 * by the API server, or retried by its client after this refusal.
 */
static enum kerr stored_as_reviewed(struct k8s_client *k, const cJSON *old, struct kerr_info *err)
{
    const char *uid = str_or_empty(old, "metadata.uid");
    const char *rv = str_or_empty(old, "metadata.resourceVersion");
    cJSON *cur = NULL;
    enum kerr rc = k8s_get(k, &res_etcd, str_or_empty(old, "metadata.namespace"),
                           str_or_empty(old, "metadata.name"), NULL, &cur, err);

    if (rc == KERR_OK && (!*uid || !*rv || strcmp(uid, str_or_empty(cur, "metadata.uid")) != 0 ||
                          strcmp(rv, str_or_empty(cur, "metadata.resourceVersion")) != 0))
        rc = kerr_set(err, KERR_CONFLICT,
                      "the Etcd stored (uid %.64s, resourceVersion %.32s) is not the review's "
                      "oldObject (uid %.64s, resourceVersion %.32s)",
                      str_or_empty(cur, "metadata.uid"),
                      str_or_empty(cur, "metadata.resourceVersion"), uid, rv);
    cJSON_Delete(cur);
    return rc;
}

/*
 * Create e, the entry of claim c (its name the current one), unless c's entry is there: read
 * from the API server under either of its names (common/bentry: an entry of that name is c's
 * only when its spec is c) when the entries cache has an entry of either name, or made
 * meanwhile. KERR_OK when it is there now;
 * KERR_EXISTS (why says so) when its name is held by an entry of another claim: the earlier
 * prefix would be nobody's, the caller refuses.
 */
static enum kerr put_entry(struct k8s_client *k, struct store *entries, cJSON *e,
                           const struct bstore_claim *c, const cJSON *etcd, const char *what,
                           struct kerr_info *why)
{
    char name[BSTORE_ENTRY_NAME_MAX + 1];
    enum bentry_found f = BENTRY_NONE;
    cJSON *cur = NULL;
    enum kerr rc = KERR_OK;
    int any = 1;

    /* the cache keeps projections: it tells whether an entry of either name is there, not whose
     * it is (an earlier release's name of this claim included): then the stored one decides */
    if (entries)
        rc = bentry_named(bentry_get_cached, entries, c, &any, why);
    if (rc == KERR_OK && any) {
        rc = bentry_find(bentry_get_stored, k, c, &f, &cur, name, why);
        cJSON_Delete(cur);
        cur = NULL;
        if (rc == KERR_OK && f == BENTRY_CLAIMS)
            return KERR_OK; /* the entry of the claim is there (the controller's, or a move's) */
    }
    if (rc == KERR_OK && f == BENTRY_NONE) {
        rc = k8s_create(k, &BENTRY_RES, NULL, e, NULL, NULL, why);
        if (rc == KERR_OK) {
            log_info(what, "namespace", str_or_empty(etcd, "metadata.namespace"), "name",
                     str_or_empty(etcd, "metadata.name"), "entry",
                     str_or_empty(e, "metadata.name"));
            return KERR_OK;
        }
    }
    if (rc == KERR_OK || rc == KERR_EXISTS) { /* not cached yet, or another claim's? */
        kerr_clear(why);
        rc = bentry_find(bentry_get_stored, k, c, &f, &cur, name, why);
        cJSON_Delete(cur);
        if (rc == KERR_OK && f == BENTRY_NONE) /* made and gone meanwhile */
            rc = kerr_set(why, KERR_CONFLICT, "BackupEntry %s changed while it was made", name);
        if (rc == KERR_OK && f == BENTRY_OTHER) {
            log_warn("backup entry name held by another claim", "namespace",
                     str_or_empty(etcd, "metadata.namespace"), "name",
                     str_or_empty(etcd, "metadata.name"), "entry", name);
            rc = kerr_set(why, KERR_EXISTS,
                          "its BackupEntry name %s is held by an entry of another prefix or store",
                          name);
        }
    }
    return rc;
}

/* 1 when buckets (NULL: not known, none taken) has a BackupBucket naming etcd's container; an
 * error of the cache is returned. */
static enum kerr bucket_named(struct store *buckets, const cJSON *etcd, int *named,
                              struct kerr_info *why)
{
    struct owner o = { str_or_empty(etcd, "spec.backup.store.container"), "", "" };
    enum kerr rc = buckets ? store_foreach(buckets, owner_of, &o, why) : KERR_OK;

    *named = rc == KERR_OK && o.name[0];
    return rc;
}

enum kerr pmove_record(struct k8s_client *k, struct store *entries, struct store *buckets,
                       const cJSON *etcd, struct kerr_info *why)
{
    char name[BSTORE_ENTRY_NAME_MAX + 1], hostpath[BLOCAL_HOSTPATH_MAX + 1];
    struct bstore_claim c = { "", NULL };
    cJSON *e = NULL;
    int named = 0;
    enum kerr rc;

    if (!local_store(etcd))
        return KERR_OK;
    if ((rc = bucket_named(buckets, etcd, &named, why)) != KERR_OK || named)
        return rc; /* a bucket's store: the bucket's entries keep it (controller/entries/bke) */
    if ((rc = local_hostpath(k, etcd, hostpath, sizeof(hostpath), why)) == KERR_OK)
        rc = pmove_local_entry(etcd, hostpath, (int64_t)time(NULL), &e, name, &c, why);
    if (rc == KERR_OK)
        rc = put_entry(k, entries, e, &c, etcd, "Local Etcd's directory recorded", why);
    bstore_claim_release(&c);
    cJSON_Delete(e);
    return rc;
}

int pmove_records(const struct review_req *req)
{
    if (req->dry_run || !req->object || !local_store(req->object))
        return 0;
    return req->op == REVIEW_OP_CREATE || moves(req);
}

enum kerr pmove_keep(struct k8s_client *k, struct store *entries, struct store *buckets,
                     const struct review_req *req, struct review_resp *resp, struct kerr_info *err)
{
    struct owner o = { str_or_empty(req->old_object, "spec.backup.store.container"), "", "" };
    char name[BSTORE_ENTRY_NAME_MAX + 1], hostpath[BLOCAL_HOSTPATH_MAX + 1];
    struct kerr_info why = { 0 };
    const char *which = "the directory of the prefix";
    const cJSON *about = req->object;
    struct bstore_claim c = { "", NULL };
    cJSON *e = NULL;
    enum kerr rc;

    if (!resp->allowed || req->dry_run)
        return KERR_OK;
    /* an UPDATE's entries are made only for the Etcd the API server stores (a CREATE's object
     * is not stored yet: its review is taken as it comes) */
    if (req->op == REVIEW_OP_UPDATE && (pmove_records(req) || moves(req)) &&
        (rc = stored_as_reviewed(k, req->old_object, &why)) != KERR_OK)
        goto failed;
    if (pmove_records(req)) { /* the directory its sidecar will write */
        if ((rc = pmove_record(k, entries, buckets, req->object, &why)) != KERR_OK)
            goto failed;
    }
    if (!moves(req))
        return KERR_OK;
    which = "the earlier prefix";
    about = req->old_object;
    if (local_store(req->old_object)) { /* fail closed on anything not known */
        if ((rc = local_hostpath(k, req->old_object, hostpath, sizeof(hostpath), &why)) == KERR_OK)
            rc = pmove_local_entry(req->old_object, hostpath, (int64_t)time(NULL), &e, name, &c,
                                   &why);
        if (rc != KERR_OK)
            goto failed;
    } else if (buckets && store_foreach(buckets, owner_of, &o, &why) != KERR_OK) {
        goto failed;
    } else {
        rc = pmove_entry(req->old_object, o.name, (int64_t)time(NULL), &e, name, &c, &why);
    }
    if (rc == KERR_INVAL)
        return KERR_OK;
    if (rc != KERR_OK)
        goto failed;
    rc = put_entry(k, entries, e, &c, req->old_object, "moved Etcd's earlier prefix kept", &why);
    bstore_claim_release(&c);
    cJSON_Delete(e);
    if (rc == KERR_OK)
        return KERR_OK;
failed: /* fail closed: the directory would be nobody's */
    if (review_errored(resp, 500,
                       "spec.backup.store: %s \"%.256s\" stays claimed for this "
                       "Etcd by a BackupEntry, which cannot be made: %s; retry",
                       which, str_or_empty(about, "spec.backup.store.prefix"),
                       why.msg[0] ? why.msg : "error"))
        return kerr_set(err, KERR_NOMEM, "building the answer");
    return KERR_OK;
}
