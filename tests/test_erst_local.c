/*
 * An EtcdRestore's Local source is read only from a directory the restore's namespace owns,
 * decided in the pass that makes the copy Job (controller/backups/erst_plan.c, the rule of
 * controller/backups/bkown.h), from the Secret read then; the Job mounts the hostPath judged.
 * A source EtcdBackup's copy is read where its copy Job wrote it (status.destination.hostPath),
 * never where its Secret points now. On an in-process kube-sim.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "controller/backups/erst.h"
#include "controller/core/etcdspec.h"
#include "tests/support/cfix.h"
#include "tests/support/jsonfix.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

static const struct k8s_resource RES_BUCKET = { "etcd-warden.io", "v1alpha1", "backupbuckets", 0 };
static const struct k8s_resource RES_JOB = { "batch", "v1", "jobs", 1 };
static struct cfix fx;
static struct erst_ctx ctx;

#define LB   "L3Zhci9saWIvbGI="     /* /var/lib/lb */
#define EVIL "L3Zhci9saWIvZXZpbA==" /* /var/lib/evil */

static void create(const struct k8s_resource *res, const char *ns, const char *text)
{
    struct kerr_info err = { 0 };
    cJSON *o = jsonfix_parse(text);

    OK(k8s_create(fx.c, res, ns, o, NULL, NULL, &err));
    cJSON_Delete(o);
}

/* A Secret name in CFIX_NS with data.hostPath b64 (replaced when there). */
static void host_secret(const char *name, const char *b64)
{
    struct kerr_info err = { 0 };
    char text[512];
    cJSON *s;

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"%s\"},"
             "\"data\":{\"hostPath\":\"%s\"}}",
             name, b64);
    s = jsonfix_parse(text);
    if (k8s_create(fx.c, &ETCDSPEC_RES_SECRET, CFIX_NS, s, NULL, NULL, &err) == KERR_EXISTS) {
        kerr_clear(&err);
        OK(k8s_update(fx.c, &ETCDSPEC_RES_SECRET, CFIX_NS, name, s, NULL, NULL, &err));
    }
    cJSON_Delete(s);
}

static void setup(void)
{
    cfix_start(&fx, NULL);
    memset(&ctx, 0, sizeof(ctx));
    ctx.client = fx.c;
    ctx.job_image = "img:1";
    ctx.backup_wait_ms = ERST_BACKUP_WAIT_MS;
    host_secret("bucket", LB);
    host_secret("tgt", EVIL);
    /* BackupBucket bkt: /var/lib/lb/bkt, every namespace (no selector) */
    create(&RES_BUCKET, NULL,
           "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"BackupBucket\",\"metadata\":"
           "{\"name\":\"bkt\"},\"spec\":{\"provider\":\"Local\",\"container\":\"bkt\","
           "\"secretRef\":{\"namespace\":\"" CFIX_NS "\",\"name\":\"bucket\"}}}");
}

static void teardown(void)
{
    cfix_stop(&fx);
}

TestSuite(erst_local, .init = setup, .fini = teardown, .timeout = 60);

/* Restore name from source (JSON) into Etcd x, target Local obkt/restored (hostPath of tgt). */
static void restore(const char *name, const char *source)
{
    char text[2048];

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdRestore\",\"metadata\":"
             "{\"name\":\"%s\"},\"spec\":{\"source\":%s,\"etcdTemplate\":{\"replicas\":1},"
             "\"target\":{\"etcdName\":\"x\",\"store\":{\"provider\":\"Local\",\"container\":"
             "\"obkt\",\"prefix\":\"restored\",\"secretRef\":{\"name\":\"tgt\"}}}}}",
             name, source);
    create(&ERST_RES_RESTORE, CFIX_NS, text);
}

#define STORE_SOURCE                                                                         \
    "{\"store\":{\"provider\":\"Local\",\"container\":\"bkt\",\"prefix\":\"shoot--a/etcd\"," \
    "\"secretRef\":{\"name\":\"src\"}}}"

static long run(const char *name)
{
    struct kerr_info err = { 0 };
    long requeue = -1;

    OK(erst_run(&ctx, CFIX_NS, name, &requeue, &err));
    return requeue;
}

/* path of restore name ("" when absent), in a static buffer. */
static const char *get(const char *name, const char *path)
{
    static char out[2048];
    cJSON *o = cfix_get(&fx, &ERST_RES_RESTORE, name);

    snprintf(out, sizeof(out), "%s", kjson_get_str(o, path) ? kjson_get_str(o, path) : "");
    cJSON_Delete(o);
    return out;
}

/* The hostPath of the Job's volume vol, "" when no such Job or volume. */
static const char *volume_path(const char *job, const char *vol)
{
    static char out[512];
    cJSON *j = cfix_get(&fx, &RES_JOB, job);
    const cJSON *v;

    out[0] = '\0';
    cJSON_ArrayForEach (v, kjson_get(j, "spec.template.spec.volumes"))
        if (strcmp(kjson_get_str(v, "name") ? kjson_get_str(v, "name") : "", vol) == 0)
            snprintf(out, sizeof(out), "%s", kjson_get_str(v, "hostPath.path"));
    cJSON_Delete(j);
    return out;
}

Test(erst_local, a_source_the_bucket_holds_is_read_where_the_secret_said_when_judged)
{
    host_secret("src", LB);
    restore("r", STORE_SOURCE);
    cr_assert_eq(run("r"), ERST_POLL_MS, "%s", get("r", "status.error"));
    cr_expect_str_eq(volume_path("r--restore", "from-store"), "/var/lib/lb/bkt");
}

Test(erst_local, a_source_moved_into_a_directory_nobody_grants_is_refused)
{
    host_secret("src", EVIL); /* /var/lib/evil/bkt/shoot--a/etcd: no bucket there */
    restore("r", STORE_SOURCE);
    run("r");
    cr_expect_str_eq(get("r", "status.phase"), ERST_PHASE_FAILED);
    cr_expect(strstr(get("r", "status.error"),
                     "spec.source: namespace " CFIX_NS " does not own the Local directory "
                     "\"/var/lib/evil/bkt/shoot--a/etcd\""),
              "%s", get("r", "status.error"));
    cr_expect_str_eq(volume_path("r--restore", "from-store"), "", "no Job");
}

/* A Completed EtcdBackup (spec.destination Local bkt/copies, Secret src) with hostPath rec
 * recorded (NULL: none). */
static void backup(const char *rec)
{
    struct k8s_write_opts wo = { .subresource = "status" };
    struct kerr_info err = { 0 };
    char text[512];
    cJSON *st;

    create(&ERST_RES_BACKUP, CFIX_NS,
           "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdBackup\",\"metadata\":"
           "{\"name\":\"b\"},\"spec\":{\"etcdName\":\"main\",\"destination\":{\"provider\":"
           "\"Local\",\"container\":\"bkt\",\"prefix\":\"copies\",\"secretRef\":{\"name\":"
           "\"src\"}}}}");
    snprintf(text, sizeof(text),
             "{\"status\":{\"phase\":\"Completed\",\"snapshot\":{\"name\":\"Full-1\"},"
             "\"destination\":{\"provider\":\"Local\",\"container\":\"bkt\",\"prefix\":"
             "\"copies\"%s%s%s}}}",
             rec ? ",\"hostPath\":\"" : "", rec ? rec : "", rec ? "\"" : "");
    st = jsonfix_parse(text);
    OK(k8s_patch(fx.c, &ERST_RES_BACKUP, CFIX_NS, "b", K8S_PATCH_MERGE, st, &wo, NULL, &err));
    cJSON_Delete(st);
}

Test(erst_local, a_source_backups_copy_is_read_where_its_job_wrote_it)
{
    backup("/var/lib/evil");
    host_secret("src", LB); /* moved after the copy was written */
    restore("r", "{\"backupName\":\"b\"}");
    cr_assert_eq(run("r"), ERST_POLL_MS, "%s", get("r", "status.error"));
    cr_expect_str_eq(volume_path("r--restore", "from-store"), "/var/lib/evil/bkt");
}

Test(erst_local, a_source_backup_without_a_recorded_directory_is_refused)
{
    backup(NULL);
    host_secret("src", LB);
    restore("r", "{\"backupName\":\"b\"}");
    run("r");
    cr_expect_str_eq(get("r", "status.phase"), ERST_PHASE_FAILED);
    cr_expect(strstr(get("r", "status.error"), "status.destination.hostPath"), "%s",
              get("r", "status.error"));
}

/* Etcd name in namespace ns: Local obkt/own, its Secret src of ns (hostPath /var/lib/evil). */
static void etcd_in(const char *ns, const char *name)
{
    struct kerr_info err = { 0 };
    cJSON *e = cfix_etcd(name,
                         "{\"provider\":\"Local\",\"container\":\"obkt\",\"prefix\":\"own\","
                         "\"secretRef\":{\"name\":\"src\"}}",
                         NULL);

    OK(kjson_set_str(e, "metadata.namespace", ns, &err));
    OK(k8s_create(fx.c, &ETCDSPEC_RES_ETCD, ns, e, NULL, NULL, &err));
    cJSON_Delete(e);
}

#define OWN_SOURCE                                                                  \
    "{\"store\":{\"provider\":\"Local\",\"container\":\"obkt\",\"prefix\":\"own\"," \
    "\"secretRef\":{\"name\":\"src\"}}}"

Test(erst_local, the_namespaces_own_etcd_alone_in_its_directory_is_its_own)
{
    host_secret("src", EVIL);
    etcd_in(CFIX_NS, "mine");
    restore("r", OWN_SOURCE);
    cr_assert_eq(run("r"), ERST_POLL_MS, "%s", get("r", "status.error"));
    cr_expect_str_eq(volume_path("r--restore", "from-store"), "/var/lib/evil/obkt");
}

Test(erst_local, a_directory_another_namespace_claims_too_is_not_its_own)
{
    struct kerr_info err = { 0 };
    cJSON *ns = jsonfix_parse("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":"
                              "{\"name\":\"ns2\"}}");
    cJSON *s = jsonfix_parse("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":"
                             "\"src\"},\"data\":{\"hostPath\":\"" EVIL "\"}}");

    OK(k8s_create(fx.c, &(struct k8s_resource){ "", "v1", "namespaces", 0 }, NULL, ns, NULL, NULL,
                  &err));
    OK(k8s_create(fx.c, &ETCDSPEC_RES_SECRET, "ns2", s, NULL, NULL, &err));
    cJSON_Delete(ns);
    cJSON_Delete(s);
    etcd_in("ns2", "theirs"); /* /var/lib/evil/obkt/own */
    host_secret("src", EVIL);
    etcd_in(CFIX_NS, "mine"); /* moved onto it after admission */
    restore("r", OWN_SOURCE);
    run("r");
    cr_expect_str_eq(get("r", "status.phase"), ERST_PHASE_FAILED);
    cr_expect(strstr(get("r", "status.error"), "does not own the Local directory"), "%s",
              get("r", "status.error"));
    cr_expect(!strstr(get("r", "status.error"), "ns2"), "names no other namespace: %s",
              get("r", "status.error"));
}
