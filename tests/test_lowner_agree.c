/*
 * warden-webhook (webhook/bklocal, at a restore's admission) and warden-controller
 * (controller/backups/bkown, when it makes the Job that reads the directory) judge who owns a
 * Local directory by one rule (common/lowner): each case below puts the same facts in an
 * in-process kube-sim and in the webhook's caches and asks both. Where they differ a restore
 * admitted by one is refused by the other (it fails at its Job), or, worse, one hands a
 * directory another namespace writes to this one.
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/blocal.h"
#include "common/kjson.h"
#include "common/pclaim.h"
#include "common/store.h"
#include "controller/backups/bkown.h"
#include "tests/support/cfix.h"
#include "webhook/bklocal.h"
#include "webhook/prefix.h"

#define LEASE_NS "etcd-warden"
/* /etc/gardener/local-backupbuckets, etcd-druid's default hostPath */
#define DEFAULT_HP "L2V0Yy9nYXJkZW5lci9sb2NhbC1iYWNrdXBidWNrZXRz"
/* the directory of container bkt, prefix o/g there */
#define DIR_OG "etc/gardener/local-backupbuckets/bkt/o/g"

static const struct k8s_resource RES_SECRET = { "", "v1", "secrets", 1 };
static const struct k8s_resource RES_NS = { "", "v1", "namespaces", 0 };
static const struct k8s_resource RES_BUCKET = { "etcd-warden.io", "v1alpha1", "backupbuckets", 0 };
static const struct k8s_resource RES_ENTRY = { "etcd-warden.io", "v1alpha1", "backupentries", 0 };
static const struct k8s_resource RES_ETCD = { "druid.gardener.cloud", "v1alpha1", "etcds", 1 };
static const struct k8s_resource RES_RESTORE = { "etcd-warden.io", "v1alpha1", "etcdrestores", 1 };
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

static void setup(void)
{
    cfix_start(&fx, NULL);
    create(&RES_NS, NULL, "{\"metadata\":{\"name\":\"" LEASE_NS "\"}}", NULL);
    create(&RES_NS, NULL, "{\"metadata\":{\"name\":\"other\"}}", NULL);
    create(&RES_NS, NULL, "{\"metadata\":{\"name\":\"third\"}}", NULL);
    create(&RES_SECRET, LEASE_NS,
           "{\"metadata\":{\"name\":\"local-bucket\"},\"data\":{\"hostPath\":\"" DEFAULT_HP "\"}}",
           NULL);
    create(&RES_SECRET, "third",
           "{\"metadata\":{\"name\":\"lb\"},\"data\":{\"hostPath\":\"" DEFAULT_HP "\"}}", NULL);
    etcds = new_store(&k_etcd);
    entries = new_store(&k_entry);
    backups = new_store(&k_backup);
    buckets = new_store(NULL);
    /* a Local bucket that selects neither other nor third */
    create(&RES_BUCKET, NULL,
           "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"BackupBucket\",\"metadata\":"
           "{\"name\":\"local\"},\"spec\":{\"provider\":\"Local\",\"container\":\"bkt\","
           "\"secretRef\":{\"namespace\":\"" LEASE_NS "\",\"name\":\"local-bucket\"},"
           "\"deletionGracePeriod\":\"168h\",\"namespaceSelector\":{\"matchLabels\":"
           "{\"backups\":\"local\"}}}}",
           buckets);
    /* other's entry of its Etcd etcd-g, made now (after namespace other): bkt/o/g */
    create(&RES_ENTRY, NULL,
           "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"BackupEntry\",\"metadata\":"
           "{\"name\":\"o-g\"},\"spec\":{\"etcd\":{\"namespace\":\"other\",\"name\":\"etcd-g\","
           "\"uid\":\"u-g\"},\"bucketName\":\"local\",\"store\":{\"provider\":\"Local\","
           "\"container\":\"bkt\"},\"prefix\":\"o/g\"}}",
           entries);
}

static void teardown(void)
{
    store_free(etcds);
    store_free(entries);
    store_free(backups);
    store_free(buckets);
    cfix_stop(&fx);
}

/* Etcd ns/name with spec.backup.store store (JSON), in the API server and the cache. */
static void etcd_in(const char *ns, const char *name, const char *store)
{
    struct kerr_info err = { 0 };
    cJSON *e = cfix_etcd(name, store, NULL), *stored = NULL;

    cr_assert_eq(kjson_set_str(e, "metadata.namespace", ns, &err), KERR_OK);
    cr_assert_eq(k8s_create(fx.c, &RES_ETCD, ns, e, NULL, &stored, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(store_put(etcds, stored, NULL, NULL, NULL), KERR_OK);
    cJSON_Delete(e);
}

TestSuite(lowner_agree, .init = setup, .fini = teardown, .timeout = 60);

/* What each process says of ns reading dir: "" owned, else why not (webhook, controller). */
static void judge(const char *ns, const char *dir, const char *lease_ns, char wh[BKLOCAL_WHY_MAX],
                  char ctl[1024])
{
    struct kerr_info err = { 0 };

    cr_assert_eq(
        bklocal_source_owned(fx.c, buckets, etcds, entries, backups, lease_ns, ns, dir, wh, &err),
        KERR_OK, "%s", err.msg);
    cr_assert_eq(bkown_local(fx.c, ns, dir, "a restore reads", ctl, 1024, &err), KERR_OK, "%s",
                 err.msg);
}

Test(lowner_agree, an_entry_of_the_namespace_alone_there_owns_it_for_both)
{
    char wh[BKLOCAL_WHY_MAX], ctl[1024];

    judge("other", DIR_OG, LEASE_NS, wh, ctl);
    cr_expect_str_eq(wh, "", "warden-webhook: %s", wh);
    /* on the code before: admitted on the entry, refused at the Job */
    cr_expect_str_eq(ctl, "", "warden-controller: %s", ctl);
    /* inside it too; a directory it does not hold is nobody's */
    judge("other", DIR_OG "/sub", LEASE_NS, wh, ctl);
    cr_expect_str_eq(wh, "");
    cr_expect_str_eq(ctl, "");
    judge("other", "etc/gardener/local-backupbuckets/bkt/o", LEASE_NS, wh, ctl);
    cr_expect(strstr(wh, "does not own"), "%s", wh);
    cr_expect(strstr(ctl, "does not own"), "%s", ctl);
    /* another namespace's entry owns nothing of third's */
    judge("third", DIR_OG, LEASE_NS, wh, ctl);
    cr_expect(strstr(wh, "does not own"), "%s", wh);
    cr_expect(strstr(ctl, "does not own"), "%s", ctl);
}

Test(lowner_agree, an_entry_does_not_own_what_another_namespace_writes)
{
    char wh[BKLOCAL_WHY_MAX], ctl[1024];

    /* third's Etcd writes that directory now (its Secret places it there) */
    etcd_in("third", "etcd-t",
            "{\"provider\":\"Local\",\"container\":\"bkt\",\"prefix\":\"o/g\","
            "\"secretRef\":{\"name\":\"lb\"}}");
    judge("other", DIR_OG, LEASE_NS, wh, ctl);
    /* on the code before: warden-webhook handed third's directory to other */
    cr_expect(strstr(wh, "does not own"), "warden-webhook: \"%s\"", wh);
    cr_expect(strstr(ctl, "does not own"), "warden-controller: \"%s\"", ctl);
    cr_expect_null(strstr(wh, "third"), "%s", wh);
}

/* EtcdRestore ns/name into Local container bkt, prefix pfx (no Secret: the default hostPath),
 * stored in flight and its target recorded in the claim Lease as warden-webhook records it. */
static void restore_into(const char *ns, const char *name, const char *pfx, int store_it)
{
    struct kerr_info err = { 0 };
    struct pclaim_other other;
    char text[1024], dir[256];
    cJSON *o, *stored = NULL;

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdRestore\",\"metadata\":"
             "{\"name\":\"%s\",\"namespace\":\"%s\"},\"spec\":{\"source\":{\"store\":"
             "{\"provider\":\"Local\",\"container\":\"src\",\"prefix\":\"s\",\"secretRef\":"
             "{\"name\":\"lb\"}}},\"target\":{\"etcdName\":\"etcd-r\",\"store\":"
             "{\"provider\":\"Local\",\"container\":\"bkt\",\"prefix\":\"%s\"}}}}",
             name, ns, pfx);
    o = cJSON_Parse(text);
    cr_assert_not_null(o);
    if (store_it)
        cr_assert_eq(k8s_create(fx.c, &RES_RESTORE, ns, o, NULL, &stored, &err), KERR_OK, "%s",
                     err.msg);
    snprintf(dir, sizeof(dir), "etc/gardener/local-backupbuckets/bkt/%s", pfx);
    cr_assert_eq(
        pclaim_take(fx.c, LEASE_NS,
                    &(struct pclaim){ ns, name, BLOCAL_KEY, dir, PCLAIM_KIND_RESTORE, "etcd-r",
                                      "Local", NULL, kjson_get_str(stored, "metadata.uid") },
                    &other, &err),
        KERR_OK, "%s", err.msg);
    cr_assert_str_eq(other.what, "");
    cJSON_Delete(stored);
    cJSON_Delete(o);
}

Test(lowner_agree, another_namespaces_restore_target_is_in_the_way)
{
    char wh[BKLOCAL_WHY_MAX], ctl[1024];

    /* other's Etcd claims the directory (its Secret places it there) besides its entry */
    etcd_in("other", "etcd-g", "{\"provider\":\"Local\",\"container\":\"bkt\",\"prefix\":\"o/g\"}");
    /* the control: a restore of other's own into it changes nothing */
    restore_into("other", "mine", "o/g/sub", 1);
    judge("other", DIR_OG, LEASE_NS, wh, ctl);
    cr_expect_str_eq(wh, "", "warden-webhook: %s", wh);
    cr_expect_str_eq(ctl, "", "warden-controller: %s", ctl);
    /* third's restore copies into it: neither process hands it to other now */
    restore_into("third", "r", "o/g/restored", 1);
    judge("other", DIR_OG, LEASE_NS, wh, ctl);
    /* on the code before: warden-webhook admitted, warden-controller refused at the Job */
    cr_expect(strstr(wh, "does not own"), "warden-webhook: \"%s\"", wh);
    cr_expect(strstr(ctl, "does not own"), "warden-controller: \"%s\"", ctl);
    cr_expect_null(strstr(wh, "third"), "%s", wh);
}

Test(lowner_agree, a_restore_admitted_and_not_stored_yet_is_in_the_way)
{
    char wh[BKLOCAL_WHY_MAX], ctl[1024];

    etcd_in("other", "etcd-g", "{\"provider\":\"Local\",\"container\":\"bkt\",\"prefix\":\"o/g\"}");
    /* admitted a moment ago, another webhook still holding it: only the Lease tells */
    restore_into("third", "r", "o/g/restored", 0);
    judge("other", DIR_OG, LEASE_NS, wh, ctl);
    cr_expect(strstr(wh, "does not own"), "warden-webhook: \"%s\"", wh);
}
