/* bkeover: the sorted index of a bucket's live Etcds finds, for every entry, the same first
 * overlapping Etcd as comparing the entry with each Etcd (bkeclaim_overlapping), on generated
 * prefixes of an object store and of a Local one: ancestors, descendants, siblings that share
 * characters, unreadable prefixes, the whole container, the entry's own Etcd excepted. */
#include "controller/entries/bkeover.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "common/ktime.h"

/* The reference: every Etcd compared with the entry, as bke.c did before the index. */
static struct bkeover_hit brute(const struct bke_bucket *b, const cJSON *etcds, const char *prefix,
                                const char *own)
{
    struct bkeover_hit first = { 0, NULL };
    const cJSON *e;
    struct timespec at;

    cJSON_ArrayForEach (e, etcds) {
        if (strcmp(own, kjson_get_str(e, "metadata.uid")) == 0 || bkeclaim_same_store(b, e) != 1 ||
            bkeclaim_overlapping(b, prefix, kjson_get_str(e, "spec.backup.store.prefix")) == 0)
            continue;
        if (ktime_parse(kjson_get_str(e, "metadata.creationTimestamp"), &at, NULL) != KERR_OK)
            at.tv_sec = 1;
        if (!first.at || (int64_t)at.tv_sec < first.at) {
            first.at = (int64_t)at.tv_sec;
            first.by = kjson_get_str(e, "metadata.uid");
        }
    }
    return first;
}

/* A prefix of up to 6 characters of a small alphabet ('/' makes directories, "." and ".."
 * segments are cleaned); 1 in 40 too long to read. */
static void draw_prefix(char *out, size_t n)
{
    static const char alpha[] = "ab/-.";
    size_t len = (size_t)(rand() % 7), i;

    if (rand() % 40 == 0) {
        memset(out, 'x', n - 1);
        out[n - 1] = '\0';
        return;
    }
    for (i = 0; i < len && i + 1 < n; i++)
        out[i] = alpha[rand() % (int)(sizeof(alpha) - 1)];
    out[i] = '\0';
}

static cJSON *etcd(int i, const char *provider, const char *prefix, int created)
{
    char s[20000], ts[KTIME_LEN + 1], uid[32];
    cJSON *j;

    cr_assert_eq(ktime_format((time_t)(1700000000 + created), ts), KERR_OK);
    snprintf(uid, sizeof(uid), "uid-%d", i);
    snprintf(s, sizeof(s),
             "{\"metadata\":{\"uid\":\"%s\",\"creationTimestamp\":\"%s\"},\"spec\":{\"backup\":"
             "{\"store\":{\"provider\":\"%s\",\"container\":\"bkt\",\"prefix\":\"%s\"}}}}",
             uid, ts, provider, prefix);
    j = cJSON_Parse(s);
    cr_assert_not_null(j);
    return j;
}

static void differential(const char *provider, unsigned seed)
{
    char bs[256], prefix[5000];
    struct bke_bucket b;
    struct kerr_info err = { 0 };
    cJSON *bucket, *etcds = cJSON_CreateArray();
    struct bkeover *ix = NULL;
    int i, round;

    snprintf(bs, sizeof(bs),
             "{\"metadata\":{\"name\":\"b\"},\"spec\":{\"provider\":\"%s\",\"container\":\"bkt\"}}",
             provider);
    bucket = cJSON_Parse(bs);
    cr_assert_eq(bkeclaim_read_bucket(bucket, &b, &err), KERR_OK, "%s", err.msg);
    srand(seed);
    for (i = 0; i < 300; i++) {
        draw_prefix(prefix, (size_t)(rand() % 2 ? 8 : sizeof(prefix)));
        cJSON_AddItemToArray(etcds,
                             etcd(i, rand() % 10 ? provider : "unknown", prefix, rand() % 50));
    }
    cr_assert_eq(bkeover_build(&b, etcds, &ix), KERR_OK);
    for (round = 0; round < 3000; round++) {
        char own[32];
        struct bkeover_hit want, got;

        draw_prefix(prefix, (size_t)(rand() % 2 ? 8 : sizeof(prefix)));
        snprintf(own, sizeof(own), "uid-%d", rand() % 330);
        want = brute(&b, etcds, prefix, own);
        got = bkeover_first(ix, prefix, own);
        cr_assert_eq(got.at, want.at, "%s: prefix \"%.40s\" own %s: at %lld, want %lld", provider,
                     prefix, own, (long long)got.at, (long long)want.at);
    }
    bkeover_free(ix);
    cJSON_Delete(etcds);
    cJSON_Delete(bucket);
}

Test(bkeover, object_store_agrees_with_every_pair)
{
    differential("aws", 1);
}
Test(bkeover, object_store_agrees_with_every_pair_again)
{
    differential("gcp", 7);
}
Test(bkeover, local_store_agrees_with_every_pair)
{
    differential("Local", 3);
}

/* The whole container overlaps everything; the own Etcd never counts. */
Test(bkeover, whole_container_and_own)
{
    struct bke_bucket b = { .key = "Object|bkt|" };
    cJSON *etcds = cJSON_CreateArray();
    struct bkeover *ix = NULL;
    struct bkeover_hit h;

    b.kind = "S3";
    b.container = "bkt";
    cJSON_AddItemToArray(etcds, etcd(1, "aws", "shoot--a/etcd-main", 5));
    cJSON_AddItemToArray(etcds, etcd(2, "aws", "shoot--a/etcd-main-2", 3));
    cr_assert_eq(bkeover_build(&b, etcds, &ix), KERR_OK);
    h = bkeover_first(ix, "", "uid-0");
    cr_assert_eq(h.at, 1700000003);
    cr_assert_str_eq(h.by, "uid-2");
    h = bkeover_first(ix, "shoot--a/etcd-main", "uid-1");
    cr_assert_str_eq(h.by, "uid-2", "a string prefix lists its sibling");
    h = bkeover_first(ix, "shoot--a/etcd-main-2", "uid-2");
    cr_assert_str_eq(h.by, "uid-1", "its sibling lists it");
    h = bkeover_first(ix, "/shoot--a//etcd-main-2/", "uid-2");
    cr_assert_str_eq(h.by, "uid-1", "another spelling of the same prefix");
    h = bkeover_first(ix, "shoot--b", "uid-1");
    cr_assert_eq(h.at, 0);
    bkeover_free(ix);
    cJSON_Delete(etcds);
}
