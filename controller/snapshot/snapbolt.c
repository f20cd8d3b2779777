/* snapbolt - etcd's bbolt database read without etcd (see snapbolt.h). */
#include "controller/snapshot/snapbolt.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HDR           16u
#define ELEM          16u
#define META_LEN      64u /* meta fields, checksum included */
#define META_SUMMED   56u
#define MAGIC         0xED0CDAEDu
#define F_BRANCH      0x01u
#define F_LEAF        0x02u
#define BUCKET_LEAF   0x01u
#define REV_LEN       17u
#define DEFAULT_PSIZE 4096u
#define NO_PGID       UINT64_MAX

struct scan;
typedef enum kerr (*leaf_fn)(struct scan *sc, uint32_t flags, const unsigned char *k, size_t kl,
                             const unsigned char *v, size_t vl, struct kerr_info *err);

struct scan {
    snapbolt_read_fn rd;
    void *rctx;
    snapbolt_kv_fn kv;
    void *kctx;
    int64_t size;
    uint32_t ps;
    uint64_t hwm;
    uint64_t budget; /* page reads left */
    struct snapbolt_info *info;
    unsigned char key_root[8];               /* the root bucket's root page id */
    unsigned char *key_inline, *meta_inline; /* OWNS: the key and meta buckets' values */
    size_t key_inline_len, meta_inline_len;
    uint64_t last_main, last_sub; /* the last revision of `key` */
    bool last_tomb, any;
};

static uint64_t le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint64_t be64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

static uint64_t fnv64a(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* m: a meta (after the page header). NULL when valid, else why not. */
static const char *meta_fault(const unsigned char *m)
{
    if (le(m, 4) != MAGIC)
        return "bad magic";
    if (le(m + 4, 4) != 2)
        return "version is not 2";
    if (le(m + 56, 8) != fnv64a(m, META_SUMMED))
        return "checksum mismatch";
    return NULL;
}

static bool psize_ok(uint64_t ps)
{
    return ps >= 512 && ps <= 65536 && (ps & (ps - 1)) == 0;
}

/* The meta page pick, as bbolt opens a file. */
static enum kerr read_meta(struct scan *sc, struct kerr_info *err)
{
    unsigned char m0[HDR + META_LEN], m1[HDR + META_LEN];
    const char *f0 = NULL, *f1 = NULL;
    enum kerr rc;

    if (sc->size < (int64_t)(2 * (HDR + META_LEN)))
        return kerr_set(err, KERR_PARSE, "%" PRId64 " bytes: too short for a bbolt file", sc->size);
    if ((rc = sc->rd(sc->rctx, 0, m0, sizeof m0, err)) != KERR_OK)
        return rc;
    f0 = meta_fault(m0 + HDR);
    sc->ps = DEFAULT_PSIZE;
    if (!f0 && !psize_ok(le(m0 + HDR + 8, 4)))
        f0 = "page size out of range";
    if (!f0)
        sc->ps = (uint32_t)le(m0 + HDR + 8, 4);
    if ((int64_t)sc->ps + (int64_t)sizeof m1 > sc->size)
        f1 = "beyond the end of the file";
    else if ((rc = sc->rd(sc->rctx, sc->ps, m1, sizeof m1, err)) != KERR_OK)
        return rc;
    else if ((f1 = meta_fault(m1 + HDR)) == NULL && le(m1 + HDR + 8, 4) != sc->ps)
        f1 = "page size differs from meta 0's";
    if (f0 && f1)
        return kerr_set(err, KERR_PARSE, "no valid meta page: meta 0: %s; meta 1: %s", f0, f1);
    const unsigned char *m = m0 + HDR;
    sc->info->meta = 0;
    if (f0 || (!f1 && le(m1 + HDR + 48, 8) > le(m0 + HDR + 48, 8))) {
        m = m1 + HDR;
        sc->info->meta = 1;
    }
    sc->info->page_size = sc->ps;
    sc->info->txid = le(m + 48, 8);
    sc->hwm = le(m + 40, 8);
    sc->info->high_water = sc->hwm;
    if (sc->hwm < 3 || sc->hwm > (uint64_t)sc->size / sc->ps)
        return kerr_set(err, KERR_PARSE,
                        "meta %d: %" PRIu64 " pages in use, the file holds %" PRId64
                        " (truncated?)",
                        sc->info->meta, sc->hwm, sc->size / sc->ps);
    sc->budget = 4 * sc->hwm;
    memcpy(sc->key_root, m + 16, 8); /* the root bucket's root pgid; sequence unused */
    return KERR_OK;
}

/* Page pgid and its overflow into *out (OWNS, *len bytes). */
static enum kerr load(struct scan *sc, uint64_t pgid, unsigned char **out, size_t *len,
                      struct kerr_info *err)
{
    unsigned char h[HDR];
    enum kerr rc;

    *out = NULL;
    if (pgid < 2 || pgid >= sc->hwm)
        return kerr_set(err, KERR_PARSE, "page id %" PRIu64 " outside 2..%" PRIu64, pgid,
                        sc->hwm - 1);
    if (sc->budget == 0)
        return kerr_set(err, KERR_PARSE, "page %" PRIu64 ": more page reads than pages (a loop)",
                        pgid);
    sc->budget--;
    if ((rc = sc->rd(sc->rctx, (int64_t)(pgid * sc->ps), h, HDR, err)) != KERR_OK)
        return rc;
    uint64_t ovf = le(h + 12, 4);
    if (le(h, 8) != pgid)
        return kerr_set(err, KERR_PARSE, "page %" PRIu64 ": its header says page %" PRIu64, pgid,
                        le(h, 8));
    if (ovf >= sc->hwm - pgid || (ovf + 1) * sc->ps > SNAPBOLT_RUN_MAX)
        return kerr_set(err, KERR_PARSE,
                        "page %" PRIu64 ": overflow of %" PRIu64 " pages runs past the end "
                        "(or over %u bytes)",
                        pgid, ovf, SNAPBOLT_RUN_MAX);
    *len = (size_t)((ovf + 1) * sc->ps);
    if ((*out = malloc(*len)) == NULL)
        return kerr_set(err, KERR_NOMEM, NULL);
    rc = sc->rd(sc->rctx, (int64_t)(pgid * sc->ps), *out, *len, err);
    if (rc != KERR_OK) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

static enum kerr walk_pgid(struct scan *sc, uint64_t pgid, int depth, leaf_fn fn,
                           struct kerr_info *err);

/* The elements of the page p (len bytes; pgid NO_PGID when inline). */
static enum kerr walk_page(struct scan *sc, const unsigned char *p, size_t len, uint64_t pgid,
                           int depth, leaf_fn fn, struct kerr_info *err)
{
    uint32_t flags = (uint32_t)le(p + 8, 2), count = (uint32_t)le(p + 10, 2);
    char where[48];
    enum kerr rc = KERR_OK;

    if (pgid == NO_PGID)
        snprintf(where, sizeof where, "inline page");
    else
        snprintf(where, sizeof where, "page %" PRIu64, pgid);
    if (HDR + (size_t)count * ELEM > len)
        return kerr_set(err, KERR_PARSE, "%s: %u elements do not fit", where, count);
    if (flags != F_LEAF && flags != F_BRANCH)
        return kerr_set(err, KERR_PARSE, "%s: neither a branch nor a leaf (flags 0x%x)", where,
                        flags);
    if (flags == F_BRANCH && depth >= SNAPBOLT_MAX_DEPTH)
        return kerr_set(err, KERR_PARSE, "%s: tree deeper than %d", where, SNAPBOLT_MAX_DEPTH);
    for (uint32_t i = 0; rc == KERR_OK && i < count; i++) {
        const unsigned char *e = p + HDR + (size_t)i * ELEM;
        size_t at = HDR + (size_t)i * ELEM;
        uint64_t pos = le(e + 4 * (flags == F_LEAF), 4);
        uint64_t ks = le(e + 4 + 4 * (flags == F_LEAF), 4);
        uint64_t vs = flags == F_LEAF ? le(e + 12, 4) : 0;
        if (at + pos + ks + vs > len)
            return kerr_set(err, KERR_PARSE, "%s: element %u runs past the page", where, i);
        if (flags == F_BRANCH)
            rc = walk_pgid(sc, le(e + 8, 8), depth + 1, fn, err);
        else
            rc = fn(sc, (uint32_t)le(e, 4), p + at + pos, ks, p + at + pos + ks, vs, err);
    }
    return rc;
}

static enum kerr walk_pgid(struct scan *sc, uint64_t pgid, int depth, leaf_fn fn,
                           struct kerr_info *err)
{
    unsigned char *p = NULL;
    size_t len = 0;
    enum kerr rc = load(sc, pgid, &p, &len, err);
    if (rc == KERR_OK)
        rc = walk_page(sc, p, len, pgid, depth, fn, err);
    free(p);
    return rc;
}

/* A bucket by its value v: its root page or its inline page. */
static enum kerr walk_bucket(struct scan *sc, const char *name, const unsigned char *v, size_t vl,
                             leaf_fn fn, struct kerr_info *err)
{
    uint64_t root = le(v, 8);
    if (root != 0)
        return walk_pgid(sc, root, 0, fn, err);
    if (vl < 16 + HDR)
        return kerr_set(err, KERR_PARSE, "bucket %s: inline page too short", name);
    return walk_page(sc, v + 16, vl - 16, NO_PGID, 0, fn, err);
}

static bool is_name(const unsigned char *k, size_t kl, const char *s)
{
    return kl == strlen(s) && memcmp(k, s, kl) == 0;
}

/* Keep the `key` and `meta` buckets' values (copied: the root page is freed). */
static enum kerr root_leaf(struct scan *sc, uint32_t flags, const unsigned char *k, size_t kl,
                           const unsigned char *v, size_t vl, struct kerr_info *err)
{
    bool key = is_name(k, kl, "key"), meta = is_name(k, kl, "meta");
    unsigned char **in = key ? &sc->key_inline : &sc->meta_inline;

    if (!key && !meta)
        return KERR_OK;
    if (!(flags & BUCKET_LEAF) || vl < 16)
        return kerr_set(err, KERR_PARSE, "root entry %s is not a bucket", key ? "key" : "meta");
    if (*in != NULL)
        return kerr_set(err, KERR_PARSE, "bucket %s twice in the root", key ? "key" : "meta");
    if ((*in = malloc(vl)) == NULL)
        return kerr_set(err, KERR_NOMEM, NULL);
    memcpy(*in, v, vl);
    *(key ? &sc->key_inline_len : &sc->meta_inline_len) = vl;
    return KERR_OK;
}

static bool varint(const unsigned char **p, const unsigned char *end, uint64_t *out)
{
    *out = 0;
    for (int shift = 0; shift < 64 && *p < end; shift += 7) {
        unsigned char b = *(*p)++;
        *out |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return true;
    }
    return false;
}

/* mvccpb.KeyValue: field 1 (key) and 3 (mod_revision). */
static bool keyvalue(const unsigned char *p, size_t n, const unsigned char **key, size_t *kl,
                     uint64_t *mod)
{
    const unsigned char *end = p + n;
    uint64_t tag, v;

    *key = NULL;
    *kl = 0;
    *mod = 0;
    while (p < end) {
        if (!varint(&p, end, &tag))
            return false;
        switch (tag & 7) {
        case 0:
            if (!varint(&p, end, &v))
                return false;
            if (tag >> 3 == 3)
                *mod = v;
            break;
        case 1:
        case 5: {
            size_t w = (tag & 7) == 1 ? 8 : 4;
            if ((size_t)(end - p) < w)
                return false;
            p += w;
            break;
        }
        case 2:
            if (!varint(&p, end, &v) || v > (uint64_t)(end - p))
                return false;
            if (tag >> 3 == 1) {
                *key = p;
                *kl = (size_t)v;
            }
            p += v;
            break;
        default:
            return false;
        }
    }
    return true;
}

static enum kerr key_leaf(struct scan *sc, uint32_t flags, const unsigned char *k, size_t kl,
                          const unsigned char *v, size_t vl, struct kerr_info *err)
{
    const unsigned char *key;
    size_t klen;
    uint64_t mod, main, sub;
    bool tomb = kl == REV_LEN + 1 && k[REV_LEN] == 't';

    if ((flags & BUCKET_LEAF) || (kl != REV_LEN && !tomb) || k[8] != '_')
        return kerr_set(err, KERR_PARSE, "bucket key: entry %" PRId64 " is not a revision",
                        sc->info->entries);
    main = be64(k);
    sub = be64(k + 9);
    if (main > INT64_MAX ||
        (sc->any && (main < sc->last_main || (main == sc->last_main && sub < sc->last_sub) ||
                     (main == sc->last_main && sub == sc->last_sub && tomb <= sc->last_tomb))))
        return kerr_set(err, KERR_PARSE,
                        "bucket key: revision %" PRIu64 "_%" PRIu64 " out of order after %" PRIu64
                        "_%" PRIu64,
                        main, sub, sc->last_main, sc->last_sub);
    sc->any = true;
    sc->last_main = main;
    sc->last_sub = sub;
    sc->last_tomb = tomb;
    if (!keyvalue(v, vl, &key, &klen, &mod) || key == NULL || (!tomb && mod != main))
        return kerr_set(err, KERR_PARSE,
                        "bucket key: revision %" PRIu64 "_%" PRIu64 ": not a KeyValue of it", main,
                        sub);
    sc->info->entries++;
    if (main == 0) /* below etcd's restore range: never read */
        return KERR_OK;
    sc->info->max_key_rev = (int64_t)main;
    return sc->kv(sc->kctx, (int64_t)main, key, klen, tomb, err);
}

static enum kerr meta_leaf(struct scan *sc, uint32_t flags, const unsigned char *k, size_t kl,
                           const unsigned char *v, size_t vl, struct kerr_info *err)
{
    (void)err;
    if (flags & BUCKET_LEAF)
        return KERR_OK;
    if (is_name(k, kl, "finishedCompactRev") && vl >= 8 && be64(v) <= INT64_MAX)
        sc->info->compact_rev = (int64_t)be64(v);
    if (is_name(k, kl, "consistent_index") && vl == 8)
        sc->info->consistent_index = be64(v);
    return KERR_OK;
}

enum kerr snapbolt_scan(snapbolt_read_fn rd, void *rctx, int64_t size, snapbolt_kv_fn kv,
                        void *kctx, struct snapbolt_info *out, struct kerr_info *err)
{
    struct scan sc = { .rd = rd, .rctx = rctx, .kv = kv, .kctx = kctx, .size = size, .info = out };
    enum kerr rc;

    memset(out, 0, sizeof *out);
    rc = read_meta(&sc, err);
    if (rc == KERR_OK)
        rc = walk_pgid(&sc, le(sc.key_root, 8), 0, root_leaf, err);
    if (rc == KERR_OK && (!sc.key_inline || !sc.meta_inline))
        rc = kerr_set(err, KERR_PARSE, "no %s bucket: not an etcd database",
                      sc.key_inline ? "meta" : "key");
    if (rc == KERR_OK)
        rc = walk_bucket(&sc, "meta", sc.meta_inline, sc.meta_inline_len, meta_leaf, err);
    if (rc == KERR_OK)
        rc = walk_bucket(&sc, "key", sc.key_inline, sc.key_inline_len, key_leaf, err);
    free(sc.key_inline);
    free(sc.meta_inline);
    if (rc == KERR_OK) {
        out->revision = out->max_key_rev > out->compact_rev ? out->max_key_rev : out->compact_rev;
        if (out->revision < 1)
            out->revision = 1;
    }
    return rc;
}
