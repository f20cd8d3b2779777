/*
 * A copy Job's Local directory and the partition of a Local BackupBucket: warden-webhook
 * (webhook/plocal's plocal_part, at the admission of an EtcdBackup's destination or an
 * EtcdRestore's target) and warden-controller (common/lowner's lowner_part_now, when it
 * makes the copy Job, from the Secret read then) judge one directory by one rule
 * (common/lowner's lowner_part). Each case below puts the same BackupBuckets in an in-process
 * kube-sim and in the webhook's cache and asks both: where they differ, a copy admitted by one
 * is refused at its Job, or one writes into another namespace's part.
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/store.h"
#include "common/lowner.h"
#include "tests/support/cfix.h"
#include "webhook/plocal.h"

/* /var/lib/lb */
#define LB_HP "L3Zhci9saWIvbGI="

static const struct k8s_resource RES_SECRET = { "", "v1", "secrets", 1 };
static const struct k8s_resource RES_NS = { "", "v1", "namespaces", 0 };
static const struct k8s_resource RES_BUCKET = { "etcd-warden.io", "v1alpha1", "backupbuckets", 0 };
static struct cfix fx;
static struct store *buckets;

/* Create text as res in ns in the API server; the stored object put into cache (NULL: none). */
static void create(const struct k8s_resource *res, const char *ns, const char *text,
                   struct store *cache)
{
    struct kerr_info err = { 0 };
    cJSON *o = cJSON_Parse(text), *stored = NULL;

    cr_assert_not_null(o, "%s", text);
    cr_assert_eq(k8s_create(fx.c, res, ns, o, NULL, &stored, &err), KERR_OK, "%s", err.msg);
    cJSON_Delete(o);
    if (cache)
        cr_assert_eq(store_put(cache, stored, NULL, NULL, NULL), KERR_OK);
    else
        cJSON_Delete(stored);
}

/* BackupBucket name of provider Local, container bkt, Secret etcd-warden/secret, spec.prefixScope
 * scope (NULL: none), in both. */
static void bucket(const char *name, const char *secret, const char *scope)
{
    char text[768];

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"BackupBucket\",\"metadata\":"
             "{\"name\":\"%s\"},\"spec\":{\"provider\":\"Local\",\"container\":\"bkt\","
             "\"secretRef\":{\"namespace\":\"etcd-warden\",\"name\":\"%s\"},"
             "\"deletionGracePeriod\":\"168h\"%s%s%s}}",
             name, secret, scope ? ",\"prefixScope\":\"" : "", scope ? scope : "",
             scope ? "\"" : "");
    create(&RES_BUCKET, NULL, text, buckets);
}

static void setup(void)
{
    cfix_start(&fx, NULL);
    create(&RES_NS, NULL, "{\"metadata\":{\"name\":\"etcd-warden\"}}", NULL);
    create(&RES_NS, NULL, "{\"metadata\":{\"name\":\"alice\"}}", NULL);
    create(&RES_NS, NULL, "{\"metadata\":{\"name\":\"bob\"}}", NULL);
    create(&RES_SECRET, "etcd-warden",
           "{\"metadata\":{\"name\":\"local-bucket\"},\"data\":{\"hostPath\":\"" LB_HP "\"}}",
           NULL);
    cr_assert_eq(store_new(&(struct store_opts){ 0 }, &buckets, NULL), KERR_OK);
}

static void teardown(void)
{
    store_free(buckets);
    cfix_stop(&fx);
}

TestSuite(lowner_part, .init = setup, .fini = teardown, .timeout = 60);

/* What each process says of ns writing dir: "" when it may, else why not. */
static void judge(const char *ns, const char *dir, char wh[PLOCAL_WHY_MAX], char ctl[1024])
{
    struct kerr_info err = { 0 };

    cr_assert_eq(plocal_part(fx.c, buckets, ns, dir, wh, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(lowner_part_now(fx.c, ns, dir, "a copy writes", ctl, 1024, &err), KERR_OK, "%s",
                 err.msg);
}

Test(lowner_part, the_namespaces_own_part_may_be_written_by_both)
{
    char wh[PLOCAL_WHY_MAX], ctl[1024];

    bucket("local", "local-bucket", "Namespace");
    judge("alice", "var/lib/lb/bkt/alice/copy", wh, ctl);
    cr_expect_str_empty(wh, "warden-webhook: %s", wh);
    cr_expect_str_empty(ctl, "warden-controller: %s", ctl);
    judge("alice", "var/lib/lb/bkt/alice--x/copy", wh, ctl);
    cr_expect_str_empty(wh, "warden-webhook: %s", wh);
    cr_expect_str_empty(ctl, "warden-controller: %s", ctl);
    /* outside every bucket: the partition says nothing (overlaps are claims' to find) */
    judge("alice", "srv/alice/copy", wh, ctl);
    cr_expect_str_empty(wh, "warden-webhook: %s", wh);
    cr_expect_str_empty(ctl, "warden-controller: %s", ctl);
}

Test(lowner_part, another_namespaces_part_is_refused_by_both)
{
    char wh[PLOCAL_WHY_MAX], ctl[1024];

    bucket("local", "local-bucket", "Namespace");
    /* a Secret moved to /var/lib/lb/bkt/bob after admission: the copy's directory */
    judge("alice", "var/lib/lb/bkt/bob/alice/copy", wh, ctl);
    cr_expect(strstr(wh, "is not namespace alice's"), "warden-webhook: \"%s\"", wh);
    /* on the code before: no such check at the Job, the copy written into bob's part */
    cr_expect(strstr(ctl, "\"/var/lib/lb/bkt/bob/alice/copy\" is not namespace alice's"),
              "warden-controller: \"%s\"", ctl);
    cr_expect(strstr(ctl, "BackupBucket local"), "%s", ctl);
    cr_expect(strstr(ctl, "a copy writes only into its namespace's part"), "%s", ctl);
    /* the bucket's whole directory and a parent of it: nobody's */
    judge("alice", "var/lib/lb/bkt", wh, ctl);
    cr_expect(*wh, "warden-webhook: the bucket's directory");
    cr_expect(*ctl, "warden-controller: the bucket's directory");
    judge("alice", "var/lib", wh, ctl);
    cr_expect(*wh, "warden-webhook: a parent of the bucket's directory");
    cr_expect(*ctl, "warden-controller: a parent of the bucket's directory");
    /* no '/' after the first segment below the bucket: nobody's part */
    judge("alice", "var/lib/lb/bkt/alice", wh, ctl);
    cr_expect(*wh, "warden-webhook: no part");
    cr_expect(*ctl, "warden-controller: no part");
}

Test(lowner_part, an_unpartitioned_bucket_refuses_nothing)
{
    char wh[PLOCAL_WHY_MAX], ctl[1024];

    bucket("plain", "local-bucket", NULL);
    bucket("whole", "local-bucket", "Bucket");
    judge("alice", "var/lib/lb/bkt/bob/alice/copy", wh, ctl);
    cr_expect_str_empty(wh, "warden-webhook: %s", wh);
    cr_expect_str_empty(ctl, "warden-controller: %s", ctl);
}

Test(lowner_part, a_partitioned_bucket_not_placed_refuses_every_directory)
{
    char wh[PLOCAL_WHY_MAX], ctl[1024];

    /* its Secret cannot be read: its parts cannot be told (a prefixScope not understood is
     * refused by the CRD's schema) */
    bucket("lost", "absent", "Namespace");
    judge("alice", "srv/alice/copy", wh, ctl);
    cr_expect(strstr(wh, "cannot be placed"), "warden-webhook: \"%s\"", wh);
    cr_expect(strstr(ctl, "cannot be placed"), "warden-controller: \"%s\"", ctl);
}
