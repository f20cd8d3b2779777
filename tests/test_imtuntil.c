/*
 * test_imtuntil - a hibernated snapshot's immutable-until: the summary line
 * extend-snapshot-immutability leaves in its termination log, read from the
 * immutability CronJob's last successful Job's Pod into the task's
 * status.immutableUntil, kept once that Job is gone, and exported as
 * warden_etcd_snapshot_immutable_until_timestamp_seconds (against kube-sim).
 */
#include "controller/immutability/imtuntil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "controller/core/etcdspec.h"
#include "controller/core/rctx.h"
#include "controller/immutability/imt.h"
#include "tests/support/cfix.h"
#include "tests/support/jsonfix.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)
#define TASK     "main-extend-immutability"

static const char S3[] = "{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":\"ns1--main\","
                         "\"secretRef\":{\"name\":\"etcd-backup\"},\"immutability\":"
                         "{\"retentionType\":\"bucket\"}}";

static const char *until_of(const char *line, char out[KTIME_LEN + 1])
{
    return imtuntil_parse(line, strlen(line), out, NULL) == KERR_OK ? out : NULL;
}

Test(imtuntil, summary_lines_parsed_hostile_ones_refused)
{
    char out[KTIME_LEN + 1];

    cr_assert_str_eq(until_of("{\"source\":\"a\",\"copy\":\"b\",\"inPlace\":false,"
                              "\"immutableUntil\":\"2026-12-01T10:00:00Z\"}",
                              out),
                     "2026-12-01T10:00:00Z");
    cr_assert_str_eq(until_of("{\"immutableUntil\":\"2026-12-01T10:00:00.5+01:00\"}", out),
                     "2026-12-01T09:00:00Z", "normalised to UTC");
    cr_assert_null(until_of("{\"source\":\"a\",\"copy\":\"b\",\"inPlace\":false}", out),
                   "a store without a lock says no date");
    cr_assert_str_eq(out, "");
    cr_assert_null(until_of("{\"error\":\"no full snapshot\"}", out));
    cr_assert_null(until_of("{\"immutableUntil\":\"tomorrow\"}", out));
    cr_assert_null(until_of("{\"immutableUntil\":17}", out));
    cr_assert_null(until_of("[\"immutableUntil\"]", out));
    cr_assert_null(until_of("{\"immutableUntil\":\"2026-12-01T10:00:00Z\"", out), "cut");
    cr_assert_null(until_of("level=error msg=failed", out));
    cr_assert_null(until_of("", out));
    cr_assert_eq(imtuntil_parse(NULL, 0, out, NULL), KERR_INVAL);
}

static struct cfix fx;

static void setup(void)
{
    cfix_start(&fx, NULL);
}

static void teardown(void)
{
    cfix_stop(&fx);
}

TestSuite(imtuntil_kubesim, .init = setup, .fini = teardown, .timeout = 60);

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

/* A Job of the CronJob cj (as the CronJob controller makes it), finished at done with a
 * Pod whose container exited code with message; the Job succeeded when code is 0. */
static void run_job(const cJSON *cj, const char *name, const char *done, int code, const char *msg)
{
    char text[1024];
    cJSON *o, *job, *st;

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"%s\","
             "\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"CronJob\","
             "\"name\":\"%s\",\"uid\":\"%s\",\"controller\":true}]},\"spec\":{\"template\":"
             "{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\","
             "\"image\":\"i:1\"}]}}}}",
             name, jsonfix_str(cj, "metadata.name"), jsonfix_str(cj, "metadata.uid"));
    o = jsonfix_parse(text);
    job = cfix_create(&fx, &ETCDSPEC_RES_JOB, o);
    cJSON_Delete(o);
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s-pod\","
             "\"labels\":{\"controller-uid\":\"%s\"}},\"spec\":{\"containers\":[{\"name\":"
             "\"c\",\"image\":\"i:1\"}]}}",
             name, jsonfix_str(job, "metadata.uid"));
    o = jsonfix_parse(text);
    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_POD, o));
    cJSON_Delete(o);
    st = jsonfix_parse("{\"containerStatuses\":[{\"state\":{\"terminated\":{}}}]}");
    o = (cJSON *)kjson_get(st, "containerStatuses.0.state.terminated");
    cJSON_AddNumberToObject(o, "exitCode", code);
    cJSON_AddStringToObject(o, "message", msg);
    {
        char *s = cJSON_PrintUnformatted(st), pod[128];

        snprintf(pod, sizeof(pod), "%s-pod", name);
        put_status(&ETCDSPEC_RES_POD, pod, s);
        free(s);
    }
    cJSON_Delete(st);
    snprintf(text, sizeof(text), "{\"%s\":1,\"completionTime\":\"%s\"}",
             code == 0 ? "succeeded" : "failed", done);
    put_status(&ETCDSPEC_RES_JOB, name, text);
    cJSON_Delete(job);
}

static const char *status_until(cJSON **task)
{
    cJSON_Delete(*task);
    *task = cfix_get(&fx, &ETCDSPEC_RES_IMMTASK, TASK);
    return jsonfix_str(*task, "status.immutableUntil");
}

static void pass(void)
{
    struct kerr_info err;
    long requeue = -1;

    OK(imt_run(&fx.x, CFIX_NS, TASK, &requeue, &err));
    cr_assert_eq(requeue, 0);
}

Test(imtuntil_kubesim, the_last_successful_run_read_into_the_status_and_kept)
{
    cJSON *e = cfix_etcd("main", S3, NULL), *live = cfix_create(&fx, &ETCDSPEC_RES_ETCD, e), *cj,
          *task = NULL;
    struct kerr_info err;

    cJSON_Delete(e);
    OK(imt_task_ensure_x(&fx.x, live, &err));
    pass();
    cr_assert_str_eq(status_until(&task), "", "no run yet: no date");
    cj = cfix_get(&fx, &ETCDSPEC_RES_CRONJOB, TASK);
    run_job(cj, TASK "-1", "2026-11-20T00:01:00Z", 0,
            "{\"source\":\"s\",\"copy\":\"c1\",\"inPlace\":false,"
            "\"immutableUntil\":\"2026-11-24T00:01:00Z\"}\n");
    run_job(cj, TASK "-2", "2026-11-21T00:01:00Z", 0,
            "{\"source\":\"s\",\"copy\":\"c2\",\"inPlace\":false,"
            "\"immutableUntil\":\"2026-11-25T00:01:00Z\"}\n");
    run_job(cj, TASK "-3", "2026-11-22T00:01:00Z", 1, "{\"error\":\"store unreachable\"}\n");
    pass();
    cr_assert_str_eq(status_until(&task), "2026-11-25T00:01:00Z",
                     "the latest successful run's, not a failed one's");
    /* the CronJob's history limit deletes the Jobs: the date stays */
    cr_assert_eq(k8s_delete(fx.c, &ETCDSPEC_RES_JOB, CFIX_NS, TASK "-1", NULL, NULL, &err),
                 KERR_OK);
    cr_assert_eq(k8s_delete(fx.c, &ETCDSPEC_RES_JOB, CFIX_NS, TASK "-2", NULL, NULL, &err),
                 KERR_OK);
    pass();
    cr_assert_str_eq(status_until(&task), "2026-11-25T00:01:00Z");
    /* a Job of another CronJob (same namespace) is not this task's */
    {
        cJSON *other = cJSON_Duplicate(cj, 1);

        OK(kjson_set_str(other, "metadata.uid", "other-uid", &err));
        run_job(other, "other-1", "2026-11-30T00:00:00Z", 0,
                "{\"immutableUntil\":\"2027-01-01T00:00:00Z\"}");
        cJSON_Delete(other);
    }
    run_job(cj, TASK "-4", "2026-11-23T00:01:00Z", 0,
            "{\"source\":\"s\",\"copy\":\"c4\",\"inPlace\":false,"
            "\"immutableUntil\":\"2026-11-27T00:01:00Z\"}");
    pass();
    cr_assert_str_eq(status_until(&task), "2026-11-27T00:01:00Z");
    cJSON_Delete(task);
    cJSON_Delete(cj);
    cJSON_Delete(live);
}
