/* bkeclaim - the claims of a BackupBucket's entries; see bkeclaim.h. */
#include "controller/entries/bkeclaim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/blocal.h"
#include "common/crypto.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/lsel.h"
#include "common/proc.h"
#include "controller/core/claims.h"
#include "controller/core/clocal.h"
#include "controller/core/cmember.h"
#include "controller/core/cwriter.h"

static const char *str_or_empty(const cJSON *obj, const char *path)
{
    const char *s = kjson_get_str(obj, path);

    return s ? s : "";
}

enum kerr bke_entry_name(const struct bstore_claim *c, char out[KNAME_SUBDOMAIN_MAX + 1])
{
    return claims_entry_name(c, out);
}

int bkeclaim_same_store(const struct bke_bucket *b, const cJSON *etcd)
{
    const char *container = kjson_get_str(etcd, "spec.backup.store.container");
    char key[BSTORE_KEY_MAX];

    if (!kjson_get_str(etcd, "spec.backup.store.prefix"))
        return 0;
    if (bstore_key(kjson_get_str(etcd, "spec.backup.store.provider"), container,
                   kjson_get_str(etcd, "spec.backup.store.endpointOverride"), key,
                   sizeof(key)) != KERR_OK)
        /* fail closed: a store not understood (a provider respelled into one etcd-druid
         * refuses keeps the sidecar running as it was) may be the bucket's: its entries stay */
        return bstore_unkeyed_overlap(b->key, container) ? BKECLAIM_MAYBE : 0;
    return strcmp(key, b->key) == 0;
}

/*
 * Prefixes a and b made canonical and compared: by key's overlap (key NULL: equality).
 * -1 when one cannot be read.
 */
static int compare(const char *key, const char *a, const char *b)
{
    size_t na = strlen(a ? a : "") + 2, nb = strlen(b ? b : "") + 2;
    char *ca = malloc(na), *cb = malloc(nb);
    int r = -1;

    if (ca && cb && bstore_prefix(a, ca, na) == KERR_OK && bstore_prefix(b, cb, nb) == KERR_OK)
        r = key ? bstore_overlap(key, ca, cb) : strcmp(ca, cb) == 0;
    free(ca);
    free(cb);
    return r;
}

int bkeclaim_same_prefix(const char *a, const char *b)
{
    return compare(NULL, a, b);
}

int bkeclaim_overlapping(const struct bke_bucket *bk, const char *a, const char *b)
{
    return compare(bk->key, a, b);
}

/* Read obj into *b; KERR_INVAL with the field in err when it does not validate. */
enum kerr bkeclaim_read_bucket(const cJSON *obj, struct bke_bucket *b, struct kerr_info *err)
{
    const char *provider = kjson_get_str(obj, "spec.provider");
    const char *grace = kjson_get_str(obj, "spec.deletionGracePeriod");
    const cJSON *sel;
    struct kerr_info why = { 0 };

    memset(b, 0, sizeof(*b));
    b->obj = obj;
    b->name = kjson_get_str(obj, "metadata.name");
    b->kind = bstore_provider_kind(provider);
    b->container = kjson_get_str(obj, "spec.container");
    b->endpoint = str_or_empty(obj, "spec.endpointOverride");
    if (!b->kind)
        return kerr_set(err, KERR_INVAL, "spec.provider: unknown provider \"%s\" (accepted: %s)",
                        provider ? provider : "", bstore_provider_list());
    if (!b->container || !*b->container)
        return kerr_set(err, KERR_INVAL, "spec.container: required");
    sel = kjson_get(obj, "spec.namespaceSelector");
    if (sel && !cJSON_IsNull(sel) && lsel_validate(sel, &why) != KERR_OK)
        return kerr_set(err, KERR_INVAL, "spec.namespaceSelector: %s", why.msg);
    if (bstore_key(provider, b->container, b->endpoint, b->key, sizeof(b->key)) != KERR_OK)
        return kerr_set(err, KERR_INVAL, "spec.container: too long");
    if (grace && *grace == '-')
        return kerr_set(err, KERR_INVAL,
                        "spec.deletionGracePeriod: \"%s\" must be positive, e.g. %s", grace,
                        BKE_DEFAULT_GRACE);
    if (proc_parse_duration(grace && *grace ? grace : BKE_DEFAULT_GRACE, &b->grace_ms, err) !=
        KERR_OK)
        return kerr_set(err, KERR_INVAL,
                        "spec.deletionGracePeriod: \"%s\" is not a duration (e.g. %s, 1h30m)",
                        grace, BKE_DEFAULT_GRACE);
    if (b->grace_ms <= 0)
        return kerr_set(err, KERR_INVAL,
                        "spec.deletionGracePeriod: \"%s\" must be positive, e.g. %s", grace,
                        BKE_DEFAULT_GRACE);
    return KERR_OK;
}

int bkeclaim_owner(const cJSON *cur, const cJSON *etcd, char *other, size_t n)
{
    snprintf(other, n, "BackupEntry %s of Etcd %s/%s (prefix \"%s\")",
             str_or_empty(cur, "metadata.name"), str_or_empty(cur, "spec.etcd.namespace"),
             str_or_empty(cur, "spec.etcd.name"), str_or_empty(cur, "spec.prefix"));
    return strcmp(str_or_empty(cur, "spec.etcd.namespace"),
                  str_or_empty(etcd, "metadata.namespace")) == 0 &&
           strcmp(str_or_empty(cur, "spec.etcd.name"), str_or_empty(etcd, "metadata.name")) == 0;
}

/* When entry's Etcd was seen gone or being deleted, the later (Unix seconds; 0: unknown). */
static time_t gone_at(const cJSON *entry)
{
    static const char *const paths[] = { "spec.etcdDeletedAt", "spec.etcdDeletionTimestamp" };
    struct timespec t;
    time_t at = 0;
    size_t i;

    for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
        if (kjson_get_str(entry, paths[i]) &&
            ktime_parse(kjson_get_str(entry, paths[i]), &t, NULL) == KERR_OK && t.tv_sec > at)
            at = t.tv_sec;
    return at;
}

/*
 * Whether the store the entry recorded when it was made (spec.store) is the bucket's now (c, its
 * claim of the entry's prefix): a bucket whose provider, container or endpoint was edited since
 * would have the deletion Job delete the prefix in another store. Local: the same container (the
 * hostPath is the bucket's Secret's, read now). What cannot be read is not the same.
 */
static int same_recorded_store(const struct bke_bucket *b, const cJSON *entry,
                               const struct bstore_claim *c)
{
    const char *provider = kjson_get_str(entry, "spec.store.provider");
    const char *kind = bstore_provider_kind(provider);
    const char *container = kjson_get_str(entry, "spec.store.container");
    struct bstore_claim e;
    int same;

    if (!kind || !container || strcmp(kind, b->kind) != 0)
        return 0;
    if (strcmp(kind, "Local") == 0)
        return strcmp(container, b->container) == 0;
    if (bstore_claim_init(&e, provider, container,
                          kjson_get_str(entry, "spec.store.endpointOverride"),
                          str_or_empty(entry, "spec.prefix"), NULL) != KERR_OK)
        return 0;
    same = strcmp(e.key, c->key) == 0;
    bstore_claim_release(&e);
    return same;
}

/*
 * Why entry's deletion may not start now, into why (CLAIMS_WHY_MAX + 256 bytes; "" when it
 * may): its prefix is the whole container, or another owner's claim overlaps it, or an
 * EtcdRestore in flight reads from it (its source), or the entry's Etcd's members or any other
 * backup sidecar of the cluster may write it (controller/core/cmember), as read from the API
 * server now, or a
 * claim recorded in the store's claim Lease overlaps it (an Etcd admitted and not stored yet:
 * one created again to reattach, which the API server stores once every webhook answered).
 */
enum kerr bkeclaim_deletion_blocked(const struct bke_ctx *x, const struct bke_bucket *b,
                                    const cJSON *entry, char *why, size_t n, struct kerr_info *err)
{
    const char *prefix = str_or_empty(entry, "spec.prefix");
    struct claims_skip skip = { .entry = kjson_get_str(entry, "metadata.name") };
    struct bstore_claim c;
    char other[CLAIMS_WHY_MAX], hostpath[BLOCAL_HOSTPATH_MAX + 1], held[CMEMBER_WHY_MAX];
    enum kerr rc;

    /* a Local bucket's entry: the directory its deletion Job mounts, the bucket's hostPath read
     * now (controller/core/clocal); not readable: no deletion */
    if (strcmp(b->kind, "Local") == 0) {
        rc = clocal_bucket_hostpath(x->client, b->obj, hostpath, sizeof(hostpath), err);
        if (rc == KERR_OK)
            rc = bstore_local_claim_init(&c, hostpath, b->container, prefix, err);
    } else {
        rc = bstore_claim_init(&c, b->kind, b->container, b->endpoint, prefix, err);
    }

    why[0] = '\0';
    if (rc == KERR_INVAL)
        snprintf(why, n, "prefix \"%s\" cannot be deleted: %s", prefix, err ? err->msg : "");
    if (rc != KERR_OK)
        return rc == KERR_INVAL ? KERR_OK : rc;
    if (!same_recorded_store(b, entry, &c))
        snprintf(why, n,
                 "prefix \"%s\" is not deleted: the entry was made in store %s %s, and "
                 "BackupBucket %s names %s %s now; point the bucket back, or delete the "
                 "BackupEntry (the backups stay)",
                 prefix, str_or_empty(entry, "spec.store.provider"),
                 str_or_empty(entry, "spec.store.container"), b->name, b->kind, b->container);
    else if (!*c.prefix)
        snprintf(why, n,
                 "prefix \"%s\" is the whole container %s: etcd-warden never empties a whole "
                 "container; delete the BackupEntry to release it (the backups stay)",
                 prefix, b->container);
    else if ((rc = claims_find(x->client, NULL, &c, &skip, other, err)) == KERR_OK && *other)
        snprintf(why, n,
                 "deletion of prefix \"%s\" blocked: it overlaps %s, which the backup sidecar "
                 "lists with it",
                 prefix, other);
    /* the entry's own Etcd: its members may still write it, or it sleeps (controller/cmember) */
    else if (rc == KERR_OK &&
             (rc = cmember_held(x->client, str_or_empty(entry, "spec.etcd.namespace"),
                                str_or_empty(entry, "spec.etcd.name"), &c, held, sizeof(held),
                                err)) == KERR_OK &&
             *held)
        snprintf(why, n, "deletion of prefix \"%s\" postponed: %s", prefix, held);
    /* any other backup sidecar of the cluster, in any workload or pod (controller/core/cwriter) */
    else if (rc == KERR_OK &&
             (rc = cwriter_held(x->client, &c, held, sizeof(held), err)) == KERR_OK && *held)
        snprintf(why, n, "deletion of prefix \"%s\" postponed: %s", prefix, held);
    else if (rc == KERR_OK && (rc = claims_find_readers(x->client, &c, other, err)) == KERR_OK &&
             *other)
        snprintf(why, n, "deletion of prefix \"%s\" postponed: it overlaps %s", prefix, other);
    /* last: an admission recorded and not stored yet (the claim Lease) */
    else if (rc == KERR_OK &&
             (rc = claims_find_admitted(x->client, &c, str_or_empty(entry, "spec.etcd.namespace"),
                                        str_or_empty(entry, "spec.etcd.name"), gone_at(entry),
                                        other, err)) == KERR_OK &&
             *other)
        snprintf(why, n,
                 "deletion of prefix \"%s\" postponed: it overlaps %s, admitted and recorded in "
                 "the claim Lease",
                 prefix, other);
    bstore_claim_release(&c);
    return rc;
}

/*
 * The first entry of entries (one bucket: one store) of another Etcd whose
 * prefix overlaps that of entry i, described into why (BKECLAIM_WHY_MAX); NULL when none.
 * Conflicts the webhook would refuse today, made before it was installed.
 */
const char *bkeclaim_conflict(const struct bke_bucket *b, const cJSON *entries, int i, char *why)
{
    const cJSON *a = cJSON_GetArrayItem(entries, i), *e;

    cJSON_ArrayForEach (e, entries) {
        if (e == a ||
            (strcmp(str_or_empty(e, "spec.etcd.namespace"),
                    str_or_empty(a, "spec.etcd.namespace")) == 0 &&
             strcmp(str_or_empty(e, "spec.etcd.name"), str_or_empty(a, "spec.etcd.name")) == 0) ||
            bkeclaim_overlapping(b, str_or_empty(e, "spec.prefix"),
                                 str_or_empty(a, "spec.prefix")) != 1)
            continue;
        snprintf(why, BKECLAIM_WHY_MAX,
                 "prefix \"%s\" overlaps the prefix \"%s\" of BackupEntry %s of Etcd %s/%s: "
                 "two clusters' backups in one prefix",
                 str_or_empty(a, "spec.prefix"), str_or_empty(e, "spec.prefix"),
                 str_or_empty(e, "metadata.name"), str_or_empty(e, "spec.etcd.namespace"),
                 str_or_empty(e, "spec.etcd.name"));
        return why;
    }
    return NULL;
}

/*
 * The older BackupBucket of b's store, if any (one store, one bucket: the one created first,
 * then the first by name, keeps it), into other; "" when b is the store's bucket.
 */
enum kerr bkeclaim_duplicate_of(const struct bke_ctx *x, const struct bke_bucket *b, char *other,
                                size_t n, struct kerr_info *err)
{
    const char *mine = str_or_empty(b->obj, "metadata.creationTimestamp"), *at, *name;
    struct bke_bucket o;
    cJSON *list = NULL;
    const cJSON *it;
    enum kerr rc = k8s_list_all(x->client, &BKE_RES_BUCKET, NULL, NULL, &list, err);

    other[0] = '\0';
    cJSON_ArrayForEach (it, kjson_get(list, "items")) {
        name = str_or_empty(it, "metadata.name");
        at = str_or_empty(it, "metadata.creationTimestamp");
        if (strcmp(name, b->name) == 0 || bkeclaim_read_bucket(it, &o, NULL) != KERR_OK ||
            strcmp(o.key, b->key) != 0)
            continue;
        if (strcmp(at, mine) < 0 || (strcmp(at, mine) == 0 && strcmp(name, b->name) < 0)) {
            snprintf(other, n, "%s", name);
            break;
        }
    }
    cJSON_Delete(list);
    return rc;
}

enum kerr bkeclaim_set_etcd(cJSON *entry, const cJSON *etcd, const char *since,
                            struct kerr_info *err)
{
    enum kerr rc =
        kjson_set_str(entry, "spec.etcd.namespace", str_or_empty(etcd, "metadata.namespace"), err);

    if (rc == KERR_OK)
        rc = kjson_set_str(entry, "spec.etcd.name", str_or_empty(etcd, "metadata.name"), err);
    if (rc == KERR_OK)
        rc = kjson_set_str(entry, "spec.etcd.uid", str_or_empty(etcd, "metadata.uid"), err);
    if (rc == KERR_OK)
        rc = kjson_set_str(entry, "spec.claimedAt", since, err);
    return rc;
}
