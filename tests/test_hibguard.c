#include "common/hibguard.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

/* 2026-11-24T20:01:02Z */
#define CUT 1795550462

static cJSON *etcd_with(const char *cut_at)
{
    cJSON *e = cJSON_Parse("{\"metadata\":{\"name\":\"etcd-main\",\"namespace\":\"shoot\","
                           "\"annotations\":{}}}");
    if (cut_at)
        cJSON_AddStringToObject(
            cJSON_GetObjectItem(cJSON_GetObjectItem(e, "metadata"), "annotations"),
            HIBGUARD_ANN_CUT_AT, cut_at);
    return e;
}

static cJSON *task(const char *ns, const char *etcd, const char *type, const char *state,
                   const char *created)
{
    char buf[1024];

    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"name\":\"t\",\"namespace\":\"%s\",\"creationTimestamp\":\"%s\"},"
             "\"spec\":{\"etcdName\":\"%s\",\"config\":{\"onDemandSnapshot\":{\"type\":\"%s\"}}},"
             "\"status\":{\"state\":\"%s\"}}",
             ns, created, etcd, type, state);
    return cJSON_Parse(buf);
}

Test(hibguard, cut_at)
{
    struct kerr_info err;
    time_t t = 7;
    cJSON *e;

    e = etcd_with("2026-11-24T20:01:02Z");
    cr_assert_eq(hibguard_cut_at(e, &t, &err), KERR_OK);
    cr_assert_eq(t, CUT);
    cJSON_Delete(e);

    e = etcd_with("2026-11-24T20:01:02.75Z");
    cr_assert_eq(hibguard_cut_at(e, &t, &err), KERR_OK);
    cr_assert_eq(t, CUT);
    cJSON_Delete(e);

    e = etcd_with(NULL);
    cr_assert_eq(hibguard_cut_at(e, &t, &err), KERR_NOTFOUND);
    cr_assert_eq(t, 0);
    cJSON_Delete(e);

    e = etcd_with("yesterday");
    t = 7;
    cr_assert_eq(hibguard_cut_at(e, &t, &err), KERR_PARSE);
    cr_assert_eq(t, 0);
    cr_assert(strstr(err.msg, HIBGUARD_ANN_CUT_AT));
    cJSON_Delete(e);
}

Test(hibguard, task_counts_table)
{
    static const struct {
        const char *ns, *etcd, *type, *state, *created;
        bool counts;
    } rows[] = {
        /* strictly after the second of the cut */
        { "shoot", "etcd-main", "full", "Succeeded", "2026-11-24T20:01:03Z", true },
        { "shoot", "etcd-main", "full", "Succeeded", "2026-11-24T21:00:00Z", true },
        /* created in the cut's own second: it may predate the cut (12:00:00 for 12:00:00.9) */
        { "shoot", "etcd-main", "full", "Succeeded", "2026-11-24T20:01:02Z", false },
        { "shoot", "etcd-main", "full", "Succeeded", "2026-11-24T20:01:02.999Z", false },
        /* created before the cut: an earlier cycle's snapshot */
        { "shoot", "etcd-main", "full", "Succeeded", "2026-11-24T20:01:01Z", false },
        /* another Etcd of the namespace */
        { "shoot", "etcd-events", "full", "Succeeded", "2026-11-24T20:05:00Z", false },
        { "other", "etcd-main", "full", "Succeeded", "2026-11-24T20:05:00Z", false },
        { "shoot", "etcd-main", "delta", "Succeeded", "2026-11-24T20:05:00Z", false },
        { "shoot", "etcd-main", "full", "InProgress", "2026-11-24T20:05:00Z", false },
        { "shoot", "etcd-main", "full", "Failed", "2026-11-24T20:05:00Z", false },
        { "shoot", "etcd-main", "full", "Rejected", "2026-11-24T20:05:00Z", false },
        { "shoot", "etcd-main", "full", "Succeeded", "not a time", false },
    };
    size_t i;

    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        cJSON *t = task(rows[i].ns, rows[i].etcd, rows[i].type, rows[i].state, rows[i].created);

        cr_assert_eq(hibguard_task_counts(t, "shoot", "etcd-main", CUT), rows[i].counts, "row %zu",
                     i);
        cJSON_Delete(t);
    }
}

Test(hibguard, task_missing_fields)
{
    cJSON *t = cJSON_Parse("{\"metadata\":{\"namespace\":\"shoot\","
                           "\"creationTimestamp\":\"2026-11-24T20:05:00Z\"},"
                           "\"spec\":{\"etcdName\":\"etcd-main\"},"
                           "\"status\":{\"state\":\"Succeeded\"}}");

    cr_assert_not(hibguard_task_counts(t, "shoot", "etcd-main", CUT));
    cr_assert_not(hibguard_task_counts(NULL, "shoot", "etcd-main", CUT));
    cJSON_Delete(t);
}

/* A cut written with a fraction (12:00:00.9) is its second: a task of that second does not count.
 */
Test(hibguard, a_fractional_cut_and_a_task_of_its_second)
{
    cJSON *e = etcd_with("2026-11-24T20:01:02.900Z");
    cJSON *same = task("shoot", "etcd-main", "full", "Succeeded", "2026-11-24T20:01:02Z");
    cJSON *next = task("shoot", "etcd-main", "full", "Succeeded", "2026-11-24T20:01:03Z");
    time_t cut = 0;

    cr_assert_eq(hibguard_cut_at(e, &cut, NULL), KERR_OK);
    cr_assert_eq(cut, CUT);
    cr_assert_not(hibguard_task_counts(same, "shoot", "etcd-main", cut));
    cr_assert(hibguard_task_counts(next, "shoot", "etcd-main", cut));
    cJSON_Delete(e);
    cJSON_Delete(same);
    cJSON_Delete(next);
}

/* A cut is current only while its sleep is under way. */
Test(hibguard, phase_current)
{
    cr_assert(hibguard_phase_current("CuttingTraffic"));
    cr_assert(hibguard_phase_current("FinalSnapshot"));
    cr_assert(hibguard_phase_current("Failed"));
    cr_assert(hibguard_phase_current("ScalingDown"));
    cr_assert_not(hibguard_phase_current(NULL));
    cr_assert_not(hibguard_phase_current(""));
    cr_assert_not(hibguard_phase_current("Hibernated"));
    cr_assert_not(hibguard_phase_current("WakingUp"));
    cr_assert_not(hibguard_phase_current("finalsnapshot"));
}

/* Break glass: "<RFC 3339 expiry> <reason>". */
Test(hibguard, break_glass_value)
{
    static const char *const bad[] = { "",
                                       "bucket lost",
                                       "2026-11-24T20:00:00Z",
                                       "2026-11-24T20:00:00Z   ",
                                       " 2026-11-24T20:00:00Z lost",
                                       "2026-13-24T20:00:00Z lost",
                                       "tomorrow bucket lost" };
    struct kerr_info err;
    const char *reason = NULL;
    time_t exp = 1;
    size_t i;

    cr_assert_eq(hibguard_break_glass("2026-11-24T20:00:00Z  bucket lost ", &exp, &reason, &err),
                 KERR_OK, "%s", err.msg);
    cr_assert_eq(exp, CUT - 62);
    cr_assert_str_eq(reason, "bucket lost ");
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_assert_eq(hibguard_break_glass(bad[i], &exp, &reason, &err), KERR_PARSE, "%s", bad[i]);
        cr_assert_eq(exp, 0);
        cr_assert_str_eq(reason, "");
    }
    cr_assert_eq(hibguard_break_glass(NULL, &exp, &reason, &err), KERR_PARSE);
}

/* The stamp of ScalingDown: "<uid>/<generation>" of the StatefulSet the snapshot was checked
 * against; anything else, on either side, never matches. */
Test(hibguard, checked_stamp)
{
    static const char *const bad[] = { "",        "uid",    "/7",      "uid/",
                                       "uid/0",   "uid/07", "uid/-7",  "uid/+7",
                                       "uid/7 ",  "u id/7", "uid/7/8", "uid/99999999999999999999",
                                       "uid/1e3", "uid\t/7" };
    cJSON *sts = cJSON_Parse("{\"metadata\":{\"uid\":\"a-b-c\",\"generation\":7}}");
    cJSON *nogen = cJSON_Parse("{\"metadata\":{\"uid\":\"a-b-c\"}}");
    cJSON *frac = cJSON_Parse("{\"metadata\":{\"uid\":\"a-b-c\",\"generation\":7.5}}");
    char uid[HIBGUARD_CHECKED_MAX], buf[HIBGUARD_CHECKED_MAX];
    struct kerr_info err;
    long long g = 0;
    size_t i;

    cr_assert_eq(hibguard_checked_parse("a-b-c/7", uid, sizeof(uid), &g, &err), KERR_OK);
    cr_assert_str_eq(uid, "a-b-c");
    cr_assert_eq(g, 7);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_assert_eq(hibguard_checked_parse(bad[i], uid, sizeof(uid), &g, &err), KERR_PARSE, "%s",
                     bad[i]);
        cr_assert_eq(g, 0);
        cr_assert_not(hibguard_checked_matches(bad[i], sts), "%s", bad[i]);
    }
    cr_assert_eq(hibguard_checked_format(sts, buf, sizeof(buf), &err), KERR_OK);
    cr_assert_str_eq(buf, "a-b-c/7");
    cr_assert(hibguard_checked_matches(buf, sts));
    cr_assert_not(hibguard_checked_matches("a-b-c/8", sts)); /* scaled since */
    cr_assert_not(hibguard_checked_matches("x-b-c/7", sts)); /* another StatefulSet */
    cr_assert_not(hibguard_checked_matches(NULL, sts));
    cr_assert_not(hibguard_checked_matches("a-b-c/7", nogen));
    cr_assert_not(hibguard_checked_matches("a-b-c/7", frac));
    cr_assert_not(hibguard_checked_matches("a-b-c/7", NULL));
    cr_assert_eq(hibguard_checked_format(nogen, buf, sizeof(buf), &err), KERR_INVAL);
    cr_assert_str_eq(buf, "");
    cr_assert_eq(hibguard_checked_format(sts, buf, 4, &err), KERR_INVAL);
    cJSON_Delete(sts);
    cJSON_Delete(nogen);
    cJSON_Delete(frac);
}
