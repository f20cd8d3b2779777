/*
 * Tests of controller/entries/bkeauth for a Local BackupBucket partitioned by namespace, on an
 * in-process kube-sim: a Local Etcd's part is its directory's, placed by the hostPath of its
 * backup Secret as warden-webhook places it at admission (common/lowner), not the default
 * hostPath; a Secret that cannot be read, or a directory outside the bucket's, gets no entry.
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/kjson.h"
#include "controller/core/etcdspec.h"
#include "controller/entries/bke_ctx.h"
#include "controller/entries/bkeauth.h"
#include "controller/entries/bkeclaim.h"
#include "tests/support/cfix.h"

/* base64 of /var/lib/lb and /var/lib/other */
#define HP_LB    "L3Zhci9saWIvbGI="
#define HP_OTHER "L3Zhci9saWIvb3RoZXI="

static struct cfix fx;

static void setup(void)
{
    cfix_start(&fx, NULL);
}

static void teardown(void)
{
    cfix_stop(&fx);
}

TestSuite(bkeauth_local, .init = setup, .fini = teardown, .timeout = 60);

/* Secret name in CFIX_NS with hostPath b64 (base64). */
static void secret(const char *name, const char *b64)
{
    char text[512];
    cJSON *o;

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"" CFIX_NS "\"},\"data\":{\"hostPath\":\"%s\"}}",
             name, b64);
    o = cJSON_Parse(text);
    cr_assert_not_null(o);
    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_SECRET, o));
    cJSON_Delete(o);
}

/* Why Etcd e of Local container bkt, prefix and Secret sref (NULL: none), gets no entry in the
 * bucket of container bkt at /var/lib/lb with prefixScope scope ("" when it does). */
static const char *why_not(const char *scope, const char *prefix, const char *sref)
{
    static char why[BKECLAIM_WHY_MAX];
    char text[768];
    struct bke_ctx x = { .client = fx.c };
    struct kerr_info err = { 0 };
    struct bke_bucket b;
    cJSON *bo, *eo;

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"local\"},\"spec\":{\"provider\":\"Local\","
             "\"container\":\"bkt\",\"secretRef\":{\"namespace\":\"" CFIX_NS "\","
             "\"name\":\"bucket\"},\"prefixScope\":\"%s\"}}",
             scope);
    bo = cJSON_Parse(text);
    cr_assert_not_null(bo);
    cr_assert_eq(bkeclaim_read_bucket(bo, &b, &err), KERR_OK, "%s", err.msg);
    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"e\",\"namespace\":\"" CFIX_NS "\"},\"spec\":{\"backup\":"
             "{\"store\":{\"provider\":\"Local\",\"container\":\"bkt\",\"prefix\":\"%s\"%s%s%s}}}}",
             prefix, sref ? ",\"secretRef\":{\"name\":\"" : "", sref ? sref : "",
             sref ? "\"}" : "");
    eo = cJSON_Parse(text);
    cr_assert_not_null(eo);
    cr_assert_eq(bkeauth_etcd(&x, &b, eo, why, sizeof(why), &err), KERR_OK, "%s", err.msg);
    cJSON_Delete(eo);
    cJSON_Delete(bo);
    return why;
}

Test(bkeauth_local, own_part_by_its_secret)
{
    secret("bucket", HP_LB);
    secret("s", HP_LB);
    /* /var/lib/lb/bkt/ns1/etcd-a: namespace ns1's part */
    cr_assert_str_eq(why_not("Namespace", CFIX_NS "/etcd-a", "s"), "");
    cr_assert_str_eq(why_not("Namespace", CFIX_NS "--a1/etcd", "s"), "");
    /* another namespace's part, or the bucket's whole directory: nobody's for ns1 */
    cr_assert(strstr(why_not("Namespace", "other/etcd-a", "s"), "not namespace " CFIX_NS "'s"));
    cr_assert_neq(*why_not("Namespace", "etcd-a", "s"), '\0');
    /* not partitioned: no part to be in */
    cr_assert_str_eq(why_not("Bucket", "other/etcd-a", "s"), "");
}

Test(bkeauth_local, unplaced_or_outside_gets_none)
{
    secret("bucket", HP_LB);
    secret("elsewhere", HP_OTHER);
    /* the Secret cannot be read: no entry (fail closed) */
    cr_assert(strstr(why_not("Namespace", CFIX_NS "/etcd-a", "missing"), "cannot be placed"));
    /* no Secret: the default hostPath, not below the bucket's directory */
    cr_assert(strstr(why_not("Namespace", CFIX_NS "/etcd-a", NULL), "not below"));
    /* another hostPath: the same */
    cr_assert(strstr(why_not("Namespace", CFIX_NS "/etcd-a", "elsewhere"), "not below"));
}

Test(bkeauth_local, unplaced_bucket_gets_none)
{
    secret("s", HP_LB); /* the bucket's Secret does not exist */
    cr_assert(strstr(why_not("Namespace", CFIX_NS "/etcd-a", "s"), "cannot be placed"));
}
