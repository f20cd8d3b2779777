/*
 * Entries found by their claim's name on an in-process kube-sim: warden-controller's entries of
 * stores no BackupBucket owns (controller/entries/bkefree) and warden-webhook's record of a
 * Local Etcd's directory (webhook/pmove). An entry of an earlier release's 8-digit name is still
 * its claim's (kept, no second entry); an entry of another claim under that name (a tenant's
 * claim that won the name) is not: the claim gets its own entry under the 16-digit name.
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/blocal.h"
#include "common/bstore.h"
#include "common/kjson.h"
#include "common/store.h"
#include "controller/core/etcdspec.h"
#include "controller/entries/bke.h"
#include "controller/entries/bke_ctx.h"
#include "controller/entries/bkefree.h"
#include "tests/support/cfix.h"
#include "webhook/pmove.h"

static struct cfix fx;
static struct store *etcds, *entries;

static void setup(void)
{
    struct store_opts o = { 0 };

    cfix_start(&fx, NULL);
    cr_assert_eq(store_new(&o, &etcds, NULL), KERR_OK);
    cr_assert_eq(store_new(&o, &entries, NULL), KERR_OK);
    cr_assert_eq(store_add_index(entries, BKE_INDEX_BUCKET, bke_index_bucket, NULL, NULL), KERR_OK);
}

static void teardown(void)
{
    store_free(etcds);
    store_free(entries);
    cfix_stop(&fx);
}

TestSuite(bkename, .init = setup, .fini = teardown, .timeout = 60);

/* Secret s in CFIX_NS (credentials, and hostPath /var/lib/lb). */
static void secret(void)
{
    cJSON *o = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":"
                           "\"s\",\"namespace\":\"" CFIX_NS "\"},\"data\":{\"hostPath\":"
                           "\"L3Zhci9saWIvbGI=\",\"accessKeyID\":\"eA==\"}}");

    cr_assert_not_null(o);
    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_SECRET, o));
    cJSON_Delete(o);
}

static void sync_entries(void)
{
    cJSON *list = NULL;

    cr_assert_eq(k8s_list_all(fx.c, &BKE_RES_ENTRY, NULL, NULL, &list, NULL), KERR_OK);
    cr_assert_eq(store_replace(entries, cJSON_DetachItemFromObject(list, "items"), NULL, NULL),
                 KERR_OK);
    cJSON_Delete(list);
}

static void pass(void)
{
    struct bke_ctx x = { .client = fx.c, .etcds = etcds, .entries = entries };
    struct kerr_info err = { 0 };
    long requeue = 0;

    cr_assert_eq(bkefree_run(&x, &requeue, &err), KERR_OK, "%s", err.msg);
    sync_entries();
}

/* Plant entry name of Etcd ns/etcd (uid) with store provider/container and prefix. */
static void plant(const char *name, const char *ns, const char *etcd, const char *uid,
                  const char *provider, const char *container, const char *prefix,
                  const char *hostpath)
{
    char text[1024];
    cJSON *e;

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"BackupEntry\",\"metadata\":"
             "{\"name\":\"%s\"%s%s%s},\"spec\":{\"bucketName\":\"\",\"prefix\":\"%s\",\"store\":"
             "{\"provider\":\"%s\",\"container\":\"%s\",\"endpointOverride\":\"\"},\"etcd\":"
             "{\"namespace\":\"%s\",\"name\":\"%s\",\"uid\":\"%s\"},\"claimedAt\":"
             "\"2026-01-01T00:00:00Z\"}}",
             name, hostpath ? ",\"annotations\":{\"" BLOCAL_HOSTPATH_ANNOTATION "\":\"" : "",
             hostpath ? hostpath : "", hostpath ? "\"}" : "", prefix, provider, container, ns, etcd,
             uid);
    e = cJSON_Parse(text);
    cr_assert_not_null(e, "%s", text);
    cr_assert_eq(k8s_create(fx.c, &BKE_RES_ENTRY, NULL, e, NULL, NULL, NULL), KERR_OK);
    cJSON_Delete(e);
    sync_entries();
}

/* The names of the claim of provider/container/prefix: current and earlier. */
static void names(const char *provider, const char *container, const char *prefix,
                  char cur[BSTORE_ENTRY_NAME_MAX + 1], char v1[BSTORE_ENTRY_NAME_MAX + 1])
{
    struct bstore_claim c;

    cr_assert_eq(bstore_claim_init(&c, provider, container, NULL, prefix, NULL), KERR_OK);
    cr_assert_eq(bstore_entry_name(&c, cur), KERR_OK);
    cr_assert_eq(bstore_entry_name_v1(&c, v1), KERR_OK);
    bstore_claim_release(&c);
}

/* Etcd main of CFIX_NS on aws/free-bkt/shoot--etcd-main, stored and cached; OWNED. */
static cJSON *live_etcd(void)
{
    cJSON *etcd = cfix_etcd("main",
                            "{\"provider\":\"aws\",\"container\":\"free-bkt\",\"prefix\":"
                            "\"shoot--etcd-main\",\"secretRef\":{\"name\":\"s\"}}",
                            NULL),
          *stored;

    secret();
    stored = cfix_create(&fx, &ETCDSPEC_RES_ETCD, etcd);
    cJSON_Delete(etcd);
    cr_assert_eq(store_put(etcds, cJSON_Duplicate(stored, 1), NULL, NULL, NULL), KERR_OK);
    return stored;
}

static int count_entries(void)
{
    cJSON *list = NULL;
    int n;

    cr_assert_eq(k8s_list_all(fx.c, &BKE_RES_ENTRY, NULL, NULL, &list, NULL), KERR_OK);
    n = cJSON_GetArraySize(kjson_get(list, "items"));
    cJSON_Delete(list);
    return n;
}

Test(bkename, a_claim_that_won_the_old_name_does_not_take_the_victims_entry)
{
    char cur[BSTORE_ENTRY_NAME_MAX + 1], v1[BSTORE_ENTRY_NAME_MAX + 1];
    cJSON *stored, *e;

    names("aws", "free-bkt", "shoot--etcd-main", cur, v1);
    /* the tenant's entry: her bucket, a prefix that reads alike, the victim's 8-digit name */
    plant(v1, "mallory", "x", "u-x", "aws", "mallory-bkt", "shoot__etcd.main", NULL);
    stored = live_etcd();
    pass();
    e = cfix_get(&fx, &BKE_RES_ENTRY, cur);
    cr_assert_not_null(e, "the victim's Etcd gets its own entry under its 16-digit name");
    cr_assert_str_eq(kjson_get_str(e, "spec.etcd.namespace"), CFIX_NS);
    cr_assert_str_eq(kjson_get_str(e, "spec.etcd.name"), "main");
    cr_assert_str_eq(kjson_get_str(e, "spec.store.container"), "free-bkt");
    cr_assert_str_eq(kjson_get_str(e, "spec.prefix"), "shoot--etcd-main");
    cJSON_Delete(e);
    e = cfix_get(&fx, &BKE_RES_ENTRY, v1);
    cr_assert_str_eq(kjson_get_str(e, "spec.etcd.namespace"), "mallory", "hers, untouched");
    cr_assert_str_eq(kjson_get_str(e, "spec.store.container"), "mallory-bkt");
    cJSON_Delete(e);
    cJSON_Delete(stored);
}

Test(bkename, an_entry_of_the_old_name_stays_the_live_etcds)
{
    char cur[BSTORE_ENTRY_NAME_MAX + 1], v1[BSTORE_ENTRY_NAME_MAX + 1];
    cJSON *stored = live_etcd(), *e;

    names("aws", "free-bkt", "shoot--etcd-main", cur, v1);
    /* made by an earlier release for this Etcd: its claim, the 8-digit name */
    plant(v1, CFIX_NS, "main", kjson_get_str(stored, "metadata.uid"), "S3", "free-bkt",
          "shoot--etcd-main", NULL);
    pass();
    pass();
    cr_assert_null(cfix_get(&fx, &BKE_RES_ENTRY, cur), "no second entry under the new name");
    cr_assert_eq(count_entries(), 1);
    e = cfix_get(&fx, &BKE_RES_ENTRY, v1);
    cr_assert_not_null(e, "kept");
    cr_assert_not(kjson_has(e, "spec.etcdDeletedAt"), "never released while its Etcd lives");
    cr_assert_str_eq(kjson_get_str(e, "status.phase"), BSTORE_ENTRY_ACTIVE);
    cJSON_Delete(e);
    cJSON_Delete(stored);
}

Test(bkename, the_new_name_held_by_another_claim_makes_nothing)
{
    char cur[BSTORE_ENTRY_NAME_MAX + 1], v1[BSTORE_ENTRY_NAME_MAX + 1];
    cJSON *stored, *e;

    names("aws", "free-bkt", "shoot--etcd-main", cur, v1);
    plant(cur, "mallory", "x", "u-x", "aws", "mallory-bkt", "shoot__etcd.main", NULL);
    stored = live_etcd();
    pass();
    e = cfix_get(&fx, &BKE_RES_ENTRY, cur);
    cr_assert_str_eq(kjson_get_str(e, "spec.etcd.namespace"), "mallory",
                     "not taken for the victim's, nor attached to it");
    cr_assert_str_eq(kjson_get_str(e, "spec.etcd.uid"), "u-x");
    cJSON_Delete(e);
    cJSON_Delete(stored);
}

/* A Local Etcd of CFIX_NS at bkt/shoot/etcd (hostPath /var/lib/lb): OWNED. */
static cJSON *local_etcd(void)
{
    cJSON *etcd = cfix_etcd("w",
                            "{\"provider\":\"Local\",\"container\":\"bkt\",\"prefix\":"
                            "\"shoot/etcd\",\"secretRef\":{\"name\":\"s\"}}",
                            NULL),
          *stored;

    secret();
    stored = cfix_create(&fx, &ETCDSPEC_RES_ETCD, etcd);
    cJSON_Delete(etcd);
    return stored;
}

static void local_names(char cur[BSTORE_ENTRY_NAME_MAX + 1], char v1[BSTORE_ENTRY_NAME_MAX + 1])
{
    struct bstore_claim c = { BLOCAL_KEY, (char *)"var/lib/lb/bkt/shoot/etcd" };

    cr_assert_eq(bstore_entry_name(&c, cur), KERR_OK);
    cr_assert_eq(bstore_entry_name_v1(&c, v1), KERR_OK);
}

Test(bkename, the_webhook_records_a_directory_past_a_collision)
{
    char cur[BSTORE_ENTRY_NAME_MAX + 1], v1[BSTORE_ENTRY_NAME_MAX + 1];
    struct kerr_info why = { 0 };
    cJSON *stored = local_etcd(), *e;

    local_names(cur, v1);
    plant(v1, "mallory", "x", "u-x", "Local", "bkt", "mallory/etcd", "/var/lib/lb");
    cr_assert_eq(pmove_record(fx.c, entries, NULL, stored, &why), KERR_OK, "%s", why.msg);
    e = cfix_get(&fx, &BKE_RES_ENTRY, cur);
    cr_assert_not_null(e, "the directory is recorded under its own name");
    cr_assert_str_eq(kjson_get_str(e, "spec.prefix"), "shoot/etcd");
    cJSON_Delete(e);
    cJSON_Delete(stored);
}

Test(bkename, the_webhook_finds_an_earlier_releases_record)
{
    char cur[BSTORE_ENTRY_NAME_MAX + 1], v1[BSTORE_ENTRY_NAME_MAX + 1];
    struct kerr_info why = { 0 };
    cJSON *stored = local_etcd();

    local_names(cur, v1);
    plant(v1, CFIX_NS, "w", kjson_get_str(stored, "metadata.uid"), "Local", "bkt", "shoot/etcd",
          "/var/lib/lb");
    cr_assert_eq(pmove_record(fx.c, entries, NULL, stored, &why), KERR_OK, "%s", why.msg);
    cr_assert_null(cfix_get(&fx, &BKE_RES_ENTRY, cur), "no second entry");
    cJSON_Delete(stored);
}

Test(bkename, the_webhook_refuses_when_the_name_is_another_claims)
{
    char cur[BSTORE_ENTRY_NAME_MAX + 1], v1[BSTORE_ENTRY_NAME_MAX + 1];
    struct kerr_info why = { 0 };
    cJSON *stored = local_etcd();

    local_names(cur, v1);
    plant(cur, "mallory", "x", "u-x", "Local", "bkt", "mallory/etcd", "/var/lib/lb");
    cr_assert_eq(pmove_record(fx.c, entries, NULL, stored, &why), KERR_EXISTS,
                 "never \"the entry is there\"");
    cr_assert(strstr(why.msg, "held by an entry of another prefix or store") != NULL, "%s",
              why.msg);
    cr_assert(strstr(why.msg, "mallory") == NULL, "names no other tenant: %s", why.msg);
    cJSON_Delete(stored);
}

/* BackupBucket shared (aws, bkt) and its Secret ops/creds, the data of Secret s (an Etcd gets an
 * entry only when its Secret holds the bucket's credentials). */
static void bucket(void)
{
    cJSON *ns = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":"
                            "{\"name\":\"ops\"}}"),
          *sec = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":"
                             "\"creds\",\"namespace\":\"ops\"},\"data\":{\"hostPath\":"
                             "\"L3Zhci9saWIvbGI=\",\"accessKeyID\":\"eA==\"}}"),
          *b = cJSON_Parse("{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"BackupBucket\","
                           "\"metadata\":{\"name\":\"shared\"},\"spec\":{\"provider\":\"aws\","
                           "\"container\":\"bkt\",\"secretRef\":{\"namespace\":\"ops\",\"name\":"
                           "\"creds\"},\"deletionGracePeriod\":\"1h\"}}");
    static const struct k8s_resource res_ns = { "", "v1", "namespaces", 0 };

    cr_assert(ns && sec && b);
    cr_assert_eq(k8s_create(fx.c, &res_ns, NULL, ns, NULL, NULL, NULL), KERR_OK);
    cr_assert_eq(k8s_create(fx.c, &ETCDSPEC_RES_SECRET, "ops", sec, NULL, NULL, NULL), KERR_OK);
    cr_assert_eq(k8s_create(fx.c, &BKE_RES_BUCKET, NULL, b, NULL, NULL, NULL), KERR_OK);
    cJSON_Delete(ns);
    cJSON_Delete(sec);
    cJSON_Delete(b);
}

static void bucket_pass(void)
{
    struct bke_ctx x = { .client = fx.c, .etcds = etcds, .entries = entries };
    struct kerr_info err = { 0 };
    long requeue = 0;

    cr_assert_eq(bke_run(&x, "shared", &requeue, &err), KERR_OK, "%s", err.msg);
    sync_entries();
}

/* Etcd name of CFIX_NS on aws/bkt/prefix, stored and cached; OWNED. */
static cJSON *bucket_etcd(const char *name, const char *prefix)
{
    char store[256];
    cJSON *etcd, *stored;

    snprintf(store, sizeof(store),
             "{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":\"%s\",\"secretRef\":"
             "{\"name\":\"s\"}}",
             prefix);
    etcd = cfix_etcd(name, store, NULL);
    stored = cfix_create(&fx, &ETCDSPEC_RES_ETCD, etcd);
    cJSON_Delete(etcd);
    cr_assert_eq(store_put(etcds, cJSON_Duplicate(stored, 1), NULL, NULL, NULL), KERR_OK);
    return stored;
}

Test(bkename, a_buckets_etcd_gets_its_entry_past_a_collision_and_keeps_an_earlier_one)
{
    char cur[BSTORE_ENTRY_NAME_MAX + 1], v1[BSTORE_ENTRY_NAME_MAX + 1];
    char ocur[BSTORE_ENTRY_NAME_MAX + 1], ov1[BSTORE_ENTRY_NAME_MAX + 1];
    cJSON *victim, *old, *e;

    secret();
    bucket();
    names("aws", "bkt", "shoot--etcd-main", cur, v1);
    names("aws", "bkt", "shoot--etcd-old", ocur, ov1);
    plant(v1, "mallory", "x", "u-x", "aws", "mallory-bkt", "shoot__etcd.main", NULL);
    old = bucket_etcd("old", "shoot--etcd-old");
    plant(ov1, CFIX_NS, "old", kjson_get_str(old, "metadata.uid"), "S3", "bkt", "shoot--etcd-old",
          NULL);
    e = cfix_get(&fx, &BKE_RES_ENTRY, ov1); /* an earlier release's entry of the bucket */
    cr_assert_eq(kjson_set_str(e, "spec.bucketName", "shared", NULL), KERR_OK);
    cr_assert_eq(k8s_update(fx.c, &BKE_RES_ENTRY, NULL, ov1, e, NULL, NULL, NULL), KERR_OK);
    cJSON_Delete(e);
    sync_entries();
    victim = bucket_etcd("main", "shoot--etcd-main");
    bucket_pass();
    bucket_pass();
    e = cfix_get(&fx, &BKE_RES_ENTRY, cur);
    cr_assert_not_null(e, "the victim's own entry, not a PrefixConflict with the tenant's");
    cr_assert_str_eq(kjson_get_str(e, "spec.etcd.name"), "main");
    cr_assert_str_eq(kjson_get_str(e, "spec.bucketName"), "shared");
    cJSON_Delete(e);
    cr_assert_null(cfix_get(&fx, &BKE_RES_ENTRY, ocur), "no second entry for the old one");
    e = cfix_get(&fx, &BKE_RES_ENTRY, ov1);
    cr_assert_not(kjson_has(e, "spec.etcdDeletedAt"), "never released while its Etcd lives");
    cr_assert_str_eq(kjson_get_str(e, "status.phase"), BSTORE_ENTRY_ACTIVE);
    cJSON_Delete(e);
    e = cfix_get(&fx, &BKE_RES_ENTRY, v1);
    cr_assert_str_eq(kjson_get_str(e, "spec.etcd.namespace"), "mallory", "hers, untouched");
    cJSON_Delete(e);
    cJSON_Delete(victim);
    cJSON_Delete(old);
}
