/*
 * claimsworld - see claimsworld.h.
 */
#include "tests/support/claimsworld.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "common/store.h"
#include "webhook/prefix.h"
#include "webhook/review.h"

unsigned cworld_next(struct cworld *w)
{
    w->seed = w->seed * 1103515245u + 12345u;
    return (w->seed >> 16) & 0x7fff;
}

/* One line of the sequence: "<what> <name> \"<prefix>\" <endpoint>". */
void cworld_note(struct cworld *w, const char *what, const char *name, const char *prefix,
                 const char *endpoint)
{
    size_t n = strlen(w->log);

    if (n + 200 < sizeof(w->log))
        snprintf(w->log + n, sizeof(w->log) - n, "%s %s \"%s\" %s\n", what, name,
                 prefix ? prefix : "", endpoint ? endpoint : "");
}

void cworld_claim_of(const char *provider, const char *endpoint, const char *prefix,
                     struct bstore_claim *c)
{
    cr_assert_eq(bstore_claim_init(c, provider, "bkt", endpoint, prefix, NULL), KERR_OK);
}

void cworld_owner_of(const char *name, const char *provider, const char *endpoint,
                     const char *prefix, char *out, size_t n)
{
    struct bstore_claim c;

    cworld_claim_of(provider, endpoint, prefix, &c);
    cr_assert_lt(snprintf(out, n, "%s|%s|%s", name, c.key, c.prefix), (int)n);
    bstore_claim_release(&c);
}

/* ---- the objects as the API server would hold them ---- */

static cJSON *etcd_json(const struct cworld_cluster *c)
{
    cJSON *o = cJSON_CreateObject();

    kjson_set_str(o, "metadata.namespace", "ns", NULL);
    kjson_set_str(o, "metadata.name", c->name, NULL);
    kjson_set_str(o, "spec.backup.store.provider", c->provider, NULL);
    kjson_set_str(o, "spec.backup.store.container", "bkt", NULL);
    kjson_set_str(o, "spec.backup.store.prefix", c->prefix, NULL);
    if (*c->endpoint)
        kjson_set_str(o, "spec.backup.store.endpointOverride", c->endpoint, NULL);
    return o;
}

static cJSON *entry_json(const struct cworld_entry *e)
{
    cJSON *o = cJSON_CreateObject();

    kjson_set_str(o, "metadata.name", e->name, NULL);
    kjson_set_str(o, "spec.prefix", e->prefix, NULL);
    kjson_set_str(o, "spec.store.provider", bstore_provider_kind(e->provider), NULL);
    kjson_set_str(o, "spec.store.container", "bkt", NULL);
    kjson_set_str(o, "spec.store.endpointOverride", e->endpoint, NULL);
    kjson_set_str(o, "spec.etcd.namespace", "ns", NULL);
    kjson_set_str(o, "spec.etcd.name", e->etcd, NULL);
    if (e->pending)
        kjson_set_str(o, "spec.etcdDeletedAt", "2026-01-01T00:00:00Z", NULL);
    return o;
}

static cJSON *backup_json(const struct cworld_backup *b)
{
    cJSON *o = cJSON_CreateObject();

    kjson_set_str(o, "metadata.namespace", "ns", NULL);
    kjson_set_str(o, "metadata.name", b->name, NULL);
    kjson_set_str(o, "spec.etcdName", b->etcd, NULL);
    kjson_set_str(o, "status.destination.provider", b->provider, NULL);
    kjson_set_str(o, "status.destination.container", "bkt", NULL);
    kjson_set_str(o, "status.destination.prefix", b->prefix, NULL);
    kjson_set_str(o, "status.destination.endpointOverride", b->endpoint, NULL);
    return o;
}

/* The Etcds, entries and backups as lists (OWNED by the caller). */
static void lists(struct cworld *w, cJSON **etcds, cJSON **entries, cJSON **backups)
{
    *etcds = cJSON_CreateArray();
    *entries = cJSON_CreateArray();
    *backups = cJSON_CreateArray();
    for (int i = 0; i < w->nc; i++)
        if (w->c[i].live)
            cJSON_AddItemToArray(*etcds, etcd_json(&w->c[i]));
    for (int i = 0; i < w->ne; i++)
        cJSON_AddItemToArray(*entries, entry_json(&w->e[i]));
    for (int i = 0; i < w->nb; i++)
        if (w->b[i].live)
            cJSON_AddItemToArray(*backups, backup_json(&w->b[i]));
}

/* ---- the webhook's rule, over caches of the current objects ---- */

static const enum prefix_kind k_etcd = PREFIX_ETCD, k_entry = PREFIX_ENTRY,
                              k_backup = PREFIX_BACKUP;

static struct store *cache(const enum prefix_kind *k, const cJSON *items)
{
    struct store_opts o = { prefix_project, (void *)k, 0, NULL, NULL };
    struct store *s = NULL;
    const cJSON *it;
    cr_assert_eq(store_new(&o, &s, NULL), KERR_OK);
    cr_assert_eq(store_add_index(s, PREFIX_INDEX_STORE, prefix_index_store, NULL, NULL), KERR_OK);
    cJSON_ArrayForEach (it, items)
        cr_assert_eq(store_put(s, cJSON_Duplicate(it, 1), NULL, NULL, NULL), KERR_OK);
    return s;
}

/* 1 when the webhook admits the CREATE of c against the caches of w. */
int cworld_admitted(struct cworld *w, const struct cworld_cluster *c)
{
    cJSON *etcds, *entries, *backups;
    struct store *se, *sn, *sb;
    struct review_req req;
    struct review_resp resp;
    int ok;

    lists(w, &etcds, &entries, &backups);
    se = cache(&k_etcd, etcds);
    sn = cache(&k_entry, entries);
    sb = cache(&k_backup, backups);
    review_req_init(&req);
    review_resp_init(&resp);
    cr_assert_eq(review_allow(&resp, "%s", ""), KERR_OK);
    req.op = REVIEW_OP_CREATE;
    req.object = etcd_json(c);
    cr_assert_eq(prefix_check3(se, sn, sb, &req, &resp, NULL), KERR_OK);
    ok = resp.allowed;
    review_resp_release(&resp);
    cJSON_Delete((cJSON *)req.object);
    store_free(se);
    store_free(sn);
    store_free(sb);
    cJSON_Delete(etcds);
    cJSON_Delete(entries);
    cJSON_Delete(backups);
    return ok;
}

/* The claims of w other than skip's overlapping (provider, endpoint, prefix): 1 when any. */
int cworld_claimed(struct cworld *w, const char *provider, const char *endpoint, const char *prefix,
                   const struct claims_skip *skip)
{
    cJSON *etcds, *entries, *backups;
    struct bstore_claim c;
    char why[CLAIMS_WHY_MAX];

    lists(w, &etcds, &entries, &backups);
    cworld_claim_of(provider, endpoint, prefix, &c);
    claims_find_in(etcds, entries, backups, &c, skip, why);
    bstore_claim_release(&c);
    cJSON_Delete(etcds);
    cJSON_Delete(entries);
    cJSON_Delete(backups);
    return *why != '\0';
}

/* ---- the bucket: snapshots where the sidecar writes them ---- */

void cworld_write_snapshot(struct cworld *w, const char *provider, const char *endpoint,
                           const char *prefix, const char *owner, int raced)
{
    struct bstore_claim c;
    char op[256];
    struct cworld_object *o;

    cr_assert_lt(w->no, CWORLD_MAXO);
    cworld_claim_of(provider, endpoint, prefix, &c);
    cr_assert_eq(bstore_object_prefix("S3", prefix, op, sizeof(op)), KERR_OK);
    o = &w->o[w->no++];
    snprintf(o->store, sizeof(o->store), "%s", CWORLD_BUCKET);
    snprintf(o->key, sizeof(o->key), "%s%sv2/Full-00000000-%08d-1700000000.gz", op, *op ? "/" : "",
             ++w->serial);
    snprintf(o->owner, sizeof(o->owner), "%s", owner);
    o->alive = 1;
    o->raced = raced;
    bstore_claim_release(&c);
}

static enum kerr mem_list(struct ostore *s, const char *prefix, struct ostore_list *out,
                          struct kerr_info *err)
{
    struct cworld_memstore *m = (struct cworld_memstore *)s;

    for (int i = 0; i < m->w->no; i++) {
        struct cworld_object *o = &m->w->o[i];
        struct ostore_obj ob = { .key = o->key, .size = 1, .mtime = 1 };

        if (o->alive && strcmp(o->store, m->store) == 0 &&
            strncmp(o->key, prefix, strlen(prefix)) == 0 &&
            ostore_list_add(out, &ob, err) != KERR_OK)
            return KERR_NOMEM;
    }
    return KERR_OK;
}

/* 1 when owner is a live cluster's or an existing backup's. */
static int owned_live(struct cworld *w, const char *owner)
{
    for (int i = 0; i < w->nc; i++)
        if (w->c[i].live && strcmp(w->c[i].owner, owner) == 0)
            return 1;
    for (int i = 0; i < w->nb; i++)
        if (w->b[i].live && strcmp(w->b[i].owner, owner) == 0)
            return 1;
    return 0;
}

static enum kerr mem_del(struct ostore *s, const struct ostore_obj *obj, struct kerr_info *err)
{
    struct cworld_memstore *m = (struct cworld_memstore *)s;

    (void)err;
    for (int i = 0; i < m->w->no; i++) {
        struct cworld_object *o = &m->w->o[i];

        if (!o->alive || strcmp(o->store, m->store) != 0 || strcmp(o->key, obj->key) != 0)
            continue;
        if (owned_live(m->w, o->owner) && !m->w->violation)
            m->w->violation = "a live owner's snapshot was deleted";
        o->alive = 0;
    }
    return KERR_OK;
}

const struct ostore_ops cworld_mem_ops = { .name = "mem", .list = mem_list, .del = mem_del };
