#include "controller/snapshot/snapbolt.h"
#include "controller/snapshot/snapchain.h"
#include "controller/snapshot/snapdb.h"

#include <cJSON.h>

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A bbolt file as etcd's backend writes it, built page by page: 4096-byte pages; 0 and 1
 * meta, 2 the root bucket's leaf (key -> page 3, meta inline), 3 `key`: a leaf, or a
 * branch over leaves 4 and 5. */
#define PS 4096u

struct db {
    unsigned char *b;
    size_t len;
    uint64_t hwm;
};

static void le_put(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void be_put(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * (7 - i)));
}

static uint64_t fnv(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static void meta(struct db *d, uint64_t id, uint64_t txid)
{
    unsigned char *p = d->b + id * PS, *m = p + 16;
    le_put(p, id, 8);
    le_put(p + 8, 0x04, 2);
    le_put(m, 0xED0CDAED, 4);
    le_put(m + 4, 2, 4);
    le_put(m + 8, PS, 4);
    le_put(m + 16, 2, 8); /* root bucket at page 2 */
    le_put(m + 32, UINT64_MAX, 8);
    le_put(m + 40, d->hwm, 8);
    le_put(m + 48, txid, 8);
    le_put(m + 56, fnv(m, 56), 8);
}

/* Leaf elements at page p: n entries (flags, key, value). */
struct ent {
    uint32_t flags;
    const unsigned char *k;
    size_t kl;
    const unsigned char *v;
    size_t vl;
};

static size_t leaf(unsigned char *p, uint64_t id, const struct ent *e, size_t n)
{
    size_t data = 16 + 16 * n;
    le_put(p, id, 8);
    le_put(p + 8, 0x02, 2);
    le_put(p + 10, n, 2);
    for (size_t i = 0; i < n; i++) {
        unsigned char *el = p + 16 + 16 * i;
        le_put(el, e[i].flags, 4);
        le_put(el + 4, data - (16 + 16 * i), 4);
        le_put(el + 8, e[i].kl, 4);
        le_put(el + 12, e[i].vl, 4);
        memcpy(p + data, e[i].k, e[i].kl);
        memcpy(p + data + e[i].kl, e[i].v, e[i].vl);
        data += e[i].kl + e[i].vl;
    }
    return data;
}

/* A revision key and its KeyValue into rk/kv; returns the value's length. */
static size_t revkv(unsigned char rk[18], unsigned char kv[64], uint64_t main, uint64_t sub,
                    const char *key, bool tomb)
{
    size_t n = 0, kl = strlen(key);
    be_put(rk, main);
    rk[8] = '_';
    be_put(rk + 9, sub);
    rk[17] = 't';
    kv[n++] = 0x0a;
    kv[n++] = (unsigned char)kl;
    memcpy(kv + n, key, kl);
    n += kl;
    if (!tomb) {
        kv[n++] = 0x18; /* mod_revision */
        kv[n++] = (unsigned char)main;
        kv[n++] = 0x2a; /* value */
        kv[n++] = 1;
        kv[n++] = 'v';
    }
    return n;
}

struct rev {
    uint64_t main;
    const char *key;
    bool tomb;
};

static void key_leaf(struct db *d, uint64_t id, const struct rev *r, size_t n)
{
    unsigned char rk[8][18], kv[8][64];
    struct ent e[8];
    for (size_t i = 0; i < n; i++) {
        e[i] = (struct ent){ 0, rk[i], r[i].tomb ? 18 : 17, kv[i], 0 };
        e[i].vl = revkv(rk[i], kv[i], r[i].main, 0, r[i].key, r[i].tomb);
    }
    leaf(d->b + id * PS, id, e, n);
}

/* The database: `key` at page 3 (a branch over 4 and 5 when branch), compact: the
 * finishedCompactRev (0: none). */
static struct db build(bool branch, uint64_t compact)
{
    struct db d = { .hwm = branch ? 6 : 4 };
    unsigned char kb[16] = { 0 }, mb[256] = { 0 }, crev[17] = { 0 }, ci[8];
    d.len = d.hwm * PS;
    d.b = calloc(1, d.len);
    cr_assert_not_null(d.b);
    meta(&d, 0, 10);
    meta(&d, 1, 9);
    le_put(kb, 3, 8);
    be_put(crev, compact);
    crev[8] = '_';
    be_put(ci, 77);
    struct ent me[2] = { { 0, (const unsigned char *)"consistent_index", 16, ci, 8 },
                         { 0, (const unsigned char *)"finishedCompactRev", 18, crev, 17 } };
    size_t ml = leaf(mb + 16, 0, me, compact ? 2 : 1); /* inline: header, then the page */
    le_put(mb + 16 + 8, 0x02, 2);
    struct ent root[2] = { { 1, (const unsigned char *)"key", 3, kb, 16 },
                           { 1, (const unsigned char *)"meta", 4, mb, 16 + ml } };
    leaf(d.b + 2 * PS, 2, root, 2);
    struct rev a[] = { { 2, "/a", false }, { 3, "/b", false }, { 4, "/a", true } };
    struct rev b[] = { { 5, "/c", false }, { 6, "/b", false } };
    if (!branch) {
        struct rev all[] = { a[0], a[1], a[2], b[0], b[1] };
        key_leaf(&d, 3, all, 5);
        return d;
    }
    key_leaf(&d, 4, a, 3);
    key_leaf(&d, 5, b, 2);
    unsigned char *p = d.b + 3 * PS;
    le_put(p, 3, 8);
    le_put(p + 8, 0x01, 2);
    le_put(p + 10, 2, 2);
    unsigned char k0[18], k1[18], v[64];
    revkv(k0, v, 2, 0, "/a", false);
    revkv(k1, v, 5, 0, "/c", false);
    for (int i = 0; i < 2; i++) {
        unsigned char *el = p + 16 + 16 * i;
        le_put(el, 32 - 16 * i + 17 * i, 4);
        le_put(el + 4, 17, 4);
        le_put(el + 8, 4 + i, 8);
        memcpy(p + 48 + 17 * i, i ? k1 : k0, 17);
    }
    return d;
}

static enum kerr rd(void *ctx, int64_t off, void *dst, size_t len, struct kerr_info *err)
{
    struct db *d = ctx;
    if (off < 0 || (size_t)off > d->len || len > d->len - (size_t)off)
        return kerr_set(err, KERR_PARSE, "read past the end");
    memcpy(dst, d->b + off, len);
    return KERR_OK;
}

struct seen {
    char log[512];
};

static enum kerr kv(void *ctx, int64_t rev, const unsigned char *k, size_t kl, bool tomb,
                    struct kerr_info *err)
{
    struct seen *s = ctx;
    (void)err;
    size_t n = strlen(s->log);
    snprintf(s->log + n, sizeof s->log - n, "%s%lld%.*s ", tomb ? "-" : "+", (long long)rev,
             (int)kl, (const char *)k);
    return KERR_OK;
}

static enum kerr scan(struct db *d, struct seen *s, struct snapbolt_info *info,
                      struct kerr_info *err)
{
    memset(s, 0, sizeof *s);
    return snapbolt_scan(rd, d, (int64_t)d->len, kv, s, info, err);
}

Test(snapbolt, leaf_and_branch_give_every_revision_in_order)
{
    for (int branch = 0; branch < 2; branch++) {
        struct db d = build(branch, 0);
        struct seen s;
        struct snapbolt_info info;
        struct kerr_info err = { 0 };
        cr_assert_eq(scan(&d, &s, &info, &err), KERR_OK, "%s", err.msg);
        cr_expect_str_eq(s.log, "+2/a +3/b -4/a +5/c +6/b ");
        cr_expect_eq(info.revision, 6);
        cr_expect_eq(info.entries, 5);
        cr_expect_eq(info.meta, 0);
        cr_expect_eq(info.txid, 10);
        cr_expect_eq(info.consistent_index, 77);
        cr_expect_eq(info.page_size, PS);
        free(d.b);
    }
}

Test(snapbolt, compaction_revision_wins_when_higher)
{
    struct db d = build(false, 40);
    struct seen s;
    struct snapbolt_info info;
    cr_assert_eq(scan(&d, &s, &info, NULL), KERR_OK);
    cr_expect_eq(info.revision, 40);
    cr_expect_eq(info.compact_rev, 40);
    free(d.b);
}

Test(snapbolt, meta_pick_as_bbolt)
{
    struct db d = build(false, 0);
    struct seen s;
    struct snapbolt_info info;
    struct kerr_info err = { 0 };
    d.b[16 + 20] ^= 1; /* meta 0's root: checksum no longer matches */
    cr_assert_eq(scan(&d, &s, &info, &err), KERR_OK, "%s", err.msg);
    cr_expect_eq(info.meta, 1);
    d.b[PS + 16] ^= 1; /* meta 1's magic */
    cr_expect_eq(scan(&d, &s, &info, &err), KERR_PARSE);
    cr_expect(strstr(err.msg, "no valid meta page") != NULL, "%s", err.msg);
    free(d.b);
}

/* Damage at off (xor), expect KERR_PARSE with want in the message. */
static void broken(bool branch, size_t off, unsigned char x, const char *want)
{
    struct db d = build(branch, 0);
    struct seen s;
    struct snapbolt_info info;
    struct kerr_info err = { 0 };
    d.b[off] ^= x;
    cr_expect_eq(scan(&d, &s, &info, &err), KERR_PARSE, "offset %zu", off);
    cr_expect(strstr(err.msg, want) != NULL, "offset %zu: %s (want %s)", off, err.msg, want);
    free(d.b);
}

Test(snapbolt, structural_faults_are_named)
{
    broken(false, 3 * PS, 1, "its header says page");               /* key leaf's id */
    broken(false, 3 * PS + 8, 0x12, "neither a branch nor a leaf"); /* leaf -> freelist */
    broken(false, 3 * PS + 11, 0x10, "elements do not fit");
    broken(false, 3 * PS + 16 + 10, 0x10, "runs past the page");     /* first ksize */
    broken(true, 3 * PS + 16 + 8, 0x04, "outside");                  /* child pgid 4 -> 0 */
    broken(true, 3 * PS + 16 + 8, 0x07, "a loop");                   /* child 4 -> 3: itself */
    broken(true, 5 * PS + 0x30 + 7, 0x07, "out of order");           /* page 5's rev 5 -> 2 */
    broken(false, 3 * PS + 16 + 16 * 5 + 8, 0x01, "not a revision"); /* '_' */
}

Test(snapbolt, branch_loop_is_stopped)
{
    struct db d = build(true, 0);
    struct seen s;
    struct snapbolt_info info;
    struct kerr_info err = { 0 };
    /* page 5 turned into a branch pointing at 4 and itself */
    unsigned char *p = d.b + 5 * PS;
    le_put(p + 8, 0x01, 2);
    le_put(p + 10, 2, 2);
    le_put(p + 16, 32, 4);
    le_put(p + 20, 0, 4);
    le_put(p + 24, 5, 8);
    le_put(p + 32, 16, 4);
    le_put(p + 36, 0, 4);
    le_put(p + 40, 5, 8);
    cr_expect_eq(scan(&d, &s, &info, &err), KERR_PARSE);
    cr_expect(strstr(err.msg, "deeper") || strstr(err.msg, "loop") ||
                  strstr(err.msg, "out of order"),
              "%s", err.msg);
    free(d.b);
}

Test(snapbolt, truncated_file_is_refused)
{
    struct db d = build(true, 0);
    struct seen s;
    struct snapbolt_info info;
    struct kerr_info err = { 0 };
    d.len = 4 * PS;
    cr_expect_eq(scan(&d, &s, &info, &err), KERR_PARSE);
    cr_expect(strstr(err.msg, "truncated") != NULL, "%s", err.msg);
    d.len = 100;
    cr_expect_eq(scan(&d, &s, &info, &err), KERR_PARSE);
    free(d.b);
}

Test(snapbolt, no_key_bucket_is_not_etcd)
{
    struct db d = build(false, 0);
    struct seen s;
    struct snapbolt_info info;
    struct kerr_info err = { 0 };
    /* the root's first entry "key" renamed "kez" */
    unsigned char *p = d.b + 2 * PS;
    size_t pos = 16 + (size_t)(p[20] | p[21] << 8);
    p[pos + 2] = 'z';
    cr_expect_eq(scan(&d, &s, &info, &err), KERR_PARSE);
    cr_expect(strstr(err.msg, "no key bucket") != NULL, "%s", err.msg);
    free(d.b);
}

/* ---- snapdb: a database file (what `etcdbrctl restore` leaves), and verify --restored-db ---- */

static void write_db(const struct db *d, char path[64])
{
    snprintf(path, 64, "/tmp/test_snapdb-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, d->b, d->len), (ssize_t)d->len);
    close(fd);
}

Test(snapdb, revision_and_live_keys_of_a_file)
{
    struct db d = build(true, 0);
    struct snapdb_info info;
    struct kerr_info err = { 0 };
    char path[64];

    write_db(&d, path);
    cr_assert_eq(snapdb_inspect(path, 0, &info, &err), KERR_OK, "%s", err.msg);
    cr_expect_eq(info.revision, 6);
    cr_expect_eq(info.keys, 2); /* /a deleted at 4: /b and /c */
    /* a bound of one key: refused, not counted wrong */
    cr_expect_eq(snapdb_inspect(path, 1, &info, &err), KERR_PARSE);
    d.b[PS + 16] ^= 1; /* both meta pages bad */
    d.b[16] ^= 1;
    write_db(&d, path + 0);
    cr_expect_eq(snapdb_inspect(path, 0, &info, &err), KERR_PARSE);
    cr_expect(strstr(err.msg, path) != NULL, "%s", err.msg);
    unlink(path);
    cr_expect_eq(snapdb_inspect("/nonexistent/db", 0, &info, &err), KERR_IO);
    free(d.b);
}

static struct snapchain_result chain_says(int64_t rev, int64_t keys)
{
    struct snapchain_result r;
    memset(&r, 0, sizeof r);
    r.restorable = true;
    r.fault = -1;
    r.revision = rev;
    r.keys = keys;
    return r;
}

Test(snapdb, restored_database_compared_with_the_chain)
{
    struct db d = build(false, 0);
    struct snapchain_result r = chain_says(6, 2);
    struct kerr_info err = { 0 };
    char path[64];

    write_db(&d, path);
    cr_assert_eq(snapchain_compare_restored(path, 0, &r, &err), KERR_OK);
    cr_expect(r.restorable);
    cr_expect(r.restored);
    cr_expect_eq(r.restored_revision, 6);
    cr_expect_eq(r.restored_keys, 2);
    r = chain_says(7, 2); /* the chain ends later than the restore: it lost a delta */
    cr_assert_eq(snapchain_compare_restored(path, 0, &r, &err), KERR_OK);
    cr_expect_not(r.restorable);
    cr_expect(strstr(r.reason, "holds revision 6 and 2 keys; the chain ends at revision 7") != NULL,
              "%s", r.reason);
    r = chain_says(6, 3);
    cr_assert_eq(snapchain_compare_restored(path, 0, &r, &err), KERR_OK);
    cr_expect_not(r.restorable);
    unlink(path);
    r = chain_says(6, 2); /* no database: the restore left nothing */
    cr_assert_eq(snapchain_compare_restored(path, 0, &r, &err), KERR_OK);
    cr_expect_not(r.restorable);
    cr_expect_not(r.restored);
    cr_expect(strstr(r.reason, "the restored database: cannot open") != NULL, "%s", r.reason);
    free(d.b);
}

Test(snapdb, summary_fits_a_termination_message)
{
    struct snapchain_obj v[2];
    char prefix[] = "p/etcd-main", k0[] = "p/etcd-main/v2/Full-00000000-00000002-1700000000";
    struct snapchain c = { .prefix = prefix, .snapshots = 3, .v = v, .n = 2 };
    struct snapchain_result r = chain_says(6, 2);
    char *text = NULL, longkey[5000];
    cJSON *j;

    memset(v, 0, sizeof v);
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = '\0';
    v[0].key = k0;
    v[1].key = longkey;
    v[1].name.created = 1700000060;
    cr_assert_eq(snapchain_summary(&c, &r, NULL, &text, NULL), KERR_OK);
    cr_expect_lt(strlen(text), SNAPCHAIN_SUMMARY_MAX);
    j = cJSON_Parse(text);
    cr_assert_not_null(j);
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(j, "restorable")));
    cr_expect_eq(cJSON_GetObjectItem(j, "revision")->valuedouble, 6);
    cr_expect_str_eq(cJSON_GetObjectItem(j, "newestSnapshotTime")->valuestring,
                     "2023-11-14T22:14:20Z");
    cJSON_Delete(j);
    free(text);
    r.restorable = false;
    r.fault = 1;
    snprintf(r.reason, sizeof r.reason, "hash mismatch");
    cr_assert_eq(snapchain_summary(&c, &r, NULL, &text, NULL), KERR_OK);
    j = cJSON_Parse(text);
    cr_assert_not_null(j);
    cr_expect(cJSON_IsFalse(cJSON_GetObjectItem(j, "restorable")));
    cr_expect_str_eq(cJSON_GetObjectItem(j, "reason")->valuestring, "hash mismatch");
    cr_expect_null(cJSON_GetObjectItem(j, "revision"));
    cJSON_Delete(j);
    free(text);
    cr_assert_eq(snapchain_summary(NULL, NULL, "listing: 403", &text, NULL), KERR_OK);
    cr_expect_str_eq(text, "{\"error\":\"listing: 403\"}");
    free(text);
}
