/* bkeclaim: entry names derived from the claim, and how a bucket's entries compare. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "controller/core/claims.h"
#include "controller/entries/bkeclaim.h"
#include "controller/entries/bkejob.h"

static void name_of(const char *provider, const char *container, const char *endpoint,
                    const char *prefix, char out[KNAME_SUBDOMAIN_MAX + 1])
{
    struct bstore_claim c;

    cr_assert_eq(bstore_claim_init(&c, provider, container, endpoint, prefix, NULL), KERR_OK);
    cr_assert_eq(bke_entry_name(&c, out), KERR_OK);
    bstore_claim_release(&c);
}

Test(bkeclaim, one_claim_one_name)
{
    char a[KNAME_SUBDOMAIN_MAX + 1], b[KNAME_SUBDOMAIN_MAX + 1];

    name_of("aws", "bkt", NULL, "shoot--etcd-main", a);
    cr_assert(strncmp(a, "shoot--etcd-main--", 18) == 0, "%s", a);
    cr_assert_eq(strlen(a), 18 + 16, "%s: 16 hex digits (64 bits), no name a tenant can search out",
                 a);
    name_of("S3", "bkt", "", "/shoot--etcd-main/", b);
    cr_assert_str_eq(a, b, "one claim however it is spelled");
    name_of("aws", "other", NULL, "shoot--etcd-main", b);
    cr_assert_str_neq(a, b, "another container");
    name_of("aws", "bkt", NULL, "shoot--etcd-main-2", b);
    cr_assert_str_neq(a, b);
    name_of("aws", "bkt", NULL, "/", b);
    cr_assert(strncmp(b, "root--", 6) == 0, "%s", b);
    name_of("aws", "bkt", NULL, "Shoot/Etcd_Main", b);
    cr_assert(strncmp(b, "shoot-etcd-main--", 17) == 0, "%s", b);
}

Test(bkeclaim, longest_name_stays_a_valid_name_and_job_name)
{
    char p[80], name[KNAME_SUBDOMAIN_MAX + 1], job[KNAME_LABEL_MAX + 1];

    memset(p, 'a', sizeof(p) - 1); /* a readable part cut at 64 */
    p[sizeof(p) - 1] = '\0';
    name_of("aws", "bkt", NULL, p, name);
    cr_assert_eq(strlen(name), BSTORE_ENTRY_NAME_MAX, "%s", name);
    cr_assert_eq(strncmp(name + 64, "--", 2), 0, "%s", name);
    cr_assert_eq(bkejob_name(name, job), KERR_OK);
    cr_assert_leq(strlen(job), KNAME_LABEL_MAX, "%s", job);
    cr_assert(strstr(job, "--delete-") != NULL, "%s", job);
    for (const char *c = job; *c; c++)
        cr_assert((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-', "%s", job);
}

Test(bkeclaim, long_prefixes_make_valid_names)
{
    char p[600], out[KNAME_SUBDOMAIN_MAX + 1];

    memset(p, 'a', sizeof(p) - 1);
    p[sizeof(p) - 1] = '\0';
    name_of("aws", "bkt", NULL, p, out);
    cr_assert_leq(strlen(out), KNAME_SUBDOMAIN_MAX);
    for (const char *c = out; *c; c++)
        cr_assert((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-', "%s", out);
}

Test(bkeclaim, entries_compare_as_their_store_lists)
{
    const char *text =
        "[{\"metadata\":{\"name\":\"a\"},\"spec\":{\"prefix\":\"p/etcd\",\"etcd\":{\"namespace\":"
        "\"n\",\"name\":\"a\"}}},{\"metadata\":{\"name\":\"b\"},\"spec\":{\"prefix\":\"p/etcd-2\","
        "\"etcd\":{\"namespace\":\"n\",\"name\":\"b\"}}}]";
    cJSON *entries = NULL;
    struct bke_bucket s3 = { .key = "Object|bkt|" }, local = { .key = "Local|bkt|" };
    char why[BKECLAIM_WHY_MAX];

    cr_assert_eq(kjson_parse(text, strlen(text), NULL, &entries, NULL, NULL), KERR_OK);
    cr_assert_not_null(bkeclaim_conflict(&s3, entries, 0, why), "S3 lists p/etcd-2 with p/etcd");
    cr_assert(strstr(why, "BackupEntry b of Etcd n/b"), "%s", why);
    cr_assert_null(bkeclaim_conflict(&local, entries, 0, why), "a Local walk does not");
    cr_assert_eq(bkeclaim_same_prefix("/p//x/", "p/x"), 1);
    cr_assert_eq(bkeclaim_overlapping(&s3, "p", "p2"), 1);
    cr_assert_eq(bkeclaim_overlapping(&local, "p", "p2"), 0);
    cJSON_Delete(entries);
}

/* A bucket with deletionGracePeriod grace (NULL: none); its read result and message. */
static enum kerr read_grace(const char *grace, long *ms, struct kerr_info *err)
{
    char text[256];
    struct bke_bucket b;
    cJSON *obj;
    enum kerr rc;

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"b\"},\"spec\":{\"provider\":\"aws\",\"container\":\"ckt\","
             "\"secretRef\":{\"namespace\":\"n\",\"name\":\"s\"}%s%s%s}}",
             grace ? ",\"deletionGracePeriod\":\"" : "", grace ? grace : "", grace ? "\"" : "");
    obj = cJSON_Parse(text);
    cr_assert_not_null(obj);
    kerr_clear(err);
    rc = bkeclaim_read_bucket(obj, &b, err);
    *ms = b.grace_ms;
    cJSON_Delete(obj);
    return rc;
}

Test(bkeclaim, grace_period_must_be_positive)
{
    static const char *const bad[] = { "0s", "0", "-1h", "-0s", "0h0m" };
    struct kerr_info err;
    long ms;
    size_t i;

    cr_assert_eq(read_grace(NULL, &ms, &err), KERR_OK);
    cr_assert_eq(ms, 168L * 3600000L, "the default: 168h");
    cr_assert_eq(read_grace("1s", &ms, &err), KERR_OK);
    cr_assert_eq(ms, 1000L);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_assert_eq(read_grace(bad[i], &ms, &err), KERR_INVAL, "%s accepted", bad[i]);
        cr_assert_not_null(strstr(err.msg, "must be positive, e.g. 168h"), "%s: %s", bad[i],
                           err.msg);
        cr_assert_not_null(strstr(err.msg, "spec.deletionGracePeriod"), "%s", err.msg);
    }
    cr_assert_eq(read_grace("7 days", &ms, &err), KERR_INVAL);
    cr_assert_not_null(strstr(err.msg, "is not a duration"), "%s", err.msg);
}

/* An Etcd with store {provider, container} and prefix p. */
static cJSON *etcd_of(const char *provider, const char *container, const char *endpoint,
                      const char *prefix)
{
    cJSON *o = cJSON_Parse("{\"metadata\":{\"namespace\":\"n\",\"name\":\"e\"},"
                           "\"spec\":{\"backup\":{\"store\":{}}}}");

    cr_assert_not_null(o);
    if (provider)
        cr_assert_eq(kjson_set_str(o, "spec.backup.store.provider", provider, NULL), KERR_OK);
    if (container)
        cr_assert_eq(kjson_set_str(o, "spec.backup.store.container", container, NULL), KERR_OK);
    if (endpoint)
        cr_assert_eq(kjson_set_str(o, "spec.backup.store.endpointOverride", endpoint, NULL),
                     KERR_OK);
    cr_assert_eq(kjson_set_str(o, "spec.backup.store.prefix", prefix, NULL), KERR_OK);
    return o;
}

static int same_store(const struct bke_bucket *b, cJSON *etcd)
{
    int r = bkeclaim_same_store(b, etcd);

    cJSON_Delete(etcd);
    return r;
}

Test(bkeclaim, a_respelled_or_unknown_store_keeps_its_entries)
{
    struct bke_bucket s3 = { .key = "Object|bkt|" }, other = { .key = "Object|other|" };

    /* etcd-druid's own spellings, and an endpoint moved from the Secret to the Etcd */
    cr_assert_eq(same_store(&s3, etcd_of("s3", "bkt", NULL, "p")), 1);
    cr_assert_eq(same_store(&s3, etcd_of("stackit", "bkt", "https://h:0443/", "p")), 1);
    cr_assert_eq(same_store(&s3, etcd_of("ocs", "bkt", "http://other", "p")), 1);
    cr_assert_eq(same_store(&s3, etcd_of("gcp", "bkt", NULL, "p")), 1, "any object family");
    cr_assert_eq(same_store(&other, etcd_of("s3", "bkt", NULL, "p")), 0, "another container");
    /* not understood: it may be the bucket's store, never a new entry */
    cr_assert_eq(same_store(&s3, etcd_of("awss", "bkt", NULL, "p")), BKECLAIM_MAYBE);
    cr_assert_eq(same_store(&other, etcd_of("awss", "bkt", NULL, "p")), 0);
    cr_assert_eq(same_store(&s3, etcd_of("aws", NULL, NULL, "p")), BKECLAIM_MAYBE);
    cr_assert_eq(same_store(&s3, etcd_of(NULL, "bkt", NULL, "p")), BKECLAIM_MAYBE);
    cr_assert_eq(same_store(&s3, etcd_of("awss", "other", NULL, "p")), 0);
}

Test(bkeclaim, an_unknown_store_blocks_deletions_in_its_container)
{
    const char *etcds_text = "[{\"metadata\":{\"namespace\":\"n\",\"name\":\"x\"},\"spec\":{"
                             "\"backup\":{\"store\":{\"provider\":\"awss\",\"container\":\"bkt\","
                             "\"prefix\":\"elsewhere\"}}}}]";
    cJSON *etcds = cJSON_Parse(etcds_text), *none = cJSON_CreateArray();
    struct bstore_claim c, d;
    char why[CLAIMS_WHY_MAX];

    cr_assert_eq(bstore_claim_init(&c, "aws", "bkt", NULL, "p/etcd", NULL), KERR_OK);
    claims_find_in(etcds, none, none, &c, NULL, why);
    cr_assert(strstr(why, "Etcd n/x"), "fails closed: %s", why);
    cr_assert_eq(bstore_claim_init(&d, "aws", "other", NULL, "p/etcd", NULL), KERR_OK);
    claims_find_in(etcds, none, none, &d, NULL, why);
    cr_assert_str_eq(why, "", "another container");
    bstore_claim_release(&c);
    bstore_claim_release(&d);
    cJSON_Delete(etcds);
    cJSON_Delete(none);
}

/* An EtcdRestore in flight claims its target: a deletion or copy onto it waits; once
 * Completed (its Etcd claims it) or Failed before its copy it is nobody's through the restore;
 * Failed after its copy started, it keeps the claim while it is stored. */
Test(bkeclaim, an_in_flight_restore_target_is_in_the_way)
{
    cJSON *rs =
        cJSON_Parse("[{\"metadata\":{\"namespace\":\"t\",\"name\":\"r\"},\"spec\":{\"target\":{"
                    "\"etcdName\":\"new\",\"store\":{\"provider\":\"S3\",\"container\":\"bkt\","
                    "\"prefix\":\"t/new\"}}},\"status\":{\"phase\":\"Copying\"}},"
                    "{\"metadata\":{\"namespace\":\"t\",\"name\":\"open\"},\"spec\":{\"target\":{"
                    "\"etcdName\":\"n2\",\"store\":{\"container\":\"bkt2\",\"prefix\":\"q\"}}}}]");
    struct claims_skip own = { .etcd_ns = "t", .etcd_name = "new" };
    struct bstore_claim c, d;
    char why[CLAIMS_WHY_MAX];

    cr_assert_eq(bstore_claim_init(&c, "aws", "bkt", NULL, "t/new", NULL), KERR_OK);
    claims_find_restores_in(rs, NULL, NULL, &c, NULL, why);
    cr_expect_str_eq(why, "the target prefix \"t/new\" of EtcdRestore t/r, in flight");
    claims_find_restores_in(rs, NULL, NULL, &c, &own, why);
    cr_expect_str_eq(why, "", "the restore creating that Etcd");
    cr_assert_eq(bstore_claim_init(&d, "aws", "bkt2", NULL, "z", NULL), KERR_OK);
    claims_find_restores_in(rs, NULL, NULL, &d, NULL, why);
    cr_expect_neq(*why, '\0', "a target without its provider: its whole container");
    cr_assert_not_null(
        cJSON_SetValuestring((cJSON *)kjson_get(rs->child, "status.phase"), "Completed"));
    claims_find_restores_in(rs, NULL, NULL, &c, NULL, why);
    cr_expect_str_eq(why, "", "Completed: its Etcd carries the claim");
    cr_assert_not_null(
        cJSON_SetValuestring((cJSON *)kjson_get(rs->child, "status.phase"), "Failed"));
    claims_find_restores_in(rs, NULL, NULL, &c, NULL, why);
    cr_expect_str_eq(why, "", "Failed before its copy started: nothing of it there");
    cr_assert_not_null(cJSON_AddStringToObject((cJSON *)kjson_get_obj(rs->child, "status"),
                                               "jobName", "r--restore"));
    claims_find_restores_in(rs, NULL, NULL, &c, NULL, why);
    cr_expect_str_eq(why,
                     "the target prefix \"t/new\" of EtcdRestore t/r, which failed after its "
                     "copy started (what it copied may be there)",
                     "Failed after its copy started: what it copied may be left there");
    claims_find_restores_in(rs, NULL, NULL, &c, &own, why);
    cr_expect_str_eq(why, "", "still not in the way of the Etcd it was to create");
    bstore_claim_release(&c);
    bstore_claim_release(&d);
    cJSON_Delete(rs);
}

/* A target without its own provider is in the store warden-webhook admitted: its template's,
 * or its source Etcd's (found in the Etcds read); it is in the way of overlapping prefixes of
 * that store only. One no rule tells (the source Etcd not read) still stands in the way of its
 * whole container; another namespace's claim is shown to a viewer only as such. */
Test(bkeclaim, a_restore_target_without_provider_is_the_store_admitted)
{
    cJSON *rs = cJSON_Parse(
        "[{\"metadata\":{\"namespace\":\"o\",\"name\":\"r2\"},\"spec\":{\"etcdTemplate\":{"
        "\"backup\":{\"store\":{\"provider\":\"S3\"}}},\"target\":{\"etcdName\":\"eo\","
        "\"store\":{\"container\":\"bkt\",\"prefix\":\"o/restored\"}}}},"
        "{\"metadata\":{\"namespace\":\"o\",\"name\":\"r3\"},\"spec\":{\"source\":{"
        "\"etcdName\":\"src\"},\"target\":{\"etcdName\":\"e3\",\"store\":{\"container\":"
        "\"bkt2\",\"prefix\":\"o/three\"}}}}]");
    cJSON *etcds = cJSON_Parse("[{\"metadata\":{\"namespace\":\"o\",\"name\":\"src\"},\"spec\":{"
                               "\"backup\":{\"store\":{\"provider\":\"aws\",\"container\":"
                               "\"bkt2\",\"prefix\":\"o/src\"}}}}]");
    struct claims_skip viewer = { .viewer_ns = "shoot" };
    struct bstore_claim free1, used1, free2, used2;
    char why[CLAIMS_WHY_MAX];

    cr_assert_not_null(rs);
    cr_assert_not_null(etcds);
    cr_assert_eq(bstore_claim_init(&free1, "aws", "bkt", NULL, "shoot/copies", NULL), KERR_OK);
    cr_assert_eq(bstore_claim_init(&used1, "S3", "bkt", NULL, "o/restored/x", NULL), KERR_OK);
    cr_assert_eq(bstore_claim_init(&free2, "S3", "bkt2", NULL, "shoot/b", NULL), KERR_OK);
    cr_assert_eq(bstore_claim_init(&used2, "S3", "bkt2", NULL, "o/three", NULL), KERR_OK);
    claims_find_restores_in(rs, etcds, NULL, &free1, NULL, why);
    cr_expect_str_eq(why, "", "the template's store, another prefix: %s", why);
    claims_find_restores_in(rs, etcds, NULL, &used1, NULL, why);
    cr_expect_str_eq(why, "the target prefix \"o/restored\" of EtcdRestore o/r2, in flight");
    claims_find_restores_in(rs, etcds, NULL, &used1, &viewer, why);
    cr_expect_str_eq(why, "a prefix claimed from another namespace");
    claims_find_restores_in(rs, etcds, NULL, &free2, NULL, why);
    cr_expect_str_eq(why, "", "the source Etcd's store, another prefix: %s", why);
    claims_find_restores_in(rs, etcds, NULL, &used2, NULL, why);
    cr_expect_str_eq(why, "the target prefix \"o/three\" of EtcdRestore o/r3, in flight");
    /* the source Etcd not read: the whole container, as before (fail closed) */
    claims_find_restores_in(rs, NULL, NULL, &free2, NULL, why);
    cr_expect_str_eq(why,
                     "the target prefix \"(none: its store is not understood)\" of EtcdRestore "
                     "o/r3, in flight");
    bstore_claim_release(&free1);
    bstore_claim_release(&used1);
    bstore_claim_release(&free2);
    bstore_claim_release(&used2);
    cJSON_Delete(etcds);
    cJSON_Delete(rs);
}

/* An EtcdRestore in flight reads its source store: a deletion of a prefix it lists waits;
 * Completed or Failed it reads nothing; a source store not understood reads its container. */
Test(bkeclaim, an_in_flight_restore_source_holds_deletions_back)
{
    cJSON *rs = cJSON_Parse(
        "[{\"metadata\":{\"namespace\":\"t\",\"name\":\"r\"},\"spec\":{\"source\":{"
        "\"store\":{\"provider\":\"S3\",\"container\":\"bkt\",\"prefix\":\"/t/old\"}},"
        "\"target\":{\"etcdName\":\"new\",\"store\":{\"provider\":\"S3\","
        "\"container\":\"bkt\",\"prefix\":\"t/new\"}}},\"status\":{\"phase\":"
        "\"Copying\"}},"
        "{\"metadata\":{\"namespace\":\"t\",\"name\":\"odd\"},\"spec\":{\"source\":{"
        "\"store\":{\"provider\":\"awss\",\"container\":\"bkt2\",\"prefix\":\"q\"}}}}]");
    struct bstore_claim c, d, e;
    char why[CLAIMS_WHY_MAX];

    cr_assert_eq(bstore_claim_init(&c, "aws", "bkt", NULL, "t/old", NULL), KERR_OK);
    claims_find_readers_in(rs, &c, why);
    cr_expect_str_eq(why, "the source prefix \"t/old\" of EtcdRestore t/r, which reads it until "
                          "it is Completed or Failed");
    cr_assert_eq(bstore_claim_init(&d, "aws", "bkt", NULL, "t/new", NULL), KERR_OK);
    claims_find_readers_in(rs, &d, why);
    cr_expect_str_eq(why, "", "the target is written, not read: a claim of its own");
    cr_assert_eq(bstore_claim_init(&e, "aws", "bkt2", NULL, "z", NULL), KERR_OK);
    claims_find_readers_in(rs, &e, why);
    cr_expect(strstr(why, "EtcdRestore t/odd"), "a source not understood: its container: %s", why);
    cr_assert_not_null(
        cJSON_SetValuestring((cJSON *)kjson_get(rs->child, "status.phase"), "Completed"));
    claims_find_readers_in(rs, &c, why);
    cr_expect_str_eq(why, "", "Completed: it reads no more");
    bstore_claim_release(&c);
    bstore_claim_release(&d);
    bstore_claim_release(&e);
    cJSON_Delete(rs);
}
