/*
 * Tests of an EtcdBackup's deletion (controller/backups/ebk_del) on an in-process kube-sim:
 * provenance before deletion. The copies of one Etcd share a prefix, so a deletion deletes
 * only what its own copy is proven to have written: the key its copy Job reported. The test
 * stands for the executor of the EtcdOpsTask (etcd-druid's, which does not name the snapshot)
 * and for the Job controller and kubelet (the Job's status, its Pod's termination message);
 * the oracle is what the API server holds: the delete Jobs made (what would be deleted), the
 * BackupEntries, the events.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bstore.h"
#include "common/events.h"
#include "common/k8s.h"
#include "common/kjson.h"
#include "controller/backups/ebk.h"
#include "controller/core/claims.h"
#include "controller/core/etcdspec.h"
#include "tests/support/cfix.h"
#include "tests/support/ebkfix.h"
#include "tests/support/jsonfix.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

static const struct k8s_resource RES_JOB = { "batch", "v1", "jobs", 1 };
static const struct k8s_resource RES_POD = { "", "v1", "pods", 1 };
static const struct k8s_resource RES_EVENT = { "events.k8s.io", "v1", "events", 1 };
static const struct k8s_resource RES_ENTRY = { "etcd-warden.io", "v1alpha1", "backupentries", 0 };

static const char KEY2[] = "copies/main/v2/Full-00000000-00000010-1700000000.gz";
static const char SUMMARY2[] =
    "{\"snapshots\":[{\"name\":\"Full-00000000-00000010-1700000000.gz\",\"kind\":\"Full\","
    "\"startRevision\":0,\"lastRevision\":10,\"size\":123,\"md5\":"
    "\"0123456789abcdef0123456789abcdef\",\"destination\":\"copies/main/v2/"
    "Full-00000000-00000010-1700000000.gz\"}],\"total\":1,\"error\":\"\"}";
static const char NOTHING[] =
    "{\"snapshots\":[],\"total\":0,\"error\":\"no full snapshot under ns1/main created at or "
    "before --until\"}";

static struct cfix fx;
static struct ebk_env env;

static void setup(void)
{
    struct ev_opts eo = { .reporting_controller = "etcd-warden.io/controller",
                          .reporting_instance = "test" };
    struct kerr_info err = { 0 };

    cfix_start(&fx, NULL);
    env = (struct ebk_env){ .client = fx.c, .copy_image = "img:1" };
    OK(ev_new(fx.c, &eo, &env.events, &err));
}

static void teardown(void)
{
    ev_free(env.events);
    cfix_stop(&fx);
}

TestSuite(ebk_del, .init = setup, .fini = teardown, .timeout = 60);

static void create_text(const struct k8s_resource *res, const char *text)
{
    cJSON *o = jsonfix_parse(text);

    cJSON_Delete(cfix_create(&fx, res, o));
    cJSON_Delete(o);
}

/* EtcdBackup name of Etcd "main" into S3 "offsite", prefix "copies/main" (policy: Delete,
 * Retain). */
static void backup(const char *name, const char *policy)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdBackup\",\"metadata\":"
             "{\"name\":\"%s\"},\"spec\":{\"etcdName\":\"main\",\"deletionPolicy\":\"%s\","
             "\"destination\":{\"provider\":\"S3\",\"container\":\"offsite\",\"prefix\":"
             "\"copies/main\",\"secretRef\":{\"name\":\"dest\"}}}}",
             name, policy);
    create_text(&EBK_RES_BACKUP, text);
}

/* The Etcd "main" with an S3 store, its Secret and the destination's. */
static void world(void)
{
    cJSON *e = cfix_etcd("main",
                         "{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":"
                         "\"ns1/main\",\"secretRef\":{\"name\":\"etcd-backup\"}}",
                         NULL);

    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_ETCD, e));
    cJSON_Delete(e);
    create_text(&ETCDSPEC_RES_SECRET, "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":"
                                      "{\"name\":\"etcd-backup\"},\"data\":{\"region\":\"eA==\"}}");
    create_text(&ETCDSPEC_RES_SECRET, "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":"
                                      "{\"name\":\"dest\"},\"data\":{\"region\":\"eA==\"}}");
}

static void step(const char *name)
{
    struct kerr_info err = { 0 };
    long requeue = 0;

    OK(ebk_step(&env, CFIX_NS, name, &requeue, &err));
}

/* Write obj's status (replaced by text) through /status as the executor or Job controller. */
static void put_status(const struct k8s_resource *res, const char *name, const char *text)
{
    struct kerr_info err = { 0 };
    cJSON *o = cfix_get(&fx, res, name), *st = jsonfix_parse(text);

    cr_assert_not_null(o, "%s %s", res->resource, name);
    cJSON_DeleteItemFromObject(o, "status");
    cJSON_AddItemToObject(o, "status", st);
    OK(k8s_update(fx.c, res, CFIX_NS, name, o, &(struct k8s_write_opts){ .subresource = "status" },
                  NULL, &err));
    cJSON_Delete(o);
}

/* The Job name finished with its Pod's termination message (exit code code). */
static void finish_job(const char *name, const char *message, int code)
{
    static int runs;
    char text[4096], pname[128];
    cJSON *job = cfix_get(&fx, &RES_JOB, name), *st;
    char *s;

    cr_assert_not_null(job, "Job %s", name);
    snprintf(pname, sizeof(pname), "%s-%d", name, ++runs);
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"labels\":{\"controller-uid\":\"%s\"}},\"spec\":{\"containers\":[{\"name\":"
             "\"copy\",\"image\":\"img:1\"}]}}",
             pname, jsonfix_str(job, "metadata.uid"));
    create_text(&RES_POD, text);
    st = jsonfix_parse("{\"containerStatuses\":[{\"state\":{\"terminated\":{}}}]}");
    cJSON_AddNumberToObject((cJSON *)kjson_get(st, "containerStatuses.0.state.terminated"),
                            "exitCode", code);
    cJSON_AddStringToObject((cJSON *)kjson_get(st, "containerStatuses.0.state.terminated"),
                            "message", message);
    s = cJSON_PrintUnformatted(st);
    put_status(&RES_POD, pname, s);
    free(s);
    cJSON_Delete(st);
    put_status(&RES_JOB, name, code == 0 ? "{\"succeeded\":1}" : "{\"failed\":1}");
    cJSON_Delete(job);
}

/* Backup name's snapshot task Succeeded as etcd-druid's executor writes it: no snapshot named,
 * so the copy takes the latest full. Then its copy Job is made. */
static void snapshot_by_druid(const char *name)
{
    step(name);
    put_status(&ETCDSPEC_RES_OPSTASK, name,
               "{\"state\":\"Succeeded\",\"lastOperation\":{\"type\":\"Execution\",\"state\":"
               "\"Completed\",\"description\":\"Snapshot created successfully\","
               "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}}");
    step(name);
}

static cJSON *get_backup(const char *name)
{
    return cfix_get(&fx, &EBK_RES_BACKUP, name);
}

/* The note of the first Event with reason ("" when none; the recorder stopped first: all
 * sent), into out. */
static const char *event(const char *reason, char *out, size_t n)
{
    cJSON *list = NULL;
    const cJSON *e;

    out[0] = '\0';
    ev_stop(env.events);
    cr_assert_eq(k8s_list(fx.c, &RES_EVENT, CFIX_NS, NULL, &list, NULL), KERR_OK);
    cJSON_ArrayForEach (e, kjson_get_arr(list, "items"))
        if (strcmp(jsonfix_str(e, "reason"), reason) == 0) {
            snprintf(out, n, "%s", jsonfix_str(e, "note"));
            break;
        }
    cJSON_Delete(list);
    return out;
}

/* b2: a Completed copy of main in the shared prefix, its copy Job's report read. */
static void completed_b2(void)
{
    cJSON *b;

    backup("b2", "Delete");
    snapshot_by_druid("b2");
    finish_job("b2--copy", SUMMARY2, 0);
    step("b2");
    b = get_backup("b2");
    cr_assert_str_eq(jsonfix_str(b, "status.phase"), "Completed");
    cr_assert_str_eq(jsonfix_str(b, "status.destinationKey"), KEY2);
    cJSON_Delete(b);
}

/*
 * The copy of b1 fails and says so (no full snapshot yet: it wrote nothing); b2 of the same
 * Etcd then copies into the same prefix. Deleting b1 deletes nothing: no delete Job, whose
 * prefix and write window would hold b2's copy (the hole: b1's Job deleted the objects of
 * copies/main written within 2 h of b1's copy start).
 */
Test(ebk_del, a_failed_copy_that_reported_nothing_deletes_nothing)
{
    struct kerr_info err = { 0 };
    char note[EV_NOTE_MAX];
    cJSON *b;

    world();
    backup("b1", "Delete");
    snapshot_by_druid("b1");
    finish_job("b1--copy", NOTHING, 1);
    step("b1");
    b = get_backup("b1");
    cr_assert_str_eq(jsonfix_str(b, "status.phase"), "Failed");
    cr_assert(strstr(jsonfix_str(b, "status.error"), "no full snapshot"), "%s",
              jsonfix_str(b, "status.error"));
    cr_assert(cJSON_IsTrue(kjson_get(b, "status.copyReported")), "the copy's report was read");
    cr_assert_null(kjson_get(b, "status.destinationKey"));
    cJSON_Delete(b);
    completed_b2();

    OK(k8s_delete(fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", NULL, NULL, &err));
    step("b1");
    cr_assert_null(cfix_get(&fx, &RES_JOB, "b1--delete-copy"), "nothing to delete: no Job");
    b = get_backup("b1");
    cr_assert_null(b, "the backup goes");
    b = get_backup("b2");
    cr_assert_str_eq(jsonfix_str(b, "status.phase"), "Completed");
    cJSON_Delete(b);
    cr_assert(strstr(event("CopyWroteNothing", note, sizeof(note)), "copies/main"), "%s", note);
}

/* Retain: a copy that reported writing nothing leaves nothing to keep: no BackupEntry. */
Test(ebk_del, a_retained_copy_that_reported_nothing_gets_no_entry)
{
    struct kerr_info err = { 0 };
    char name[KNAME_SUBDOMAIN_MAX + 1];
    cJSON *e;

    world();
    backup("b1", "Retain");
    snapshot_by_druid("b1");
    finish_job("b1--copy", NOTHING, 1);
    step("b1");
    OK(k8s_delete(fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", NULL, NULL, &err));
    step("b1");
    ebkfix_copy_entry_name(name);
    e = cfix_get(&fx, &RES_ENTRY, name);
    cr_assert_null(e, "no entry for a copy that wrote nothing");
    cr_assert_null(get_backup("b1"), "the backup goes");
}

/*
 * The copy Job of b1 went before its result was read (deleted, as the docs say to stop a
 * copy) and etcd-druid's executor did not name the snapshot: nothing b1 wrote is proven, and
 * b2's copy is in the prefix. Nothing is deleted; the prefix stays claimed by a BackupEntry
 * (its window the copy's) and a Warning event names the prefix and the window.
 */
Test(ebk_del, a_copy_never_read_of_an_unknown_snapshot_deletes_nothing)
{
    struct kerr_info err = { 0 };
    char note[EV_NOTE_MAX], name[KNAME_SUBDOMAIN_MAX + 1], started[64];
    cJSON *b, *e;

    world();
    backup("b1", "Delete");
    snapshot_by_druid("b1");
    OK(k8s_delete(fx.c, &RES_JOB, CFIX_NS, "b1--copy", NULL, NULL, &err));
    step("b1");
    b = get_backup("b1");
    cr_assert_str_eq(jsonfix_str(b, "status.phase"), "Failed");
    cr_assert_null(kjson_get(b, "status.copyReported"), "never read");
    snprintf(started, sizeof(started), "%s", jsonfix_str(b, "status.copyStartedAt"));
    cJSON_Delete(b);
    completed_b2();

    OK(k8s_delete(fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", NULL, NULL, &err));
    step("b1");
    cr_assert_null(cfix_get(&fx, &RES_JOB, "b1--delete-copy"), "nothing proven: no delete Job");
    ebkfix_copy_entry_name(name);
    e = cfix_get(&fx, &RES_ENTRY, name);
    cr_assert_not_null(e, "what the copy may have written stays claimed by BackupEntry %s", name);
    cr_assert_str_eq(jsonfix_str(e, "spec.prefix"), "copies/main");
    cr_assert_str_eq(jsonfix_str(e, "spec.claimedAt"), started);
    cJSON_Delete(e);
    cr_assert_null(get_backup("b1"), "the backup goes once the entry claims the prefix");
    event("CopyUnproven", note, sizeof(note));
    cr_assert(strstr(note, "prefix \"copies/main\"") && strstr(note, started), "%s", note);
}

/* b1's and b2's statuses both name one key (b2 recorded by an earlier release, or edited):
 * the object is b2's as much as b1's, and deleting b1 leaves it. */
Test(ebk_del, a_key_another_backup_recorded_stays)
{
    struct kerr_info err = { 0 };
    char note[EV_NOTE_MAX];

    world();
    backup("b1", "Delete");
    snapshot_by_druid("b1");
    finish_job("b1--copy", SUMMARY2, 0);
    step("b1");
    backup("b2", "Delete");
    put_status(&EBK_RES_BACKUP, "b2",
               "{\"phase\":\"Completed\",\"destinationKey\":\"copies/main/v2/"
               "Full-00000000-00000010-1700000000.gz\",\"destination\":{\"provider\":\"S3\","
               "\"container\":\"offsite\",\"prefix\":\"copies/main\"}}");
    OK(k8s_delete(fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", NULL, NULL, &err));
    step("b1");
    cr_assert_null(cfix_get(&fx, &RES_JOB, "b1--delete-copy"), "the shared key is not deleted");
    cr_assert_null(get_backup("b1"));
    cr_assert(strstr(event("CopyShared", note, sizeof(note)), "EtcdBackup " CFIX_NS "/b2"), "%s",
              note);
}

/* Its own key, reported by its copy Job, is what a Completed backup's deletion deletes. */
Test(ebk_del, a_reported_key_is_deleted)
{
    struct kerr_info err = { 0 };
    char args[2048];
    cJSON *job;
    char *a;

    world();
    backup("b1", "Delete");
    snapshot_by_druid("b1");
    finish_job("b1--copy", SUMMARY2, 0);
    step("b1");
    OK(k8s_delete(fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", NULL, NULL, &err));
    step("b1");
    job = cfix_get(&fx, &RES_JOB, "b1--delete-copy");
    cr_assert_not_null(job, "the copy's delete Job");
    a = cJSON_PrintUnformatted(kjson_get(job, "spec.template.spec.containers.0.args"));
    snprintf(args, sizeof(args), "%s", a);
    free(a);
    cr_assert(strstr(args, "--store-prefix=copies/main/v2/Full-00000000-00000010-1700000000.gz"),
              "%s", args);
    cr_assert_null(strstr(args, "--written-"), "a reported key needs no window: %s", args);
    cJSON_Delete(job);
}
