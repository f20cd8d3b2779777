/*
 * Tests of webhook/stsvol: the Local directory an Etcd's StatefulSet mounts (volume
 * local-backup, hostPath + the Etcd's prefix) is refused unless the Etcd may claim it, with the
 * Secrets on an in-process kube-sim; and of webhook/plocal's plocal_in_the_way: a claim of
 * another namespace on a partitioned Local bucket's own directory (which no StatefulSet may
 * mount) is in nobody's way in their own part.
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
#include "webhook/stsvol.h"

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

static void namespace(const char *name)
{
    char text[256];

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}", name);
    create_text(&RES_NS, NULL, text);
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

/* A Local Etcd ns/name of container and prefix, backup Secret sec. */
static void etcd(const char *ns, const char *name, const char *container, const char *prefix,
                 const char *sec)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"namespace\":\"%s\",\"name\":\"%s\"},\"spec\":{\"backup\":"
             "{\"store\":{\"provider\":\"Local\",\"container\":\"%s\",\"prefix\":\"%s\","
             "\"secretRef\":{\"name\":\"%s\"}}}}}",
             ns, name, container, prefix, sec);
    put(etcds, text);
}

#define VAR  "L3Zhcg=="             /* /var */
#define LB   "L3Zhci9saWIvbGI="     /* /var/lib/lb */
#define EVIL "L3Zhci9saWIvZXZpbA==" /* /var/lib/evil */

/* The BackupBucket local: provider Local, container bkt at /var/lib/lb; scope its prefixScope
 * (NULL: none). */
static void bucket(const char *scope)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"local\"},\"spec\":{\"provider\":\"Local\","
             "\"container\":\"bkt\"%s%s%s,\"secretRef\":{\"namespace\":\"etcd-warden\","
             "\"name\":\"local-bucket\"}}}",
             scope ? ",\"prefixScope\":\"" : "", scope ? scope : "", scope ? "\"" : "");
    put(buckets, text);
}

static void setup(void)
{
    cfix_start(&fx, NULL);
    namespace("other");
    namespace("etcd-warden");
    secret("etcd-warden", "local-bucket", LB);
    secret(CFIX_NS, "lb", LB);
    secret("other", "sq", VAR); /* other's Secret moved: /var + lib + lb/bkt, the bucket's */
    secret("other", "evil", EVIL);
    secret("other", "lb", LB);
    etcds = new_store(&k_etcd);
    entries = new_store(&k_entry);
    backups = new_store(&k_backup);
    buckets = new_store(NULL);
    etcd(CFIX_NS, "etcd-a", "bkt", CFIX_NS "/etcd-a", "lb");
}

static void teardown(void)
{
    store_free(etcds);
    store_free(entries);
    store_free(backups);
    store_free(buckets);
    cfix_stop(&fx);
}

TestSuite(stsvol, .init = setup, .fini = teardown);

/* The StatefulSet name of ns mounting volume local-backup at hostPath path (NULL: no such
 * volume and no backup sidecar) in its backup-restore container at /home/nonroot/<the path's
 * last segment>, which is its STORAGE_CONTAINER, its --store-prefix the cached Etcd ns/name's
 * (else "x"), as etcd-druid renders it; labelled: etcd-druid's labels, part of Etcd name.
 * OWNED by the caller. */
static cJSON *sts(const char *ns, const char *name, const char *path, int labelled)
{
    char text[4096], key[256], side[1024] = "";
    const char *prefix = "x", *container = path ? strrchr(path, '/') : NULL;
    cJSON *o = NULL, *e = NULL;

    snprintf(key, sizeof(key), "%s/%s", ns, name);
    if (etcds && store_get(etcds, key, &e, NULL) == KERR_OK &&
        kjson_get_str(e, "claim.local.prefix"))
        prefix = kjson_get_str(e, "claim.local.prefix");
    container = container ? container + 1 : "";
    if (path)
        snprintf(side, sizeof(side),
                 "{\"name\":\"etcd\",\"volumeMounts\":[{\"name\":\"data\",\"mountPath\":"
                 "\"/var/etcd/data\"}]},{\"name\":\"backup-restore\",\"args\":[\"server\","
                 "\"--storage-provider=Local\",\"--store-prefix=%s\"],\"env\":[{\"name\":"
                 "\"STORAGE_CONTAINER\",\"value\":\"%s\"}],\"volumeMounts\":[{\"name\":"
                 "\"etcd-config-file\",\"mountPath\":\"/var/etcd/config/\"},{\"name\":"
                 "\"local-backup\",\"mountPath\":\"/home/nonroot/%s\"}]}",
                 prefix, container, container);
    snprintf(text, sizeof(text),
             "{\"metadata\":{\"namespace\":\"%s\",\"name\":\"%s\"%s%s%s},\"spec\":{\"template\":"
             "{\"spec\":{\"containers\":[%s],\"volumes\":[{\"name\":\"etcd-config-file\","
             "\"configMap\":{\"name\":\"x\"}}%s%s%s]}}}}",
             ns, name,
             labelled ? ",\"labels\":{\"app.kubernetes.io/managed-by\":\"etcd-druid\","
                        "\"app.kubernetes.io/part-of\":\""
                      : "",
             labelled ? name : "", labelled ? "\"}" : "", side,
             path ? ",{\"name\":\"local-backup\",\"hostPath\":{\"type\":\"DirectoryOrCreate\","
                    "\"path\":\""
                  : "",
             path ? path : "", path ? "\"}}" : "");
    cJSON_Delete(e);
    o = cJSON_Parse(text);
    cr_assert_not_null(o, "%s", text);
    return o;
}

/* The verdict on op of StatefulSet obj (TAKES; old: the stored one, TAKES, may be NULL): ""
 * allowed, else "<code>: message". */
static const char *decide(enum review_op op, cJSON *obj, cJSON *old)
{
    static char msg[2048];
    struct review_req req;
    struct review_resp resp;

    review_req_init(&req);
    review_resp_init(&resp);
    cr_assert_eq(review_allow(&resp, "%s", ""), KERR_OK);
    req.op = op;
    req.kind_group = "apps";
    req.kind_kind = "StatefulSet";
    req.namespace = kjson_get_str(obj, "metadata.namespace");
    req.name = kjson_get_str(obj, "metadata.name");
    req.object = obj;
    req.old_object = old;
    cr_assert_eq(stsvol_check(fx.c, buckets, 1, etcds, entries, backups, &req, &resp, NULL),
                 KERR_OK);
    if (resp.allowed)
        msg[0] = '\0';
    else
        snprintf(msg, sizeof(msg), "%d: %s", resp.code, resp.message);
    review_resp_release(&resp);
    cJSON_Delete(obj);
    cJSON_Delete(old);
    return msg;
}

Test(stsvol, the_volume_is_read_as_etcd_druid_writes_it)
{
    const char *path = NULL;
    cJSON *o = sts("ns", "e", "/var/lib/lb/bkt", 0), *none = sts("ns", "e", NULL, 0);
    cJSON *two = cJSON_Parse("{\"spec\":{\"template\":{\"spec\":{\"volumes\":["
                             "{\"name\":\"local-backup\",\"hostPath\":{\"path\":\"/a\"}},"
                             "{\"name\":\"local-backup\",\"hostPath\":{\"path\":\"/b\"}}]}}}}");
    cJSON *num = cJSON_Parse("{\"spec\":{\"template\":{\"spec\":{\"volumes\":["
                             "{\"name\":\"local-backup\",\"hostPath\":{\"path\":7}}]}}}}");
    cJSON *obj = cJSON_Parse("{\"spec\":{\"template\":{\"spec\":{\"volumes\":{}}}}}");
    cJSON *empty = cJSON_Parse("{\"spec\":{\"template\":{\"spec\":{\"volumes\":["
                               "{\"name\":\"local-backup\",\"emptyDir\":{}}]}}}}");

    cr_assert_eq(stsvol_hostpath(o, &path), STSVOL_PATH);
    cr_expect_str_eq(path, "/var/lib/lb/bkt");
    cr_expect_eq(stsvol_hostpath(none, &path), STSVOL_NONE, "no such volume");
    cr_expect_eq(stsvol_hostpath(empty, &path), STSVOL_NONE, "not on the node");
    cr_expect_eq(stsvol_hostpath(two, &path), STSVOL_BAD, "two of that name");
    cr_expect_eq(stsvol_hostpath(num, &path), STSVOL_BAD, "a path that is no string");
    cr_expect_eq(stsvol_hostpath(obj, &path), STSVOL_BAD, "volumes that are no array");
    cJSON_Delete(o);
    cJSON_Delete(none);
    cJSON_Delete(two);
    cJSON_Delete(num);
    cJSON_Delete(obj);
    cJSON_Delete(empty);
}

Test(stsvol, only_a_path_new_to_the_statefulset_is_judged)
{
    struct review_req req;
    cJSON *a = sts("ns", "e", "/a", 0), *b = sts("ns", "e", "/b", 0), *n = sts("ns", "e", NULL, 0);

    review_req_init(&req);
    req.kind_group = "apps";
    req.kind_kind = "StatefulSet";
    req.op = REVIEW_OP_CREATE;
    req.object = a;
    cr_expect(stsvol_applies(&req), "a CREATE mounting one");
    req.op = REVIEW_OP_UPDATE;
    req.old_object = a;
    cr_expect(!stsvol_applies(&req), "an UPDATE keeping it");
    req.old_object = b;
    cr_expect(stsvol_applies(&req), "an UPDATE moving it");
    req.old_object = n;
    cr_expect(stsvol_applies(&req), "an UPDATE adding it");
    req.object = n;
    cr_expect(!stsvol_applies(&req), "none mounted");
    req.object = a;
    req.kind_kind = "Deployment";
    cr_expect(!stsvol_applies(&req), "another kind");
    cJSON_Delete(a);
    cJSON_Delete(b);
    cJSON_Delete(n);
}

Test(stsvol, the_bucket_directory_of_a_partitioned_bucket_is_never_mounted)
{
    const char *m;

    bucket("Namespace");
    /* other's etcd-sq, container lib, prefix lb/bkt: its directory is where its volume says */
    etcd("other", "etcd-sq", "lib", "lb/bkt", "sq");
    m = decide(REVIEW_OP_UPDATE, sts("other", "etcd-sq", "/var/lib", 1),
               sts("other", "etcd-sq", "/var/lib/evil/lib", 1));
    cr_expect(strstr(m, "403: ") && strstr(m, "\"/var/lib/lb/bkt\"") &&
                  strstr(m, "is not namespace other's"),
              "etcd-druid's update onto the bucket's own directory: %s", m);
    cr_expect_str_empty(decide(REVIEW_OP_UPDATE, sts("other", "etcd-sq", "/var/lib/evil/lib", 1),
                               sts("other", "etcd-sq", "/var/lib", 1)),
                        "back to its own directory (control)");
    etcd("other", "etcd-p", "lib", "lb", "sq"); /* /var/lib/lb */
    m = decide(REVIEW_OP_CREATE, sts("other", "etcd-p", "/var/lib", 1), NULL);
    cr_expect(strstr(m, "403: ") && strstr(m, "\"/var/lib/lb\""), "a parent of the bucket's: %s",
              m);
    etcd("other", "etcd-o", "bkt", CFIX_NS "/x", "lb");
    m = decide(REVIEW_OP_CREATE, sts("other", "etcd-o", "/var/lib/lb/bkt", 1), NULL);
    cr_expect(strstr(m, "403: ") && !strstr(m, "etcd-a"), "another namespace's part: %s", m);
    cr_expect_str_empty(
        decide(REVIEW_OP_CREATE, sts(CFIX_NS, "etcd-a", "/var/lib/lb/bkt", 1), NULL),
        "an Etcd in its own part (control)");
    cr_expect_str_empty(decide(REVIEW_OP_UPDATE, sts("other", "etcd-sq", "/var/lib", 1),
                               sts("other", "etcd-sq", "/var/lib", 1)),
                        "an UPDATE keeping the path is not judged");
}

Test(stsvol, another_claim_is_in_the_way_and_a_path_not_understood_is_refused)
{
    const char *m;

    /* no bucket: other's etcd-b mounting ns1's directory */
    etcd("other", "etcd-b", "bkt", CFIX_NS "/etcd-a", "evil");
    m = decide(REVIEW_OP_CREATE, sts("other", "etcd-b", "/var/lib/lb/bkt", 1), NULL);
    cr_expect(strstr(m, "403: ") && strstr(m, PREFIX_OTHER_NAMESPACE) &&
                  !strstr(m, "Etcd " CFIX_NS "/"),
              "overlaps another namespace's claim, naming none: %s", m);
    cr_expect_str_empty(
        decide(REVIEW_OP_CREATE, sts("other", "etcd-b", "/var/lib/evil/bkt", 1), NULL),
        "where its Secret places it (control)");
    etcd("other", "etcd-c", "bkt", CFIX_NS, "evil"); /* /var/lib/evil/bkt/ns1: above etcd-b's */
    m = decide(REVIEW_OP_CREATE, sts("other", "etcd-c", "/var/lib/evil/bkt", 1), NULL);
    cr_expect(strstr(m, "403: ") &&
                  strstr(m, "Etcd other/etcd-b (container \"bkt\", prefix \"" CFIX_NS "/etcd-a\")"),
              "a claim of its own namespace is named: %s", m);
    m = decide(REVIEW_OP_CREATE, sts("other", "etcd-b", "var/lib", 1), NULL);
    cr_expect(strstr(m, "403: ") && strstr(m, "cannot be placed"), "relative: %s", m);
    m = decide(REVIEW_OP_CREATE, sts("other", "etcd-b", "/var/../lib", 1), NULL);
    cr_expect(strstr(m, "403: ") && strstr(m, "cannot be placed"), "with \"..\": %s", m);
    m = decide(REVIEW_OP_CREATE, sts("other", "ghost", "/var/lib", 1), NULL);
    cr_expect(strstr(m, "500: "), "labelled as an Etcd's the cache does not hold: %s", m);
    cr_expect_str_empty(decide(REVIEW_OP_CREATE, sts("other", "app", "/var/lib", 0), NULL),
                        "no Etcd's StatefulSet: not judged here");
}

/* 1 when other's Etcd name (projected from the cache) is in the way of ns claiming dir. */
static int in_way(const char *ns, const char *dir, const char *name)
{
    char key[256];
    cJSON *o = NULL;
    int r;

    snprintf(key, sizeof(key), "other/%s", name);
    cr_assert_eq(store_get(etcds, key, &o, NULL), KERR_OK);
    r = plocal_in_the_way(fx.c, buckets, ns, dir, kjson_get(o, "claim"));
    cJSON_Delete(o);
    return r;
}

Test(stsvol, a_claim_that_cannot_be_mounted_is_in_nobodys_way_in_their_own_part)
{
    etcd("other", "etcd-sq", "lib", "lb/bkt", "sq"); /* /var/lib/lb/bkt: the bucket's */
    etcd("other", "etcd-up", "var", ".", "sq");      /* /var/var: apart */
    cr_expect(in_way(CFIX_NS, "var/lib/lb/bkt/" CFIX_NS "/etcd-b", "etcd-sq"),
              "no bucket: in the way, as before");
    bucket("Bucket");
    cr_expect(in_way(CFIX_NS, "var/lib/lb/bkt/" CFIX_NS "/etcd-b", "etcd-sq"),
              "prefixScope Bucket: in the way");
    cr_assert_eq(store_remove(buckets, "local", NULL, NULL), KERR_OK);
    bucket("Namespace");
    cr_expect(!in_way(CFIX_NS, "var/lib/lb/bkt/" CFIX_NS "/etcd-b", "etcd-sq"),
              "on the partitioned bucket's directory: nobody's way in ns1's part");
    cr_expect(in_way(CFIX_NS, "var/lib/lb/bkt/third/etcd-b", "etcd-sq"),
              "a candidate outside its part: in the way");
    cr_expect(in_way("other", "var/lib/lb/bkt/other/etcd-b", "etcd-sq"),
              "its own namespace's claim: in the way");
    cr_expect(in_way(CFIX_NS, "var/lib/lb", "etcd-sq"), "a candidate above the bucket");
    cr_expect(!in_way(CFIX_NS, "var/lib/lb/bkt/" CFIX_NS "/etcd-b", "etcd-up"), "apart (control)");
    cr_expect(in_way(NULL, "var/lib/lb/bkt/" CFIX_NS "/etcd-b", "etcd-sq"),
              "no namespace (a read racing a deletion): every overlap counts");
}

/* 1 when the cached claim key of store s is in the way of ns1 claiming its part's etcd-b. */
static int claim_in_way(struct store *s, const char *key)
{
    cJSON *o = NULL;
    int r;

    cr_assert_eq(store_get(s, key, &o, NULL), KERR_OK, "%s", key);
    r = plocal_in_the_way(fx.c, buckets, CFIX_NS, "var/lib/lb/bkt/" CFIX_NS "/etcd-b",
                          kjson_get(o, "claim"));
    cJSON_Delete(o);
    return r;
}

Test(stsvol, only_claims_a_statefulset_alone_makes_real_are_excepted)
{
    bucket("Namespace");
    /* an entry of other's Etcd whose Secret placed it on the bucket's directory: excepted */
    put(entries, "{\"metadata\":{\"name\":\"e-sq\",\"creationTimestamp\":"
                 "\"2099-01-01T00:00:00Z\",\"annotations\":{\"etcd-warden.io/local-host-path\":"
                 "\"/var\"}},\"spec\":{\"etcd\":{\"namespace\":\"other\",\"name\":"
                 "\"etcd-sq\"},\"bucketName\":\"\",\"store\":{\"provider\":\"Local\","
                 "\"container\":\"lib\"},\"prefix\":\"lb/bkt\"}}");
    cr_expect(!claim_in_way(entries, "e-sq"), "an Etcd's entry on the bucket's directory");
    /* a retained copy's entry there: a Job wrote it, no StatefulSet */
    put(entries, "{\"metadata\":{\"name\":\"e-copy\",\"creationTimestamp\":"
                 "\"2099-01-01T00:00:00Z\",\"annotations\":{\"etcd-warden.io/local-host-path\":"
                 "\"/var\",\"etcd-warden.io/retained-copy-of\":\"other/b\"}},\"spec\":{\"etcd\":"
                 "{\"namespace\":\"other\",\"name\":\"etcd-sq\"},\"bucketName\":\"\","
                 "\"store\":{\"provider\":\"Local\",\"container\":\"lib\"},\"prefix\":"
                 "\"lb/bkt\"}}");
    cr_expect(claim_in_way(entries, "e-copy"), "a retained copy's entry stays in the way");
    /* an EtcdBackup's copies written there by its Job */
    put(backups, "{\"metadata\":{\"namespace\":\"other\",\"name\":\"b\"},\"spec\":"
                 "{\"etcdName\":\"etcd-sq\"},\"status\":{\"destination\":{\"provider\":"
                 "\"Local\",\"container\":\"lib\",\"prefix\":\"lb/bkt\",\"hostPath\":"
                 "\"/var\"}}}");
    cr_expect(claim_in_way(backups, "other/b"), "an EtcdBackup's copies stay in the way");
}

/* The verdict on a CREATE of Etcd ns1/etcd-b in ns1's part (bkt/ns1/etcd-b, Secret lb) by
 * prefix_check_local, routed as given: "" allowed, else the message. */
static const char *etcd_create(int routed)
{
    static char msg[2048];
    struct review_req req;
    struct review_resp resp;
    cJSON *obj =
        cJSON_Parse("{\"metadata\":{\"namespace\":\"" CFIX_NS "\",\"name\":\"etcd-b\"},"
                    "\"spec\":{\"backup\":{\"store\":{\"provider\":\"Local\",\"container\":"
                    "\"bkt\",\"prefix\":\"" CFIX_NS "/etcd-b\",\"secretRef\":{\"name\":"
                    "\"lb\"}}}}}");

    cr_assert_not_null(obj);
    review_req_init(&req);
    review_resp_init(&resp);
    cr_assert_eq(review_allow(&resp, "%s", ""), KERR_OK);
    req.op = REVIEW_OP_CREATE;
    req.object = obj;
    cr_assert_eq(
        prefix_check_local(etcds, entries, backups, fx.c, buckets, routed, &req, &resp, NULL),
        KERR_OK);
    snprintf(msg, sizeof(msg), "%s", resp.allowed ? "" : resp.message);
    review_resp_release(&resp);
    cJSON_Delete(obj);
    return msg;
}

Test(stsvol, the_exception_holds_only_where_the_statefulsets_are_judged)
{
    const char *m;

    bucket("Namespace");
    etcd("other", "etcd-sq", "lib", "lb/bkt", "sq"); /* /var/lib/lb/bkt: the bucket's */
    cr_expect_str_empty(etcd_create(1), "routed: ns1's Etcd in its own part admitted");
    m = etcd_create(0);
    cr_expect(strstr(m, PREFIX_OTHER_NAMESPACE),
              "not routed: the claim may be mounted, so it "
              "is in the way (fail closed): %s",
              m);
}

/* The backup-restore container of o (BORROWED). */
static cJSON *side(cJSON *o)
{
    cJSON *c;

    cJSON_ArrayForEach (c, kjson_get(o, "spec.template.spec.containers"))
        if (strcmp(kjson_get_str(c, "name"), "backup-restore") == 0)
            return c;
    cr_assert_fail("no backup-restore container");
    return NULL;
}

/* o with its sidecar's --store-prefix (args[2]) set to prefix. */
static cJSON *with_prefix(cJSON *o, const char *prefix)
{
    char arg[256];

    snprintf(arg, sizeof(arg), "--store-prefix=%s", prefix);
    cJSON_ReplaceItemInArray(cJSON_GetObjectItem(side(o), "args"), 2, cJSON_CreateString(arg));
    return o;
}

/* o with member key of its sidecar's local-backup mount set to val. */
static cJSON *with_in_mount(cJSON *o, const char *key, const char *val)
{
    cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItem(side(o), "volumeMounts"), 1);

    cJSON_DeleteItemFromObject(m, key);
    cJSON_AddStringToObject(m, key, val);
    return o;
}

/* o with hostPath volume lb2 at path mounted at mnt by container index ci. */
static cJSON *with_volume(cJSON *o, int ci, const char *path, const char *mnt)
{
    cJSON *v = cJSON_CreateObject(), *m = cJSON_CreateObject(), *h;

    cJSON_AddStringToObject(v, "name", "lb2");
    h = cJSON_AddObjectToObject(v, "hostPath");
    cJSON_AddStringToObject(h, "path", path);
    cJSON_AddItemToArray((cJSON *)kjson_get(o, "spec.template.spec.volumes"), v);
    cJSON_AddStringToObject(m, "name", "lb2");
    cJSON_AddStringToObject(m, "mountPath", mnt);
    cJSON_AddItemToArray(
        cJSON_GetObjectItem(
            cJSON_GetArrayItem((cJSON *)kjson_get(o, "spec.template.spec.containers"), ci),
            "volumeMounts"),
        m);
    return o;
}

/* ns1's etcd-a as etcd-druid renders it, mounting the bucket's directory */
#define A_STS() sts(CFIX_NS, "etcd-a", "/var/lib/lb/bkt", 1)

Test(stsvol, the_directory_is_where_the_template_points_the_sidecar)
{
    const char *m;
    cJSON *o, *mnt;

    bucket("Namespace");
    etcd("other", "etcd-v", "bkt", "other/etcd-v", "lb");
    cr_expect_str_empty(decide(REVIEW_OP_CREATE, A_STS(), NULL), "etcd-druid's (control)");
    cr_expect_str_empty(decide(REVIEW_OP_UPDATE, A_STS(), A_STS()),
                        "an UPDATE keeping it (control)");
    m = decide(REVIEW_OP_UPDATE, with_prefix(A_STS(), "other/etcd-v"), A_STS());
    cr_expect(strstr(m, "403: ") && strstr(m, "\"/var/lib/lb/bkt/other/etcd-v\""),
              "V1: --store-prefix into another namespace's part, volume kept: %s", m);
    m = decide(REVIEW_OP_UPDATE, with_prefix(A_STS(), ""), A_STS());
    cr_expect(strstr(m, "403: "), "--store-prefix empty: the bucket's own directory: %s", m);
    m = decide(REVIEW_OP_UPDATE, with_volume(A_STS(), 1, "/var/lib/lb/bkt/other", "/x"), A_STS());
    cr_expect(strstr(m, "403: ") && strstr(m, "another hostPath volume (lb2)"),
              "V2: another hostPath volume in the sidecar: %s", m);
    m = decide(REVIEW_OP_UPDATE,
               with_volume(A_STS(), 0, "/var/lib/lb/bkt/other", "/home/nonroot/bkt/" CFIX_NS),
               A_STS());
    cr_expect(strstr(m, "403: ") && strstr(m, "over the backup sidecar's directory"),
              "another container's hostPath over the sidecar's mount: %s", m);
    cr_expect_str_empty(
        decide(REVIEW_OP_UPDATE, with_volume(A_STS(), 0, "/tmp/t", "/tmp/t"), A_STS()),
        "another container's hostPath elsewhere (control)");
    m = decide(REVIEW_OP_UPDATE,
               with_volume(A_STS(), 0, "/var/lib/lb/bkt/other", "/home/nonroot/./bkt/x"), A_STS());
    cr_expect(strstr(m, "403: ") && strstr(m, "over the backup sidecar's directory"),
              "a mount path that is not clean: %s", m);
    o = A_STS();
    mnt = cJSON_CreateObject();
    cJSON_AddStringToObject(mnt, "name", "local-backup");
    cJSON_AddStringToObject(mnt, "mountPath", "/elsewhere");
    cJSON_AddItemToArray(
        cJSON_GetObjectItem(
            cJSON_GetArrayItem((cJSON *)kjson_get(o, "spec.template.spec.containers"), 0),
            "volumeMounts"),
        mnt);
    m = decide(REVIEW_OP_UPDATE, o, A_STS());
    cr_expect(strstr(m, "403: ") && strstr(m, "container etcd mounts volume local-backup"),
              "local-backup mounted by another container: %s", m);
    m = decide(REVIEW_OP_UPDATE, with_in_mount(A_STS(), "subPath", "other"), A_STS());
    cr_expect(strstr(m, "403: ") && strstr(m, "subPath"), "V3: subPath: %s", m);
    m = decide(REVIEW_OP_UPDATE, with_in_mount(A_STS(), "subPathExpr", "$(NS)"), A_STS());
    cr_expect(strstr(m, "403: ") && strstr(m, "subPath"), "subPathExpr: %s", m);
    m = decide(REVIEW_OP_CREATE, with_in_mount(A_STS(), "mountPath", "/home/nonroot"), NULL);
    cr_expect(strstr(m, "403: ") &&
                  strstr(m, "on /home/nonroot/ (user 65532 or none) or /root/ (user 0)"),
              "local-backup mounted above <home>/<container>: %s", m);
}

Test(stsvol, a_sidecar_store_that_cannot_be_read_is_refused_for_a_local_etcd)
{
    const char *m;
    cJSON *o = A_STS();

    cJSON_DeleteItemFromObject(side(o), "env");
    m = decide(REVIEW_OP_CREATE, o, NULL);
    cr_expect(strstr(m, "403: ") && strstr(m, "cannot be read"), "no STORAGE_CONTAINER: %s", m);
    o = A_STS();
    cJSON_DeleteItemFromObject((cJSON *)kjson_get(o, "spec.template.spec"), "volumes");
    m = decide(REVIEW_OP_CREATE, o, NULL);
    cr_expect(strstr(m, "403: ") && strstr(m, "cannot be read"),
              "a Local Etcd's sidecar without its volume: %s", m);
    o = A_STS();
    cJSON_ReplaceItemInArray(cJSON_GetObjectItem(side(o), "args"), 1,
                             cJSON_CreateString("--storage-provider=S3"));
    m = decide(REVIEW_OP_CREATE, o, NULL);
    cr_expect(strstr(m, "403: ") && strstr(m, "not Local"),
              "local-backup mounted by a sidecar that is not Local: %s", m);
    o = A_STS();
    cJSON_ReplaceItemInArray(cJSON_GetObjectItem(side(o), "args"), 2,
                             cJSON_CreateString("--store-prefix"));
    m = decide(REVIEW_OP_UPDATE, o, A_STS());
    cr_expect(strstr(m, "403: ") && strstr(m, "cannot be read"),
              "an UPDATE making the store unreadable, volume kept: %s", m);
}

Test(stsvol, an_update_is_judged_when_what_the_sidecar_reads_or_a_mount_changes)
{
    struct review_req req;
    cJSON *a = A_STS(), *p = with_prefix(A_STS(), "y"), *s = with_in_mount(A_STS(), "subPath", "v");
    cJSON *v = with_volume(A_STS(), 0, "/tmp/t", "/tmp/t"), *r = A_STS();

    cJSON_AddNumberToObject(cJSON_GetObjectItem(r, "spec"), "replicas", 3);
    review_req_init(&req);
    req.kind_group = "apps";
    req.kind_kind = "StatefulSet";
    req.op = REVIEW_OP_UPDATE;
    req.old_object = a;
    req.object = r;
    cr_expect(!stsvol_applies(&req), "a scale keeping the template");
    req.object = p;
    cr_expect(stsvol_applies(&req), "another --store-prefix");
    req.object = s;
    cr_expect(stsvol_applies(&req), "a subPath");
    req.object = v;
    cr_expect(stsvol_applies(&req), "another container's new hostPath mount");
    cJSON_Delete(a);
    cJSON_Delete(p);
    cJSON_Delete(s);
    cJSON_Delete(v);
    cJSON_Delete(r);
}
