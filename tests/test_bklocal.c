/*
 * Tests of webhook/bklocal through bkadm_check_local: the Local destinations of EtcdBackups,
 * the targets and sources of EtcdRestores decided by their directory on the node, the
 * hostPaths read from the Secrets their copy Jobs mount, on an in-process kube-sim.
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/kjson.h"
#include "common/store.h"
#include "tests/support/cfix.h"
#include "webhook/bkadm.h"
#include "webhook/prefix.h"
#include "webhook/review.h"

static const struct k8s_resource RES_SECRET = { "", "v1", "secrets", 1 };
static const struct k8s_resource RES_NS = { "", "v1", "namespaces", 0 };
static const enum prefix_kind k_etcd = PREFIX_ETCD, k_entry = PREFIX_ENTRY,
                              k_backup = PREFIX_BACKUP;
static struct cfix fx;
static struct store *etcds, *entries, *backups, *buckets;

static struct store *new_store(const enum prefix_kind *k)
{
    struct store_opts o = { k ? prefix_project : NULL, (void *)k, 0, NULL, NULL };
    struct store *s = NULL;

    cr_assert_eq(store_new(&o, &s, NULL), KERR_OK);
    if (k)
        cr_assert_eq(store_add_index(s, PREFIX_INDEX_STORE, prefix_index_store, NULL, NULL),
                     KERR_OK);
    return s;
}

static void create_text(const struct k8s_resource *res, const char *ns, const char *text)
{
    struct kerr_info err = { 0 };
    cJSON *o = cJSON_Parse(text);

    cr_assert_not_null(o, "%s", text);
    cr_assert_eq(k8s_create(fx.c, res, ns, o, NULL, NULL, &err), KERR_OK, "%s", err.msg);
    cJSON_Delete(o);
}

static void secret(const char *ns, const char *name, const char *b64)
{
    char text[512];

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"%s\"},"
             "\"data\":{\"hostPath\":\"%s\"}}",
             name, b64);
    create_text(&RES_SECRET, ns, text);
}

static void put(struct store *s, const char *json)
{
    cJSON *o = cJSON_Parse(json);

    cr_assert_not_null(o, "%s", json);
    cr_assert_eq(store_put(s, o, NULL, NULL, NULL), KERR_OK);
}

#define LB     "L3Zhci9saWIvbGI="     /* /var/lib/lb */
#define LB_BKT "L3Zhci9saWIvbGIvYmt0" /* /var/lib/lb/bkt */
#define EVIL   "L3Zhci9saWIvZXZpbA==" /* /var/lib/evil */

static void setup(void)
{
    cfix_start(&fx, NULL);
    create_text(&RES_NS, NULL,
                "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"other\"}}");
    create_text(&RES_NS, NULL,
                "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"third\","
                "\"labels\":{\"backups\":\"local\"}}}");
    secret(CFIX_NS, "lb", LB);
    secret("other", "lb", LB);
    secret("other", "lb-bkt", LB_BKT);
    secret("other", "evil", EVIL);
    secret("third", "lb", LB);
    etcds = new_store(&k_etcd);
    entries = new_store(&k_entry);
    backups = new_store(&k_backup);
    buckets = new_store(NULL);
    /* the victim: ns1/etcd-a writes /var/lib/lb/bkt/shoot--a/etcd */
    put(etcds, "{\"metadata\":{\"namespace\":\"" CFIX_NS "\",\"name\":\"etcd-a\"},\"spec\":"
               "{\"backup\":{\"store\":{\"provider\":\"Local\",\"container\":\"bkt\",\"prefix\":"
               "\"shoot--a/etcd\",\"secretRef\":{\"name\":\"lb\"}}}}}");
}

static void teardown(void)
{
    store_free(etcds);
    store_free(entries);
    store_free(backups);
    store_free(buckets);
    cfix_stop(&fx);
}

/* The verdict on a CREATE of kind from text: "" allowed, else the message. */
static const char *decide(const char *kind, const char *text)
{
    static char msg[2048];
    struct review_req req;
    struct review_resp resp;
    cJSON *obj = cJSON_Parse(text);

    cr_assert_not_null(obj, "%s", text);
    review_req_init(&req);
    review_resp_init(&resp);
    cr_assert_eq(review_allow(&resp, "%s", ""), KERR_OK);
    req.op = REVIEW_OP_CREATE;
    req.kind_kind = kind;
    req.object = obj;
    cr_assert_eq(bkadm_check_local(etcds, entries, backups, fx.c, buckets, 1, &req, &resp, NULL),
                 KERR_OK);
    snprintf(msg, sizeof(msg), "%s", resp.allowed ? "" : resp.message);
    review_resp_release(&resp);
    cJSON_Delete(obj);
    return msg;
}

/* An EtcdBackup of other/etcd-o into Local container/prefix with the Secret sec. */
static const char *backup(const char *container, const char *prefix, const char *sec)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"namespace\":\"other\",\"name\":\"b\"},\"spec\":{\"etcdName\":"
             "\"etcd-o\",\"destination\":{\"provider\":\"Local\",\"container\":\"%s\","
             "\"prefix\":\"%s\",\"secretRef\":{\"name\":\"%s\"}}}}",
             container, prefix, sec);
    return decide("EtcdBackup", text);
}

/* An EtcdRestore of ns from Local source (container, prefix, Secret) into a Local target. */
static const char *restore(const char *ns, const char *scont, const char *spfx, const char *ssec,
                           const char *tcont, const char *tpfx, const char *tsec)
{
    char text[2048], tref[128] = "";

    if (tsec)
        snprintf(tref, sizeof(tref), ",\"secretRef\":{\"name\":\"%s\"}", tsec);
    snprintf(text, sizeof(text),
             "{\"metadata\":{\"namespace\":\"%s\",\"name\":\"r\"},\"spec\":{\"source\":{\"store\":"
             "{\"provider\":\"Local\",\"container\":\"%s\",\"prefix\":\"%s\",\"secretRef\":"
             "{\"name\":\"%s\"}}},\"target\":{\"etcdName\":\"etcd-x\",\"store\":{\"provider\":"
             "\"Local\",\"container\":\"%s\",\"prefix\":\"%s\"%s}}}}",
             ns, scont, spfx, ssec, tcont, tpfx, tref);
    return decide("EtcdRestore", text);
}

TestSuite(bklocal, .init = setup, .fini = teardown);

Test(bklocal, a_copy_destination_is_placed_by_its_own_secret)
{
    /* the attack: container shoot--a under hostPath /var/lib/lb/bkt is etcd-a's directory */
    cr_assert(strstr(backup("shoot--a", "etcd", "lb-bkt"), "overlaps"));
    cr_assert(strstr(backup("shoot--a", "etcd/sub", "lb-bkt"), "overlaps"));
    /* the spelling etcd-a uses, under another hostPath, is another directory */
    cr_assert_str_eq(backup("bkt", "shoot--a/etcd", "evil"), "");
    cr_assert_str_eq(backup("shoot--a", "etcd", "lb"), "");
    /* a Secret that cannot be read: refused, never the default */
    cr_assert(strstr(backup("shoot--a", "etcd", "absent"), "cannot be read"));
}

Test(bklocal, a_restore_target_is_placed_by_the_secret_its_copy_mounts)
{
    /* other's own cluster, the source */
    put(etcds, "{\"metadata\":{\"namespace\":\"other\",\"name\":\"etcd-o\"},\"spec\":"
               "{\"backup\":{\"store\":{\"provider\":\"Local\",\"container\":\"obkt\",\"prefix\":"
               "\"o/src\",\"secretRef\":{\"name\":\"evil\"}}}}}");
    cr_assert(strstr(restore("other", "obkt", "o/src", "evil", "shoot--a", "etcd", "lb-bkt"),
                     "overlaps"));
    /* no Secret of its own: the source's, as the controller's copy Job mounts it */
    cr_assert(strstr(restore("other", "obkt", "o/src", "evil", "shoot--a", "etcd", NULL),
                     "etcd-a") == NULL);
    cr_assert_str_eq(restore("other", "obkt", "o/src", "evil", "shoot--a", "etcd", NULL), "");
    put(etcds, "{\"metadata\":{\"namespace\":\"other\",\"name\":\"etcd-p\"},\"spec\":"
               "{\"backup\":{\"store\":{\"provider\":\"Local\",\"container\":\"shoot--a\","
               "\"prefix\":\"p\",\"secretRef\":{\"name\":\"lb-bkt\"}}}}}");
    /* ... under /var/lib/lb/bkt, the source's hostPath: etcd-a's directory */
    cr_assert(
        strstr(restore("other", "shoot--a", "p", "lb-bkt", "shoot--a", "etcd", NULL), "overlaps"));
    cr_assert_str_eq(restore("other", "obkt", "o/src", "evil", "shoot--a", "etcd", "evil"), "");
    cr_assert(strstr(restore("other", "obkt", "o/src", "evil", "shoot--a", "etcd", "absent"),
                     "cannot be read"));
}

Test(bklocal, a_local_source_needs_its_namespace_s_authority)
{
    const char *m;

    put(buckets, "{\"metadata\":{\"name\":\"local\"},\"spec\":{\"provider\":\"Local\","
                 "\"container\":\"bkt\",\"secretRef\":{\"namespace\":\"" CFIX_NS "\",\"name\":"
                 "\"lb\"},\"namespaceSelector\":{\"matchLabels\":{\"backups\":\"local\"}}}}");
    /* other is not selected and claims nothing there: refused, naming no other tenant */
    m = restore("other", "bkt", "shoot--a/etcd", "lb", "obkt", "o/restored", "evil");
    cr_assert(strstr(m, "does not own"), "%s", m);
    cr_assert_null(strstr(m, CFIX_NS "/"), "%s", m);
    cr_assert_null(strstr(m, "etcd-a"), "%s", m);
    /* the same directory spelled through another container and hostPath */
    m = restore("other", "shoot--a", "etcd", "lb-bkt", "obkt", "o/restored", "evil");
    cr_assert(strstr(m, "does not own"), "%s", m);
    /* a namespace the bucket selects may read there */
    cr_assert_str_eq(restore("third", "bkt", "shoot--a/etcd", "lb", "obkt", "t/r", "lb"), "");
    /* outside any bucket, a namespace reads what it claims itself */
    cr_assert(
        strstr(restore("other", "own", "o/etcd", "evil", "obkt", "o/r", "evil"), "does not own"));
    put(etcds, "{\"metadata\":{\"namespace\":\"other\",\"name\":\"etcd-o\"},\"spec\":"
               "{\"backup\":{\"store\":{\"provider\":\"Local\",\"container\":\"own\",\"prefix\":"
               "\"o/etcd\",\"secretRef\":{\"name\":\"evil\"}}}}}");
    cr_assert_str_eq(restore("other", "own", "o/etcd", "evil", "obkt", "o/r", "evil"), "");
    /* a source Secret that cannot be read: refused */
    cr_assert(strstr(restore("other", "own", "o/etcd", "absent", "obkt", "o/r", "evil"),
                     "cannot be read"));
}

Test(bklocal, a_written_copy_claims_where_its_job_wrote)
{
    /* other/z's copy written under /var/lib/evil; its Secret now names /var/lib/lb */
    put(backups,
        "{\"metadata\":{\"namespace\":\"other\",\"name\":\"z\"},\"spec\":{\"etcdName\":"
        "\"etcd-z\",\"destination\":{\"provider\":\"Local\",\"container\":\"shoot--a\","
        "\"prefix\":\"etcd\",\"secretRef\":{\"name\":\"lb\"}}},\"status\":{\"destination\":"
        "{\"provider\":\"Local\",\"container\":\"shoot--a\",\"prefix\":\"etcd\","
        "\"hostPath\":\"/var/lib/evil\"}}}");
    cr_assert(strstr(backup("shoot--a", "etcd", "evil"), "overlaps"));
    cr_assert_str_eq(backup("shoot--a", "etcd", "lb"), "");
}

Test(bklocal, an_etcd_counts_only_where_no_other_namespace_claims)
{
    const char *m;

    /* ns1's own Etcd alone there: its restore reads its directory */
    cr_assert_str_eq(restore(CFIX_NS, "bkt", "shoot--a/etcd", "lb", "obkt", "n/r", "lb"), "");
    /* other's Etcd, admitted elsewhere, its Secret edited onto ns1's directory */
    put(etcds, "{\"metadata\":{\"namespace\":\"other\",\"name\":\"etcd-o\"},\"spec\":"
               "{\"backup\":{\"store\":{\"provider\":\"Local\",\"container\":\"bkt\",\"prefix\":"
               "\"shoot--a/etcd\",\"secretRef\":{\"name\":\"lb\"}}}}}");
    m = restore("other", "bkt", "shoot--a/etcd", "lb", "obkt", "o/r", "evil");
    cr_assert(strstr(m, "does not own"), "%s", m);
    cr_assert_null(strstr(m, CFIX_NS), "%s", m);
    cr_assert_null(strstr(m, "etcd-a"), "%s", m);
    /* a directory inside it, or holding it: the same */
    m = restore("other", "bkt", "shoot--a/etcd/sub", "lb", "obkt", "o/r", "evil");
    cr_assert(strstr(m, "does not own"), "%s", m);
    /* one directory, one cluster: ns1's Etcd no longer proves it alone either */
    m = restore(CFIX_NS, "bkt", "shoot--a/etcd", "lb", "obkt", "n/r", "lb");
    cr_assert(strstr(m, "does not own"), "%s", m);
}

Test(bklocal, a_claim_of_another_namespace_not_placed_is_in_the_way)
{
    const char *m;

    /* third's Etcd whose Secret cannot be read: its directory may be anywhere */
    put(etcds, "{\"metadata\":{\"namespace\":\"third\",\"name\":\"etcd-t\"},\"spec\":"
               "{\"backup\":{\"store\":{\"provider\":\"Local\",\"container\":\"tb\",\"prefix\":"
               "\"t\",\"secretRef\":{\"name\":\"absent\"}}}}}");
    m = restore(CFIX_NS, "bkt", "shoot--a/etcd", "lb", "obkt", "n/r", "lb");
    cr_assert(strstr(m, "does not own"), "%s", m);
    /* gone: ns1's Etcd is alone there again */
    cr_assert_eq(store_remove(etcds, "third/etcd-t", NULL, NULL), KERR_OK);
    cr_assert_str_eq(restore(CFIX_NS, "bkt", "shoot--a/etcd", "lb", "obkt", "n/r", "lb"), "");
}

/* A BackupEntry name of Etcd other/etcd-g in BackupBucket local at prefix, made at created. */
static void entry(const char *name, const char *prefix, const char *created)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"%s\",\"creationTimestamp\":\"%s\"},\"spec\":{\"etcd\":"
             "{\"namespace\":\"other\",\"name\":\"etcd-g\"},\"bucketName\":\"local\",\"store\":"
             "{\"provider\":\"Local\",\"container\":\"bkt\"},\"prefix\":\"%s\"}}",
             name, created, prefix);
    put(entries, text);
}

Test(bklocal, an_entry_of_an_earlier_namespace_grants_nothing)
{
    const char *m;

    /* a bucket that does not select other: only other's entries can make it the owner */
    put(buckets, "{\"metadata\":{\"name\":\"local\"},\"spec\":{\"provider\":\"Local\","
                 "\"container\":\"bkt\",\"secretRef\":{\"namespace\":\"" CFIX_NS "\",\"name\":"
                 "\"lb\"},\"namespaceSelector\":{\"matchLabels\":{\"backups\":\"local\"}}}}");
    /* made after namespace other was created (now): other's */
    entry("e-now", "o/now", "2099-01-01T00:00:00Z");
    cr_assert_str_eq(restore("other", "bkt", "o/now", "lb", "obkt", "o/r", "evil"), "");
    /* made before it: an earlier namespace of that name's, another owner */
    entry("e-old", "o/old", "2020-01-01T00:00:00Z");
    m = restore("other", "bkt", "o/old", "lb", "obkt", "o/r", "evil");
    cr_assert(strstr(m, "does not own"), "%s", m);
    cr_assert_null(strstr(m, "e-old"), "%s", m);
    /* ... and in the way of the namespace's own Etcd there */
    put(etcds, "{\"metadata\":{\"namespace\":\"other\",\"name\":\"etcd-o\"},\"spec\":"
               "{\"backup\":{\"store\":{\"provider\":\"Local\",\"container\":\"bkt\",\"prefix\":"
               "\"o/old\",\"secretRef\":{\"name\":\"lb\"}}}}}");
    m = restore("other", "bkt", "o/old", "lb", "obkt", "o/r", "evil");
    cr_assert(strstr(m, "does not own"), "%s", m);
    /* an earlier namespace's entry that cannot be placed (its bucket gone) may be anywhere */
    put(etcds, "{\"metadata\":{\"namespace\":\"other\",\"name\":\"etcd-q\"},\"spec\":"
               "{\"backup\":{\"store\":{\"provider\":\"Local\",\"container\":\"q\",\"prefix\":"
               "\"o\",\"secretRef\":{\"name\":\"evil\"}}}}}");
    cr_assert_str_eq(restore("other", "q", "o", "evil", "obkt", "o/r", "evil"), "");
    put(entries, "{\"metadata\":{\"name\":\"e-gone\",\"creationTimestamp\":"
                 "\"2020-01-01T00:00:00Z\"},\"spec\":{\"etcd\":{\"namespace\":\"other\","
                 "\"name\":\"etcd-g\"},\"bucketName\":\"gone\",\"store\":{\"provider\":"
                 "\"Local\",\"container\":\"bkt\"},\"prefix\":\"g\"}}");
    m = restore("other", "q", "o", "evil", "obkt", "o/r", "evil");
    cr_assert(strstr(m, "does not own"), "%s", m);
    cr_assert_eq(store_remove(entries, "e-gone", NULL, NULL), KERR_OK);
    /* a creation time not understood: fail closed */
    entry("e-bad", "o/bad", "yesterday");
    m = restore("other", "bkt", "o/bad", "lb", "obkt", "o/r", "evil");
    cr_assert(strstr(m, "does not own"), "%s", m);
}

/* A BackupBucket of provider Local, container bkt at /var/lib/lb, prefixScope Namespace. */
static void partitioned_bucket(void)
{
    create_text(&RES_NS, NULL,
                "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":"
                "\"etcd-warden\"}}");
    secret("etcd-warden", "local-bucket", LB);
    put(buckets, "{\"metadata\":{\"name\":\"local\"},\"spec\":{\"provider\":\"Local\","
                 "\"container\":\"bkt\",\"prefixScope\":\"Namespace\",\"secretRef\":"
                 "{\"namespace\":\"etcd-warden\",\"name\":\"local-bucket\"}}}");
}

Test(bklocal, a_partitioned_local_bucket_gives_a_namespace_its_part_only)
{
    partitioned_bucket();
    cr_expect(strstr(backup("bkt", "third/etcd", "lb"), "is not namespace other's"),
              "a destination in another namespace's part");
    cr_expect(strstr(backup("bkt", "other", "lb"), "is not namespace other's"),
              "a destination without a '/' after its first segment: nobody's");
    cr_expect_str_empty(backup("bkt", "other/etcd", "lb"), "its own part (control)");
    cr_expect_str_empty(backup("bkt", "third/etcd", "evil"), "outside the bucket (control)");
    cr_expect(strstr(restore("other", "bkt", "shoot--a/etcd", "lb", "obkt", "other/r", "lb"),
                     "partitions the directory"),
              "a source in another namespace's part");
    const char *m = restore("other", "bkt", "other/src", "lb", "bkt", "third/r", "lb");
    cr_expect(strstr(m, "is not namespace other's"),
              "a restore target in another namespace's "
              "part: %s",
              m);
    m = restore("other", "bkt", "other/src", "lb", "bkt", "other/r", "lb");
    cr_expect_str_empty(m, "a source and a target in its own part (control)");
}

/* An entry of no bucket of namespace other keeping Local directory hostPath/bkt/prefix. */
static void dir_entry(const char *name, const char *hostpath, const char *prefix)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"%s\",\"creationTimestamp\":\"2099-01-01T00:00:00Z\","
             "\"annotations\":{\"etcd-warden.io/local-host-path\":\"%s\"}},\"spec\":{\"etcd\":"
             "{\"namespace\":\"other\",\"name\":\"etcd-m\"},\"bucketName\":\"\",\"store\":"
             "{\"provider\":\"Local\",\"container\":\"bkt\"},\"prefix\":\"%s\"}}",
             name, hostpath, prefix);
    put(entries, text);
}

Test(bklocal, an_entry_of_a_directory_left_counts_as_its_etcd_would)
{
    const char *m;

    /* the directory an Etcd of other moved from: other's, and no other namespace's */
    dir_entry("e-left", "/var/lib/lb", "o--m/etcd");
    m = restore("other", "bkt", "o--m/etcd", "lb", "obkt", "o/r", "evil");
    cr_expect_str_empty(m, "the namespace reads the directory its Etcd left (control)");
    m = restore("third", "bkt", "o--m/etcd", "lb", "obkt", "t/r", "lb");
    cr_expect(strstr(m, "does not own"), "another namespace does not: %s", m);
    /* an entry whose recorded hostPath (a Secret other edits) lands on ns1's live directory */
    dir_entry("e-onto", "/var/lib/lb", "shoot--a/etcd");
    m = restore("other", "bkt", "shoot--a/etcd", "lb", "obkt", "o/r", "evil");
    cr_expect(strstr(m, "does not own"), "no grant where another namespace claims: %s", m);
}
