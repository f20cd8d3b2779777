/* pclaim - a prefix claim made atomic at admission; see pclaim.h. */
#include "common/pclaim.h"

#include <stdio.h>
#include <string.h>

#include "common/bstore.h"
#include "common/crypto.h"
#include "common/kjson.h"
#include "common/log.h"
#include "common/pclaim_int.h"
#include "common/rtarget.h"

const struct k8s_resource PCLAIM_RES_LEASE = { "coordination.k8s.io", "v1", "leases", 1 };
static const struct k8s_resource res_etcd = { "druid.gardener.cloud", "v1alpha1", "etcds", 1 };
const struct k8s_resource PCLAIM_RES_RESTORE = { "etcd-warden.io", "v1alpha1", "etcdrestores", 1 };
static const struct k8s_resource res_backup = { "etcd-warden.io", "v1alpha1", "etcdbackups", 1 };

void pclaim_lease_name(const char *store, char *out, size_t n)
{
    char hash[CRYPTO_SHA256_HEX_LEN + 1] = "";

    if (crypto_sha256_hex(store, strlen(store), hash, NULL) != KERR_OK)
        hash[0] = '\0';
    snprintf(out, n, "%s%.16s", PCLAIM_LEASE_PREFIX, hash);
}

const char *pclaim_rec_str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

    return cJSON_IsString(v) ? v->valuestring : "";
}

int pclaim_rec_is_restore(const cJSON *r)
{
    return strcmp(pclaim_rec_str(r, "kind"), PCLAIM_KIND_RESTORE) == 0;
}

static int is_backup(const cJSON *r)
{
    return strcmp(pclaim_rec_str(r, "kind"), PCLAIM_KIND_BACKUP) == 0;
}

int pclaim_rec_is_source(const cJSON *r)
{
    return strcmp(pclaim_rec_str(r, "kind"), PCLAIM_KIND_SOURCE) == 0;
}

static const char *kind_of(const struct pclaim *c)
{
    return c->kind ? c->kind : "";
}

/* 1 when record r still counts at now: recorded within PCLAIM_TTL_S; an EtcdRestore's target
 * whatever its age (dropped once its restore is gone, Completed, or Failed before its copy). */
int pclaim_rec_live(const cJSON *r, time_t now)
{
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(r, "at");

    return cJSON_IsNumber(at) &&
           (pclaim_rec_is_restore(r) || at->valuedouble + PCLAIM_TTL_S >= (double)now);
}

/* 1 when r is c's own record (the same kind, namespace and name). */
int pclaim_rec_same_owner(const cJSON *r, const struct pclaim *c)
{
    return strcmp(pclaim_rec_str(r, "kind"), kind_of(c)) == 0 &&
           strcmp(pclaim_rec_str(r, "namespace"), c->ns) == 0 &&
           strcmp(pclaim_rec_str(r, "name"), c->name) == 0;
}

/* 1 when r is the target of a restore creating c's Etcd (or c the restore of r's Etcd), or r
 * and c the copies of EtcdBackups of one Etcd (a schedule's history shares one prefix). */
static int restored_into(const cJSON *r, const struct pclaim *c)
{
    int c_restore = c->kind && strcmp(c->kind, PCLAIM_KIND_RESTORE) == 0;
    int c_backup = c->kind && strcmp(c->kind, PCLAIM_KIND_BACKUP) == 0;

    if (strcmp(pclaim_rec_str(r, "namespace"), c->ns) != 0)
        return 0;
    if (pclaim_rec_is_restore(r) && !c->kind)
        return strcmp(pclaim_rec_str(r, "etcd"), c->name) == 0;
    if (!*pclaim_rec_str(r, "kind") && c_restore && c->etcd)
        return strcmp(pclaim_rec_str(r, "name"), c->etcd) == 0;
    if (is_backup(r) && c_backup && c->etcd)
        return strcmp(pclaim_rec_str(r, "etcd"), c->etcd) == 0;
    return 0;
}

/* The first record of rec that counts at now and overlaps c for another owner, or NULL. A
 * restore's source is read, never claimed: it is in no claim's way, nor any claim in its. */
static cJSON *conflict_of(const cJSON *rec, const struct pclaim *c, time_t now)
{
    cJSON *r;

    if (strcmp(kind_of(c), PCLAIM_KIND_SOURCE) == 0)
        return NULL;
    cJSON_ArrayForEach (r, rec) {
        if (!cJSON_IsObject(r) || pclaim_rec_is_source(r) || !pclaim_rec_live(r, now) ||
            pclaim_rec_same_owner(r, c) || restored_into(r, c) ||
            !bstore_overlap(c->store, c->prefix, pclaim_rec_str(r, "prefix")))
            continue;
        return r;
    }
    return NULL;
}

void pclaim_rec_describe(const cJSON *r, struct pclaim_other *o)
{
    if (pclaim_rec_is_restore(r))
        snprintf(o->what, sizeof(o->what),
                 "the target prefix \"%s\" of EtcdRestore %s/%s, whose copy is in flight or "
                 "stays there after it failed",
                 pclaim_rec_str(r, "prefix"), pclaim_rec_str(r, "namespace"),
                 pclaim_rec_str(r, "name"));
    else if (pclaim_rec_is_source(r))
        snprintf(o->what, sizeof(o->what),
                 "the source prefix \"%s\" of EtcdRestore %s/%s, admitted to read it",
                 pclaim_rec_str(r, "prefix"), pclaim_rec_str(r, "namespace"),
                 pclaim_rec_str(r, "name"));
    else if (is_backup(r))
        snprintf(o->what, sizeof(o->what),
                 "the destination prefix \"%s\" of EtcdBackup %s/%s, whose copy is starting",
                 pclaim_rec_str(r, "prefix"), pclaim_rec_str(r, "namespace"),
                 pclaim_rec_str(r, "name"));
    else
        snprintf(
            o->what, sizeof(o->what), "the prefix \"%s\" of Etcd %s/%s, admitted at the same time",
            pclaim_rec_str(r, "prefix"), pclaim_rec_str(r, "namespace"), pclaim_rec_str(r, "name"));
    snprintf(o->ns, sizeof(o->ns), "%s", pclaim_rec_str(r, "namespace"));
}

void pclaim_conflict(const cJSON *rec, const struct pclaim *c, time_t now, struct pclaim_other *o)
{
    const cJSON *r = conflict_of(rec, c, now);

    o->what[0] = o->ns[0] = o->refused[0] = '\0';
    if (r)
        pclaim_rec_describe(r, o);
}

int pclaim_pending(const cJSON *rec, const char *ns, time_t now)
{
    const cJSON *r;
    int n = 0;

    cJSON_ArrayForEach (r, rec)
        n += cJSON_IsObject(r) && pclaim_rec_live(r, now) &&
             strcmp(pclaim_rec_str(r, "namespace"), ns) == 0;
    return n;
}

/* c's record as written at now (NULL: out of memory). */
static cJSON *record_of(const struct pclaim *c, time_t now)
{
    cJSON *one = cJSON_CreateObject();

    if (!one || (c->kind && !cJSON_AddStringToObject(one, "kind", c->kind)) ||
        (c->etcd && !cJSON_AddStringToObject(one, "etcd", c->etcd)) ||
        (c->provider && !cJSON_AddStringToObject(one, "provider", c->provider)) ||
        (c->endpoint && !cJSON_AddStringToObject(one, "endpointOverride", c->endpoint)) ||
        (c->uid && !cJSON_AddStringToObject(one, "uid", c->uid)) ||
        !cJSON_AddStringToObject(one, "namespace", c->ns) ||
        !cJSON_AddStringToObject(one, "name", c->name) ||
        !cJSON_AddStringToObject(one, "prefix", c->prefix) ||
        !cJSON_AddNumberToObject(one, "at", (double)now)) {
        cJSON_Delete(one);
        return NULL;
    }
    return one;
}

/* The bytes r takes as written (the array's "," counted); 0 when it cannot be printed. */
static size_t bytes_of(const cJSON *r)
{
    char *t = cJSON_PrintUnformatted(r);
    size_t n = t ? strlen(t) + 1 : 0;

    cJSON_free(t);
    return n;
}

size_t pclaim_record_bytes(const struct pclaim *c, time_t now)
{
    cJSON *r = record_of(c, now);
    size_t n = r ? bytes_of(r) : (size_t)PCLAIM_NS_BYTES + 1; /* fail closed */

    cJSON_Delete(r);
    return n;
}

size_t pclaim_ns_bytes(const cJSON *rec, const char *ns, time_t now)
{
    const cJSON *r;
    size_t n = 0;

    cJSON_ArrayForEach (r, rec)
        if (cJSON_IsObject(r) && pclaim_rec_live(r, now) &&
            strcmp(pclaim_rec_str(r, "namespace"), ns) == 0)
            n += bytes_of(r);
    return n;
}

size_t pclaim_annotation_bytes(const cJSON *lease, const char *text)
{
    const cJSON *a;
    size_t n = strlen(PCLAIM_ANNOTATION) + strlen(text);

    cJSON_ArrayForEach (a, kjson_get(lease, "metadata.annotations"))
        if (a->string && strcmp(a->string, PCLAIM_ANNOTATION) != 0)
            n += strlen(a->string) + (cJSON_IsString(a) ? strlen(a->valuestring) : 0);
    return n;
}

/* The bytes of c's namespace's records counting at now with c's in place of its own. */
static size_t share_of(const cJSON *rec, const struct pclaim *c, time_t now)
{
    const cJSON *r;
    size_t n = pclaim_ns_bytes(rec, c->ns, now) + pclaim_record_bytes(c, now);

    cJSON_ArrayForEach (r, rec)
        if (cJSON_IsObject(r) && pclaim_rec_live(r, now) && pclaim_rec_same_owner(r, c))
            n -= bytes_of(r);
    return n;
}

/* 1 when rec holds a live record of c's object (replaced when c is recorded), else 0. */
static int own(const cJSON *rec, const struct pclaim *c, time_t now)
{
    const cJSON *r;

    cJSON_ArrayForEach (r, rec)
        if (cJSON_IsObject(r) && pclaim_rec_live(r, now) && pclaim_rec_same_owner(r, c))
            return 1;
    return 0;
}

/*
 * 1 when the EtcdRestore of record r is stored and still claims its target (common/rtarget's
 * rtarget_claims: in flight, or Failed after its copy started), or that cannot be told (kept:
 * the safe side); 0 when it is stored and claims nothing (Completed, or Failed before any
 * copy); -1 when it is not stored (or another restore of its name is: the record has a uid).
 */
int pclaim_rec_restore_state(struct k8s_client *k, const cJSON *r)
{
    cJSON *o = NULL;
    enum kerr rc = k8s_get(k, &PCLAIM_RES_RESTORE, pclaim_rec_str(r, "namespace"),
                           pclaim_rec_str(r, "name"), NULL, &o, NULL);
    int keep = 1;

    if (rc == KERR_NOTFOUND)
        return -1;
    if (rc == KERR_OK && *pclaim_rec_str(r, "uid") &&
        strcmp(pclaim_rec_str(r, "uid"),
               kjson_get_str(o, "metadata.uid") ? kjson_get_str(o, "metadata.uid") : "") != 0)
        keep = -1;
    else if (rc == KERR_OK)
        keep = rtarget_claims(o);
    cJSON_Delete(o);
    return keep;
}

int pclaim_rec_restore_claims(struct k8s_client *k, const cJSON *r)
{
    return pclaim_rec_restore_state(k, r) == 1;
}

/* 1 when the EtcdBackup of record r is stored with its copy's destination (status.destination,
 * written with its copy Job) r's claim in store, or that cannot be told (kept); else 0. */
static int backup_stored(struct k8s_client *k, const cJSON *r, const char *store)
{
    cJSON *b = NULL;
    struct bstore_claim c = { "", NULL };
    enum kerr rc = k8s_get(k, &res_backup, pclaim_rec_str(r, "namespace"),
                           pclaim_rec_str(r, "name"), NULL, &b, NULL);
    int keep = rc != KERR_NOTFOUND;

    if (rc == KERR_OK) {
        keep = bstore_claim_init(&c, kjson_get_str(b, "status.destination.provider"),
                                 kjson_get_str(b, "status.destination.container"),
                                 kjson_get_str(b, "status.destination.endpointOverride"),
                                 kjson_get_str(b, "status.destination.prefix"), NULL) == KERR_OK;
        if (keep)
            keep = strcmp(c.key, store) == 0 && strcmp(c.prefix, pclaim_rec_str(r, "prefix")) == 0;
        bstore_claim_release(&c);
    }
    cJSON_Delete(b);
    return keep;
}

/*
 * 1 when the Etcd of record r is stored with r's claim in store, or that cannot be told (an
 * error: kept, the safe side); 0 when the request r recorded was never stored (refused after
 * admission, AlreadyExists) or the object has another claim now.
 */
static int stored(struct k8s_client *k, const cJSON *r, const char *store)
{
    cJSON *etcd = NULL;
    struct bstore_claim c;
    enum kerr rc;
    int keep = 1;

    if (pclaim_rec_is_restore(r))
        return pclaim_rec_restore_claims(k, r);
    if (pclaim_rec_is_source(r)) /* its EtcdRestore stored (the uid recorded, when any) */
        return pclaim_rec_restore_state(k, r) >= 0;
    if (is_backup(r))
        return backup_stored(k, r, store);
    rc = k8s_get(k, &res_etcd, pclaim_rec_str(r, "namespace"), pclaim_rec_str(r, "name"), NULL,
                 &etcd, NULL);
    if (rc == KERR_NOTFOUND)
        return 0;
    if (rc == KERR_OK &&
        bstore_claim_init(&c, kjson_get_str(etcd, "spec.backup.store.provider"),
                          kjson_get_str(etcd, "spec.backup.store.container"),
                          kjson_get_str(etcd, "spec.backup.store.endpointOverride"),
                          kjson_get_str(etcd, "spec.backup.store.prefix"), NULL) == KERR_OK) {
        keep = strcmp(c.key, store) == 0 && strcmp(c.prefix, pclaim_rec_str(r, "prefix")) == 0;
        bstore_claim_release(&c);
    }
    cJSON_Delete(etcd);
    return keep;
}

/* 1 when r was recorded more than PCLAIM_PENDING_S before now and its request never stored. */
static int phantom(struct k8s_client *k, const cJSON *r, const char *store, time_t now)
{
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(r, "at");

    if (pclaim_rec_is_restore(r)) {
        int st = pclaim_rec_restore_state(k, r);

        /* not stored: its EtcdRestore may not be stored yet within PCLAIM_PENDING_S */
        return st == 0 ||
               (st < 0 && cJSON_IsNumber(at) && at->valuedouble + PCLAIM_PENDING_S < (double)now);
    }
    return cJSON_IsNumber(at) && at->valuedouble + PCLAIM_PENDING_S < (double)now &&
           !stored(k, r, store);
}

/* Drop rec's records (of namespace ns; NULL: any) recorded more than PCLAIM_PENDING_S ago
 * whose request was never stored (a GET each). */
static void drop_phantoms(struct k8s_client *k, cJSON *rec, const char *store, const char *ns,
                          time_t now)
{
    cJSON *r, *next;

    for (r = rec->child; r; r = next) {
        next = r->next;
        if (cJSON_IsObject(r) && (!ns || strcmp(pclaim_rec_str(r, "namespace"), ns) == 0) &&
            phantom(k, r, store, now))
            cJSON_Delete(cJSON_DetachItemViaPointer(rec, r));
    }
}

/*
 * Decide c against rec (modified: phantoms dropped): a conflict with another owner into
 * o->what, or c's namespace over its share into o->refused; both "" when c may be recorded.
 */
static void decide(struct k8s_client *k, cJSON *rec, const struct pclaim *c, time_t now,
                   struct pclaim_other *o)
{
    cJSON *r;

    o->what[0] = o->ns[0] = o->refused[0] = '\0';
    while ((r = conflict_of(rec, c, now))) {
        if (!phantom(k, r, c->store, now)) {
            pclaim_rec_describe(r, o);
            return;
        }
        cJSON_Delete(cJSON_DetachItemViaPointer(rec, r));
    }
    if (pclaim_pending(rec, c->ns, now) - own(rec, c, now) < PCLAIM_NS_CLAIMS &&
        share_of(rec, c, now) <= PCLAIM_NS_BYTES)
        return;
    drop_phantoms(k, rec, c->store, c->ns, now);
    if (pclaim_pending(rec, c->ns, now) - own(rec, c, now) >= PCLAIM_NS_CLAIMS)
        snprintf(o->refused, sizeof(o->refused),
                 "namespace %s has %d Etcds with prefix claims in this store admitted in the "
                 "last %d s; retry in a minute (a claim whose request was never stored is "
                 "dropped %d s after it)",
                 c->ns, PCLAIM_NS_CLAIMS, PCLAIM_TTL_S, PCLAIM_PENDING_S);
    else if (share_of(rec, c, now) > PCLAIM_NS_BYTES)
        snprintf(o->refused, sizeof(o->refused),
                 "the prefix claims of namespace %s admitted in this store in the last %d s "
                 "would take more than its share of the store's claim Lease (%d bytes); retry "
                 "in a minute, or use shorter prefixes (a claim whose request was never stored "
                 "is dropped %d s after it)",
                 c->ns, PCLAIM_TTL_S, PCLAIM_NS_BYTES, PCLAIM_PENDING_S);
}

cJSON *pclaim_records(const cJSON *lease)
{
    const cJSON *a = kjson_get(lease, "metadata.annotations");
    const char *s = cJSON_IsObject(a) ? pclaim_rec_str(a, PCLAIM_ANNOTATION) : "";
    cJSON *r = *s ? cJSON_Parse(s) : NULL;

    if (!cJSON_IsArray(r)) {
        cJSON_Delete(r);
        r = cJSON_CreateArray();
    }
    return r;
}

/* lease (OWNED, modified) with rec's live records and c, written as annotation. */
static enum kerr with_claim(cJSON *lease, const cJSON *rec, const struct pclaim *c, time_t now,
                            struct kerr_info *err)
{
    cJSON *out = cJSON_CreateArray(), *one = record_of(c, now), *ann;
    const cJSON *r;
    char *text = NULL;
    enum kerr rc = KERR_OK;
    int kept = 0;

    if (!out || !one || !cJSON_AddItemToArray(out, one)) {
        cJSON_Delete(one);
        rc = kerr_set(err, KERR_NOMEM, NULL);
    }
    cJSON_ArrayForEach (r, rec) {
        if (rc != KERR_OK || !cJSON_IsObject(r) || !pclaim_rec_live(r, now) ||
            pclaim_rec_same_owner(r, c))
            continue; /* one object, one claim: its newer request replaces the record */
        if (++kept >= PCLAIM_MAX) {
            rc = kerr_set(err, KERR_TOOBIG, "more than %d claims of one store admitted in %d s",
                          PCLAIM_MAX, PCLAIM_TTL_S);
            break;
        }
        if (!cJSON_AddItemToArray(out, cJSON_Duplicate(r, 1)))
            rc = kerr_set(err, KERR_NOMEM, NULL);
    }
    if (rc == KERR_OK && !(text = cJSON_PrintUnformatted(out)))
        rc = kerr_set(err, KERR_NOMEM, NULL);
    if (rc == KERR_OK && pclaim_annotation_bytes(lease, text) > PCLAIM_ANNOTATIONS_MAX)
        rc = kerr_set(err, KERR_TOOBIG,
                      "%zu bytes of annotations, more than the %d the API "
                      "server stores",
                      pclaim_annotation_bytes(lease, text), PCLAIM_ANNOTATIONS_MAX);
    ann = rc == KERR_OK ? (cJSON *)kjson_get(lease, "metadata.annotations") : NULL;
    if (rc == KERR_OK && !cJSON_IsObject(ann))
        rc = kjson_set(lease, "metadata.annotations", cJSON_CreateObject(), err);
    if (rc == KERR_OK)
        rc = kjson_setv(lease,
                        (const char *const[]){ "metadata", "annotations", PCLAIM_ANNOTATION, NULL },
                        cJSON_CreateString(text), err);
    cJSON_free(text);
    cJSON_Delete(out);
    return rc;
}

/* A new Lease named name in ns holding c. */
static enum kerr new_lease(const char *ns, const char *name, const struct pclaim *c, time_t now,
                           cJSON **out, struct kerr_info *err)
{
    cJSON *l = cJSON_CreateObject(), *none = cJSON_CreateArray();
    enum kerr rc = l && none ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);

    if (rc == KERR_OK)
        rc = kjson_set_str(l, "apiVersion", "coordination.k8s.io/v1", err);
    if (rc == KERR_OK)
        rc = kjson_set_str(l, "kind", "Lease", err);
    if (rc == KERR_OK)
        rc = kjson_set_str(l, "metadata.name", name, err);
    if (rc == KERR_OK)
        rc = kjson_set_str(l, "metadata.namespace", ns, err);
    if (rc == KERR_OK)
        rc = kjson_set_str(l, "spec.holderIdentity", "warden-webhook", err);
    if (rc == KERR_OK)
        rc = with_claim(l, none, c, now, err);
    cJSON_Delete(none);
    if (rc != KERR_OK) {
        cJSON_Delete(l);
        return rc;
    }
    *out = l;
    return KERR_OK;
}

/* One attempt: KERR_CONFLICT / KERR_EXISTS when another admission wrote in between. */
static enum kerr attempt(struct k8s_client *k, const char *ns, const char *name,
                         const struct pclaim *c, struct pclaim_other *o, struct kerr_info *err)
{
    cJSON *lease = NULL, *rec = NULL, *fresh = NULL;
    time_t now = time(NULL);
    enum kerr rc = k8s_get(k, &PCLAIM_RES_LEASE, ns, name, NULL, &lease, err);

    if (rc == KERR_NOTFOUND) {
        kerr_clear(err);
        rc = new_lease(ns, name, c, now, &fresh, err);
        if (rc == KERR_OK)
            rc = k8s_create(k, &PCLAIM_RES_LEASE, ns, fresh, NULL, NULL, err);
        cJSON_Delete(fresh);
        return rc;
    }
    if (rc != KERR_OK)
        return rc;
    rec = pclaim_records(lease);
    decide(k, rec, c, now, o);
    if (!*o->what && !*o->refused && (rc = with_claim(lease, rec, c, now, err)) == KERR_TOOBIG) {
        /* full: make room by the records of requests never stored, of any namespace */
        kerr_clear(err);
        drop_phantoms(k, rec, c->store, NULL, now);
        rc = with_claim(lease, rec, c, now, err);
    }
    if (!*o->what && !*o->refused && rc == KERR_TOOBIG) { /* refused, the Lease as it was */
        log_warn("prefix claim Lease full", "lease", name, "namespace", c->ns, "error",
                 err ? err->msg : "");
        kerr_clear(err);
        rc = KERR_OK;
        snprintf(o->refused, sizeof(o->refused),
                 "the store's claim Lease %s/%s holds as many claims admitted in the last %d s "
                 "as the API server stores in one object (%d bytes of annotations, at most %d "
                 "claims); retry in a minute (each lapses %d s after it was admitted)",
                 ns, name, PCLAIM_TTL_S, PCLAIM_ANNOTATIONS_MAX, PCLAIM_MAX, PCLAIM_TTL_S);
    } else if (!*o->what && !*o->refused && rc == KERR_OK)
        rc = k8s_update(k, &PCLAIM_RES_LEASE, ns, name, lease, NULL, NULL, err);
    cJSON_Delete(rec);
    cJSON_Delete(lease);
    return rc;
}

/*
 * The names of the Leases of store into names: its own first, then, for an object store, those
 * earlier releases named after the family keys of its container (bstore_legacy_keys), which a
 * webhook of the release before may still be writing during a rolling upgrade (read, never
 * written). How many; -1 when the container does not fit.
 */
int pclaim_lease_names(const char *store, char names[1 + BSTORE_LEGACY_N][64])
{
    char keys[BSTORE_LEGACY_N][BSTORE_KEY_MAX], container[BSTORE_KEY_MAX];
    const char *start = store + strlen(BSTORE_OBJECT "|");
    size_t len;

    pclaim_lease_name(store, names[0], sizeof(names[0]));
    if (strncmp(store, BSTORE_OBJECT "|", strlen(BSTORE_OBJECT "|")) != 0 ||
        (len = strlen(start)) == 0 || start[len - 1] != '|')
        return 1; /* Local: its key never changed */
    snprintf(container, sizeof(container), "%.*s", (int)(len - 1), start);
    if (bstore_legacy_keys(container, keys) != KERR_OK)
        return -1;
    for (int i = 0; i < BSTORE_LEGACY_N; i++)
        pclaim_lease_name(keys[i], names[1 + i], sizeof(names[0]));
    return 1 + BSTORE_LEGACY_N;
}

/* The records of the Leases earlier releases named after the family keys of c's container
 * (lease_names), read: a conflict into *o. */
static enum kerr legacy_conflict(struct k8s_client *k, const char *ns, const struct pclaim *c,
                                 struct pclaim_other *o, struct kerr_info *err)
{
    char names[1 + BSTORE_LEGACY_N][64];
    int n = pclaim_lease_names(c->store, names);
    enum kerr rc = KERR_OK;

    if (n < 0)
        return kerr_set(err, KERR_TOOBIG, "container too long");
    for (int i = 1; i < n && rc == KERR_OK && !*o->what; i++) {
        cJSON *lease = NULL, *rec;

        rc = k8s_get(k, &PCLAIM_RES_LEASE, ns, names[i], NULL, &lease, err);
        if (rc == KERR_NOTFOUND) {
            kerr_clear(err);
            rc = KERR_OK;
            continue;
        }
        if (rc != KERR_OK)
            break;
        rec = pclaim_records(lease);
        pclaim_conflict(rec, c, time(NULL), o);
        cJSON_Delete(rec);
        cJSON_Delete(lease);
    }
    return rc;
}

enum kerr pclaim_take(struct k8s_client *k, const char *ns, const struct pclaim *c,
                      struct pclaim_other *o, struct kerr_info *err)
{
    char name[64];
    enum kerr rc = KERR_CONFLICT;

    o->what[0] = o->ns[0] = o->refused[0] = '\0';
    if ((rc = legacy_conflict(k, ns, c, o, err)) != KERR_OK) {
        log_warn("cannot read an earlier release's claims", "error", err ? err->msg : "");
        return rc;
    }
    if (*o->what)
        return KERR_OK;
    rc = KERR_CONFLICT;
    pclaim_lease_name(c->store, name, sizeof(name));
    for (int i = 0; i < PCLAIM_TRIES && (rc == KERR_CONFLICT || rc == KERR_EXISTS); i++) {
        kerr_clear(err);
        rc = attempt(k, ns, name, c, o, err);
        if (*o->what || *o->refused)
            return KERR_OK;
    }
    if (rc == KERR_CONFLICT || rc == KERR_EXISTS)
        return kerr_set(err, KERR_CONFLICT, "Lease %s/%s: %d conflicting writes in a row", ns, name,
                        PCLAIM_TRIES);
    if (rc != KERR_OK)
        log_warn("cannot record a prefix claim", "lease", name, "error", err ? err->msg : "");
    return rc;
}
