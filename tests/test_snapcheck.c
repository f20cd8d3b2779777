/* snapcheck: cluster prefixes of a container and the pairs the backup sidecar mixes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>
#include <criterion/criterion.h>

#include "controller/snapshot/snapcheck.h"

static void add_all(struct snapcheck *c, const char *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(snapcheck_add(c, keys[i], NULL), KERR_OK, "%s", keys[i]);
    cr_assert_eq(snapcheck_pairs(c, NULL), KERR_OK);
}

static const struct snapcheck_prefix *prefix(const struct snapcheck *c, const char *p)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->v[i].prefix, p) == 0)
            return &c->v[i];
    return NULL;
}

/* The pair of shorter and longer, or NULL. */
static const struct snapcheck_pair *pair(const struct snapcheck *c, const char *s, const char *l)
{
    for (size_t i = 0; i < c->npairs; i++)
        if (strcmp(c->v[c->pairs[i].shorter].prefix, s) == 0 &&
            strcmp(c->v[c->pairs[i].longer].prefix, l) == 0)
            return &c->pairs[i];
    return NULL;
}

Test(snapcheck, groups_snapshots_by_cluster_prefix)
{
    static const char *const keys[] = {
        "p/etcd/v2/Full-00000000-00000010-1700000000.gz",
        "p/etcd/v2/Incr-00000011-00000020-1700000100.gz",
        "p/etcd/v2/Full-00000000-00000030-1700000200/0000000001",
        "p/etcd/v1/Backup-1600000000/Full-00000000-00000005-1600000000",
        "p/etcd/v2/README.txt",
        "p/etcdv2/Full-00000000-00000010-1700000000",
        "v2/Full-00000000-00000001-1500000000",
        "/abs/x/v2/Incr-00000001-00000002-1500000000",
        "other/v2/Full-abc-def-1700000000",
    };
    struct snapcheck c = { 0 };
    const struct snapcheck_prefix *p;

    add_all(&c, keys, sizeof(keys) / sizeof(keys[0]));
    cr_expect_eq(c.objects, 9);
    cr_assert_eq(c.n, 3, "p/etcd, \"\" and /abs/x");
    p = prefix(&c, "p/etcd");
    cr_assert_not_null(p);
    cr_expect_eq(p->snapshots, 4);
    cr_expect_eq(p->fulls, 2);
    cr_expect_str_eq(p->full.key, "p/etcd/v2/Full-00000000-00000010-1700000000.gz",
                     "a chunk is never the latest full");
    cr_expect_str_eq(p->any.key, "p/etcd/v2/Incr-00000011-00000020-1700000100.gz");
    p = prefix(&c, "");
    cr_assert_not_null(p);
    cr_expect_str_eq(p->canonical, "");
    p = prefix(&c, "/abs/x");
    cr_assert_not_null(p);
    cr_expect_str_eq(p->canonical, "abs/x");
    cr_expect(!p->full.set);
    snapcheck_release(&c);
}

/* "p/etcd" lists "p/etcd-2/...": its restore takes p/etcd-2's newer full and misses it. */
Test(snapcheck, sibling_with_newer_full_breaks_the_shorter)
{
    static const char *const keys[] = {
        "p/etcd/v2/Full-00000000-00000010-1700000000.gz",
        "p/etcd/v2/Incr-00000011-00000020-1700000100.gz",
        "p/etcd-2/v2/Full-00000000-00000009-1700000500.gz",
        "q/etcd/v2/Full-00000000-00000010-1700000000.gz",
    };
    struct snapcheck c = { 0 };
    const struct snapcheck_pair *p;

    add_all(&c, keys, 3);
    cr_assert_eq(c.npairs, 1);
    p = pair(&c, "p/etcd", "p/etcd-2");
    cr_assert_not_null(p);
    cr_expect(!p->newer_full && !p->newer, "revision 9 is before p/etcd's full at 10");
    cr_expect_eq(p->effect, SNAPCHECK_AT_RISK);
    snapcheck_release(&c);

    static const char *const more[] = {
        "p/etcd/v2/Full-00000000-00000010-1700000000.gz",
        "p/etcd-2/v2/Full-00000000-00000500-1700000500.gz",
        "q/etcd/v2/Full-00000000-00000010-1700000000.gz",
    };
    add_all(&c, more, 3);
    cr_assert_eq(c.npairs, 1);
    p = pair(&c, "p/etcd", "p/etcd-2");
    cr_assert_not_null(p);
    cr_expect(p->newer_full && p->newer);
    cr_expect_eq(p->effect, SNAPCHECK_FAILS);
    snapcheck_release(&c);
}

/* A newer delta of the other prefix is fetched by the restore too. */
Test(snapcheck, newer_delta_breaks_too)
{
    static const char *const keys[] = {
        "p/etcd/v2/Full-00000000-00000010-1700000000.gz",
        "p/etcd-2/v2/Full-00000000-00000005-1700000000.gz",
        "p/etcd-2/v2/Incr-00000006-00000050-1700000100.gz",
    };
    struct snapcheck c = { 0 };
    const struct snapcheck_pair *p;

    add_all(&c, keys, 3);
    p = pair(&c, "p/etcd", "p/etcd-2");
    cr_assert_not_null(p);
    cr_expect(!p->newer_full);
    cr_expect(p->newer);
    cr_expect_eq(p->effect, SNAPCHECK_FAILS);
    snapcheck_release(&c);
}

/* A prefix inside another as a path: the rebuilt key exists, the wrong data restores. */
Test(snapcheck, nested_prefix_restores_the_wrong_data)
{
    static const char *const keys[] = {
        "a/v2/Full-00000000-00000010-1700000000",
        "a/b/v2/Full-00000000-00000020-1700000000",
        "v2/Full-00000000-00000001-1700000000",
    };
    struct snapcheck c = { 0 };
    const struct snapcheck_pair *p;

    add_all(&c, keys, 3);
    cr_expect_eq(c.npairs, 3, "\"\" with a and a/b, a with a/b");
    p = pair(&c, "a", "a/b");
    cr_assert_not_null(p);
    cr_expect_eq(p->effect, SNAPCHECK_WRONG_DATA);
    p = pair(&c, "", "a");
    cr_assert_not_null(p);
    cr_expect_eq(p->effect, SNAPCHECK_WRONG_DATA);
    cr_expect_not_null(pair(&c, "", "a/b"));
    snapcheck_release(&c);
}

/* No full snapshot of its own: any snapshot of the other prefix is what a restore takes. */
Test(snapcheck, no_full_of_its_own)
{
    static const char *const keys[] = {
        "x/v2/Incr-00000001-00000002-1700000000",
        "xy/v2/Full-00000000-00000001-1600000000",
    };
    struct snapcheck c = { 0 };
    const struct snapcheck_pair *p;

    add_all(&c, keys, 2);
    p = pair(&c, "x", "xy");
    cr_assert_not_null(p);
    cr_expect(p->newer_full);
    cr_expect_eq(p->effect, SNAPCHECK_FAILS);
    snapcheck_release(&c);
}

Test(snapcheck, apart_is_clean)
{
    static const char *const keys[] = {
        "shoot--a/etcd-main/v2/Full-00000000-00000010-1700000000",
        "shoot--b/etcd-main/v2/Full-00000000-00000010-1700000000",
        "shoot--a/etcd-events/v2/Full-00000000-00000010-1700000000",
    };
    struct snapcheck c = { 0 };

    add_all(&c, keys, 3);
    cr_expect_eq(c.n, 3);
    cr_expect_eq(c.npairs, 0);
    snapcheck_release(&c);
}

/* "/x" and "x" are one canonical prefix although a store keeping the '/' lists them apart. */
Test(snapcheck, canonically_one_prefix)
{
    static const char *const keys[] = {
        "/x/v2/Full-00000000-00000010-1700000000",
        "x/v2/Full-00000000-00000020-1700000000",
    };
    struct snapcheck c = { 0 };

    add_all(&c, keys, 2);
    cr_assert_eq(c.npairs, 1);
    cr_expect_eq(c.pairs[0].effect, SNAPCHECK_APART);
    snapcheck_release(&c);
}

/* Keys in any order land in one sorted set of prefixes. */
Test(snapcheck, unsorted_listing)
{
    static const char *const keys[] = {
        "c/v2/Full-00000000-00000001-1", "a/v2/Full-00000000-00000001-1",
        "b/v2/Full-00000000-00000001-1", "a/v2/Incr-00000002-00000003-2",
        "c/v2/Incr-00000002-00000003-2", "b/v2/Full-00000000-00000009-3",
    };
    struct snapcheck c = { 0 };

    add_all(&c, keys, 6);
    cr_assert_eq(c.n, 3);
    cr_expect_str_eq(c.v[0].prefix, "a");
    cr_expect_str_eq(c.v[1].prefix, "b");
    cr_expect_str_eq(c.v[2].prefix, "c");
    cr_expect_eq(c.v[1].snapshots, 2);
    cr_expect_str_eq(c.v[1].full.key, "b/v2/Full-00000000-00000009-3");
    snapcheck_release(&c);
}

Test(snapcheck, hostile_keys)
{
    char *longkey = malloc(SNAPCHECK_KEY_MAX + 64);
    static const char *const keys[] = {
        "",
        "/",
        "v2/",
        "v1/",
        "v2//",
        "a/v2/Full--1-2",
        "a/v2/Full-1-2-3/4/5",
        "a/v1/Backup-1/",
        "v2/v2/v2/Full-00000000-00000001-1",
        "//v2/Incr-00000001-00000001-1",
    };
    struct snapcheck c = { 0 };

    cr_assert_not_null(longkey);
    memset(longkey, 'a', SNAPCHECK_KEY_MAX + 63);
    memcpy(longkey + SNAPCHECK_KEY_MAX, "/v2/Full-00000000-00000001-1", 28);
    longkey[SNAPCHECK_KEY_MAX + 28] = '\0';
    cr_expect_eq(snapcheck_add(&c, longkey, NULL), KERR_OK);
    cr_expect_eq(snapcheck_add(&c, NULL, NULL), KERR_OK);
    add_all(&c, keys, sizeof(keys) / sizeof(keys[0]));
    cr_expect_eq(c.objects, 12);
    cr_expect_not_null(prefix(&c, "v2/v2"));
    cr_expect_not_null(prefix(&c, "/"));
    cr_expect_null(prefix(&c, "a"), "no parseable snapshot under a");
    snapcheck_release(&c);
    snapcheck_release(&c);
    free(longkey);
}

Test(snapcheck, json_report)
{
    static const char *const keys[] = {
        "p/etcd/v2/Full-00000000-00000010-1700000000.gz",
        "p/etcd-2/v2/Full-00000000-00000500-1700000500.gz",
    };
    struct snapcheck c = { 0 };
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    cJSON *o, *ov;

    add_all(&c, keys, 2);
    cr_assert_eq(snapcheck_print_json(&c, "Object|b|", m, NULL), KERR_OK);
    fclose(m);
    o = cJSON_ParseWithLength(buf, len);
    cr_assert_not_null(o, "%s", buf);
    cr_expect_str_eq(cJSON_GetObjectItem(o, "store")->valuestring, "Object|b|");
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "prefixes")), 2);
    ov = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "overlaps"), 0);
    cr_assert_not_null(ov, "%s", buf);
    cr_expect_str_eq(cJSON_GetObjectItem(ov, "shorter")->valuestring, "p/etcd");
    cr_expect_str_eq(cJSON_GetObjectItem(ov, "longer")->valuestring, "p/etcd-2");
    cr_expect_str_eq(cJSON_GetObjectItem(ov, "restore")->valuestring, "fails");
    cr_expect_str_eq(cJSON_GetObjectItem(ov, "breaks")->valuestring, "p/etcd");
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(ov, "newerFull")));
    cr_expect_str_eq(cJSON_GetObjectItem(ov, "longerLatestFull")->valuestring, keys[1]);
    cJSON_Delete(o);
    free(buf);
    snapcheck_release(&c);
}

Test(snapcheck, text_report)
{
    static const char *const keys[] = {
        "p/etcd/v2/Full-00000000-00000010-1700000000.gz",
        "p/etcd-2/v2/Full-00000000-00000500-1700000500.gz",
    };
    struct snapcheck c = { 0 };
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);

    add_all(&c, keys, 2);
    snapcheck_print_text(&c, "Object|b|", m);
    fclose(m);
    cr_expect(strstr(buf,
                     "check-prefixes: Object|b|: 2 objects, 2 cluster prefixes with snapshots, "
                     "1 overlapping pairs\n") != NULL,
              "%s", buf);
    cr_expect(strstr(buf, "overlap: \"p/etcd\" and \"p/etcd-2\": restore fails\n") != NULL, "%s",
              buf);
    cr_expect(strstr(buf, "restore of \"p/etcd\" fails with NoSuchKey: it takes the newer full "
                          "snapshot p/etcd-2/v2/Full-00000000-00000500-1700000500.gz") != NULL,
              "%s", buf);
    free(buf);
    snapcheck_release(&c);
}

/* A key from the store cannot forge a line of the report. */
Test(snapcheck, text_report_escapes_keys)
{
    static const char *const keys[] = {
        "p\noverlap: \"x\"/v2/Full-00000000-00000010-1700000000",
        "p\noverlap: \"x\"-2/v2/Full-00000000-00000500-1700000500",
    };
    struct snapcheck c = { 0 };
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    int lines = 0;

    add_all(&c, keys, 2);
    cr_assert_eq(c.npairs, 1);
    snapcheck_print_text(&c, "Object|b|", m);
    fclose(m);
    for (size_t i = 0; i < len; i++)
        lines += buf[i] == '\n';
    cr_expect_eq(lines, 6, "%s", buf);
    cr_expect(strstr(buf, "overlap: \"p\\x0aoverlap: \\x22x\\x22\" and ") != NULL, "%s", buf);
    free(buf);
    snapcheck_release(&c);
}

/* Local's sidecar walks the prefix's directory: only a prefix inside another mixes. */
Test(snapcheck, local_walks_directories)
{
    static const char *const keys[] = {
        "p/etcd/v2/Full-00000000-00000010-1700000000",
        "p/etcd-2/v2/Full-00000000-00000500-1700000500",
        "p/etcd/sub/v2/Full-00000000-00000600-1700000600",
    };
    struct snapcheck c = { .local = true };
    const struct snapcheck_pair *p;

    add_all(&c, keys, 3);
    cr_expect_eq(c.npairs, 2);
    p = pair(&c, "p/etcd", "p/etcd-2");
    cr_assert_not_null(p);
    cr_expect_eq(p->effect, SNAPCHECK_APART);
    p = pair(&c, "p/etcd", "p/etcd/sub");
    cr_assert_not_null(p);
    cr_expect_eq(p->effect, SNAPCHECK_WRONG_DATA);
    snapcheck_release(&c);
}

/*
 * GCS, OSS, Swift, ABS (v0.41+) and S3 on a versioned bucket parse the whole listed key: the
 * sibling's newer snapshot is fetched where it is, and the shorter prefix restores its data.
 */
Test(snapcheck, whole_keys_restore_the_siblings_data)
{
    static const char *const keys[] = {
        "p/etcd/v2/Full-00000000-00000010-1700000000.gz",
        "p/etcd-2/v2/Full-00000000-00000500-1700000500.gz",
    };
    struct snapcheck c = { .full_key = true };
    const struct snapcheck_pair *p;

    add_all(&c, keys, 2);
    p = pair(&c, "p/etcd", "p/etcd-2");
    cr_assert_not_null(p);
    cr_expect_eq(p->effect, SNAPCHECK_WRONG_DATA, "not NoSuchKey: the whole key is fetched");
    snapcheck_release(&c);
}
