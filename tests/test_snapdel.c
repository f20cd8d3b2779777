/* snapdel: delete-snapshots against an in-memory store double (ostore's interface). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "controller/snapshot/snapdel.h"

#define MAXV 4

/* One key with its versions, newest last; lock: 0 none, > 0 until then, -1 forever. */
struct fkey {
    const char *key;
    int nv;
    int64_t lock;
    enum kerr fail; /* what a delete answers, KERR_OK: as the lock says */
};

struct fake {
    struct ostore base;
    struct fkey *keys;
    size_t n;
    int lists, deletes;
    const int64_t *mtimes; /* last modified of keys[i], Unix seconds; NULL: all unknown (0) */
    const int *marks;      /* keys[i] carries warden-snapshot's mark: 1, 0; -1: its head fails */
    int heads;
};

static enum kerr f_list(struct ostore *s, const char *prefix, struct ostore_list *out,
                        struct kerr_info *err)
{
    struct fake *f = (struct fake *)s;
    char v[16];

    f->lists++;
    for (size_t i = 0; i < f->n; i++) {
        struct ostore_obj o = { 0 };

        if (f->keys[i].nv == 0 || strncmp(f->keys[i].key, prefix, strlen(prefix)) != 0)
            continue;
        snprintf(v, sizeof(v), "v%d", f->keys[i].nv);
        o.key = (char *)f->keys[i].key;
        o.version_id = v;
        o.immutable_until = f->keys[i].lock > 0 ? f->keys[i].lock : 0;
        o.mtime = f->mtimes ? f->mtimes[i] : 0;
        if (ostore_list_add(out, &o, err) != KERR_OK)
            return KERR_NOMEM;
    }
    return KERR_OK;
}

static enum kerr f_del(struct ostore *s, const struct ostore_obj *obj, struct kerr_info *err)
{
    struct fake *f = (struct fake *)s;
    char v[16];

    for (size_t i = 0; i < f->n; i++) {
        struct fkey *k = &f->keys[i];

        if (strcmp(k->key, obj->key) != 0)
            continue;
        snprintf(v, sizeof(v), "v%d", k->nv);
        cr_assert_str_eq(obj->version_id, v, "the current version is deleted");
        if (k->fail)
            return kerr_set(err, k->fail, "%s: injected failure", k->key);
        if (k->lock)
            return kerr_set(err, KERR_FORBIDDEN, "%s is immutable", k->key);
        k->nv--;
        f->deletes++;
        return KERR_OK;
    }
    return kerr_set(err, KERR_NOTFOUND, "%s", obj->key);
}

static enum kerr f_head(struct ostore *s, const char *key, struct ostore_obj *out,
                        struct kerr_info *err)
{
    struct fake *f = (struct fake *)s;

    f->heads++;
    for (size_t i = 0; i < f->n; i++) {
        if (strcmp(f->keys[i].key, key) != 0 || f->keys[i].nv == 0)
            continue;
        if (f->marks && f->marks[i] < 0)
            return kerr_set(err, KERR_IO, "%s: injected failure", key);
        out->own_copy = f->marks && f->marks[i] == 1;
        return KERR_OK;
    }
    return kerr_set(err, KERR_NOTFOUND, "%s", key);
}

static const struct ostore_ops fake_ops = {
    .name = "fake", .list = f_list, .head = f_head, .del = f_del
};

static struct fake fake_of(struct fkey *keys, size_t n)
{
    struct fake f = { { .ops = &fake_ops }, keys, n, 0, 0, NULL, NULL, 0 };

    return f;
}

static int left(const struct fake *f, const char *key)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->keys[i].key, key) == 0)
            return f->keys[i].nv;
    return -1;
}

Test(snapdel, exactly_the_prefix_as_a_path)
{
    struct fkey keys[] = {
        { "ns--etcd", 1, 0, 0 },           { "ns--etcd/v2/Full-1", 1, 0, 0 },
        { "ns--etcd/v2/Incr-2", 1, 0, 0 }, { "ns--etcd-events/v2/Full-1", 1, 0, 0 },
        { "ns--etcdx", 1, 0, 0 },          { "other/ns--etcd/x", 1, 0, 0 },
    };
    struct fake f = fake_of(keys, sizeof(keys) / sizeof(keys[0]));
    struct snapdel_result r;

    cr_assert_eq(snapdel_run(&f.base, "S3", "ns--etcd/", false, &r, NULL), KERR_OK);
    cr_expect_eq(r.deleted, 3);
    cr_expect_eq(r.locked + r.failed, 0);
    cr_expect_eq(left(&f, "ns--etcd"), 0);
    cr_expect_eq(left(&f, "ns--etcd/v2/Full-1"), 0);
    cr_expect_eq(left(&f, "ns--etcd-events/v2/Full-1"), 1, "a neighbour's snapshot deleted");
    cr_expect_eq(left(&f, "ns--etcdx"), 1);
    cr_expect_eq(left(&f, "other/ns--etcd/x"), 1);
    cr_expect_eq(r.foreign, 2, "ns--etcd-events/... and ns--etcdx are listed, not deleted");
    cr_expect_eq(r.remaining, 2);
    snapdel_result_release(&r);
}

Test(snapdel, every_version)
{
    struct fkey keys[] = { { "p/v2/Full-1", 3, 0, 0 }, { "p/v2/Incr-2", 1, 0, 0 } };
    struct fake f = fake_of(keys, 2);
    struct snapdel_result r;

    cr_assert_eq(snapdel_run(&f.base, "S3", "p", false, &r, NULL), KERR_OK);
    cr_expect_eq(r.deleted, 4);
    cr_expect_eq(left(&f, "p/v2/Full-1"), 0);
    cr_expect_eq(f.lists, 4, "rounds until one deletes nothing");
    cr_expect_eq(r.remaining, 0);
    snapdel_result_release(&r);
}

Test(snapdel, locked_objects_are_reported_not_failed)
{
    struct fkey keys[] = {
        { "p/a", 1, 2000000000, 0 },
        { "p/b", 2, 1700000000, 0 },
        { "p/c", 2, 0, 0 },
        { "p/d", 1, -1, 0 },
    };
    struct fake f = fake_of(keys, 4);
    struct snapdel_result r;
    char line[512] = "";
    FILE *m = fmemopen(line, sizeof(line), "w");

    cr_assert_eq(snapdel_run(&f.base, "S3", "p", false, &r, NULL), KERR_OK);
    cr_expect_eq(r.deleted, 2);
    cr_expect_eq(r.locked, 3);
    cr_expect_eq(r.failed, 0);
    cr_expect_eq(r.earliest, 1700000000);
    snapdel_print(m, "p", false, &r);
    fclose(m);
    cr_expect_str_eq(line, "{\"prefix\":\"p\",\"objectPrefix\":\"p\",\"deleted\":2,"
                           "\"locked\":3,\"failed\":0,\"remaining\":3,"
                           "\"earliestDeletable\":\"2023-11-14T22:13:20Z\",\"dryRun\":false,"
                           "\"foreign\":0,\"foreignKeys\":[]}\n");
    snapdel_result_release(&r);
}

Test(snapdel, other_failures_count)
{
    struct fkey keys[] = { { "p/a", 1, 0, KERR_IO }, { "p/b", 1, 0, 0 } };
    struct fake f = fake_of(keys, 2);
    struct snapdel_result r;
    struct kerr_info err = { 0 };

    cr_assert_eq(snapdel_run(&f.base, "S3", "p", false, &r, &err), KERR_OK);
    cr_expect_eq(r.failed, 1);
    cr_expect_eq(r.deleted, 1);
    cr_expect(strstr(err.msg, "p/a: injected failure") != NULL, "%s", err.msg);
    cr_expect_eq(r.remaining, 1);
    snapdel_result_release(&r);
}

Test(snapdel, dry_run_deletes_nothing)
{
    struct fkey keys[] = { { "p/a", 2, 0, 0 }, { "q/b", 1, 0, 0 } };
    struct fake f = fake_of(keys, 2);
    struct snapdel_result r;

    cr_assert_eq(snapdel_run(&f.base, "S3", "p", true, &r, NULL), KERR_OK);
    cr_expect_eq(r.deleted, 1, "one object would go (listed once)");
    cr_expect_eq(f.deletes, 0);
    cr_expect_eq(r.remaining, 1);
    snapdel_result_release(&r);
}

Test(snapdel, never_the_whole_store)
{
    static const char *const whole[] = { "", ".", "/", "a/..", "./", "//", "/./" };
    struct fkey keys[] = { { "a", 1, 0, 0 } };
    struct fake f = fake_of(keys, 1);
    struct snapdel_result r;

    for (size_t i = 0; i < sizeof(whole) / sizeof(whole[0]); i++) {
        cr_expect_eq(snapdel_run(&f.base, "S3", whole[i], false, &r, NULL), KERR_INVAL, "\"%s\"",
                     whole[i]);
        snapdel_result_release(&r);
        cr_expect_eq(snapdel_run(&f.base, "ABS", whole[i], false, &r, NULL), KERR_INVAL,
                     "ABS \"%s\"", whole[i]);
        snapdel_result_release(&r);
    }
    cr_expect_eq(f.deletes, 0);
    cr_expect_eq(f.lists, 0);
}

/* S3's client cleans the request path: the sidecar of "/pl/x" writes "pl/x/...". */
Test(snapdel, s3_rooted_prefix_is_where_the_sidecar_writes)
{
    struct fkey keys[] = {
        { "pl/x/v2/Full-00000000-00000010-1700000000", 1, 0, 0 },
        { "pl/x/v2/Incr-00000011-00000020-1700000100", 1, 0, 0 },
        { "pl/xy/v2/Full-00000000-00000010-1700000000", 1, 0, 0 },
        { "/pl/x/v2/Full-00000000-00000010-1700000000", 1, 0, 0 },
    };
    struct fake f = fake_of(keys, 4);
    struct snapdel_result r;

    cr_assert_eq(snapdel_run(&f.base, "S3", "/pl/x", false, &r, NULL), KERR_OK);
    cr_expect_str_eq(r.object_prefix, "pl/x");
    cr_expect_str_eq(r.object_prefix2, "/pl/x", "aws-sdk-go-v2 (v0.37+) keeps the '/'");
    cr_expect_eq(r.deleted, 3);
    cr_expect_eq(left(&f, "pl/x/v2/Full-00000000-00000010-1700000000"), 0);
    cr_expect_eq(left(&f, "pl/x/v2/Incr-00000011-00000020-1700000100"), 0);
    cr_expect_eq(left(&f, "pl/xy/v2/Full-00000000-00000010-1700000000"), 1);
    cr_expect_eq(left(&f, "/pl/x/v2/Full-00000000-00000010-1700000000"), 0);
    cr_expect_eq(r.foreign, 1);
    cr_expect_str_eq(r.foreign_keys[0], "pl/xy/v2/Full-00000000-00000010-1700000000");
    cr_expect_eq(r.remaining, 1, "a listing that still returns something is not empty");
    snapdel_result_release(&r);
}

/*
 * A cluster on a prefix below the deleted one's ("p/etcd-events" under "p"): its snapshots are
 * in the sidecar's listing of "p", but the sidecar of "p" never writes them (it splits a key at
 * its last "v2/"): foreign, never deleted. Other objects under "p" are p's as before.
 */
Test(snapdel, snapshots_of_a_prefix_below_are_foreign)
{
    struct fkey keys[] = {
        { "p/v2/Full-00000000-00000010-1700000000.gz", 1, 0, 0 },
        { "p/v2/Full-00000000-00000010-1700000000.gz/0000000001", 1, 0, 0 },
        { "p/etcd-events/v2/Full-00000000-00000010-1700000000.gz", 1, 0, 0 },
        { "p/etcd-events/v1/Backup-1700000000/Incr-00000011-00000020-1700000100", 1, 0, 0 },
        { "p/note.txt", 1, 0, 0 },
    };
    struct fake f = fake_of(keys, 5);
    struct snapdel_result r;

    cr_assert_eq(snapdel_run(&f.base, "S3", "p", false, &r, NULL), KERR_OK);
    cr_expect_eq(r.deleted, 3);
    cr_expect_eq(left(&f, "p/v2/Full-00000000-00000010-1700000000.gz"), 0);
    cr_expect_eq(left(&f, "p/v2/Full-00000000-00000010-1700000000.gz/0000000001"), 0);
    cr_expect_eq(left(&f, "p/note.txt"), 0);
    cr_expect_eq(left(&f, "p/etcd-events/v2/Full-00000000-00000010-1700000000.gz"), 1);
    cr_expect_eq(left(&f, "p/etcd-events/v1/Backup-1700000000/Incr-00000011-00000020-1700000100"),
                 1);
    cr_expect_eq(r.foreign, 2);
    cr_expect_eq(r.remaining, 2);
    snapdel_result_release(&r);
    /* a prefix that is one snapshot's key (an EtcdBackup's copy): it and its chunk go */
    keys[2].nv = 0;
    keys[3].nv = 0;
    keys[0].nv = keys[1].nv = 1;
    cr_assert_eq(
        snapdel_run(&f.base, "S3", "p/v2/Full-00000000-00000010-1700000000.gz", false, &r, NULL),
        KERR_OK);
    cr_expect_eq(r.deleted, 2);
    cr_expect_eq(r.foreign, 0);
    snapdel_result_release(&r);
}

/*
 * Local joins home, container and prefix: "/ld/x" is the directory "ld/x", which its
 * sidecar walks: "ld/x2" is not in its view.
 */
Test(snapdel, local_rooted_prefix)
{
    struct fkey keys[] = { { "ld/x/v2/Full-1", 1, 0, 0 }, { "ld/x2/v2/Full-1", 1, 0, 0 } };
    struct fake f = fake_of(keys, 2);
    struct snapdel_result r;

    cr_assert_eq(snapdel_run(&f.base, "Local", "//ld/./x/", false, &r, NULL), KERR_OK);
    cr_expect_str_eq(r.object_prefix, "ld/x");
    cr_expect_eq(r.deleted, 1);
    cr_expect_eq(left(&f, "ld/x2/v2/Full-1"), 1);
    cr_expect_eq(r.foreign, 0);
    cr_expect_eq(r.remaining, 0);
    snapdel_result_release(&r);
}

/* ABS object names are path.Join(prefix, ...) as is: the leading '/' stays. */
Test(snapdel, abs_keeps_the_root)
{
    struct fkey keys[] = { { "/pl/x/v2/Full-1", 1, 0, 0 }, { "pl/x/v2/Full-1", 1, 0, 0 } };
    struct fake f = fake_of(keys, 2);
    struct snapdel_result r;

    cr_assert_eq(snapdel_run(&f.base, "ABS", "/pl/x", false, &r, NULL), KERR_OK);
    cr_expect_str_eq(r.object_prefix, "/pl/x");
    cr_expect_eq(r.deleted, 1);
    cr_expect_eq(left(&f, "/pl/x/v2/Full-1"), 0);
    cr_expect_eq(left(&f, "pl/x/v2/Full-1"), 1);
    cr_expect_eq(r.remaining, 0);
    snapdel_result_release(&r);
}

Test(snapdel, foreign_keys_are_named_in_the_summary)
{
    struct fkey keys[] = {
        { "p/etcd/v2/Full-1", 1, 0, 0 },   { "p/etcd-2/v2/Full-1", 1, 0, 0 },
        { "p/etcd-2/v2/Incr-2", 1, 0, 0 }, { "p/etcd-3/v2/Full-1", 1, 0, 0 },
        { "p/etcd-4/v2/Full-1", 1, 0, 0 }, { "p/etcd-5/v2/Full-1", 1, 0, 0 },
        { "p/etcd-6/v2/Full-1", 1, 0, 0 }, { "p/etcdx", 1, 0, 0 },
    };
    struct fake f = fake_of(keys, 8);
    struct snapdel_result r;
    char line[1024] = "";
    FILE *m = fmemopen(line, sizeof(line), "w");

    cr_assert_eq(snapdel_run(&f.base, "S3", "p/etcd", false, &r, NULL), KERR_OK);
    cr_expect_eq(r.deleted, 1);
    cr_expect_eq(r.foreign, 7);
    cr_expect_eq(r.remaining, 7);
    for (size_t i = 1; i < 8; i++)
        cr_expect_eq(left(&f, keys[i].key), 1, "%s deleted", keys[i].key);
    snapdel_print(m, "p/etcd", false, &r);
    fclose(m);
    cr_expect_str_eq(line,
                     "{\"prefix\":\"p/etcd\",\"objectPrefix\":\"p/etcd\",\"deleted\":1,"
                     "\"locked\":0,\"failed\":0,\"remaining\":7,"
                     "\"earliestDeletable\":null,\"dryRun\":false,\"foreign\":7,"
                     "\"foreignKeys\":[\"p/etcd-2/v2/Full-1\",\"p/etcd-2/v2/Incr-2\","
                     "\"p/etcd-3/v2/Full-1\",\"p/etcd-4/v2/Full-1\",\"p/etcd-5/v2/Full-1\"]}\n");
    snapdel_result_release(&r);
}

Test(snapdel, dry_run_counts_foreign_as_remaining)
{
    struct fkey keys[] = { { "p/a", 1, 0, 0 }, { "p-2/b", 1, 0, 0 } };
    struct fake f = fake_of(keys, 2);
    struct snapdel_result r;

    cr_assert_eq(snapdel_run(&f.base, "S3", "p", true, &r, NULL), KERR_OK);
    cr_expect_eq(r.deleted, 1);
    cr_expect_eq(r.foreign, 1);
    cr_expect_eq(r.remaining, 2);
    cr_expect_eq(f.deletes, 0);
    snapdel_result_release(&r);
}

/* A run stopped by the round limit lists once more: what is left is not "emptied". */
Test(snapdel, round_limit_lists_again)
{
    struct fkey keys[] = { { "p/v2/Full-1", SNAPDEL_MAX_ROUNDS + 3, 0, 0 } };
    struct fake f = fake_of(keys, 1);
    struct snapdel_result r;

    cr_assert_eq(snapdel_run(&f.base, "S3", "p", false, &r, NULL), KERR_OK);
    cr_expect_eq(r.deleted, SNAPDEL_MAX_ROUNDS);
    cr_expect_eq(f.lists, SNAPDEL_MAX_ROUNDS + 1);
    cr_expect_eq(r.remaining, 1);
    snapdel_result_release(&r);
}

/* The summary is a termination message (4096 bytes kept): long foreign keys are counted only. */
Test(snapdel, foreign_keys_stay_within_a_termination_message)
{
    static char names[8][1100];
    struct fkey keys[9] = { { "p/own", 1, 0, 0 } };
    struct fake f;
    struct snapdel_result r;
    char *line = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&line, &len);

    for (int i = 0; i < 8; i++) {
        int n = snprintf(names[i], sizeof(names[i]), "p-%d/", i);

        memset(names[i] + n, i % 2 ? '"' : '\x01', 1000);
        names[i][n + 1000] = '\0';
        keys[i + 1] = (struct fkey){ names[i], 1, 0, 0 };
    }
    f = fake_of(keys, 9);
    cr_assert_eq(snapdel_run(&f.base, "S3", "p", false, &r, NULL), KERR_OK);
    cr_expect_eq(r.foreign, 8);
    cr_expect_eq(r.remaining, 8);
    cr_expect_null(r.foreign_keys[0], "a key of 6000 bytes of JSON is not named");
    snapdel_print(m, "p", false, &r);
    fclose(m);
    cr_expect_lt(len, 4096, "%zu bytes", len);
    free(line);
    snapdel_result_release(&r);
}

/* Emptied only when every spelling's listing is: a locked "/p" object keeps the entry. */
Test(snapdel, both_s3_spellings_must_be_empty)
{
    struct fkey keys[] = {
        { "p/v2/Full-00000000-00000010-1700000000", 1, 0, 0 },
        { "/p/v2/Full-00000000-00000010-1700000000", 1, -1, 0 },
        { "/p-2/v2/Full-00000000-00000010-1700000000", 1, 0, 0 },
    };
    struct fake f = fake_of(keys, 3);
    struct snapdel_result r;

    cr_assert_eq(snapdel_run(&f.base, "ECS", "//p/", false, &r, NULL), KERR_OK);
    cr_expect_eq(r.deleted, 1);
    cr_expect_eq(r.locked, 1);
    cr_expect_eq(r.foreign, 1, "/p-2 is listed with /p");
    cr_expect_str_eq(r.foreign_keys[0], "/p-2/v2/Full-00000000-00000010-1700000000");
    cr_expect_eq(r.remaining, 2);
    cr_expect_eq(left(&f, "/p-2/v2/Full-00000000-00000010-1700000000"), 1);
    snapdel_result_release(&r);
    cr_assert_eq(snapdel_run(&f.base, "S3", "p", false, &r, NULL), KERR_OK);
    cr_expect_str_eq(r.object_prefix2, "", "no leading '/': one spelling");
    snapdel_result_release(&r);
}

/*
 * Provenance: with a window only what was written within it goes; the objects of the prefix
 * from before the claim (a retained copy, backups older than the install), from after the
 * deletion began, or of an unknown time stay, counted as kept and not as remaining.
 */
Test(snapdel, window_deletes_only_what_was_written_within_it)
{
    struct fkey keys[] = {
        { "p/v2/Full-old", 1, 0, 0 },  { "p/v2/Full-1", 1, 0, 0 },
        { "p/v2/Incr-2", 1, 0, 0 },    { "p/v2/Full-3", 1, 0, 0 },
        { "p/v2/Full-late", 1, 0, 0 }, { "p/v2/Full-unknown", 1, 0, 0 },
    };
    static const int64_t mtimes[] = { 999, 1000, 1500, 2000, 2001, 0 };
    struct fake f = fake_of(keys, sizeof(keys) / sizeof(keys[0]));
    struct snapdel_window w = { { { 1000, 2000 } }, 1, false };

    f.mtimes = mtimes;
    struct snapdel_result r;

    cr_assert_eq(snapdel_run_window(&f.base, "S3", "p", &w, false, &r, NULL), KERR_OK);
    cr_expect_eq(left(&f, "p/v2/Full-old"), 1, "an object from before the claim deleted");
    cr_expect_eq(left(&f, "p/v2/Full-late"), 1, "an object from after the deletion began deleted");
    cr_expect_eq(left(&f, "p/v2/Full-unknown"), 1, "an object of unknown time deleted");
    cr_expect_eq(left(&f, "p/v2/Full-1"), 0);
    cr_expect_eq(left(&f, "p/v2/Incr-2"), 0);
    cr_expect_eq(left(&f, "p/v2/Full-3"), 0);
    cr_expect_eq(r.deleted, 3);
    cr_expect_eq(r.kept, 3);
    cr_expect_eq(r.remaining, 0, "kept objects are not the owner's: the prefix is done");
    snapdel_result_release(&r);
}

Test(snapdel, window_since_only)
{
    struct fkey keys[] = { { "p/a", 1, 0, 0 }, { "p/b", 1, 0, 0 } };
    static const int64_t mtimes[] = { 10, 20 };
    struct fake f = fake_of(keys, 2);
    struct snapdel_window w = { { { 15, 0 } }, 1, false };

    f.mtimes = mtimes;
    struct snapdel_result r;

    cr_assert_eq(snapdel_run_window(&f.base, "S3", "p", &w, false, &r, NULL), KERR_OK);
    cr_expect_eq(left(&f, "p/a"), 1);
    cr_expect_eq(left(&f, "p/b"), 0);
    cr_expect_eq(r.kept, 1);
    snapdel_result_release(&r);
}

/*
 * Copies only: the clean-up of what a copy wrote deletes, in its window, only the objects that
 * carry warden-snapshot's mark; a sidecar's snapshot written there meanwhile stays (kept, not
 * remaining), and one whose head fails is neither deleted nor taken for another's (failed).
 */
Test(snapdel, copies_only_deletes_what_warden_snapshot_wrote)
{
    struct fkey keys[] = {
        { "p/v2/Full-copied", 1, 0, 0 },
        { "p/v2/Incr-copied", 1, 0, 0 },
        { "p/v2/Full-sidecar", 1, 0, 0 },
        { "p/v2/Full-old", 1, 0, 0 },
    };
    static const int64_t mtimes[] = { 1000, 1500, 1200, 10 };
    static const int marks[] = { 1, 1, 0, 1 };
    struct fake f = fake_of(keys, sizeof(keys) / sizeof(keys[0]));
    struct snapdel_window w = { { { 1000, 2000 } }, 1, true };
    struct snapdel_result r;

    f.mtimes = mtimes;
    f.marks = marks;
    cr_assert_eq(snapdel_run_window(&f.base, "S3", "p", &w, false, &r, NULL), KERR_OK);
    cr_expect_eq(left(&f, "p/v2/Full-copied"), 0);
    cr_expect_eq(left(&f, "p/v2/Incr-copied"), 0);
    cr_expect_eq(left(&f, "p/v2/Full-sidecar"), 1, "a sidecar's snapshot in the window deleted");
    cr_expect_eq(left(&f, "p/v2/Full-old"), 1, "a copy from before the window deleted");
    cr_expect_eq(r.deleted, 2);
    cr_expect_eq(r.kept, 2);
    cr_expect_eq(r.failed, 0);
    cr_expect_eq(r.remaining, 0, "what stays is not the copy's: the prefix is done");
    snapdel_result_release(&r);
}

Test(snapdel, copies_only_a_failed_head_is_a_failure)
{
    struct fkey keys[] = { { "p/v2/Full-a", 1, 0, 0 }, { "p/v2/Full-b", 1, 0, 0 } };
    static const int64_t mtimes[] = { 1000, 1000 };
    static const int marks[] = { -1, 1 };
    struct fake f = fake_of(keys, 2);
    struct snapdel_window w = { { { 0, 0 } }, 0, true };
    struct snapdel_result r;
    struct kerr_info err = { 0 };

    f.mtimes = mtimes;
    f.marks = marks;
    cr_assert_eq(snapdel_run_window(&f.base, "S3", "p", &w, false, &r, &err), KERR_OK);
    cr_expect_eq(left(&f, "p/v2/Full-a"), 1, "deleted without knowing who wrote it");
    cr_expect_eq(left(&f, "p/v2/Full-b"), 0);
    cr_expect_eq(r.failed, 1);
    cr_expect_eq(r.remaining, 1, "an object of unknown writer is still there");
    cr_expect(strstr(err.msg, "injected"), "%s", err.msg);
    snapdel_result_release(&r);
}

Test(snapdel, cli_refuses_a_bad_window)
{
    char a[][32] = { "delete-snapshots",
                     "--storage-provider",
                     "S3",
                     "--store-container",
                     "c",
                     "--store-prefix",
                     "p",
                     "--written-since",
                     "yesterday" };
    char *argv[10] = { NULL };

    for (size_t i = 0; i < 9; i++)
        argv[i] = a[i];
    cr_expect_eq(snapdel_main(9, argv), 2);
}

/* Repeated flags go in pairs: two since and one before is a usage error, not a guess. */
Test(snapdel, cli_refuses_unpaired_spans)
{
    char a[][32] = { "delete-snapshots",
                     "--storage-provider",
                     "S3",
                     "--store-container",
                     "c",
                     "--store-prefix",
                     "p",
                     "--written-since",
                     "2026-01-01T00:00:00Z",
                     "--written-since",
                     "2026-02-01T00:00:00Z",
                     "--written-before",
                     "2026-03-01T00:00:00Z" };
    char *argv[14] = { NULL };

    for (size_t i = 0; i < 13; i++)
        argv[i] = a[i];
    cr_expect_eq(snapdel_main(13, argv), 2);
}

/*
 * Spans: an entry's earlier window (before a reattachment) and its current one; what lies in
 * either goes, the gap between them (another writer's time) and what lies outside stay.
 */
Test(snapdel, an_object_in_any_span_goes)
{
    struct fkey keys[] = {
        { "p/v2/Full-life1", 1, 0, 0 }, { "p/v2/Full-gap", 1, 0, 0 },
        { "p/v2/Full-life2", 1, 0, 0 }, { "p/v2/Full-late", 1, 0, 0 },
        { "p/v2/Full-early", 1, 0, 0 },
    };
    static const int64_t mtimes[] = { 150, 250, 350, 450, 50 };
    struct fake f = fake_of(keys, sizeof(keys) / sizeof(keys[0]));
    struct snapdel_window w = { { { 100, 200 }, { 300, 400 } }, 2, false };
    struct snapdel_result r;

    f.mtimes = mtimes;
    cr_assert_eq(snapdel_run_window(&f.base, "S3", "p", &w, false, &r, NULL), KERR_OK);
    cr_expect_eq(left(&f, "p/v2/Full-life1"), 0);
    cr_expect_eq(left(&f, "p/v2/Full-life2"), 0);
    cr_expect_eq(left(&f, "p/v2/Full-gap"), 1, "the time between the spans is not the owner's");
    cr_expect_eq(left(&f, "p/v2/Full-late"), 1);
    cr_expect_eq(left(&f, "p/v2/Full-early"), 1);
    cr_expect_eq(r.deleted, 2);
    cr_expect_eq(r.kept, 3);
    snapdel_result_release(&r);
}
