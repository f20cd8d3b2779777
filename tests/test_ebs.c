/* ebs on kube-sim, with the clock set by the test (days of schedule without waiting): a backup
 * per fire time named and labelled as the contract says, status (lastScheduleTime,
 * lastSuccessfulTime, active, the Ready condition), history limits pruning the oldest, suspend,
 * the starting deadline, a gap caught up once, no second backup of an Etcd while one is
 * unfinished, a crash between the create and the status, an invalid schedule. The test plays the
 * EtcdBackup controller by writing the backups' status. */
#include "controller/backups/ebs.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/events.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "controller/backups/backups.h"
#include "controller/core/ctl.h"
#include "controller/core/ctl_cap.h"
#include "controller/core/ctl_config.h"
#include "controller/core/etcdspec.h"
#include "controller/core/rctx.h"
#include "tests/support/cfix.h"
#include "tests/support/jsonfix.h"
#include "tests/support/testutil.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

static const struct k8s_resource RES_CRD = { "apiextensions.k8s.io", "v1",
                                             "customresourcedefinitions", 0 };
static const struct k8s_resource RES_EVENT = { "events.k8s.io", "v1", "events", 1 };

static struct cfix fx;

static void setup(void)
{
    struct ev_opts eo = { .reporting_controller = "etcd-warden.io/controller",
                          .reporting_instance = "test" };
    struct kerr_info err;
    const char *src = getenv("WARDEN_SOURCE_DIR");
    char cmd[512], *out = NULL;
    cJSON *crd = NULL;

    cfix_start(&fx, NULL);
    /* the chart's EtcdBackup CRD, unless the harness has it already */
    if (k8s_get(fx.c, &RES_CRD, NULL, "etcdbackups.etcd-warden.io", NULL, &crd, NULL) != KERR_OK) {
        snprintf(cmd, sizeof(cmd),
                 "apply -f '%s/charts/etcd-warden/crds/etcd-warden.io_etcdbackups.yaml'",
                 src ? src : ".");
        cr_assert_eq(ksim_harness_kubectl(fx.h, NULL, cmd, &out), 0, "%s", out ? out : "");
        free(out);
    }
    cJSON_Delete(crd);
    OK(ev_new(fx.c, &eo, &fx.x.events, &err));
}

static void teardown(void)
{
    ev_free(fx.x.events);
    cfix_stop(&fx);
}

TestSuite(ebs_kubesim, .init = setup, .fini = teardown, .timeout = 60);

/* A destination as the EtcdBackup CRD requires it, for backups made by hand. */
#define DEST                                                                                  \
    "\"destination\":{\"provider\":\"S3\",\"container\":\"offsite\",\"prefix\":\"ns1/main\"," \
    "\"secretRef\":{\"name\":\"offsite\"}}"

/* Create the schedule name (spec fields in extra, JSON without braces); its creation time. */
static int64_t schedule(const char *name, const char *cron, const char *extra)
{
    char text[2048];
    cJSON *s, *live;
    struct timespec ts;

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdBackupSchedule\","
             "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"schedule\":\"%s\",%s%s"
             "\"backupTemplate\":{\"etcdName\":\"main\",\"destination\":{\"provider\":\"S3\","
             "\"container\":\"offsite\",\"prefix\":\"ns1/main\",\"secretRef\":{\"name\":"
             "\"offsite\"}}}}}",
             name, cron, extra ? extra : "", extra ? "," : "");
    s = jsonfix_parse(text);
    live = cfix_create(&fx, &EBS_RES_SCHEDULE, s);
    cr_assert_eq(ktime_parse(jsonfix_str(live, "metadata.creationTimestamp"), &ts, NULL), KERR_OK);
    cJSON_Delete(live);
    cJSON_Delete(s);
    return (int64_t)ts.tv_sec;
}

/* The first whole minute after t. */
static int64_t minute_after(int64_t t)
{
    return t - t % 60 + 60;
}

/* One pass over the schedule at now (Unix seconds); the requeue asked for. */
static long pass(const char *name, int64_t now)
{
    struct kerr_info err;
    long requeue = -1;

    kerr_clear(&err);
    OK(ebs_run(&fx.x, CFIX_NS, name, now * 1000, &requeue, &err));
    return requeue;
}

/* The names of the schedule's backups, sorted, joined by ','. OWNED by the caller. */
static char *backups_of(const char *sched)
{
    struct k8s_list_opts o = { 0 };
    struct buf out;
    char sel[128], *s;
    cJSON *list = NULL;
    const cJSON *b;
    struct kerr_info err;

    buf_init(&out, 64 * 1024);
    snprintf(sel, sizeof(sel), EBS_LABEL_SCHEDULE "=%s", sched);
    o.label_selector = sel;
    OK(k8s_list(fx.c, &EBS_RES_BACKUP, CFIX_NS, &o, &list, &err));
    cJSON_ArrayForEach (b, kjson_get_arr(list, "items"))
        cr_assert_eq(buf_appendf(&out, "%s%s", out.len ? "," : "", jsonfix_str(b, "metadata.name")),
                     KERR_OK);
    cJSON_Delete(list);
    s = strdup(buf_str(&out));
    buf_release(&out);
    return s;
}

#define BACKUPS_ARE(sched, want)                              \
    do {                                                      \
        char *got_ = backups_of(sched);                       \
        cr_assert_str_eq(got_, want, "backups of %s", sched); \
        free(got_);                                           \
    } while (0)

/* "<sched>-<t / 60>" into out (128 bytes) */
static const char *bname(const char *sched, int64_t t, char *out)
{
    int n = snprintf(out, 128, "%s-%" PRId64, sched, t / 60);

    cr_assert(n > 0 && n < 128, "backup name of %s too long", sched);
    return out;
}

/* Play the backup controller: the backup's phase, with completionTime at t. */
static void finish(const char *name, const char *phase, int64_t t)
{
    char text[256], when[KTIME_LEN + 1];
    struct kerr_info err;
    cJSON *patch;

    cr_assert_eq(ktime_format((time_t)t, when), KERR_OK);
    snprintf(text, sizeof(text), "{\"status\":{\"phase\":\"%s\",\"completionTime\":\"%s\"}}", phase,
             when);
    patch = jsonfix_parse(text);
    OK(k8s_patch(fx.c, &EBS_RES_BACKUP, CFIX_NS, name, K8S_PATCH_MERGE, patch,
                 &(struct k8s_write_opts){ .subresource = "status" }, NULL, &err));
    cJSON_Delete(patch);
}

static cJSON *sched_obj(const char *name)
{
    cJSON *s = cfix_get(&fx, &EBS_RES_SCHEDULE, name);

    cr_assert_not_null(s);
    return s;
}

static const char *status_time(const char *name, const char *field, char *out)
{
    cJSON *s = sched_obj(name);
    const char *v = kjson_get_str(kjson_get(s, "status"), field);

    snprintf(out, KTIME_LEN + 1, "%s", v ? v : "");
    cJSON_Delete(s);
    return out;
}

static const char *fmt(int64_t t, char *out)
{
    cr_assert_eq(ktime_format((time_t)t, out), KERR_OK);
    return out;
}

/* How many Events with reason there are (the recorder stopped first: all sent). */
static int events(const char *reason)
{
    cJSON *list = NULL;
    const cJSON *e;
    int n = 0;

    ev_stop(fx.x.events);
    cr_assert_eq(k8s_list(fx.c, &RES_EVENT, CFIX_NS, NULL, &list, NULL), KERR_OK);
    cJSON_ArrayForEach (e, kjson_get_arr(list, "items"))
        n += strcmp(jsonfix_str(e, "reason"), reason) == 0;
    cJSON_Delete(list);
    return n;
}

Test(ebs_kubesim, every_minute_one_backup_per_fire_time)
{
    int64_t m = minute_after(schedule("s", "* * * * *", NULL));
    char n1[128], n2[128], a[32], b[32];
    cJSON *bk, *s;

    cr_assert_eq(pass("s", m - 1), 1000, "requeued at the fire time");
    BACKUPS_ARE("s", "");
    cr_assert_str_eq(status_time("s", "nextScheduleTime", b), fmt(m, a), "shows its next fire");
    cr_assert_eq(pass("s", m), EBS_POLL_MS, "polls the unfinished backup");
    BACKUPS_ARE("s", bname("s", m, n1));
    bk = cfix_get(&fx, &EBS_RES_BACKUP, n1);
    cr_assert_str_eq(jsonfix_str(bk, "metadata.annotations[" EBS_ANN_SCHEDULED_AT "]"), fmt(m, a));
    cr_assert_str_eq(jsonfix_str(bk, "spec.etcdName"), "main");
    cr_assert_str_eq(jsonfix_str(bk, "spec.destination.container"), "offsite");
    cr_assert_null(kjson_get(bk, "metadata.ownerReferences"), "outlives its schedule");
    cJSON_Delete(bk);
    s = sched_obj("s");
    cr_assert_str_eq(jsonfix_str(s, "status.lastScheduleTime"), a);
    cr_assert_str_eq(jsonfix_str(s, "status.nextScheduleTime"), fmt(m + 60, b));
    cr_assert_str_eq(jsonfix_str(s, "status.active[0].name"), n1);
    cr_assert_str_eq(jsonfix_str(s, "status.conditions[0].reason"), "Scheduled");
    cr_assert_null(kjson_get(s, "status.lastSuccessfulTime"));
    cJSON_Delete(s);
    cr_assert_eq(pass("s", m + 10), EBS_POLL_MS);
    BACKUPS_ARE("s", n1);
    finish(n1, "Completed", m + 30);
    cr_assert_eq(pass("s", m + 40), 20000, "nothing active: requeued at the next fire time");
    cr_assert_str_eq(status_time("s", "lastSuccessfulTime", b), fmt(m + 30, a));
    s = sched_obj("s");
    cr_assert_null(kjson_get(s, "status.active"));
    cJSON_Delete(s);
    pass("s", m + 60);
    bname("s", m + 60, n2);
    {
        char want[300];

        snprintf(want, sizeof(want), "%s,%s", n1, n2);
        BACKUPS_ARE("s", want);
    }
    cr_assert_eq(events("BackupCreated"), 2);
}

Test(ebs_kubesim, history_limits_prune_the_oldest)
{
    int64_t m = minute_after(schedule(
        "h", "* * * * *", "\"successfulBackupsHistoryLimit\":1,\"failedBackupsHistoryLimit\":1"));
    static const char *const phases[] = { "Completed", "Failed", "Completed",
                                          "Failed",    "Failed", "Completed" };
    char n[6][128], want[300], a[32], b[32];
    int i;

    for (i = 0; i < 6; i++) {
        pass("h", m + 60 * i);
        finish(bname("h", m + 60 * i, n[i]), phases[i], m + 60 * i + 20);
    }
    pass("h", m + 60 * 5 + 30);
    /* the newest Completed (5) and the newest Failed (4) */
    snprintf(want, sizeof(want), "%s,%s", n[4], n[5]);
    BACKUPS_ARE("h", want);
    cr_assert_str_eq(status_time("h", "lastSuccessfulTime", b), fmt(m + 60 * 5 + 20, a));
    cr_assert_geq(events("BackupDeleted"), 1);
}

Test(ebs_kubesim, a_zero_limit_deletes_at_once_and_keeps_the_last_success)
{
    int64_t m = minute_after(schedule("z", "* * * * *", "\"successfulBackupsHistoryLimit\":0"));
    char n1[128], a[32], b[32];

    pass("z", m);
    finish(bname("z", m, n1), "Completed", m + 5);
    pass("z", m + 10);
    BACKUPS_ARE("z", "");
    cr_assert_str_eq(status_time("z", "lastSuccessfulTime", b), fmt(m + 5, a));
    pass("z", m + 20);
    cr_assert_str_eq(status_time("z", "lastSuccessfulTime", b), a, "never goes back");
}

/* A Completed EtcdBackup name of Etcd etcd labelled as schedule sched's (uid: its uid label, or
 * none), made by hand: another schedule's, a deleted one's, a tenant's. */
static void foreign_backup(const char *name, const char *sched, const char *uid, const char *etcd,
                           int64_t t)
{
    char text[1024];
    cJSON *b;

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdBackup\","
             "\"metadata\":{\"name\":\"%s\",\"labels\":{\"" EBS_LABEL_SCHEDULE "\":\"%s\""
             "%s%s%s}},\"spec\":{\"etcdName\":\"%s\"," DEST "}}",
             name, sched, uid ? ",\"" EBS_LABEL_UID "\":\"" : "", uid ? uid : "", uid ? "\"" : "",
             etcd);
    b = jsonfix_parse(text);
    cJSON_Delete(cfix_create(&fx, &EBS_RES_BACKUP, b));
    cJSON_Delete(b);
    finish(name, "Completed", t);
}

Test(ebs_kubesim, prunes_only_what_it_made_for_its_etcd)
{
    int64_t m = minute_after(schedule("o", "* * * * *", "\"successfulBackupsHistoryLimit\":0"));
    cJSON *s = sched_obj("o");
    char uid[64], n1[128];

    snprintf(uid, sizeof(uid), "%s", jsonfix_str(s, "metadata.uid"));
    cJSON_Delete(s);
    foreign_backup("hand-made", "o", NULL, "main",
                   m - 30); /* a deleted schedule o's, or a tenant's */
    foreign_backup("other-uid", "o", "4c0ffee0-0000-4000-8000-000000000000", "main", m - 20);
    foreign_backup("other-etcd", "o", uid, "events", m - 10); /* its uid, another Etcd */
    pass("o", m);
    finish(bname("o", m, n1), "Completed", m + 5);
    pass("o", m + 10);
    BACKUPS_ARE("o", "hand-made,other-etcd,other-uid");
    cr_assert_eq(events("BackupDeleted"), 1, "only its own backup pruned");
}

Test(ebs_kubesim, a_schedule_made_again_leaves_the_first_ones_backups)
{
    int64_t m = minute_after(schedule("r", "* * * * *", "\"successfulBackupsHistoryLimit\":1"));
    char n1[128], n2[128], want[300];
    struct kerr_info err;

    pass("r", m);
    finish(bname("r", m, n1), "Completed", m + 5);
    OK(k8s_delete(fx.c, &EBS_RES_SCHEDULE, CFIX_NS, "r", NULL, NULL, &err));
    m = minute_after(schedule("r", "* * * * *", "\"successfulBackupsHistoryLimit\":0"));
    if (m / 60 == atoll(strrchr(n1, '-') + 1)) /* the same minute: the next one */
        m += 60;
    pass("r", m);
    finish(bname("r", m, n2), "Completed", m + 5);
    pass("r", m + 10);
    snprintf(want, sizeof(want), "%s", n1);
    BACKUPS_ARE("r", want);
}

/* Replace the schedule's spec field (JSON value text). */
static void set_spec(const char *name, const char *field, const char *value)
{
    char text[512];
    struct kerr_info err;
    cJSON *patch;

    snprintf(text, sizeof(text), "{\"spec\":{\"%s\":%s}}", field, value);
    patch = jsonfix_parse(text);
    OK(k8s_patch(fx.c, &EBS_RES_SCHEDULE, CFIX_NS, name, K8S_PATCH_MERGE, patch, NULL, NULL, &err));
    cJSON_Delete(patch);
}

Test(ebs_kubesim, suspend_creates_nothing_and_resumes_once)
{
    int64_t m = minute_after(schedule("p", "* * * * *", "\"suspend\":true"));
    char n[128], t[32], u[32];
    cJSON *s;

    cr_assert_eq(pass("p", m + 120), 0, "suspended, nothing to follow");
    BACKUPS_ARE("p", "");
    s = sched_obj("p");
    cr_assert_str_eq(jsonfix_str(s, "status.conditions[0].reason"), "Suspended");
    cr_assert_str_eq(jsonfix_str(s, "status.conditions[0].status"), "True");
    cr_assert_null(kjson_get(s, "status.nextScheduleTime"), "a suspended schedule never fires");
    cJSON_Delete(s);
    set_spec("p", "suspend", "false");
    pass("p", m + 300 + 7);
    BACKUPS_ARE("p", bname("p", m + 300, n));
    cr_assert_str_eq(status_time("p", "nextScheduleTime", t), fmt(m + 360, u));
}

Test(ebs_kubesim, starting_deadline_misses_a_late_fire_time)
{
    int64_t c = schedule("d", "0 * * * *", "\"startingDeadlineSeconds\":300");
    int64_t h = c - c % 3600 + 3600;
    char n[128], a[32];

    pass("d", h + 20 * 60);
    BACKUPS_ARE("d", "");
    cr_assert_str_eq(status_time("d", "lastScheduleTime", a), "");
    pass("d", h + 3600 + 4 * 60);
    BACKUPS_ARE("d", bname("d", h + 3600, n));
    cr_assert_eq(events("MissSchedule"), 1);
}

Test(ebs_kubesim, a_gap_is_caught_up_once)
{
    int64_t m = minute_after(schedule("g", "* * * * *", NULL)), later;
    char n1[128], n2[128], n3[128], want[400];

    pass("g", m);
    finish(bname("g", m, n1), "Completed", m + 5);
    /* the controller was down for 5 minutes: one backup, for the latest fire time */
    later = m + 5 * 60 + 30;
    pass("g", later);
    pass("g", later + 5);
    bname("g", m + 5 * 60, n2);
    snprintf(want, sizeof(want), "%s,%s", n1, n2);
    BACKUPS_ARE("g", want);
    finish(n2, "Completed", later + 10);
    /* down for ten days: still one, and the warning of CronJob */
    later = m + 10 * 86400 + 17;
    pass("g", later);
    pass("g", later + 1);
    bname("g", later - later % 60, n3);
    snprintf(want, sizeof(want), "%s,%s,%s", n1, n2, n3);
    BACKUPS_ARE("g", want);
    cr_assert_eq(events("TooManyMissedTimes"), 1);
}

Test(ebs_kubesim, no_second_backup_of_an_etcd_while_one_is_unfinished)
{
    int64_t m = minute_after(schedule("a", "* * * * *", NULL));
    char n1[128], n2[128], a[32], b[32], want[300];
    cJSON *other, *mine;

    pass("a", m);
    BACKUPS_ARE("a", bname("a", m, n1));
    cr_assert_eq(pass("a", m + 60), EBS_POLL_MS);
    BACKUPS_ARE("a", n1);
    cr_assert_str_eq(status_time("a", "lastScheduleTime", b), fmt(m + 60, a), "skipped, not due");
    finish(n1, "Failed", m + 70);
    /* a hand-made backup of the same Etcd blocks too; one of another Etcd does not */
    other = jsonfix_parse("{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdBackup\","
                          "\"metadata\":{\"name\":\"other\"},\"spec\":{\"etcdName\":\"other\","
                          "\"destination\":{\"provider\":\"S3\",\"container\":\"offsite\","
                          "\"prefix\":\"ns1/other\",\"secretRef\":{\"name\":\"offsite\"}}}}");
    mine = jsonfix_parse("{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdBackup\","
                         "\"metadata\":{\"name\":\"by-hand\"},\"spec\":{\"etcdName\":\"main\"," DEST
                         "}}");
    cJSON_Delete(cfix_create(&fx, &EBS_RES_BACKUP, other));
    cJSON_Delete(cfix_create(&fx, &EBS_RES_BACKUP, mine));
    pass("a", m + 120);
    BACKUPS_ARE("a", n1);
    finish("by-hand", "Completed", m + 130);
    pass("a", m + 180);
    snprintf(want, sizeof(want), "%s,%s", n1, bname("a", m + 180, n2));
    BACKUPS_ARE("a", want);
    cr_assert_eq(events("BackupAlreadyActive"), 2);
    cJSON_Delete(other);
    cJSON_Delete(mine);
}

Test(ebs_kubesim, a_backup_created_before_a_crash_is_not_made_again)
{
    int64_t m = minute_after(schedule("k", "* * * * *", NULL));
    char n1[128], text[512], a[32], b[32];
    cJSON *bk;

    /* the pass that created it died before writing lastScheduleTime */
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdBackup\",\"metadata\":"
             "{\"name\":\"%s\",\"labels\":{\"" EBS_LABEL_SCHEDULE "\":\"k\"}},\"spec\":"
             "{\"etcdName\":\"main\"," DEST "}}",
             bname("k", m, n1));
    bk = jsonfix_parse(text);
    cJSON_Delete(cfix_create(&fx, &EBS_RES_BACKUP, bk));
    cJSON_Delete(bk);
    pass("k", m + 3);
    BACKUPS_ARE("k", n1);
    cr_assert_str_eq(status_time("k", "lastScheduleTime", b), fmt(m, a));
    cr_assert_eq(events("BackupAlreadyActive"), 0, "its own backup is no reason to skip");
}

Test(ebs_kubesim, an_invalid_schedule_gets_a_condition_and_no_backups)
{
    /* the CRD's rule refuses "61 * * * *" at admission; a backward range only cron sees */
    int64_t m = minute_after(schedule("bad", "30-10 * * * *", NULL));
    cJSON *s;

    cr_assert_eq(pass("bad", m + 3600), 0);
    BACKUPS_ARE("bad", "");
    s = sched_obj("bad");
    cr_assert_str_eq(jsonfix_str(s, "status.conditions[0].status"), "False");
    cr_assert_str_eq(jsonfix_str(s, "status.conditions[0].reason"), "InvalidSchedule");
    cr_assert(strstr(jsonfix_str(s, "status.conditions[0].message"),
                     "minute: range \"30-10\" begins after it ends") != NULL);
    cr_assert_null(kjson_get(s, "status.nextScheduleTime"), "an invalid schedule never fires");
    cJSON_Delete(s);
    set_spec("bad", "schedule", "\"@hourly\"");
    pass("bad", m + 3600 * 2 + 1);
    s = sched_obj("bad");
    cr_assert_str_eq(jsonfix_str(s, "status.conditions[0].status"), "True");
    cJSON_Delete(s);
    {
        char *got = backups_of("bad");

        cr_assert_str_neq(got, "", "fixed: one backup");
        free(got);
    }
    cr_assert_eq(events("InvalidSchedule"), 1);
}

Test(ebs_kubesim, a_schedule_that_never_fires_is_invalid)
{
    int64_t m = minute_after(schedule("feb30", "0 0 30 2 *", NULL));
    cJSON *s;

    cr_assert_eq(pass("feb30", m), 0);
    s = sched_obj("feb30");
    cr_assert_str_eq(jsonfix_str(s, "status.conditions[0].reason"), "InvalidSchedule");
    cr_assert(strstr(jsonfix_str(s, "status.conditions[0].message"), "no fire time") != NULL);
    cJSON_Delete(s);
}

Test(ebs_kubesim, a_long_name_keeps_its_backups_and_cuts_the_label)
{
    char name[120], n1[160];
    struct k8s_list_opts o = { 0 };
    struct kerr_info err;
    cJSON *list = NULL;
    int64_t m;

    memset(name, 'x', 100);
    name[100] = '\0';
    m = minute_after(schedule(name, "* * * * *", NULL));
    pass(name, m);
    pass(name, m + 60);
    OK(k8s_list(fx.c, &EBS_RES_BACKUP, CFIX_NS, &o, &list, &err));
    cr_assert_eq(cJSON_GetArraySize(kjson_get(list, "items")), 1, "the second one waits");
    cr_assert_str_eq(jsonfix_str(list, "items[0].metadata.name"), bname(name, m, n1));
    cr_assert_eq(strlen(jsonfix_str(list, "items[0].metadata.labels[" EBS_LABEL_SCHEDULE "]")), 63);
    cJSON_Delete(list);
}

/* ---- the whole controller on the test's clock ---- */

static atomic_llong fake_now_ms;

static long long fake_now(void)
{
    return atomic_load(&fake_now_ms);
}

/* Touch the schedule (a label): its key is queued, as any edit of it queues it. */
static void touch(const char *name, int i)
{
    char text[128];
    struct kerr_info err;
    cJSON *patch;

    snprintf(text, sizeof(text), "{\"metadata\":{\"labels\":{\"touched\":\"%d\"}}}", i);
    patch = jsonfix_parse(text);
    OK(k8s_patch(fx.c, &EBS_RES_SCHEDULE, CFIX_NS, name, K8S_PATCH_MERGE, patch, NULL, NULL, &err));
    cJSON_Delete(patch);
}

static int count_backups(const char *sched)
{
    char *got = backups_of(sched);
    int n = *got ? 1 : 0;
    const char *p;

    for (p = got; *p; p++)
        n += *p == ',';
    free(got);
    return n;
}

Test(ebs_kubesim, the_controller_runs_schedules_on_its_clock)
{
    static const struct ctl_stub stubs[] = { { "bschedule", NULL, ebs_reconcile },
                                             { NULL, NULL, NULL } };
    static const struct ctl_capability *const caps[] = { &backups_capability, NULL };
    const char *argv[] = { "warden-controller", "--metrics-bind-address=0",
                           "--health-probe-bind-address=0", "--leader-elect=false" };
    struct ctl_config cfg;
    struct ctl_opts o = { 0 };
    struct ctl *c = NULL;
    struct kerr_info err;
    int64_t m, later;
    char n1[128];

    atomic_store(&fake_now_ms, (long long)time(NULL) * 1000);
    OK(ctl_config_load(&cfg, 4, (char **)argv, &err));
    o.stubs = stubs;
    o.client = fx.c;
    o.no_servers = 1;
    o.now_ms = fake_now;
    OK(ctl_new(&cfg, caps, &o, &c, &err));
    OK(ctl_start(c, &err));
    TESTUTIL_AWAIT(ctl_synced(c), 10000);
    cr_assert(ctl_synced(c));
    cr_assert_eq(ctl_now_ms(c), fake_now());
    m = minute_after(schedule("c", "* * * * *", NULL));
    atomic_store(&fake_now_ms, (long long)(m + 1) * 1000);
    touch("c", 1);
    TESTUTIL_AWAIT(count_backups("c") == 1, 10000);
    BACKUPS_ARE("c", bname("c", m, n1));
    finish(n1, "Completed", m + 2);
    /* ten days later: one backup more, for the latest fire time */
    later = m + 10 * 86400 + 30;
    atomic_store(&fake_now_ms, (long long)later * 1000);
    touch("c", 2);
    TESTUTIL_AWAIT(count_backups("c") == 2, 10000);
    cr_assert_eq(count_backups("c"), 2);
    ctl_free(c);
    ctl_config_release(&cfg);
    cr_assert_eq(count_backups("c"), 2, "once");
}

/* The status condition type of the schedule name, as "status reason: message", or "". */
static const char *cond_of(const char *name, const char *type, char *out, size_t n)
{
    cJSON *s = sched_obj(name);
    const cJSON *c;

    out[0] = '\0';
    cJSON_ArrayForEach (c, kjson_get_arr(s, "status.conditions"))
        if (strcmp(jsonfix_str(c, "type"), type) == 0)
            snprintf(out, n, "%s %s: %s @%s", jsonfix_str(c, "status"), jsonfix_str(c, "reason"),
                     jsonfix_str(c, "message"), jsonfix_str(c, "lastTransitionTime"));
    cJSON_Delete(s);
    return out;
}

Test(ebs_kubesim, a_stuck_backup_is_reported_and_holds_nothing_back)
{
    int64_t m = minute_after(schedule("a", "* * * * *", NULL)), t = m + EBS_STUCK_S + 60;
    char n1[128], n2[128], want[600], got[600], first[600], when[KTIME_LEN + 1];

    pass("a", m);
    BACKUPS_ARE("a", bname("a", m, n1));
    pass("a", m + 60);
    cr_assert_str_eq(cond_of("a", EBS_COND_STUCK, got, sizeof(got)), "");
    /* n1 unfinished for longer than any of its Jobs may run: reported, and the fire time is
     * taken all the same */
    pass("a", t);
    snprintf(want, sizeof(want), "%s,%s", n1, bname("a", t, n2));
    BACKUPS_ARE("a", want);
    snprintf(want, sizeof(want),
             "True BackupNotFinished: EtcdBackup %s of Etcd main has not finished since %s "
             "(phase none, over %ld s): it no longer holds the fire times back @%s",
             n1, fmt(m, when), (long)EBS_STUCK_S, fmt(t, got));
    cr_assert_str_eq(cond_of("a", EBS_COND_STUCK, first, sizeof(first)), want);
    /* the new one, not stuck, holds the next fire time back; the report stays as it was */
    pass("a", t + 60);
    snprintf(want, sizeof(want), "%s,%s", n1, n2);
    BACKUPS_ARE("a", want);
    cr_assert_str_eq(cond_of("a", EBS_COND_STUCK, got, sizeof(got)), first);
    finish(n1, "Failed", t + 70);
    pass("a", t + 120);
    cr_assert_str_eq(cond_of("a", EBS_COND_STUCK, got, sizeof(got)), "", "gone with it");
    BACKUPS_ARE("a", want);
    cr_assert_eq(events("BackupStuck"), 1);
    cr_assert_eq(events("BackupAlreadyActive"), 3);
}

/* The template's destination inside another Etcd's live prefix, as its sidecar lists it ("ns1/main"
 * lists "ns1/main-2/..."): the fire time is skipped, Ready False naming the Etcd, looked at again
 * while in use; once free, the next fire time makes its backup. */
Test(ebs_kubesim, a_destination_in_another_clusters_prefix_makes_no_backup)
{
    int64_t m = minute_after(schedule("d", "* * * * *", NULL));
    cJSON *e =
        cfix_etcd("events",
                  "{\"provider\":\"aws\",\"container\":\"offsite\",\"prefix\":\"/ns1/main-2\","
                  "\"secretRef\":{\"name\":\"etcd-backup\"}}",
                  NULL);
    char got[1200], n1[128], a[32], b[32];
    struct kerr_info err;

    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_ETCD, e));
    cJSON_Delete(e);
    pass("d", m);
    BACKUPS_ARE("d", "");
    cr_assert(strstr(cond_of("d", "Ready", got, sizeof(got)),
                     "False DestinationInUse: no backups are made: "
                     "spec.backupTemplate.destination.prefix \"ns1/main\" overlaps the prefix "
                     "\"ns1/main-2\" of Etcd ns1/events"),
              "%s", got);
    cr_assert_str_eq(status_time("d", "lastScheduleTime", a), fmt(m, b),
                     "the fire time is skipped");
    pass("d", m + 30); /* in use still: the condition stays */
    BACKUPS_ARE("d", "");
    cr_assert(strstr(cond_of("d", "Ready", got, sizeof(got)), "False DestinationInUse"), "%s", got);
    cr_assert_eq(events(EBS_REASON_IN_USE), 1, "one event per skipped fire time");

    OK(k8s_delete(fx.c, &ETCDSPEC_RES_ETCD, CFIX_NS, "events", NULL, NULL, &err));
    pass("d", m + 40);
    cr_assert(strstr(cond_of("d", "Ready", got, sizeof(got)), "True Scheduled"), "%s", got);
    BACKUPS_ARE("d", "");
    pass("d", m + 60);
    BACKUPS_ARE("d", bname("d", m + 60, n1));
}
