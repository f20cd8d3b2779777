/*
 * Tests of webhook/plocal and prefix_check_local: Local claims decided by their directory on
 * the node, the hostPaths read from the backup Secrets on an in-process kube-sim (the API
 * server the webhook asks), never from a cache.
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/kjson.h"
#include "common/store.h"
#include "tests/support/cfix.h"
#include "webhook/plocal.h"
#include "webhook/prefix.h"
#include "webhook/review.h"

static const struct k8s_resource RES_SECRET = { "", "v1", "secrets", 1 };
static const struct k8s_resource RES_NS = { "", "v1", "namespaces", 0 };
static const enum prefix_kind k_etcd = PREFIX_ETCD, k_entry = PREFIX_ENTRY;
static struct cfix fx;
static struct store *etcds, *entries;

static struct store *new_store(const enum prefix_kind *k)
{
    struct store_opts o = { prefix_project, (void *)k, 0, NULL, NULL };
    struct store *s = NULL;

    cr_assert_eq(store_new(&o, &s, NULL), KERR_OK);
    cr_assert_eq(store_add_index(s, PREFIX_INDEX_STORE, prefix_index_store, NULL, NULL), KERR_OK);
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

/* Secret name in ns with data.hostPath b64 (NULL: no such key). */
static void secret(const char *ns, const char *name, const char *b64)
{
    char text[512];

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"%s\"},"
             "\"data\":{%s%s%s}}",
             name, b64 ? "\"hostPath\":\"" : "\"x\":\"eA==\"", b64 ? b64 : "", b64 ? "\"" : "");
    create_text(&RES_SECRET, ns, text);
}

#define LB     "L3Zhci9saWIvbGI="     /* /var/lib/lb */
#define LB_BKT "L3Zhci9saWIvbGIvYmt0" /* /var/lib/lb/bkt */

static void setup(void)
{
    cfix_start(&fx, NULL);
    create_text(&RES_NS, NULL,
                "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":"
                "{\"name\":\"other\"}}");
    secret(CFIX_NS, "lb", LB);
    secret("other", "lb-bkt", LB_BKT);
    secret("other", "lb", LB);
    secret("other", "nokey", NULL);
    etcds = new_store(&k_etcd);
    entries = new_store(&k_entry);
}

static void teardown(void)
{
    store_free(etcds);
    store_free(entries);
    cfix_stop(&fx);
}

static cJSON *etcd(const char *ns, const char *name, const char *container, const char *prefix,
                   const char *sec)
{
    char text[1024];
    cJSON *o;

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"namespace\":\"%s\",\"name\":\"%s\"},\"spec\":{\"backup\":"
             "{\"store\":{\"provider\":\"Local\",\"container\":\"%s\",\"prefix\":\"%s\"%s%s%s}}}}",
             ns, name, container, prefix, sec ? ",\"secretRef\":{\"name\":\"" : "", sec ? sec : "",
             sec ? "\"}" : "");
    o = cJSON_Parse(text);
    cr_assert_not_null(o);
    return o;
}

/* The verdict on a CREATE of obj (TAKES): "" allowed, else the message. */
static const char *decide(cJSON *obj)
{
    static char msg[1024];
    struct review_req req;
    struct review_resp resp;

    review_req_init(&req);
    review_resp_init(&resp);
    cr_assert_eq(review_allow(&resp, "%s", ""), KERR_OK);
    req.op = REVIEW_OP_CREATE;
    req.object = obj;
    cr_assert_eq(prefix_check_local(etcds, entries, NULL, fx.c, NULL, 1, &req, &resp, NULL),
                 KERR_OK);
    snprintf(msg, sizeof(msg), "%s", resp.allowed ? "" : resp.message);
    review_resp_release(&resp);
    cJSON_Delete(obj);
    return msg;
}

TestSuite(plocal, .init = setup, .fini = teardown);

Test(plocal, the_directory_from_the_secret_read_now)
{
    char dir[512], why[512];

    cr_assert_eq(
        plocal_dir(fx.c, "other", "lb-bkt", "shoot--a", "etcd", dir, sizeof(dir), why, sizeof(why)),
        KERR_OK);
    cr_assert_str_eq(why, "");
    cr_assert_str_eq(dir, "var/lib/lb/bkt/shoot--a/etcd");
    /* no Secret named, or no key: etcd-druid's default */
    plocal_dir(fx.c, "other", NULL, "bkt", "p", dir, sizeof(dir), why, sizeof(why));
    cr_assert_str_eq(dir, "etc/gardener/local-backupbuckets/bkt/p");
    plocal_dir(fx.c, "other", "nokey", "bkt", "p", dir, sizeof(dir), why, sizeof(why));
    cr_assert_str_eq(dir, "etc/gardener/local-backupbuckets/bkt/p");
    /* a Secret that cannot be read: not known */
    plocal_dir(fx.c, "other", "absent", "bkt", "p", dir, sizeof(dir), why, sizeof(why));
    cr_assert(strstr(why, "other/absent") && strstr(why, "cannot be read"), "%s", why);
}

Test(plocal, one_directory_two_spellings_is_refused)
{
    cr_assert_eq(
        store_put(etcds, etcd(CFIX_NS, "etcd-a", "bkt", "shoot--a/etcd", "lb"), NULL, NULL, NULL),
        KERR_OK);
    /* the attack: container shoot--a under hostPath /var/lib/lb/bkt is etcd-a's directory */
    cr_assert(strstr(decide(etcd("other", "etcd-b", "shoot--a", "etcd", "lb-bkt")), "overlaps"));
    cr_assert(
        strstr(decide(etcd("other", "etcd-b", "bkt", "shoot--a/etcd/sub", "lb")), "overlaps"));
    /* the same spelling under another hostPath is another directory */
    cr_assert_str_eq(decide(etcd("other", "etcd-b", "bkt", "shoot--a/etcd", "lb-bkt")), "");
    /* Gardener's local setup: one hostPath, a prefix per shoot */
    cr_assert_str_eq(decide(etcd("other", "etcd-c", "bkt", "shoot--c/etcd", "lb")), "");
}

Test(plocal, unknown_directories_fail_closed)
{
    cr_assert(strstr(decide(etcd("other", "x", "bkt", "p", "absent")), "cannot be read"));
    cr_assert(strstr(decide(etcd("other", "x", "..", "p", "lb")), "\"..\" segment"));
    /* another's Secret cannot be read: its directory may be any, so it is in the way */
    cr_assert_eq(store_put(etcds, etcd(CFIX_NS, "lost", "bkt", "q", "gone"), NULL, NULL, NULL),
                 KERR_OK);
    cr_assert(strstr(decide(etcd("other", "y", "bkt", "elsewhere", "lb")), "overlaps"));
}

Test(plocal, an_entry_is_placed_by_its_bucket_or_its_annotation)
{
    char dir[512];
    cJSON *c = cJSON_Parse("{\"namespace\":\"shoot\",\"local\":{\"bucket\":\"\",\"container\":"
                           "\"bkt\",\"prefix\":\"copies\"}}");

    cr_assert_eq(plocal_other(fx.c, NULL, c, dir, sizeof(dir)), 0, "no bucket: not known");
    cJSON_AddStringToObject(cJSON_GetObjectItem(c, "local"), "hostPath", "/var/lib/lb");
    cr_assert_eq(plocal_other(fx.c, NULL, c, dir, sizeof(dir)), 1);
    cr_assert_str_eq(dir, "var/lib/lb/bkt/copies");
    cJSON_Delete(c);
}

/*
 * A refusal names the Local claim in the way by the directory its own Secret places, read now,
 * never by the directory etcd-druid's default hostPath would give it (what the cache keeps).
 */
Test(plocal, a_refusal_names_the_directory_read)
{
    const char *m;

    /* other's etcd-a: container bkt under /var/lib/lb */
    cr_assert_eq(
        store_put(etcds, etcd("other", "etcd-a", "bkt", "shoot--a/etcd", "lb"), NULL, NULL, NULL),
        KERR_OK);
    m = decide(etcd("other", "etcd-b", "shoot--a", "etcd", "lb-bkt"));
    cr_expect(
        strstr(m, "the Local directory \"/var/lib/lb/bkt/shoot--a/etcd\" of Etcd other/etcd-a"),
        "%s", m);
    cr_expect_null(strstr(m, "local-backupbuckets"), "the default hostPath named: %s", m);
    /* etcd-c without a Secret: the default hostPath is the directory read */
    cr_assert_eq(store_put(etcds, etcd("other", "etcd-c", "bkt", "c", NULL), NULL, NULL, NULL),
                 KERR_OK);
    m = decide(etcd("other", "etcd-d", "bkt", "c/sub", NULL));
    cr_expect(strstr(m, "the Local directory \"/etc/gardener/local-backupbuckets/bkt/c\" of Etcd "
                        "other/etcd-c"),
              "%s", m);
    /* one whose Secret cannot be read: said so, no directory made up */
    cr_assert_eq(store_put(etcds, etcd("other", "lost", "bkt", "q", "gone"), NULL, NULL, NULL),
                 KERR_OK);
    m = decide(etcd("other", "y", "bkt", "elsewhere", "lb"));
    cr_expect(strstr(m, "a Local directory that cannot be placed") &&
                  strstr(m, "of Etcd other/lost"),
              "%s", m);
    /* another namespace's claim is not named at all (the rule of every refusal) */
    cr_assert_eq(store_put(etcds, etcd(CFIX_NS, "etcd-n", "bkt", "n/etcd", "lb"), NULL, NULL, NULL),
                 KERR_OK);
    m = decide(etcd("other", "etcd-m", "bkt", "n/etcd/sub", "lb"));
    cr_expect(strstr(m, "overlaps") && !strstr(m, "var/lib/lb/bkt/n/etcd\"") &&
                  !strstr(m, "etcd-n"),
              "%s", m);
}
