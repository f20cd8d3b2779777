/* ebk_keep - a retained copy handed to a BackupEntry; see ebk_keep.h. */
#include "controller/backups/ebk_keep.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/bentry.h"
#include "common/bcred.h"
#include "common/bstore.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "controller/core/claims.h"
#include "controller/core/etcdspec.h"
#include "controller/core/podjob.h"

static const struct k8s_resource res_entry = { "etcd-warden.io", "v1alpha1", "backupentries", 0 };
static const struct k8s_resource res_bucket = { "etcd-warden.io", "v1alpha1", "backupbuckets", 0 };

static const char *str(const cJSON *obj, const char *path)
{
    const char *s = kjson_get_str(obj, path);

    return s ? s : "";
}

/* Where the copy was written: status.destination, or spec.destination for a backup written
 * before that was recorded. */
static const char *dst(const cJSON *b)
{
    return kjson_has(b, "status.destination") ? "status.destination" : "spec.destination";
}

void ebk_keep_bucket(const cJSON *buckets, const char *provider, const char *container, char *out,
                     size_t n)
{
    char want[BSTORE_KEY_MAX], key[BSTORE_KEY_MAX];
    const char *best = NULL, *best_at = NULL;
    const cJSON *bk;

    if (n)
        out[0] = '\0';
    if (bstore_key(provider, container, NULL, want, sizeof(want)) != KERR_OK)
        return;
    cJSON_ArrayForEach (bk, buckets) {
        const char *name = kjson_get_str(bk, "metadata.name"),
                   *at = str(bk, "metadata.creationTimestamp");

        if (!name ||
            bstore_key(kjson_get_str(bk, "spec.provider"), kjson_get_str(bk, "spec.container"),
                       NULL, key, sizeof(key)) != KERR_OK ||
            strcmp(key, want) != 0)
            continue;
        /* one store, one bucket: the oldest (RFC 3339 in UTC sorts as text), then by name */
        if (!best || strcmp(at, best_at) < 0 ||
            (strcmp(at, best_at) == 0 && strcmp(name, best) < 0)) {
            best = name;
            best_at = at;
        }
    }
    if (best)
        snprintf(out, n, "%s", best);
}

/* path of obj set to the time now: when a retained copy was handed over, from which the
 * entry's grace period runs (however old the copy). */
static enum kerr set_now(cJSON *obj, const char *path, struct kerr_info *err)
{
    char now[KTIME_LEN + 1];

    if (ktime_format(time(NULL), now) != KERR_OK)
        return kerr_set(err, KERR_INTERNAL, "cannot format the time");
    return kjson_set_str(obj, path, now, err);
}

enum kerr ebk_keep_entry(const cJSON *b, const char *bucket, cJSON **out, struct kerr_info *err)
{
    const char *base = dst(b), *ns = str(b, "metadata.namespace");
    const char *prov = kjson_get_str(kjson_get(b, base), "provider");
    const char *from;
    char name[KNAME_SUBDOMAIN_MAX + 1], owner[512], to[KTIME_LEN + 1];
    struct bstore_claim c = { "", NULL };
    cJSON *e;
    enum kerr rc;

    *out = NULL;
    if ((rc = claims_of(b, base, NULL, &c, err)) != KERR_OK)
        return rc;
    rc = claims_entry_name(&c, name);
    bstore_claim_release(&c);
    if (rc != KERR_OK)
        return kerr_set(err, rc, "no BackupEntry name for the copy");
    /* the copy's write window, what the copy may have written, read back or not */
    (void)ebk_copy_window(b, &from, to);
    if (!*to)
        return kerr_set(err, KERR_INTERNAL, "no end of the copy's write window");
    snprintf(owner, sizeof(owner), "%s/%s", ns, str(b, "metadata.name"));
    if (!(e = cJSON_CreateObject()))
        return kerr_set(err, KERR_NOMEM, NULL);
    rc = kjson_set_str(e, "apiVersion", ETCDSPEC_WARDEN_API, err);
    rc = rc ? rc : kjson_set_str(e, "kind", "BackupEntry", err);
    rc = rc ? rc : kjson_set_str(e, "metadata.name", name, err);
    rc =
        rc ? rc
           : kjson_set_str(e, "metadata.labels[" ETCDSPEC_LABEL_MANAGED_BY "]", "etcd-warden", err);
    rc = rc ? rc : kjson_set_str(e, "metadata.annotations[" EBK_KEEP_ANNOTATION "]", owner, err);
    rc = rc ? rc : kjson_set_str(e, "spec.bucketName", bucket ? bucket : "", err);
    rc = rc ? rc : kjson_set_str(e, "spec.prefix", str(kjson_get(b, base), "prefix"), err);
    rc = rc ? rc
            : kjson_set_str(e, "spec.store.provider",
                            bstore_provider_kind(prov) ? bstore_provider_kind(prov) : "", err);
    rc = rc ? rc
            : kjson_set_str(e, "spec.store.container", str(kjson_get(b, base), "container"), err);
    rc = rc ? rc
            : kjson_set_str(e, "spec.store.endpointOverride",
                            str(kjson_get(b, base), "endpointOverride"), err);
    rc = rc ? rc : kjson_set_str(e, "spec.etcd.namespace", ns, err);
    rc = rc ? rc : kjson_set_str(e, "spec.etcd.name", str(b, "spec.etcdName"), err);
    rc = rc ? rc : kjson_set_str(e, "spec.claimedAt", from, err);
    rc = rc ? rc : kjson_set_str(e, "spec.etcdDeletedAt", to, err);
    rc = rc ? rc : set_now(e, "spec.retainedAt", err);
    if (rc != KERR_OK) {
        cJSON_Delete(e);
        return rc;
    }
    *out = e;
    return KERR_OK;
}

enum kerr ebk_keep_hostpath(cJSON *e, const cJSON *secret, struct kerr_info *err)
{
    char root[4096];

    if (strcmp(str(e, "spec.store.provider"), "Local") != 0)
        return KERR_OK;
    podjob_local_root(secret, root, sizeof(root));
    return kjson_set_str(e, "metadata.annotations[" EBK_KEEP_HOSTPATH "]", root, err);
}

/* 1 when RFC 3339 time a is before b (both parsed; an unparsable one is never before). */
static int before(const char *a, const char *b)
{
    struct timespec ta, tb;

    return ktime_parse(a, &ta, NULL) == KERR_OK && ktime_parse(b, &tb, NULL) == KERR_OK &&
           ta.tv_sec < tb.tv_sec;
}

/* An entry of the copy's name already stored (had): the copy's, widened if need be; else why. */
static enum kerr adopt(const struct ebk_env *env, const cJSON *want, const cJSON *had, char *why,
                       size_t n, struct kerr_info *err)
{
    const char *since = str(want, "spec.claimedAt"), *until = str(want, "spec.etcdDeletedAt");
    const char *hsince = str(had, "spec.claimedAt"),
               *huntil = kjson_get_str(had, "spec.etcdDeletedAt");
    struct timespec ts, tu;
    cJSON *obj;
    enum kerr rc;
    int apart;

    if (strcmp(str(had, "spec.etcd.namespace"), str(want, "spec.etcd.namespace")) != 0 ||
        strcmp(str(had, "spec.etcd.name"), str(want, "spec.etcd.name")) != 0) {
        snprintf(why, n, "BackupEntry %s holds the destination prefix for another owner",
                 str(had, "metadata.name"));
        return KERR_OK;
    }
    if (strcmp(str(had, "status.phase"), BSTORE_ENTRY_DELETING) == 0) {
        snprintf(why, n,
                 "BackupEntry %s of the destination prefix is deleting its backups: the copy "
                 "is handed to an entry once it is gone",
                 str(had, "metadata.name"));
        return KERR_OK;
    }
    /* the window covers the copy's: [claimedAt, etcdDeletedAt] (none: the Etcd lives on, and
     * the grace period has not begun); a copy not written with the bucket's credentials widens
     * nothing: the entry there keeps the prefix */
    if ((*hsince && !before(since, hsince) && !huntil) || kjson_has(want, BENTRY_CREDS_LOST))
        return KERR_OK;
    /* a window apart from the entry's is not joined to it (the time between them had no
     * owner here, and another writer's objects of then would be deleted): it is one of the
     * entry's earlier windows (common/bentry.h) */
    apart = *hsince && ((huntil && before(huntil, since)) || before(until, hsince));
    if (apart &&
        (ktime_parse(since, &ts, NULL) != KERR_OK || ktime_parse(until, &tu, NULL) != KERR_OK))
        return KERR_OK; /* not times: nothing the entry could delete */
    if (!(obj = cJSON_Duplicate(had, 1)))
        return kerr_set(err, KERR_NOMEM, NULL);
    rc = kjson_set_str(obj, "apiVersion", ETCDSPEC_WARDEN_API, err);
    rc = rc ? rc : kjson_set_str(obj, "kind", "BackupEntry", err);
    if (rc == KERR_OK && apart)
        rc = bentry_add_earlier(obj, (int64_t)ts.tv_sec, (int64_t)tu.tv_sec, err);
    if (rc == KERR_OK && !apart && (!*hsince || before(since, hsince)))
        rc = kjson_set_str(obj, "spec.claimedAt", since, err);
    if (rc == KERR_OK && !apart && huntil && before(huntil, until))
        rc = kjson_set_str(obj, "spec.etcdDeletedAt", until, err);
    if (rc == KERR_OK && huntil) /* pending: the grace period runs again from the hand-over */
        rc = set_now(obj, "spec.retainedAt", err);
    rc = rc ? rc
            : k8s_update(env->client, &res_entry, NULL, str(had, "metadata.name"), obj, NULL, NULL,
                         err);
    cJSON_Delete(obj);
    return rc;
}

/* bentry_get_fn: an entry read from the API server (the client, the context). */
static enum kerr get_entry(void *ctx, const char *name, cJSON **out, struct kerr_info *err)
{
    return k8s_get(ctx, &res_entry, NULL, name, NULL, out, err);
}

/*
 * Hand the copy of b to e (built by ebk_keep_entry) unless the copy's claim has its entry: under
 * either of its names, its spec the claim (common/bentry), adopted (widened) when it is the
 * copy's owner's, else why. A name held by an entry of another claim is a reason in why too:
 * never "the entry is there". On KERR_OK e's metadata.name is the entry's that keeps the copy.
 */
static enum kerr keep_in(const struct ebk_env *env, const cJSON *b, cJSON *e, char *why, size_t n,
                         struct kerr_info *err)
{
    char name[BSTORE_ENTRY_NAME_MAX + 1];
    struct bstore_claim c = { "", NULL };
    enum bentry_found f = BENTRY_NONE;
    cJSON *had = NULL;
    enum kerr rc = claims_of(b, dst(b), NULL, &c, err);

    if (rc == KERR_OK)
        rc = bentry_find(get_entry, env->client, &c, &f, &had, name, err);
    if (rc == KERR_OK && f == BENTRY_NONE) {
        rc = k8s_create(env->client, &res_entry, NULL, e, NULL, NULL, err);
        if (rc == KERR_EXISTS) { /* made meanwhile: whose? */
            kerr_clear(err);
            rc = bentry_find(get_entry, env->client, &c, &f, &had, name, err);
            if (rc == KERR_OK && f == BENTRY_NONE)
                rc = KERR_NOTFOUND;
        }
    }
    bstore_claim_release(&c);
    if (rc == KERR_OK && f == BENTRY_OTHER)
        snprintf(why, n,
                 "the BackupEntry name %s of the destination prefix is held by an entry of another "
                 "prefix or store",
                 name);
    else if (rc == KERR_OK && f == BENTRY_CLAIMS)
        rc = adopt(env, e, had, why, n, err);
    if (rc == KERR_OK && !*why)
        rc = kjson_set_str(e, "metadata.name", name, err);
    /* gone meanwhile, or changed: the next look decides */
    if (rc == KERR_NOTFOUND || rc == KERR_CONFLICT) {
        snprintf(why, n, "BackupEntry %s changed while it was read", name);
        kerr_clear(err);
        rc = KERR_OK;
    }
    cJSON_Delete(had);
    return rc;
}

/* The bucket of items named name (one ebk_keep_bucket found). */
static const cJSON *bucket_named(const cJSON *items, const char *name)
{
    const cJSON *bk;

    cJSON_ArrayForEach (bk, items)
        if (strcmp(str(bk, "metadata.name"), name) == 0)
            return bk;
    return NULL;
}

/*
 * Empty e's window (BENTRY_CREDS_LOST one second before the copy began) unless the destination
 * Secret of b, still the version its copy Job was made from, holds the credentials of bucket (a
 * BackupBucket of an object store, as listed): see ebk_keep.h. A Secret that cannot be found
 * holds nothing. Errors of the reads are returned.
 */
static enum kerr copy_held(const struct ebk_env *env, const cJSON *b, const cJSON *bucket, cJSON *e,
                           struct kerr_info *err)
{
    const char *ver = kjson_get_str(b, EBK_SECRET_VERSION);
    cJSON *bsecret = NULL, *dsecret = NULL, *etcd = cJSON_CreateObject();
    char why[768] = "";
    enum kerr rc = etcd ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);

    if (rc == KERR_OK)
        rc = k8s_get(env->client, &ETCDSPEC_RES_SECRET, str(bucket, "spec.secretRef.namespace"),
                     str(bucket, "spec.secretRef.name"), NULL, &bsecret, err);
    if (rc == KERR_OK)
        rc = k8s_get(env->client, &ETCDSPEC_RES_SECRET, str(b, "metadata.namespace"),
                     str(b, "spec.destination.secretRef.name"), NULL, &dsecret, err);
    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        rc = KERR_OK;
        snprintf(why, sizeof(why), "the bucket's or the destination's Secret does not exist");
    } else if (rc == KERR_OK && (!ver || strcmp(ver, str(dsecret, "metadata.resourceVersion"))))
        snprintf(why, sizeof(why),
                 "the destination's Secret is not the version the copy was written with");
    else if (rc == KERR_OK)
        rc = kjson_set(etcd, "spec.backup.store", cJSON_Duplicate(kjson_get(b, dst(b)), 1), err);
    if (rc == KERR_OK && !*why)
        rc = bcred_holds(bucket, bsecret, etcd, dsecret, why, sizeof(why), err);
    if (rc == KERR_OK && *why) {
        rc = bentry_creds_lost(e, err); /* no match: one second before the copy began */
        ebk_event(env, b, 1, "NotAuthorised",
                  "the copy's Secret does not hold BackupBucket %s's credentials (%s): its entry "
                  "keeps the prefix and deletes nothing there",
                  str(bucket, "metadata.name"), why);
    }
    cJSON_Delete(etcd);
    cJSON_Delete(bsecret);
    cJSON_Delete(dsecret);
    return rc;
}

enum kerr ebk_keep_copy(const struct ebk_env *env, const cJSON *b, char *why, size_t n,
                        struct kerr_info *err)
{
    const char *base = dst(b);
    char bucket[256];
    cJSON *list = NULL, *e = NULL;
    enum kerr rc;

    why[0] = '\0';
    rc = k8s_list_all(env->client, &res_bucket, NULL, NULL, &list, err);
    if (rc == KERR_NOTFOUND) { /* no BackupBucket CRD: no bucket owns the store */
        kerr_clear(err);
        rc = KERR_OK;
    }
    if (rc != KERR_OK)
        return rc;
    ebk_keep_bucket(kjson_get(list, "items"), kjson_get_str(kjson_get(b, base), "provider"),
                    kjson_get_str(kjson_get(b, base), "container"), bucket, sizeof(bucket));
    rc = ebk_keep_entry(b, bucket, &e, err);
    if (rc == KERR_OK && *bucket && strcmp(str(e, "spec.store.provider"), "Local") != 0)
        rc = copy_held(env, b, bucket_named(kjson_get(list, "items"), bucket), e, err);
    cJSON_Delete(list);
    if (rc == KERR_OK && strcmp(str(e, "spec.store.provider"), "Local") == 0 &&
        *str(b, "status.destination.hostPath")) /* as its copy Job mounted it, recorded then */
        rc = kjson_set_str(e, "metadata.annotations[" EBK_KEEP_HOSTPATH "]",
                           str(b, "status.destination.hostPath"), err);
    else if (rc == KERR_OK && strcmp(str(e, "spec.store.provider"), "Local") == 0) {
        cJSON *secret = NULL;

        rc = k8s_get(env->client, &ETCDSPEC_RES_SECRET, str(b, "metadata.namespace"),
                     str(b, "spec.destination.secretRef.name"), NULL, &secret, err);
        if (rc == KERR_NOTFOUND) { /* the copy Job went without it too: the default */
            kerr_clear(err);
            rc = KERR_OK;
        }
        rc = rc ? rc : ebk_keep_hostpath(e, secret, err);
        cJSON_Delete(secret);
        if (rc != KERR_OK)
            goto out;
    }
    if (rc == KERR_INVAL) { /* a destination not understood: never released on a guess */
        snprintf(why, n, "the destination cannot be claimed by a BackupEntry: %s", err->msg);
        kerr_clear(err);
        return KERR_OK;
    }
    if (rc == KERR_OK)
        rc = keep_in(env, b, e, why, n, err);
    if (rc == KERR_OK && !*why)
        ebk_event(env, b, 0, "CopyRetained", "the copy under \"%s\" is kept by BackupEntry %s%s%s",
                  str(e, "spec.prefix"), str(e, "metadata.name"),
                  *bucket ? " of bucket " : " (no BackupBucket owns the store)", bucket);
out:
    cJSON_Delete(e);
    return rc;
}
