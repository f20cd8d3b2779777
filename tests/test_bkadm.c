/* bkadm: backup, schedule and restore destinations at admission, from projected caches. */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/store.h"
#include "webhook/bkadm.h"
#include "webhook/prefix.h"
#include "webhook/review.h"

static const enum prefix_kind k_etcd = PREFIX_ETCD, k_backup = PREFIX_BACKUP,
                              k_entry = PREFIX_ENTRY;
static struct store *etcds, *backups, *entries;

static struct store *new_store(const enum prefix_kind *k)
{
    struct store_opts o = { prefix_project, (void *)k, 0, NULL, NULL };
    struct store *s = NULL;

    cr_assert_eq(store_new(&o, &s, NULL), KERR_OK);
    cr_assert_eq(store_add_index(s, PREFIX_INDEX_STORE, prefix_index_store, NULL, NULL), KERR_OK);
    return s;
}

static void setup(void)
{
    etcds = new_store(&k_etcd);
    backups = new_store(&k_backup);
    entries = new_store(&k_entry);
}

static void teardown(void)
{
    store_free(etcds);
    store_free(backups);
    store_free(entries);
}

static void put(struct store *s, const char *json)
{
    cJSON *o = cJSON_Parse(json);

    cr_assert_not_null(o, "%s", json);
    cr_assert_eq(store_put(s, o, NULL, NULL, NULL), KERR_OK);
}

static int with_entries;

/* An EtcdBackup of etcd in ns to prefix in S3 bucket bkt: "" admitted, else the message. */
static const char *backup(const char *ns, const char *etcd, const char *prefix)
{
    static char msg[1024];
    char text[512];
    struct review_req req;
    struct review_resp resp;
    cJSON *obj;

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"namespace\":\"%s\",\"name\":\"b\"},\"spec\":{\"etcdName\":\"%s\","
             "\"destination\":{\"provider\":\"S3\",\"container\":\"bkt\",\"prefix\":\"%s\"}}}",
             ns, etcd, prefix);
    obj = cJSON_Parse(text);
    review_req_init(&req);
    review_resp_init(&resp);
    cr_assert_eq(review_allow(&resp, "%s", ""), KERR_OK);
    req.op = REVIEW_OP_CREATE;
    req.kind_kind = "EtcdBackup";
    req.object = obj;
    cr_assert_eq(bkadm_check(etcds, with_entries ? entries : NULL, backups, &req, &resp, NULL),
                 KERR_OK);
    snprintf(msg, sizeof(msg), "%s", resp.allowed ? "" : resp.message);
    review_resp_release(&resp);
    cJSON_Delete(obj);
    return msg;
}

TestSuite(bkadm, .init = setup, .fini = teardown);

Test(bkadm, whole_container_and_etcds)
{
    put(etcds,
        "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"main\"},\"spec\":{\"backup\":"
        "{\"store\":{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":\"shoot--main\"}}}}");
    cr_expect_neq(strstr(backup("shoot", "main", "."), "the whole container"), NULL);
    cr_expect_neq(strstr(backup("shoot", "main", "shoot--main-2"), "of Etcd shoot/main"), NULL);
    cr_expect_neq(strstr(backup("other", "x", "shoot--main/c"), "from another namespace"), NULL);
    cr_expect_str_eq(backup("shoot", "main", "copies/main"), "");
}

/* Copies are claims once written (status.destination), and those of the same Etcd may share. */
Test(bkadm, written_copies_only)
{
    put(backups, "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"failed\"},\"spec\":{"
                 "\"etcdName\":\"ghost\",\"destination\":{\"provider\":\"S3\",\"container\":"
                 "\"bkt\",\"prefix\":\".\"}},\"status\":{\"phase\":\"Failed\"}}");
    cr_expect_str_eq(backup("other", "x", "anything"), "", "an unwritten backup claims nothing");
    put(backups, "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"n1\"},\"spec\":{"
                 "\"etcdName\":\"main\",\"destination\":{\"provider\":\"S3\",\"container\":"
                 "\"bkt\",\"prefix\":\"copies/main\"}},\"status\":{\"destination\":{\"provider\":"
                 "\"S3\",\"container\":\"bkt\",\"prefix\":\"copies/main\"}}}");
    cr_expect_str_eq(backup("shoot", "main", "copies/main"), "", "the same Etcd's history");
    cr_expect_neq(
        strstr(backup("shoot", "events", "copies/main-2"), "of the copies of EtcdBackup shoot/n1"),
        NULL);
}

/* An EtcdRestore as req (CREATE, or UPDATE from old_text): "" admitted, else the message. */
static const char *restore_op(const char *text, const char *old_text)
{
    static char msg[1024];
    struct review_req req;
    struct review_resp resp;
    cJSON *obj = cJSON_Parse(text), *old = old_text ? cJSON_Parse(old_text) : NULL;

    cr_assert_not_null(obj, "%s", text);
    review_req_init(&req);
    review_resp_init(&resp);
    cr_assert_eq(review_allow(&resp, "%s", ""), KERR_OK);
    req.op = old ? REVIEW_OP_UPDATE : REVIEW_OP_CREATE;
    req.kind_kind = "EtcdRestore";
    req.object = obj;
    req.old_object = old;
    cr_assert_eq(bkadm_check(etcds, entries, backups, &req, &resp, NULL), KERR_OK);
    snprintf(msg, sizeof(msg), "%s", resp.allowed ? "" : resp.message);
    review_resp_release(&resp);
    cJSON_Delete(obj);
    cJSON_Delete(old);
    return msg;
}

static const char *restore(const char *text)
{
    return restore_op(text, NULL);
}

/* A target without its own provider takes the source's store; when that cannot be told the
 * restore is refused at admission (it claims its target while it copies), never left open. */
Test(bkadm, restore_target_store_fails_closed)
{
    const char *ghost =
        "{\"metadata\":{\"namespace\":\"t\",\"name\":\"r\"},\"spec\":{\"source\":{"
        "\"etcdName\":\"ghost\",\"backupName\":\"b\"},\"target\":{\"etcdName\":\"new\","
        "\"store\":{\"container\":\"bkt\",\"prefix\":\"t/new\"}}}}";
    const char *from_store =
        "{\"metadata\":{\"namespace\":\"t\",\"name\":\"r\"},\"spec\":{\"source\":{"
        "\"store\":{\"provider\":\"S3\",\"container\":\"old\",\"prefix\":\"t/old\"}},"
        "\"target\":{\"etcdName\":\"new\",\"store\":{\"container\":\"bkt\",\"prefix\":\"t/x\"}}}}";

    cr_expect_neq(strstr(restore(ghost), "no provider, and none to take"), NULL, "%s",
                  restore(ghost));
    put(etcds, "{\"metadata\":{\"namespace\":\"t\",\"name\":\"ghost\"},\"spec\":{\"backup\":"
               "{\"store\":{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":\"t/ghost\"}}}}");
    cr_expect_str_eq(restore(ghost), "", "the source Etcd decides");
    cr_expect_str_eq(restore(from_store), "", "the source store decides");
}

/* A restore from an EtcdBackup that names no target provider writes to the backup's Etcd's store
 * (docs/backups-and-restores.md); an EtcdBackup not known here tells nothing: refused. */
Test(bkadm, restore_from_a_backup_takes_its_etcds_store)
{
    const char *from_backup =
        "{\"metadata\":{\"namespace\":\"t\",\"name\":\"r\"},\"spec\":{\"source\":{"
        "\"backupName\":\"nightly\"},\"target\":{\"etcdName\":\"new\","
        "\"store\":{\"container\":\"bkt\",\"prefix\":\"t/new\"}}}}";

    cr_expect_neq(strstr(restore(from_backup), "of the EtcdBackup in spec.source.backupName"), NULL,
                  "%s", restore(from_backup));
    put(backups, "{\"metadata\":{\"namespace\":\"t\",\"name\":\"nightly\"},\"spec\":{"
                 "\"etcdName\":\"main\"}}");
    cr_expect_neq(strstr(restore(from_backup), "no provider, and none to take"), NULL,
                  "the backup's Etcd is not known yet: %s", restore(from_backup));
    put(etcds, "{\"metadata\":{\"namespace\":\"t\",\"name\":\"main\"},\"spec\":{\"backup\":"
               "{\"store\":{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":\"t/main\"}}}}");
    cr_expect_str_eq(restore(from_backup), "", "the backup's Etcd decides");
}

/* A BackupEntry's entry in phase Deleting: its deletion Job empties the prefix, so a restore
 * reading it (or a prefix overlapping it) is refused at admission; one PendingDeletion is not. */
Test(bkadm, restore_from_a_prefix_being_deleted)
{
    const char *from =
        "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"r\"},\"spec\":{\"source\":{"
        "\"store\":{\"provider\":\"S3\",\"container\":\"bkt\",\"prefix\":\"shoot--main\"}},"
        "\"target\":{\"etcdName\":\"new\",\"store\":{\"provider\":\"S3\",\"container\":"
        "\"bkt\",\"prefix\":\"restored--main\"}}}}";
    const char *entry =
        "{\"metadata\":{\"name\":\"e1\"},\"spec\":{\"etcd\":{\"namespace\":\"shoot\","
        "\"name\":\"main\"},\"store\":{\"provider\":\"aws\",\"container\":\"bkt\"},"
        "\"prefix\":\"shoot--main\"},\"status\":{\"phase\":\"";
    char text[1024];

    snprintf(text, sizeof(text), "%s%s\"}}", entry, "PendingDeletion");
    put(entries, text);
    cr_expect_str_eq(restore(from), "", "a deletion not started yet: %s", restore(from));
    snprintf(text, sizeof(text), "%s%s\"}}", entry, "Deleting");
    put(entries, text);
    cr_expect_neq(strstr(restore(from), "BackupEntry e1 of Etcd shoot/main, which is being "
                                        "deleted"),
                  NULL, "%s", restore(from));
}

/* The target store is the controller's (common/rtarget): with an etcdTemplate that names no
 * store, the source store's, never the live source Etcd's (which the template replaces). */
Test(bkadm, restore_target_store_is_the_controllers)
{
    const char *r = "{\"metadata\":{\"namespace\":\"team\",\"name\":\"r\"},\"spec\":{\"source\":{"
                    "\"etcdName\":\"src\",\"store\":{\"provider\":\"S3\",\"container\":\"own\","
                    "\"prefix\":\"team/src\"}},\"etcdTemplate\":{\"replicas\":1,\"backup\":{}},"
                    "\"target\":{\"etcdName\":\"new\",\"store\":{\"container\":\"bkt\","
                    "\"prefix\":\"team2/r\"}}}}";

    put(etcds, "{\"metadata\":{\"namespace\":\"team\",\"name\":\"src\"},\"spec\":{\"backup\":"
               "{\"store\":{\"provider\":\"Local\",\"container\":\"bkt\",\"prefix\":"
               "\"team/src\"}}}}");
    put(etcds, "{\"metadata\":{\"namespace\":\"team2\",\"name\":\"main\"},\"spec\":{\"backup\":"
               "{\"store\":{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":"
               "\"team2/r\"}}}}");
    cr_expect_neq(strstr(restore(r), "from another namespace"), NULL,
                  "the copy writes S3 bkt team2/r: %s", restore(r));
}

/* An EtcdRestore's spec is immutable: an UPDATE that moves the resolved target (the template's
 * provider) without touching spec.target.store, or changes any other field of the spec, is
 * refused (the copy may be writing the admitted target); one that keeps the spec is not. */
Test(bkadm, restore_spec_is_immutable)
{
    const char *fmt_head =
        "{\"metadata\":{\"namespace\":\"team\",\"name\":\"r\"},\"spec\":{\"source\":{"
        "\"store\":{\"provider\":\"S3\",\"container\":\"own\",\"prefix\":\"team/src\"}},"
        "\"etcdTemplate\":{\"replicas\":1,\"backup\":{\"store\":{\"provider\":\"";
    const char *fmt_tail = "\"}}},\"target\":{\"etcdName\":\"new\",\"store\":{\"container\":"
                           "\"bkt\",\"prefix\":\"team2/c\"}}}}";
    char local[1024], s3[1024], local2[1024];

    snprintf(local, sizeof(local), "%sLocal%s", fmt_head, fmt_tail);
    snprintf(local2, sizeof(local2), "%slocal%s", fmt_head, fmt_tail);
    snprintf(s3, sizeof(s3), "%sS3%s", fmt_head, fmt_tail);
    put(etcds, "{\"metadata\":{\"namespace\":\"team2\",\"name\":\"main\"},\"spec\":{\"backup\":"
               "{\"store\":{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":"
               "\"team2/c\"}}}}");
    cr_expect_str_eq(restore(local), "", "a Local directory: %s", restore(local));
    cr_expect_str_eq(restore_op(s3, local),
                     "EtcdRestore team/r: spec is immutable: its copy may already be writing, or "
                     "have written, the target it was admitted with; delete it and create a new "
                     "one",
                     "moved into S3 bkt: %s", restore_op(s3, local));
    cr_expect_neq(strstr(restore_op(local2, local), "spec is immutable"), NULL,
                  "the same store spelled otherwise is still a change of the spec");
    cr_expect_str_eq(restore_op(local, local), "", "nothing changed");
}

/* A container that is no bucket name is refused in a restore's target and in its source: "b/t"
 * would write into, or read from, bucket b's prefix t (another tenant's). Local keeps its
 * directory. */
Test(bkadm, restore_containers_must_be_bucket_names)
{
    const char *target =
        "{\"metadata\":{\"namespace\":\"t\",\"name\":\"r\"},\"spec\":{\"source\":{"
        "\"store\":{\"provider\":\"S3\",\"container\":\"old\",\"prefix\":\"t/old\"}},"
        "\"target\":{\"etcdName\":\"new\",\"store\":{\"container\":\"bkt/team2\","
        "\"prefix\":\"t/x\"}}}}";
    const char *source =
        "{\"metadata\":{\"namespace\":\"t\",\"name\":\"r\"},\"spec\":{\"source\":{"
        "\"store\":{\"provider\":\"S3\",\"container\":\"bkt/team2\",\"prefix\":\"etcd-main\"}},"
        "\"target\":{\"etcdName\":\"new\",\"store\":{\"container\":\"bkt\",\"prefix\":\"t/x\"}}}}";
    const char *local =
        "{\"metadata\":{\"namespace\":\"t\",\"name\":\"r\"},\"spec\":{\"source\":{"
        "\"store\":{\"provider\":\"Local\",\"container\":\"/var/b/old\",\"prefix\":\"t/old\"}},"
        "\"target\":{\"etcdName\":\"new\",\"store\":{\"container\":\"/var/b/new\","
        "\"prefix\":\"t/x\"}}}}";

    cr_expect(strstr(restore(target), "spec.target.store: container \"bkt/team2\" is not a "
                                      "bucket name"),
              "%s", restore(target));
    cr_expect(strstr(restore(source), "spec.source.store: container \"bkt/team2\" is not a "
                                      "bucket name"),
              "%s", restore(source));
    cr_expect_str_eq(restore(local), "", "a Local store's container is a directory");
}

/* A retained copy's entry keeps its prefix for its namespace's Etcd: that Etcd's next copies
 * may share it (a schedule with Retain), no other Etcd's. */
Test(bkadm, retained_copy_entry_is_its_etcds_history)
{
    with_entries = 1;
    put(entries, "{\"metadata\":{\"name\":\"copies--1\",\"annotations\":{"
                 "\"etcd-warden.io/retained-copy-of\":\"shoot/b1\"}},\"spec\":{\"bucketName\":"
                 "\"\",\"etcd\":{\"namespace\":\"shoot\",\"name\":\"main\"},\"store\":{"
                 "\"provider\":\"S3\",\"container\":\"bkt\"},\"prefix\":\"copies/main\"}}");
    put(entries, "{\"metadata\":{\"name\":\"live--1\"},\"spec\":{\"bucketName\":\"b\","
                 "\"etcd\":{\"namespace\":\"shoot\",\"name\":\"main\"},\"store\":{"
                 "\"provider\":\"S3\",\"container\":\"bkt\"},\"prefix\":\"shoot--main\"}}");
    cr_expect_str_eq(backup("shoot", "main", "copies/main"), "", "%s",
                     backup("shoot", "main", "copies/main"));
    cr_expect_neq(strstr(backup("shoot", "events", "copies/main"), "BackupEntry copies--1"), NULL);
    cr_expect_neq(strstr(backup("other", "main", "copies/main"), "another namespace"), NULL);
    /* an Etcd's own entry is no copy: its prefix is never a copy's destination */
    cr_expect_neq(strstr(backup("shoot", "main", "shoot--main"), "BackupEntry live--1"), NULL);
    with_entries = 0;
}
