/*
 * Tests of an EtcdBackup's Local destination in warden-controller (controller/backups/ebk,
 * ebk_del) on an in-process kube-sim: the copy is checked and its Job built from the one
 * destination Secret read before the Job, the hostPath its Job mounts is recorded
 * (status.destination.hostPath), and the deletion deletes there only, whatever the Secret
 * says later; without the record, or when the recorded directory overlaps another's claim,
 * nothing is deleted.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/k8s.h"
#include "common/kjson.h"
#include "controller/backups/ebk.h"
#include "controller/core/etcdspec.h"
#include "tests/support/cfix.h"
#include "tests/support/jsonfix.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

static const struct k8s_resource RES_JOB = { "batch", "v1", "jobs", 1 };
static struct cfix fx;
static struct ebk_env env;

#define LB     "L3Zhci9saWIvbGI="     /* /var/lib/lb */
#define LB_BKT "L3Zhci9saWIvbGIvYmt0" /* /var/lib/lb/bkt */
#define EVIL   "L3Zhci9saWIvZXZpbA==" /* /var/lib/evil */

static void create_text(const struct k8s_resource *res, const char *text)
{
    cJSON *o = jsonfix_parse(text);

    cJSON_Delete(cfix_create(&fx, res, o));
    cJSON_Delete(o);
}

/* The Secret name with data.hostPath b64, created or replaced. */
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

/* The Etcd main (S3), its Secret, and the victim: Local, /var/lib/lb/bkt/shoot--a/etcd. */
static void setup(void)
{
    cJSON *e;

    cfix_start(&fx, NULL);
    env = (struct ebk_env){ .client = fx.c, .copy_image = "img:1" };
    e = cfix_etcd("main",
                  "{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":\"ns1/main\","
                  "\"secretRef\":{\"name\":\"etcd-backup\"}}",
                  NULL);
    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_ETCD, e));
    cJSON_Delete(e);
    e = cfix_etcd("victim",
                  "{\"provider\":\"Local\",\"container\":\"bkt\",\"prefix\":\"shoot--a/etcd\","
                  "\"secretRef\":{\"name\":\"victim\"}}",
                  NULL);
    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_ETCD, e));
    cJSON_Delete(e);
    create_text(&ETCDSPEC_RES_SECRET, "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":"
                                      "{\"name\":\"etcd-backup\"},\"data\":{\"region\":\"eA==\"}}");
    host_secret("victim", LB);
}

static void teardown(void)
{
    cfix_stop(&fx);
}

TestSuite(ebk_local, .init = setup, .fini = teardown, .timeout = 60);

/* EtcdBackup name of main into Local container shoot--a, prefix etcd, with the Secret sec. */
static void backup(const char *name, const char *sec)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdBackup\",\"metadata\":"
             "{\"name\":\"%s\"},\"spec\":{\"etcdName\":\"main\",\"deletionPolicy\":\"Delete\","
             "\"destination\":{\"provider\":\"Local\",\"container\":\"shoot--a\",\"prefix\":"
             "\"etcd\",\"secretRef\":{\"name\":\"%s\"}}}}",
             name, sec);
    create_text(&EBK_RES_BACKUP, text);
}

static void step(const char *name)
{
    struct kerr_info err = { 0 };
    long requeue = 0;

    OK(ebk_step(&env, CFIX_NS, name, &requeue, &err));
}

static const char *get(const char *name, const char *path)
{
    static char out[1024];
    cJSON *b = cfix_get(&fx, &EBK_RES_BACKUP, name);

    snprintf(out, sizeof(out), "%s", b ? jsonfix_str(b, path) : "(gone)");
    cJSON_Delete(b);
    return out;
}

/* Write obj's status (replaced by text) through /status. */
static void put_status(const struct k8s_resource *res, const char *name, const char *text)
{
    struct kerr_info err = { 0 };
    cJSON *o = cfix_get(&fx, res, name);

    cr_assert_not_null(o, "%s %s", res->resource, name);
    cJSON_DeleteItemFromObject(o, "status");
    cJSON_AddItemToObject(o, "status", jsonfix_parse(text));
    OK(k8s_update(fx.c, res, CFIX_NS, name, o, &(struct k8s_write_opts){ .subresource = "status" },
                  NULL, &err));
    cJSON_Delete(o);
}

/* The backup name through its snapshot to its copy Job (its task Succeeded, naming the
 * snapshot: a copy never read deletes only that one, controller/backups/ebk_del.h). */
static void to_the_copy(const char *name)
{
    step(name);
    put_status(&ETCDSPEC_RES_OPSTASK, get(name, "status.opsTaskName"),
               "{\"state\":\"Succeeded\",\"lastOperation\":{\"description\":\"full snapshot "
               "Full-00000000-00000010-1700000000.gz taken (last revision 10)\","
               "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}}");
    step(name);
}

/* The hostPath of the Job's volume "to-store", "" when none or no Job. */
static const char *volume_path(const char *job)
{
    static char out[512];
    cJSON *j = cfix_get(&fx, &RES_JOB, job);
    const cJSON *v;

    out[0] = '\0';
    cJSON_ArrayForEach (v, kjson_get(j, "spec.template.spec.volumes"))
        if (strcmp(jsonfix_str(v, "name"), "to-store") == 0)
            snprintf(out, sizeof(out), "%s", jsonfix_str(v, "hostPath.path"));
    cJSON_Delete(j);
    return out;
}

/* The copy Job deleted unread (the backup Failed), then the backup deleted. */
static void fail_and_delete(const char *name)
{
    struct kerr_info err = { 0 };
    char job[128];

    snprintf(job, sizeof(job), "%s--copy", name);
    OK(k8s_delete(fx.c, &RES_JOB, CFIX_NS, job, NULL, NULL, &err));
    step(name);
    cr_assert_str_eq(get(name, "status.phase"), "Failed");
    OK(k8s_delete(fx.c, &EBK_RES_BACKUP, CFIX_NS, name, NULL, NULL, &err));
    step(name);
}

Test(ebk_local, the_deletion_deletes_where_the_copy_wrote)
{
    host_secret("dest", EVIL);
    backup("b1", "dest");
    to_the_copy("b1");
    cr_assert_str_eq(get("b1", "status.phase"), "Uploading", "%s", get("b1", "status.error"));
    cr_assert_str_eq(get("b1", "status.destination.hostPath"), "/var/lib/evil");
    cr_assert_str_eq(volume_path("b1--copy"), "/var/lib/evil/shoot--a");
    /* the Secret now names the victim's directory: the deletion keeps to the record */
    host_secret("dest", LB_BKT);
    fail_and_delete("b1");
    cr_assert_str_eq(volume_path("b1--delete-copy"), "/var/lib/evil/shoot--a");
}

Test(ebk_local, the_copy_is_checked_where_its_secret_places_it)
{
    /* /var/lib/lb/bkt + shoot--a + etcd is the victim's directory: no copy Job */
    host_secret("into", LB_BKT);
    backup("b2", "into");
    step("b2"); /* checked before the snapshot, and again before the copy Job */
    cr_assert_str_eq(get("b2", "status.phase"), "Failed");
    cr_assert(strstr(get("b2", "status.error"), "overlaps"), "%s", get("b2", "status.error"));
    cr_assert_str_eq(volume_path("b2--copy"), "");
}

Test(ebk_local, no_record_or_an_overlap_deletes_nothing)
{
    struct kerr_info err = { 0 };
    cJSON *b;

    host_secret("dest", EVIL);
    backup("b3", "dest");
    to_the_copy("b3");
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b3");
    cr_assert_eq(kjson_delete(b, "status.destination.hostPath"), KERR_OK);
    OK(k8s_update(fx.c, &EBK_RES_BACKUP, CFIX_NS, "b3", b,
                  &(struct k8s_write_opts){ .subresource = "status" }, NULL, &err));
    cJSON_Delete(b);
    fail_and_delete("b3");
    cr_assert_str_eq(volume_path("b3--delete-copy"), "");
    cr_assert_str_eq(get("b3", "metadata.name"), "(gone)");

    /* recorded, and an Etcd since created on that directory: nothing deleted */
    backup("b4", "dest");
    to_the_copy("b4");
    cr_assert_str_eq(get("b4", "status.destination.hostPath"), "/var/lib/evil");
    b = cfix_etcd("late",
                  "{\"provider\":\"Local\",\"container\":\"shoot--a\",\"prefix\":\"etcd\","
                  "\"secretRef\":{\"name\":\"dest\"}}",
                  NULL);
    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_ETCD, b));
    cJSON_Delete(b);
    fail_and_delete("b4");
    cr_assert_str_eq(volume_path("b4--delete-copy"), "");
    cr_assert_str_eq(get("b4", "metadata.name"), "(gone)");
}
