#include "controller/snapshot/snapname.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Valid keys of shared/reference/etcd-druid.md section 4.2 and what they parse to. */
struct valid {
    const char *key;
    enum snap_kind kind;
    long long start, last, created;
    const char *compression;
    bool final, chunk;
    int layout;
    const char *dir;
    const char *name;
    size_t prefix_len;
};

static const struct valid valid[] = {
    { "p/v2/Full-00000000-00009002-1565021494.gz", SNAP_FULL, 0, 9002, 1565021494, ".gz", false,
      false, 2, "", "Full-00000000-00009002-1565021494.gz", 2 },
    { "p/v2/Incr-00009003-00009100-1565021794.gz", SNAP_INCR, 9003, 9100, 1565021794, ".gz", false,
      false, 2, "", "Incr-00009003-00009100-1565021794.gz", 2 },
    { "a/b/v2/Full-00000000-00000010-100", SNAP_FULL, 0, 10, 100, "", false, false, 2, "",
      "Full-00000000-00000010-100", 4 },
    { "p/v2/Full-00000000-00000010-100.final", SNAP_FULL, 0, 10, 100, "", true, false, 2, "",
      "Full-00000000-00000010-100.final", 2 },
    { "p/v2/Full-00000000-00000010-100.Z.final", SNAP_FULL, 0, 10, 100, ".Z", true, false, 2, "",
      "Full-00000000-00000010-100.Z.final", 2 },
    { "p/v2/Incr-00000011-00000020-200.zlib", SNAP_INCR, 11, 20, 200, ".zlib", false, false, 2, "",
      "Incr-00000011-00000020-200.zlib", 2 },
    { "p/v2/Full-00000000-00000010-100.gz/0000000001", SNAP_FULL, 0, 10, 100, ".gz", false, true, 2,
      "", "Full-00000000-00000010-100.gz", 2 },
    { "p/v1/Backup-1565021494/Full-00000000-00009002-1565021494", SNAP_FULL, 0, 9002, 1565021494,
      "", false, false, 1, "Backup-1565021494", "Full-00000000-00009002-1565021494", 2 },
    { "p/v1/Backup-1/Incr-00000003-00000004-5.gz/7", SNAP_INCR, 3, 4, 5, ".gz", false, true, 1,
      "Backup-1", "Incr-00000003-00000004-5.gz", 2 },
    { "v2/Full-00000000-00000001-1", SNAP_FULL, 0, 1, 1, "", false, false, 2, "",
      "Full-00000000-00000001-1", 0 },
    /* the last v1/ or v2/ counts */
    { "v1/x/v2/Full-1-1-1", SNAP_FULL, 1, 1, 1, "", false, false, 2, "", "Full-1-1-1", 5 },
    { "p/v2/Full-5-5-99999999999", SNAP_FULL, 5, 5, 99999999999LL, "", false, false, 2, "",
      "Full-5-5-99999999999", 2 },
    /* any suffix, read as ParseSnapshot reads it */
    { "p/v2/Full-00000000-00000010-100.zst", SNAP_FULL, 0, 10, 100, ".zst", false, false, 2, "",
      "Full-00000000-00000010-100.zst", 2 },
    { "p/v2/Full-00000000-00000010-100.bz2.final", SNAP_FULL, 0, 10, 100, ".bz2", true, false, 2,
      "", "Full-00000000-00000010-100.bz2.final", 2 },
    { "p/v2/Full-00000000-00000010-100.final.gz", SNAP_FULL, 0, 10, 100, "", false, false, 2, "",
      "Full-00000000-00000010-100.final.gz", 2 },
    { "p/v2/Full-00000000-00000010-100.gz.gz", SNAP_FULL, 0, 10, 100, ".gz", false, false, 2, "",
      "Full-00000000-00000010-100.gz.gz", 2 },
    { "p/v2/Full-00000000-00000010-100.", SNAP_FULL, 0, 10, 100, ".", false, false, 2, "",
      "Full-00000000-00000010-100.", 2 },
};

Test(snapname, valid_table)
{
    for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++) {
        const struct valid *v = &valid[i];
        struct snap_name s;
        struct kerr_info err = { 0 };
        cr_assert_eq(snap_parse(v->key, &s, &err), KERR_OK, "%s: %s", v->key, err.msg);
        cr_assert_eq(s.kind, v->kind, "%s", v->key);
        cr_assert_eq(s.start_rev, v->start, "%s", v->key);
        cr_assert_eq(s.last_rev, v->last, "%s", v->key);
        cr_assert_eq(s.created, v->created, "%s", v->key);
        cr_assert_str_eq(s.compression, v->compression, "%s", v->key);
        cr_assert_eq(s.is_final, v->final, "%s", v->key);
        cr_assert_eq(s.is_chunk, v->chunk, "%s", v->key);
        cr_assert_eq(s.layout, v->layout, "%s", v->key);
        cr_assert_str_eq(s.snap_dir, v->dir, "%s", v->key);
        cr_assert_str_eq(s.name, v->name, "%s", v->key);
        cr_assert_eq(s.prefix_len, v->prefix_len, "%s", v->key);
    }
}

Test(snapname, invalid_table)
{
    static const struct {
        const char *key;
        const char *why;
    } bad[] = {
        { "p/Full-00000000-00000010-100", "no v1/ or v2/" },
        { "p/v3/Full-00000000-00000010-100", "no v1/ or v2/" },
        { "p/xv2/Full-00000000-00000010-100", "no v1/ or v2/" },
        { "p/v2/Chunk-00000000-00000010-100", "unknown snapshot kind" },
        { "p/v2/full-00000000-00000010-100", "unknown snapshot kind" },
        { "p/v2/Full-00000000-00000010", "fields, not 4" },
        { "p/v2/Full-00000000-00000010-100-7", "more than 4" },
        { "p/v2/Full-0000000a-00000010-100", "invalid revision" },
        { "p/v2/Full-+1-00000010-100", "invalid revision" },
        { "p/v2/Full--00000010-100", "invalid revision" },
        { "p/v2/Incr-00000020-00000010-100", "is after last revision" },
        { "p/v2/Full-00000000-00000010-", "invalid creation time" },
        { "p/v2/Full-00000000-00000010-1x0", "invalid creation time" },
        { "p/v2/", "empty or too long" },
        { "p/v2/Full-00000000-00000010-100/", "chunk" },
        { "p/v2/Full-00000000-00000010-100/a/b", "chunk" },
        { "p/v1/Full-00000000-00000010-100", "snapshot directory" },
        { "p/v1//Full-00000000-00000010-100", "snapshot directory" },
        { "p/v2/Full-0000000000000000000-00000010-100", "invalid revision" },
        { "p/v2/README.txt", "fields" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct snap_name s;
        struct kerr_info err = { 0 };
        cr_assert_eq(snap_parse(bad[i].key, &s, &err), KERR_PARSE, "%s accepted", bad[i].key);
        cr_assert(strstr(err.msg, bad[i].why) != NULL, "%s: \"%s\" lacks \"%s\"", bad[i].key,
                  err.msg, bad[i].why);
    }
    struct snap_name s;
    cr_assert_eq(snap_parse(NULL, &s, NULL), KERR_PARSE);
}

Test(snapname, build_and_key_round_trip)
{
    struct snap_name s;
    char *key = NULL;
    cr_assert_eq(snap_parse("x/y/v2/Full-00000000-00002300-1700002000.gz.final", &s, NULL),
                 KERR_OK);
    s.created = 1700086400;
    cr_assert_eq(snap_build_name(&s, NULL), KERR_OK);
    cr_assert_str_eq(s.name, "Full-00000000-00002300-1700086400.gz.final");
    cr_assert_eq(snap_key("x/y", &s, &key, NULL), KERR_OK);
    cr_assert_str_eq(key, "x/y/v2/Full-00000000-00002300-1700086400.gz.final");
    free(key);

    cr_assert_eq(snap_parse("p/v1/Backup-1/Incr-00000003-00000004-5.Z", &s, NULL), KERR_OK);
    snprintf(s.snap_dir, sizeof s.snap_dir, "Backup-9");
    s.created = 9;
    cr_assert_eq(snap_build_name(&s, NULL), KERR_OK);
    cr_assert_eq(snap_key("p", &s, &key, NULL), KERR_OK);
    cr_assert_str_eq(key, "p/v1/Backup-9/Incr-00000003-00000004-9.Z");
    free(key);

    s.last_rev = 1;
    cr_assert_eq(snap_build_name(&s, NULL), KERR_INVAL);
    s.last_rev = 4;
    memcpy(s.suffix, ".x/z", 5);
    cr_assert_eq(snap_build_name(&s, NULL), KERR_INVAL);

    /* An unknown compression is kept verbatim in the copy's name. */
    cr_assert_eq(snap_parse("p/v2/Full-00000000-00000010-100.zst.final", &s, NULL), KERR_OK);
    s.created = 200;
    cr_assert_eq(snap_build_name(&s, NULL), KERR_OK);
    cr_assert_str_eq(s.name, "Full-00000000-00000010-200.zst.final");
}

Test(snapname, prefix_cleaned_as_path_join)
{
    static const char *const cases[][2] = {
        { "etcd-main/", "etcd-main" },
        { "etcd-main", "etcd-main" },
        { "a//b///", "a/b" },
        { "./a/./b", "a/b" },
        { "a/../b", "b" },
        { "a/b/../..", "" },
        { "", "" },
        { ".", "" },
        { "/", "" },
        { "/a/b/", "/a/b" },
        { "/../a", "/a" },
        { "../a", "../a" },
        { "../../a/..", "../.." },
        { "shoot--x/etcd-main", "shoot--x/etcd-main" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out = NULL;
        cr_assert_eq(snap_clean_prefix(cases[i][0], &out, NULL), KERR_OK);
        cr_assert_str_eq(out, cases[i][1], "\"%s\" -> \"%s\"", cases[i][0], out);
        free(out);
    }
}

Test(snapname, order_of_etcd_backup_restore)
{
    struct snap_name a, b, c, d;
    cr_assert_eq(snap_parse("p/v2/Full-00000000-00000010-300", &a, NULL), KERR_OK);
    cr_assert_eq(snap_parse("p/v2/Incr-00000011-00000020-100", &b, NULL), KERR_OK);
    cr_assert_eq(snap_parse("p/v2/Full-00000000-00000020-50/1", &c, NULL), KERR_OK);
    cr_assert_eq(snap_parse("p/v2/Full-00000000-00000020-400", &d, NULL), KERR_OK);
    cr_assert_lt(snap_cmp(&a, &b), 0, "last revision first, whatever the time");
    cr_assert_lt(snap_cmp(&b, &c), 0, "non-chunk before chunk at equal revision");
    cr_assert_lt(snap_cmp(&d, &c), 0, "non-chunk before chunk even when newer");
    cr_assert_lt(snap_cmp(&b, &d), 0, "then creation time");
    cr_assert_eq(snap_cmp(&a, &a), 0);
}
