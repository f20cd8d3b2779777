/*
 * Tests of common/blocal: the directory of a Local store on the node (etcd-druid's hostPath +
 * "/" + container, the sidecar's path.Join(home, container, prefix)), and of the Local claims
 * common/bstore builds on it.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "common/blocal.h"
#include "common/bstore.h"
#include "common/kjson.h"

static const char *dir_of(const char *h, const char *c, const char *p)
{
    static char out[4096];

    if (blocal_dir(h, c, p, out, sizeof(out), NULL) != KERR_OK)
        return "(refused)";
    return out;
}

Test(blocal, the_directory_is_hostpath_container_prefix_cleaned)
{
    cr_assert_str_eq(dir_of("/var/lib/lb", "bkt", "shoot--a/etcd"), "var/lib/lb/bkt/shoot--a/etcd");
    /* the attack's two spellings of one directory */
    cr_assert_str_eq(dir_of("/var/lib/lb/bkt", "shoot--a", "etcd"), "var/lib/lb/bkt/shoot--a/etcd");
    cr_assert_str_eq(dir_of("/var/lib//lb/", "bkt", "./shoot--a//etcd/"),
                     "var/lib/lb/bkt/shoot--a/etcd");
    cr_assert_str_eq(dir_of(NULL, "bkt", "shoot--a--p--uid/etcd-main"),
                     "etc/gardener/local-backupbuckets/bkt/shoot--a--p--uid/etcd-main");
    /* etcd-druid's "" + "/" + container is absolute: /bkt */
    cr_assert_str_eq(dir_of("", "bkt", "x"), "bkt/x");
    cr_assert_str_eq(dir_of("/", "bkt", ""), "bkt");
    cr_assert_str_eq(dir_of("/a", "bkt", "x/../y"), "a/bkt/y");
}

Test(blocal, what_cannot_be_placed_is_refused)
{
    char out[256];
    struct kerr_info err = { 0 };

    cr_assert_eq(blocal_dir("relative/lb", "bkt", "x", out, sizeof(out), &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "not absolute"), "%s", err.msg);
    cr_assert_eq(blocal_dir("/var/../lb", "bkt", "x", out, sizeof(out), &err), KERR_INVAL);
    cr_assert_eq(blocal_dir("/var/lb", "..", "x", out, sizeof(out), &err), KERR_INVAL);
    cr_assert_eq(blocal_dir("/var/lb", "bkt", "../x", out, sizeof(out), &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "leaves its container"), "%s", err.msg);
    cr_assert_eq(blocal_dir("/var/lb", "bkt", "/../x", out, sizeof(out), &err), KERR_INVAL);
    cr_assert_eq(blocal_dir("/var/lb", "", "x", out, sizeof(out), &err), KERR_INVAL);
    cr_assert_eq(blocal_dir("/var/lb", "bkt", NULL, out, sizeof(out), &err), KERR_INVAL);
    cr_assert_eq(blocal_dir("/var/lb", "bkt", "x", out, 4, &err), KERR_TOOBIG);
    /* "..x" is a name, not a backstep */
    cr_assert_str_eq(dir_of("/var/..lb", "bkt", "..x"), "var/..lb/bkt/..x");
}

Test(blocal, hostpath_from_the_secret_as_etcd_druid_reads_it)
{
    char out[64];
    struct kerr_info err = { 0 };
    cJSON *none = cJSON_Parse("{\"data\":{\"accessKeyID\":\"eA==\"}}");
    cJSON *set = cJSON_Parse("{\"data\":{\"hostPath\":\"L3Zhci9saWIvbGI=\"}}"); /* /var/lib/lb */
    cJSON *nul = cJSON_Parse("{\"data\":{\"hostPath\":\"L3YAbGI=\"}}");         /* /v\0lb */
    cJSON *bad = cJSON_Parse("{\"data\":{\"hostPath\":\"%%%\"}}");

    cr_assert_eq(blocal_hostpath(NULL, out, sizeof(out), &err), KERR_OK);
    cr_assert_str_eq(out, BLOCAL_HOSTPATH_DEFAULT);
    cr_assert_eq(blocal_hostpath(none, out, sizeof(out), &err), KERR_OK);
    cr_assert_str_eq(out, BLOCAL_HOSTPATH_DEFAULT);
    cr_assert_eq(blocal_hostpath(set, out, sizeof(out), &err), KERR_OK);
    cr_assert_str_eq(out, "/var/lib/lb");
    cr_assert_eq(blocal_hostpath(nul, out, sizeof(out), &err), KERR_INVAL);
    cr_assert_eq(blocal_hostpath(bad, out, sizeof(out), &err), KERR_INVAL);
    cr_assert_eq(blocal_hostpath(set, out, 4, &err), KERR_TOOBIG);
    cJSON_Delete(none);
    cJSON_Delete(set);
    cJSON_Delete(nul);
    cJSON_Delete(bad);
}

Test(blocal, local_claims_compare_by_directory)
{
    struct bstore_claim a, b, c, d;

    cr_assert_eq(bstore_local_claim_init(&a, "/var/lib/lb", "bkt", "shoot--a/etcd", NULL), KERR_OK);
    cr_assert_eq(bstore_local_claim_init(&b, "/var/lib/lb/bkt", "shoot--a", "etcd", NULL), KERR_OK);
    cr_assert_eq(bstore_local_claim_init(&c, "/var/lib/lb/bkt", "bkt", "shoot--a/etcd", NULL),
                 KERR_OK);
    /* Gardener's local setup: default hostPath, one container, a prefix per shoot */
    cr_assert_eq(bstore_claim_init(&d, "local", "bkt", NULL, "shoot--b/etcd", NULL), KERR_OK);
    cr_assert_str_eq(a.key, BLOCAL_KEY);
    cr_assert(bstore_claims_overlap(&a, &b), "one directory, two spellings");
    cr_assert_not(bstore_claims_overlap(&a, &c), "/var/lib/lb/bkt/bkt/... is another directory");
    cr_assert_not(bstore_claims_overlap(&a, &d));
    cr_assert_str_eq(d.prefix, "etc/gardener/local-backupbuckets/bkt/shoot--b/etcd");
    bstore_claim_release(&a);
    bstore_claim_release(&b);
    bstore_claim_release(&c);
    bstore_claim_release(&d);
}
