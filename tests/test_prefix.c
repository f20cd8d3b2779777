/* prefix: one prefix, one cluster, decided from the projected caches (no API). */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/kjson.h"
#include "common/store.h"
#include "webhook/prefix.h"
#include "webhook/review.h"

static const enum prefix_kind k_etcd = PREFIX_ETCD, k_entry = PREFIX_ENTRY;
static struct store *etcds, *entries;

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
    entries = new_store(&k_entry);
}

static void teardown(void)
{
    store_free(etcds);
    store_free(entries);
}

static cJSON *etcd(const char *ns, const char *name, const char *provider, const char *container,
                   const char *endpoint, const char *prefix)
{
    char text[1024];
    cJSON *o;

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"namespace\":\"%s\",\"name\":\"%s\"},\"spec\":{\"backup\":"
             "{\"store\":{\"provider\":\"%s\",\"container\":\"%s\",\"prefix\":\"%s\"%s%s%s}}}}",
             ns, name, provider, container, prefix, endpoint ? ",\"endpointOverride\":\"" : "",
             endpoint ? endpoint : "", endpoint ? "\"" : "");
    o = cJSON_Parse(text);
    cr_assert_not_null(o);
    return o;
}

static void cache_etcd(const char *ns, const char *name, const char *prefix)
{
    cr_assert_eq(store_put(etcds, etcd(ns, name, "S3", "bkt", NULL, prefix), NULL, NULL, NULL),
                 KERR_OK);
}

static void cache_entry(const char *ename, const char *ns, const char *name, const char *prefix,
                        const char *deleted)
{
    char text[1024];
    cJSON *o;

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"bucketName\":\"b\",\"prefix\":\"%s\","
             "\"store\":{\"provider\":\"S3\",\"container\":\"bkt\",\"endpointOverride\":\"\"},"
             "\"etcd\":{\"namespace\":\"%s\",\"name\":\"%s\",\"uid\":\"u\"}%s%s%s}}",
             ename, prefix, ns, name, deleted ? ",\"etcdDeletedAt\":\"" : "",
             deleted ? deleted : "", deleted ? "\"" : "");
    o = cJSON_Parse(text);
    cr_assert_not_null(o);
    cr_assert_eq(store_put(entries, o, NULL, NULL, NULL), KERR_OK);
}

/* The verdict on obj (TAKES; old TAKES, may be NULL): "" allowed, else the message. */
static const char *decide(enum review_op op, cJSON *obj, cJSON *old)
{
    static char msg[1024];
    struct review_req req;
    struct review_resp resp;

    review_req_init(&req);
    review_resp_init(&resp);
    cr_assert_eq(review_allow(&resp, "%s", ""), KERR_OK);
    req.op = op;
    req.object = obj;
    req.old_object = old;
    cr_assert_eq(prefix_check(etcds, entries, &req, &resp, NULL), KERR_OK);
    snprintf(msg, sizeof(msg), "%s", resp.allowed ? "" : resp.message);
    if (!resp.allowed)
        cr_assert_eq(resp.code, 403);
    review_resp_release(&resp);
    cJSON_Delete(obj);
    cJSON_Delete(old);
    return msg;
}

static const char *create(const char *ns, const char *name, const char *prefix)
{
    return decide(REVIEW_OP_CREATE, etcd(ns, name, "S3", "bkt", NULL, prefix), NULL);
}

TestSuite(prefix, .init = setup, .fini = teardown);

Test(prefix, as_the_sidecar_lists)
{
    static const struct {
        const char *cached, *candidate;
        int refused;
    } t[] = {
        { "ns--etcd", "ns--etcd", 1 },         /* equal */
        { "ns--etcd", "ns--etcd/", 1 },        /* a trailing slash never matters */
        { "ns--etcd", "ns--etcd/v2", 1 },      /* contained */
        { "ns--etcd/v2", "ns--etcd", 1 },      /* contains */
        { "ns--etcd", "./ns--etcd//a/..", 1 }, /* cleaned as Go's path.Clean */
        { "ns/etcd", "ns/etcd-2", 1 },         /* the sidecar lists "ns/etcd" as a string */
        { "ns--etcd-events", "ns--etcd", 1 },
        { "ns--etcd/v2", "ns--etcd/v20", 1 },
        { "/web/a/b", "web/a/b", 1 }, /* the S3 client cleans the path */
        { "a//b", "a/b", 1 },
        { "/", "x", 1 }, /* the whole bucket */
        { "x", "", 1 },
        { "x", ".", 1 },
        { "ns--etcd-main", "ns--etcd-events", 0 }, /* no string prefix either way */
        { "shoot--etcd-main", "shoot--restored-etcd-main", 0 },
    };
    size_t i;

    for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        store_free(etcds);
        etcds = new_store(&k_etcd);
        cache_etcd("other", "etcd", t[i].cached);
        cr_expect_eq(*create("ns", "etcd", t[i].candidate) != '\0', t[i].refused,
                     "cached \"%s\", candidate \"%s\"", t[i].cached, t[i].candidate);
    }
}

Test(prefix, message_names_the_other_etcd)
{
    cache_etcd("shoot", "etcd-main", "shoot--etcd-main");
    cr_expect_str_eq(
        create("shoot", "etcd-x", "shoot--etcd-main/"),
        "spec.backup.store.prefix \"shoot--etcd-main/\" overlaps the prefix "
        "\"shoot--etcd-main\" of Etcd shoot/etcd-main in the same store (Object|bkt|): "
        "the backup sidecar lists a prefix as a plain string, so either cluster's "
        "restore could read the other's snapshots; one prefix, one cluster (stores "
        "compare by container, whatever the provider or endpoint: docs/backup-entries.md)");
}

/* Another namespace's claim is refused without its namespace, name or prefix: probing
 * would enumerate the tenants of a bucket. */
Test(prefix, message_names_nothing_of_another_namespace)
{
    cache_etcd("shoot", "etcd-main", "shoot--etcd-main");
    cache_entry("team--etcd--1234abcd5678cdef", "team", "etcd", "team/a", "2026-01-02T03:04:05Z");
    cr_expect_str_eq(
        create("other", "etcd-x", "shoot--etcd-main/"),
        "spec.backup.store.prefix \"shoot--etcd-main/\" overlaps a prefix claimed "
        "from another namespace in the same store (Object|bkt|): the backup sidecar "
        "lists a prefix as a plain string, so either cluster's restore could read "
        "the other's snapshots; one prefix, one cluster (stores compare by container, "
        "whatever the provider or endpoint: docs/backup-entries.md) (the operator finds the "
        "owner with warden-snapshot check-prefixes and in warden-webhook's log)");
    cr_expect_null(strstr(create("other", "etcd-y", "team"), "team/a"));
    cr_expect_null(strstr(create("other", "etcd-y", "team"), "BackupEntry"));
}

Test(prefix, only_within_one_store)
{
    cache_etcd("shoot", "etcd-main", "p");
    cr_expect_str_eq(decide(REVIEW_OP_CREATE, etcd("a", "b", "S3", "other", NULL, "p"), NULL), "");
    cr_expect_str_eq(decide(REVIEW_OP_CREATE, etcd("a", "b", "Local", "bkt", NULL, "p"), NULL), "",
                     "a Local directory is no bucket");
    cr_expect_neq(*decide(REVIEW_OP_CREATE, etcd("a", "b", "aws", "bkt", NULL, "p"), NULL), '\0',
                  "aws is S3");
    cr_expect_neq(*decide(REVIEW_OP_CREATE, etcd("a", "b", "ABS", "bkt", NULL, "p"), NULL), '\0',
                  "one container name is one store whatever the family");
}

Test(prefix, itself_and_no_store)
{
    cache_etcd("shoot", "etcd-main", "p");
    cr_expect_str_eq(create("shoot", "etcd-main", "p"), "", "the same namespace/name");
    cr_expect_str_eq(decide(REVIEW_OP_CREATE,
                            cJSON_Parse("{\"metadata\":{\"namespace\":\"a\",\"name\":\"b\"},"
                                        "\"spec\":{\"replicas\":1}}"),
                            NULL),
                     "", "no backup store");
    cr_expect_str_eq(decide(REVIEW_OP_DELETE, NULL, etcd("a", "b", "S3", "bkt", NULL, "p")), "");
}

Test(prefix, update)
{
    cache_etcd("shoot", "etcd-main", "p");
    cache_etcd("shoot", "etcd-events", "p"); /* in conflict before the rule: not disrupted */
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE, etcd("shoot", "etcd-events", "S3", "bkt", NULL, "p/"),
                            etcd("shoot", "etcd-events", "S3", "bkt", NULL, "p")),
                     "", "an UPDATE keeping the prefix");
    cr_expect_neq(*decide(REVIEW_OP_UPDATE, etcd("shoot", "etcd-events", "S3", "bkt", NULL, "p/x"),
                          etcd("shoot", "etcd-events", "S3", "bkt", NULL, "q")),
                  '\0', "an UPDATE moving into another's prefix");
}

Test(prefix, bucketless_entry_kept_until_deleted)
{
    cJSON *o =
        cJSON_Parse("{\"metadata\":{\"name\":\"p--1a2b3c4d5e6f7a8b\"},\"spec\":{\"bucketName\":"
                    "\"\",\"prefix\":\"p\","
                    "\"store\":{\"provider\":\"S3\",\"container\":\"bkt\"},\"etcd\":{\"namespace\":"
                    "\"shoot\",\"name\":\"etcd-main\",\"uid\":\"u\"},\"etcdDeletedAt\":"
                    "\"2026-01-02T03:04:05Z\"}}");

    cr_assert_not_null(o);
    cr_assert_eq(store_put(entries, o, NULL, NULL, NULL), KERR_OK);
    cr_expect(strstr(create("shoot", "etcd", "p"),
                     "deleted at 2026-01-02T03:04:05Z and kept, in a store no BackupBucket "
                     "owns, until the operator deletes the entry"),
              "%s", create("shoot", "etcd", "p"));
    cr_expect_str_eq(create("shoot", "etcd-main", "p"), "", "the same namespace/name reattaches");
    cr_expect_neq(*create("other", "etcd", "p"), '\0', "another namespace");
}

Test(prefix, pending_entry)
{
    cache_entry("shoot--etcd-main--1234abcd5678cdef", "shoot", "etcd-main", "shoot--etcd-main",
                "2026-01-02T03:04:05Z");
    cr_expect_str_eq(
        create("shoot", "etcd", "shoot--etcd-main"),
        "spec.backup.store.prefix \"shoot--etcd-main\" overlaps the prefix "
        "\"shoot--etcd-main\" of BackupEntry shoot--etcd-main--1234abcd5678cdef of Etcd "
        "shoot/etcd-main, deleted at 2026-01-02T03:04:05Z and kept until the bucket's "
        "deletion grace period ends in the same store (Object|bkt|): the backup sidecar "
        "lists a prefix as a plain string, so either cluster's restore could read "
        "the other's snapshots; one prefix, one cluster (stores compare by container, "
        "whatever the provider or endpoint: docs/backup-entries.md)");
    cr_expect_str_eq(create("shoot", "etcd-main", "shoot--etcd-main"), "",
                     "the same namespace/name reattaches");
    cr_expect_neq(*create("other", "etcd", "shoot--etcd-main-2"), '\0',
                  "a sibling the sidecar would list with it");
    cr_expect_str_eq(create("other", "etcd", "shoot--etcd-x"), "",
                     "entries are checked by the same rule both ways");
}

Test(prefix, endpoint_spellings_are_one_store)
{
    cr_assert_eq(
        store_put(etcds, etcd("a", "x", "S3", "bkt", "http://h:9000/", "p"), NULL, NULL, NULL),
        KERR_OK);
    cr_expect_neq(
        *decide(REVIEW_OP_CREATE, etcd("b", "y", "aws", "bkt", "HTTP://H:9000", "p/q"), NULL),
        '\0');
    /* the sidecar may take its endpoint from the Secret, where the Etcd does not show it */
    cr_expect_neq(
        *decide(REVIEW_OP_CREATE, etcd("b", "y", "aws", "bkt", "http://h:9001", "p/q"), NULL),
        '\0');
    cr_expect_neq(*decide(REVIEW_OP_CREATE, etcd("b", "y", "s3", "bkt", NULL, "p/q"), NULL), '\0');
    cr_expect_neq(
        *decide(REVIEW_OP_CREATE, etcd("b", "y", "ecs", "bkt", "http://ecs", "p/q"), NULL), '\0');
}

Test(prefix, unknown_store_is_refused)
{
    const char *r = decide(REVIEW_OP_CREATE, etcd("b", "y", "awss", "bkt", NULL, "q"), NULL);

    cr_expect(strstr(r, "spec.backup.store.provider: unknown provider \"awss\" (accepted: aws, "
                        "S3, s3,"),
              "%s", r);
    r = decide(REVIEW_OP_CREATE, etcd("b", "y", "aws", "", NULL, "q"), NULL);
    cr_expect(strstr(r, "spec.backup.store.container: no container"), "%s", r);
}

Test(prefix, an_unknown_store_is_in_its_containers_way)
{
    /* admitted before the rule knew of it: its sidecar (still running) may write anywhere */
    cr_assert_eq(store_put(etcds, etcd("a", "x", "awss", "bkt", NULL, "p"), NULL, NULL, NULL),
                 KERR_OK);
    cr_expect_neq(*decide(REVIEW_OP_CREATE, etcd("b", "y", "aws", "bkt", NULL, "zz"), NULL), '\0');
    cr_expect_neq(*decide(REVIEW_OP_CREATE, etcd("b", "y", "ABS", "bkt", NULL, "zz"), NULL), '\0');
    cr_expect_str_eq(decide(REVIEW_OP_CREATE, etcd("b", "y", "aws", "other", NULL, "zz"), NULL),
                     "");
    cr_expect_str_eq(decide(REVIEW_OP_CREATE, etcd("a", "x", "aws", "bkt", NULL, "p"), NULL), "",
                     "itself, respelled");
}

Test(prefix, update_keeping_an_unknown_store)
{
    cJSON *old = etcd("a", "x", "awss", "bkt", NULL, "p"),
          *now = etcd("a", "x", "awss", "bkt", NULL, "p");

    cJSON_AddNumberToObject(cJSON_GetObjectItem(now, "spec"), "replicas", 3);
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE, now, old), "", "not refused: nothing new claimed");
    cr_expect_neq(*decide(REVIEW_OP_UPDATE, etcd("a", "x", "awss", "bkt", NULL, "q"),
                          etcd("a", "x", "awss", "bkt", NULL, "p")),
                  '\0');
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE, etcd("a", "x", "s3", "bkt", NULL, "p"),
                            etcd("a", "x", "aws", "bkt", NULL, "p")),
                     "", "a respelling");
}

Test(prefix, a_prefix_leaving_its_container)
{
    cr_expect_str_eq(create("a", "b", "../x"),
                     "spec.backup.store.prefix: prefix \"../x\" leaves its container");
}

Test(prefix, fails_closed_when_the_cache_cannot_answer)
{
    struct review_req req;
    struct review_resp resp;
    struct store_opts o = { prefix_project, (void *)&k_etcd, 0, NULL, NULL };
    struct store *bare = NULL;

    cr_assert_eq(store_new(&o, &bare, NULL), KERR_OK);
    review_req_init(&req);
    review_resp_init(&resp);
    cr_assert_eq(review_allow(&resp, "%s", ""), KERR_OK);
    req.op = REVIEW_OP_CREATE;
    req.object = etcd("a", "b", "S3", "bkt", NULL, "p");
    cr_assert_eq(prefix_check(bare, entries, &req, &resp, NULL), KERR_OK);
    cr_expect_not(resp.allowed, "no index to look in: refused, not waved through");
    cr_expect_eq(resp.code, 500);
    review_resp_release(&resp);
    cJSON_Delete((cJSON *)req.object);
    store_free(bare);
}

Test(prefix, the_same_etcds_earlier_prefix)
{
    /* its own entry of the same prefix reattaches; its entry of "a-2" still holds snapshots
     * the sidecar of "a" would list */
    cache_entry("a-2--1234abcd5678cdef", "shoot", "etcd-main", "a-2", "2026-01-02T03:04:05Z");
    cr_expect_str_eq(create("shoot", "etcd-main", "a-2/"), "");
    cr_expect_neq(*create("shoot", "etcd-main", "a"), '\0');
}

Test(prefix, an_etcdbackups_copies)
{
    static const enum prefix_kind k_backup = PREFIX_BACKUP;
    struct store *backups = new_store(&k_backup);
    struct review_req req;
    struct review_resp resp;
    cJSON *b = cJSON_Parse("{\"metadata\":{\"namespace\":\"ns\",\"name\":\"nightly\"},"
                           "\"spec\":{\"etcdName\":\"main\",\"destination\":{\"provider\":"
                           "\"aws\",\"container\":\"bkt\",\"prefix\":\"spec/x\"}},\"status\":"
                           "{\"destination\":{\"provider\":\"aws\",\"container\":\"bkt\","
                           "\"prefix\":\"copies/x\"}}}");

    cr_assert_eq(store_put(backups, b, NULL, NULL, NULL), KERR_OK);
    review_req_init(&req);
    review_resp_init(&resp);
    cr_assert_eq(review_allow(&resp, "%s", ""), KERR_OK);
    req.op = REVIEW_OP_CREATE;
    req.object = etcd("ns", "main", "S3", "bkt", NULL, "copies/x-2");
    cr_assert_eq(prefix_check3(etcds, entries, backups, &req, &resp, NULL), KERR_OK);
    cr_expect_not(resp.allowed, "its own backups' copies too: the sidecar would list them");
    cr_expect(strstr(resp.message, "the copies of EtcdBackup ns/nightly"), "%s", resp.message);
    review_resp_release(&resp);
    cJSON_Delete((cJSON *)req.object);
    review_resp_init(&resp);
    cr_assert_eq(review_allow(&resp, "%s", ""), KERR_OK);
    req.object = etcd("ns", "other", "S3", "bkt", NULL, "spec/x");
    cr_assert_eq(prefix_check3(etcds, entries, backups, &req, &resp, NULL), KERR_OK);
    cr_expect(resp.allowed, "where it wrote counts, not spec.destination: %s", resp.message);
    review_resp_release(&resp);
    cJSON_Delete((cJSON *)req.object);
    store_free(backups);
}

Test(prefix, projection_without_store)
{
    cJSON *out = NULL, *in = cJSON_Parse("{\"metadata\":{\"name\":\"x\"},\"spec\":{}}");

    cr_assert_eq(prefix_project((void *)&k_entry, in, &out), KERR_OK);
    cr_expect_null(cJSON_GetObjectItem(out, "claim"));
    cJSON_Delete(out);
    cJSON_Delete(in);
}

/* An Etcd re-created while its entry's backups are being deleted: the Job would delete the
 * new cluster's first snapshots with the old ones, so it waits for the entry to go. */
Test(prefix, its_own_entry_being_deleted)
{
    cJSON *o = cJSON_Parse(
        "{\"metadata\":{\"name\":\"p--1234abcd5678cdef\"},\"spec\":{\"bucketName\":\"b\","
        "\"prefix\":"
        "\"p\",\"store\":{\"provider\":\"S3\",\"container\":\"bkt\"},\"etcd\":{\"namespace\":"
        "\"shoot\",\"name\":\"etcd-main\",\"uid\":\"u\"},\"etcdDeletedAt\":"
        "\"2026-01-02T03:04:05Z\"},\"status\":{\"phase\":\"Deleting\"}}");

    cr_assert_eq(store_put(entries, o, NULL, NULL, NULL), KERR_OK);
    cr_expect_str_eq(
        create("shoot", "etcd-main", "p"),
        "spec.backup.store.prefix \"p\" overlaps the prefix \"p\" of BackupEntry "
        "p--1234abcd5678cdef of Etcd shoot/etcd-main, deleted at 2026-01-02T03:04:05Z, "
        "whose backups are being deleted (create it once the entry is gone) in the "
        "same store (Object|bkt|): the backup sidecar lists a prefix as a plain string, "
        "so either cluster's restore could read the other's snapshots; one prefix, "
        "one cluster (stores compare by container, whatever the provider or endpoint: "
        "docs/backup-entries.md)");
    cr_expect_str_eq(create("shoot", "etcd-main", "q"), "", "another prefix is free");
}

Test(prefix, a_prefix_the_sidecar_cannot_restore)
{
    const char *r = create("a", "b", "prod-v1/etcd");

    cr_expect(strstr(r, "spec.backup.store.prefix \"prod-v1/etcd\": a segment ends in \"v1\""),
              "%s", r);
    cr_expect_neq(*create("a", "b", "/x/etcd-v1/"), '\0');
    cr_expect_str_eq(create("a", "b", "prod-v2/etcd"), "");
    /* an Etcd already there keeps working: its UPDATEs keeping the prefix are admitted */
    cr_expect_str_eq(decide(REVIEW_OP_UPDATE, etcd("c", "d", "aws", "bkt", NULL, "q-v1/etcd"),
                            etcd("c", "d", "S3", "bkt", NULL, "q-v1/etcd")),
                     "");
}

/* etcd-druid runs the sidecar without a store when spec.backup.store has no provider: such an
 * Etcd writes nothing and claims nothing, beside anyone; an empty provider is refused. */
Test(prefix, a_store_without_provider_claims_nothing)
{
    cJSON *o = cJSON_Parse("{\"metadata\":{\"namespace\":\"a\",\"name\":\"x\"},\"spec\":"
                           "{\"backup\":{\"store\":{\"prefix\":\"p\"}}}}");

    cr_assert_not_null(o);
    cr_assert_eq(store_put(etcds, o, NULL, NULL, NULL), KERR_OK);
    cr_expect_str_eq(create("b", "y", "p"), "", "the cached Etcd without a provider is in no way");
    cr_expect_str_eq(decide(REVIEW_OP_CREATE,
                            cJSON_Parse("{\"metadata\":{\"namespace\":\"c\",\"name\":\"x\"},"
                                        "\"spec\":{\"backup\":{\"store\":{\"prefix\":\"p\"}}}}"),
                            NULL),
                     "", "nor is a new one");
    cr_expect_neq(*decide(REVIEW_OP_CREATE, etcd("c", "z", "", "bkt", NULL, "q"), NULL), '\0',
                  "an empty provider is unknown: refused");
}
