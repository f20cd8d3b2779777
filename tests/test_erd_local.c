/*
 * A restore drill of a Local store reads only a directory its namespace owns, decided when the
 * Job is made (controller/backups/erd_local.c, the rule of common/lowner): a BackupBucket of
 * provider Local holding the directory and selecting the namespace, an EtcdBackup copy of the
 * namespace recorded there, or an Etcd of the namespace alone there (no claim of another
 * namespace overlaps it). The Job mounts the hostPath that was judged. On an in-process kube-sim;
 * the test sets the clock.
 */
#include "controller/backups/erd.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/kjson.h"
#include "common/ktime.h"
#include "common/lowner.h"
#include "controller/backups/bkown.h"
#include "controller/backups/erd_int.h"
#include "controller/core/etcdspec.h"
#include "controller/core/rctx.h"
#include "tests/support/cfix.h"
#include "tests/support/jsonfix.h"
#include "tests/support/testutil.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

static const struct k8s_resource RES_CRD = { "apiextensions.k8s.io", "v1",
                                             "customresourcedefinitions", 0 };
static const struct k8s_resource RES_BUCKET = { "etcd-warden.io", "v1alpha1", "backupbuckets", 0 };
static const struct k8s_resource RES_BACKUP = { "etcd-warden.io", "v1alpha1", "etcdbackups", 1 };
static const struct k8s_resource RES_NS = { "", "v1", "namespaces", 0 };
static const struct k8s_resource RES_SECRET = { "", "v1", "secrets", 1 };
static const struct erd_env ENV = { "reg.example/warden:1", NULL, "reg.example/etcdbrctl:v0.41.2" };

static struct cfix fx;

static void crd(const char *name, const char *file)
{
    const char *src = getenv("WARDEN_SOURCE_DIR");
    char cmd[512], *out = NULL;
    cJSON *c = NULL;

    if (k8s_get(fx.c, &RES_CRD, NULL, name, NULL, &c, NULL) != KERR_OK) {
        snprintf(cmd, sizeof(cmd), "apply -f '%s/charts/etcd-warden/crds/%s'", src ? src : ".",
                 file);
        cr_assert_eq(ksim_harness_kubectl(fx.h, NULL, cmd, &out), 0, "%s", out ? out : "");
        free(out);
    }
    cJSON_Delete(c);
}

static void create(const struct k8s_resource *res, const char *ns, const char *text)
{
    struct kerr_info err = { 0 };
    cJSON *o = jsonfix_parse(text);

    OK(k8s_create(fx.c, res, ns, o, NULL, NULL, &err));
    cJSON_Delete(o);
}

/* Secret name in ns whose hostPath is b64 (base64). */
static void secret(const char *ns, const char *name, const char *b64)
{
    char text[512];

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"%s\"},"
             "\"data\":{\"hostPath\":\"%s\"}}",
             name, b64);
    create(&RES_SECRET, ns, text);
}

#define LB   "L3Zhci9saWIvbGI="     /* /var/lib/lb */
#define EVIL "L3Zhci9saWIvZXZpbA==" /* /var/lib/evil */

/* BackupBucket name: Local, container bkt, Secret etcd-warden/local-bucket; sel: its
 * namespaceSelector (JSON, NULL: none). */
static void bucket(const char *name, const char *sel)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"BackupBucket\",\"metadata\":"
             "{\"name\":\"%s\"},\"spec\":{\"provider\":\"Local\",\"container\":\"bkt\","
             "\"secretRef\":{\"namespace\":\"etcd-warden\",\"name\":\"local-bucket\"}%s%s}}",
             name, sel ? ",\"namespaceSelector\":" : "", sel ? sel : "");
    create(&RES_BUCKET, NULL, text);
}

static void setup(void)
{
    struct ev_opts eo = { .reporting_controller = "etcd-warden.io/controller",
                          .reporting_instance = "test" };
    struct kerr_info err;
    cJSON *e, *patch;

    cfix_start(&fx, NULL);
    crd("etcdrestoredrills.etcd-warden.io", "etcd-warden.io_etcdrestoredrills.yaml");
    crd("etcdbackups.etcd-warden.io", "etcd-warden.io_etcdbackups.yaml");
    crd("backupbuckets.etcd-warden.io", "etcd-warden.io_backupbuckets.yaml");
    OK(ev_new(fx.c, &eo, &fx.x.events, &err));
    create(&RES_NS, NULL,
           "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":"
           "\"etcd-warden\"}}");
    secret("etcd-warden", "local-bucket", LB);
    patch = jsonfix_parse("{\"metadata\":{\"labels\":{\"etcd-warden.io/backups\":\"local\"}}}");
    OK(k8s_patch(fx.c, &RES_NS, NULL, CFIX_NS, K8S_PATCH_MERGE, patch, NULL, NULL, &err));
    cJSON_Delete(patch);
    e = cfix_etcd("main",
                  "{\"provider\":\"Local\",\"container\":\"bkt\",\"prefix\":\"ns1/main\","
                  "\"secretRef\":{\"name\":\"etcd-backup\"}}",
                  NULL);
    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_ETCD, e));
    cJSON_Delete(e);
}

static void teardown(void)
{
    ev_free(fx.x.events);
    cfix_stop(&fx);
}

TestSuite(erd_local, .init = setup, .fini = teardown, .timeout = 60);

/* Drill d of Etcd main at its first fire time; the Job's hostPath volume ("" when no Job). */
static const char *drill_once(char *out, size_t n)
{
    struct kerr_info err;
    cJSON *d = jsonfix_parse("{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":"
                             "\"EtcdRestoreDrill\",\"metadata\":{\"name\":\"d\"},\"spec\":"
                             "{\"schedule\":\"* * * * *\",\"target\":{\"etcdName\":\"main\"}}}");
    cJSON *live = cfix_create(&fx, &ERD_RES_DRILL, d), *job = NULL;
    struct timespec ts;
    char name[64];
    long requeue = -1;
    int64_t f;

    cr_assert_eq(ktime_parse(jsonfix_str(live, "metadata.creationTimestamp"), &ts, NULL), KERR_OK);
    f = ts.tv_sec - ts.tv_sec % 60 + 60;
    kerr_clear(&err);
    OK(erd_run(&fx.x, &ENV, CFIX_NS, "d", f * 1000, &requeue, &err));
    snprintf(name, sizeof(name), "d-%" PRId64, f / 60);
    out[0] = '\0';
    if (k8s_get(fx.c, &ETCDSPEC_RES_JOB, CFIX_NS, name, NULL, &job, NULL) == KERR_OK)
        snprintf(out, n, "%s", jsonfix_str(job, "spec.template.spec.volumes.0.hostPath.path"));
    cJSON_Delete(job);
    cJSON_Delete(live);
    cJSON_Delete(d);
    return out;
}

/* The drill's Ready condition's field. */
static const char *ready(const char *field, char *out, size_t n)
{
    cJSON *d = cfix_get(&fx, &ERD_RES_DRILL, "d");
    const cJSON *c;

    out[0] = '\0';
    cJSON_ArrayForEach (c, kjson_get_arr(d, "status.conditions"))
        if (strcmp(jsonfix_str(c, "type"), "Ready") == 0)
            snprintf(out, n, "%s", jsonfix_str(c, field));
    cJSON_Delete(d);
    return out;
}

Test(erd_local, a_bucket_selecting_the_namespace_grants_and_the_judged_hostpath_is_mounted)
{
    char vol[512];

    bucket("local", "{\"matchLabels\":{\"etcd-warden.io/backups\":\"local\"}}");
    secret(CFIX_NS, "etcd-backup", LB);
    cr_expect_str_eq(drill_once(vol, sizeof(vol)), "/var/lib/lb/bkt");
}

/* Namespace ns2's Etcd victim in /var/lib/evil/bkt/ns1/main (its Secret's hostPath EVIL). */
static void victim(void)
{
    struct kerr_info err = { 0 };
    cJSON *e = cfix_etcd("victim",
                         "{\"provider\":\"Local\",\"container\":\"bkt\",\"prefix\":\"ns1/main\","
                         "\"secretRef\":{\"name\":\"etcd-backup\"}}",
                         NULL);

    create(&RES_NS, NULL,
           "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"ns2\"}}");
    secret("ns2", "etcd-backup", EVIL);
    OK(kjson_set_str(e, "metadata.namespace", "ns2", &err));
    OK(k8s_create(fx.c, &ETCDSPEC_RES_ETCD, "ns2", e, NULL, NULL, &err));
    cJSON_Delete(e);
}

Test(erd_local, a_hostpath_into_another_namespaces_directory_is_refused)
{
    char vol[512], r[64], m[1024];

    bucket("local", "{\"matchLabels\":{\"etcd-warden.io/backups\":\"local\"}}");
    victim();
    secret(CFIX_NS, "etcd-backup", EVIL); /* /var/lib/evil/bkt/ns1/main: no bucket, ns2's */
    cr_expect_str_eq(drill_once(vol, sizeof(vol)), "", "no Job");
    cr_expect_str_eq(ready("reason", r, sizeof(r)), "TargetNotOwned");
    cr_expect(
        strstr(ready("message", m, sizeof(m)),
               "namespace ns1 does not own the Local directory \"/var/lib/evil/bkt/ns1/main\""),
        "%s", m);
    cr_expect(!strstr(m, "ns2") && !strstr(m, "victim"), "names no other namespace: %s", m);
}

Test(erd_local, the_namespaces_own_etcd_alone_in_its_directory_is_its_own)
{
    char vol[512];

    secret(CFIX_NS, "etcd-backup", EVIL); /* no bucket; nobody else in /var/lib/evil/bkt/ns1/main */
    cr_expect_str_eq(drill_once(vol, sizeof(vol)), "/var/lib/evil/bkt");
}

Test(erd_local, a_bucket_selecting_other_namespaces_grants_nothing_in_a_shared_directory)
{
    char vol[512], r[64];

    bucket("local", "{\"matchLabels\":{\"etcd-warden.io/backups\":\"elsewhere\"}}");
    victim();
    secret(CFIX_NS, "etcd-backup", EVIL);
    cr_expect_str_eq(drill_once(vol, sizeof(vol)), "", "no Job");
    cr_expect_str_eq(ready("reason", r, sizeof(r)), "TargetNotOwned");
}

Test(erd_local, a_copy_of_the_namespace_recorded_there_grants)
{
    struct k8s_write_opts wo = { .subresource = "status" };
    struct kerr_info err;
    cJSON *rec = jsonfix_parse("{\"status\":{\"destination\":{\"provider\":\"Local\","
                               "\"container\":\"bkt\",\"prefix\":\"ns1\",\"hostPath\":"
                               "\"/var/lib/evil\"}}}");
    char vol[512];

    create(&RES_BACKUP, CFIX_NS,
           "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdBackup\",\"metadata\":"
           "{\"name\":\"b\"},\"spec\":{\"etcdName\":\"main\",\"destination\":{\"provider\":"
           "\"Local\",\"container\":\"bkt\",\"prefix\":\"ns1\",\"secretRef\":{\"name\":\"etcd-"
           "backup\"}}}}");
    OK(k8s_patch(fx.c, &RES_BACKUP, CFIX_NS, "b", K8S_PATCH_MERGE, rec, &wo, NULL, &err));
    cJSON_Delete(rec);
    victim(); /* in the way of main's own claim, not of the copy the controller recorded */
    secret(CFIX_NS, "etcd-backup", EVIL);
    cr_expect_str_eq(drill_once(vol, sizeof(vol)), "/var/lib/evil/bkt");
}

Test(erd_local, the_owner_rule)
{
    struct kerr_info err = { 0 };
    struct lowner o;
    cJSON *b = jsonfix_parse("{\"spec\":{\"provider\":\"local\",\"container\":\"bkt\","
                             "\"secretRef\":{\"namespace\":\"etcd-warden\",\"name\":"
                             "\"local-bucket\"}}}");
    cJSON *gone = jsonfix_parse("{\"spec\":{\"provider\":\"Local\",\"container\":\"bkt\","
                                "\"secretRef\":{\"namespace\":\"etcd-warden\",\"name\":"
                                "\"absent\"}}}");

    cr_expect(lowner_inside("var/lib/lb/bkt/a", "var/lib/lb/bkt"));
    cr_expect(lowner_inside("var/lib/lb/bkt", "var/lib/lb/bkt"));
    cr_expect(!lowner_inside("var/lib/lb/bkt2/a", "var/lib/lb/bkt"), "a sibling, not a child");
    cr_expect(lowner_inside("anything", ""), "the root holds everything");
    cr_expect(lowner_owned(&(struct lowner_found){ .granted = 1, .others = 1 }),
              "a bucket, a recorded copy, an entry of the namespace as it is: whoever else");
    cr_expect(lowner_owned(&(struct lowner_found){ .own_etcd = 1 }), "its Etcd alone there");
    cr_expect(!lowner_owned(&(struct lowner_found){ .own_etcd = 1, .others = 1 }),
              "its Etcd's Secret proves nothing where another namespace claims");
    cr_expect(!lowner_owned(&(struct lowner_found){ .others = 0 }), "nothing found");
    lowner_init(&o, fx.c, CFIX_NS, "var/lib/lb/bkt/ns1/main");
    cr_expect_eq(lowner_bucket(&o, b, &err), KERR_EXISTS, "no selector: every namespace");
    cr_expect_eq(lowner_bucket(&o, gone, &err), KERR_OK, "a bucket not placed grants nothing");
    lowner_release(&o);
    lowner_init(&o, fx.c, CFIX_NS, "var/lib/lbx/bkt/ns1/main");
    cr_expect_eq(lowner_bucket(&o, b, &err), KERR_OK, "outside the bucket");
    lowner_release(&o);
    cJSON_Delete(b);
    cJSON_Delete(gone);
}

static const struct k8s_resource RES_ENTRY = { "etcd-warden.io", "v1alpha1", "backupentries", 0 };

/* Namespace ns with its Secret etcd-backup (hostPath /var/lib/lb) and Etcd main at bkt/ns/main. */
static void tenant(const char *ns)
{
    struct kerr_info err = { 0 };
    char text[256], spec[256];
    cJSON *e;

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}", ns);
    create(&RES_NS, NULL, text);
    secret(ns, "etcd-backup", LB);
    snprintf(spec, sizeof(spec),
             "{\"provider\":\"Local\",\"container\":\"bkt\",\"prefix\":\"%s/main\","
             "\"secretRef\":{\"name\":\"etcd-backup\"}}",
             ns);
    e = cfix_etcd("main", spec, NULL);
    OK(kjson_set_str(e, "metadata.namespace", ns, &err));
    OK(k8s_create(fx.c, &ETCDSPEC_RES_ETCD, ns, e, NULL, NULL, &err));
    cJSON_Delete(e);
}

/* BackupEntry name of Etcd ns/main in bucket local, prefix ns/main. */
static void entry_of(const char *name, const char *ns)
{
    char text[768];

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"BackupEntry\",\"metadata\":"
             "{\"name\":\"%s\"},\"spec\":{\"bucketName\":\"local\",\"prefix\":\"%s/main\","
             "\"etcd\":{\"namespace\":\"%s\",\"name\":\"main\"},\"store\":{\"provider\":"
             "\"Local\",\"container\":\"bkt\"}}}",
             name, ns, ns);
    create(&RES_ENTRY, NULL, text);
}

Test(erd_local, an_entry_of_an_earlier_namespace_is_in_the_way_of_its_etcd)
{
    struct kerr_info err = { 0 };
    char why[1024];

    crd("backupentries.etcd-warden.io", "etcd-warden.io_backupentries.yaml");
    bucket("local", "{\"matchLabels\":{\"etcd-warden.io/backups\":\"elsewhere\"}}");
    secret(CFIX_NS, "etcd-backup", EVIL); /* ns1's main, placed elsewhere */
    /* ns4's entry, made while ns4 is: its own Etcd alone in the directory */
    tenant("ns4");
    entry_of("e-new", "ns4");
    OK(bkown_local(fx.c, "ns4", "var/lib/lb/bkt/ns4/main", "a drill reads", why, sizeof(why),
                   &err));
    cr_expect_str_eq(why, "");
    /* ns3's entry, made before namespace ns3 (created again) is */
    entry_of("e-old", "ns3");
    usleep(1100 * 1000); /* creation times have seconds */
    tenant("ns3");
    OK(bkown_local(fx.c, "ns3", "var/lib/lb/bkt/ns3/main", "a drill reads", why, sizeof(why),
                   &err));
    cr_expect(strstr(why, "namespace ns3 does not own"), "%s", why);
    cr_expect(!strstr(why, "e-old"), "%s", why);
}
