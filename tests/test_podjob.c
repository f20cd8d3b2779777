/* podjob: the Local buckets' host directory from a Secret, the command words, the security
 * contexts, a terminated container's last message line, whether a Job is done. */
#include "controller/core/podjob.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/kjson.h"

static cJSON *parse(const char *s)
{
    cJSON *j = cJSON_Parse(s);

    cr_assert_not_null(j, "bad JSON: %s", s);
    return j;
}

static void root_of(const char *secret_json, const char *want)
{
    cJSON *secret = secret_json ? parse(secret_json) : NULL;
    char out[256];

    podjob_local_root(secret, out, sizeof(out));
    cr_assert_str_eq(out, want, "%s", secret_json ? secret_json : "no Secret");
    cJSON_Delete(secret);
}

Test(podjob, local_root)
{
    root_of("{\"data\":{\"hostPath\":\"L3Zhci9idWNrZXRzLw==\"}}", "/var/buckets");
    root_of("{\"data\":{\"hostPath\":\"Lw==\"}}", "/");
    root_of(NULL, PODJOB_LOCAL_HOST_ROOT);
    root_of("{\"data\":{}}", PODJOB_LOCAL_HOST_ROOT);
    root_of("{\"data\":{\"hostPath\":\"cmVsL2Rpcg==\"}}", PODJOB_LOCAL_HOST_ROOT); /* relative */
    root_of("{\"data\":{\"hostPath\":\"not base64!\"}}", PODJOB_LOCAL_HOST_ROOT);
}

Test(podjob, split_words)
{
    cJSON *w = podjob_split_words("  warden-snapshot\tcopy  --x ", 32);
    char many[200] = "";
    int i;

    cr_assert_eq(cJSON_GetArraySize(w), 3);
    cr_assert_str_eq(cJSON_GetArrayItem(w, 0)->valuestring, "warden-snapshot");
    cr_assert_str_eq(cJSON_GetArrayItem(w, 1)->valuestring, "copy");
    cr_assert_str_eq(cJSON_GetArrayItem(w, 2)->valuestring, "--x");
    cJSON_Delete(w);
    cr_assert_null(podjob_split_words(" \t ", 32));
    for (i = 0; i < 4; i++)
        memcpy(many + 2 * i, "w ", 3);
    w = podjob_split_words(many, 4);
    cr_assert_eq(cJSON_GetArraySize(w), 4);
    cJSON_Delete(w);
    cr_assert_null(podjob_split_words(many, 3));
}

Test(podjob, security_contexts)
{
    cJSON *pod = cJSON_CreateObject(), *ctr = cJSON_CreateObject();
    int64_t n = 0;
    bool b = true;

    cr_assert(podjob_secure_container(ctr));
    cr_assert_eq(kjson_get_bool(ctr, "securityContext.allowPrivilegeEscalation", &b), KERR_OK);
    cr_assert(!b);
    cr_assert_eq(kjson_get_bool(ctr, "securityContext.readOnlyRootFilesystem", &b), KERR_OK);
    cr_assert(b);
    cr_assert_str_eq(kjson_get_str(ctr, "securityContext.capabilities.drop.0"), "ALL");
    cr_assert(podjob_secure_pod(pod, 65532));
    cr_assert_eq(kjson_get_int64(pod, "securityContext.fsGroup", &n), KERR_OK);
    cr_assert_eq(n, 65532);
    cr_assert_str_eq(kjson_get_str(pod, "securityContext.seccompProfile.type"), "RuntimeDefault");
    cJSON_Delete(pod);
    cJSON_Delete(ctr);
}

Test(podjob, terminated_last_line)
{
    cJSON *running = parse("{\"status\":{\"containerStatuses\":[{\"state\":{\"running\":{}}}]}}");
    cJSON *done =
        parse("{\"status\":{\"containerStatuses\":[{\"state\":{\"terminated\":"
              "{\"exitCode\":3,\"message\":\"log line\\n{\\\"total\\\":1}\\r\\n\\n\"}}}]}}");
    cJSON *bare = parse("{\"status\":{\"containerStatuses\":[{\"state\":{\"terminated\":"
                        "{\"exitCode\":300}}}]}}");
    const char *line = "untouched";
    size_t len = 7;
    int code = -5;

    cr_assert_eq(podjob_terminated(running, &code, &line, &len), 0);
    cr_assert_eq(code, -5);
    cr_assert_eq(podjob_terminated(done, &code, &line, &len), 1);
    cr_assert_eq(code, 3);
    cr_assert_eq(len, strlen("{\"total\":1}"));
    cr_assert(strncmp(line, "{\"total\":1}", len) == 0);
    cr_assert_eq(podjob_terminated(bare, &code, &line, &len), 1);
    cr_assert_eq(code, -1);
    cr_assert_null(line);
    cJSON_Delete(running);
    cJSON_Delete(done);
    cJSON_Delete(bare);
}

Test(podjob, job_done)
{
    cJSON *ok = parse("{\"status\":{\"succeeded\":1}}");
    cJSON *failed = parse("{\"status\":{\"failed\":1}}");
    cJSON *going = parse("{\"metadata\":{\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},"
                         "\"status\":{\"failed\":1}}");
    cJSON *active = parse("{\"status\":{\"active\":1,\"failed\":0}}");

    cr_assert(podjob_job_done(ok));
    cr_assert(podjob_job_done(failed));
    cr_assert(!podjob_job_done(going));
    cr_assert(!podjob_job_done(active));
    cJSON_Delete(ok);
    cJSON_Delete(failed);
    cJSON_Delete(going);
    cJSON_Delete(active);
}

Test(podjob, job_done_by_its_conditions)
{
    /* the deadline passed before any Pod ran: no counts, only the condition */
    cJSON *deadline = parse("{\"status\":{\"conditions\":[{\"type\":\"FailureTarget\",\"status\":"
                            "\"True\"},{\"type\":\"Failed\",\"status\":\"True\",\"reason\":"
                            "\"DeadlineExceeded\",\"message\":\"Job was active longer than "
                            "specified deadline\"}]}}");
    cJSON *complete =
        parse("{\"status\":{\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\"}]}}");
    cJSON *not_yet = parse("{\"status\":{\"conditions\":[{\"type\":\"Failed\",\"status\":"
                           "\"False\"},{\"type\":\"Suspended\",\"status\":\"True\"}]}}");
    cJSON *backoff = parse("{\"status\":{\"failed\":1,\"conditions\":[{\"type\":\"Failed\","
                           "\"status\":\"True\",\"reason\":\"BackoffLimitExceeded\"}]}}");
    char why[40]; /* cut */

    cr_assert(podjob_job_done(deadline));
    cr_assert(podjob_job_finished(deadline));
    cr_assert(podjob_job_done(complete));
    cr_assert(!podjob_job_done(not_yet));
    cr_assert(podjob_job_failed(deadline, why, sizeof(why)));
    cr_assert_str_eq(why, "DeadlineExceeded: Job was active longer");
    cr_assert(podjob_deadline_exceeded(deadline));
    cr_assert(podjob_job_failed(backoff, why, sizeof(why)));
    cr_assert_str_eq(why, "BackoffLimitExceeded");
    cr_assert(!podjob_deadline_exceeded(backoff));
    cr_assert(!podjob_job_failed(complete, why, sizeof(why)));
    cr_assert_str_eq(why, "");
    cr_assert(!podjob_job_failed(not_yet, NULL, 0));
    cJSON_Delete(deadline);
    cJSON_Delete(complete);
    cJSON_Delete(not_yet);
    cJSON_Delete(backoff);
}

Test(podjob, owner_by_controller_reference_or_annotation)
{
    cJSON *ref =
        parse("{\"metadata\":{\"name\":\"b--copy\",\"namespace\":\"ns\","
              "\"ownerReferences\":[{\"kind\":\"Other\",\"name\":\"o\",\"uid\":\"u0\"},"
              "{\"kind\":\"EtcdBackup\",\"name\":\"b\",\"uid\":\"u1\","
              "\"controller\":true}],\"annotations\":{\"" PODJOB_ANN_OWNER_UID "\":\"u2\"}}}");
    cJSON *ann =
        parse("{\"metadata\":{\"name\":\"b--delete-copy\",\"namespace\":\"ns\","
              "\"ownerReferences\":[{\"kind\":\"Other\",\"name\":\"o\",\"uid\":\"u0\","
              "\"controller\":false}],\"annotations\":{\"" PODJOB_ANN_OWNER_UID "\":\"u2\"}}}");
    cJSON *none = parse("{\"metadata\":{\"name\":\"b--copy\",\"namespace\":\"ns\"}}");
    char msg[256];

    cr_assert_str_eq(podjob_owner_uid(ref), "u1", "the controller reference wins");
    cr_assert(podjob_owned(ref, "u1"));
    cr_assert(!podjob_owned(ref, "u0"), "a reference that is not the controller's");
    cr_assert(!podjob_owned(ref, "u2"));
    cr_assert_str_eq(podjob_owner_uid(ann), "u2");
    cr_assert(podjob_owned(ann, "u2"));
    cr_assert_null(podjob_owner_uid(none));
    cr_assert(!podjob_owned(none, ""));
    cr_assert(!podjob_owned(none, NULL));
    cr_assert(!podjob_owned(ann, ""));
    podjob_foreign(ref, msg, sizeof(msg));
    cr_assert_str_eq(msg,
                     "Job ns/b--copy exists and is not ours: its owner is EtcdBackup b (uid u1)");
    podjob_foreign(ann, msg, sizeof(msg));
    cr_assert_str_eq(msg, "Job ns/b--delete-copy exists and is not ours: it belongs to uid u2");
    podjob_foreign(none, msg, sizeof(msg));
    cr_assert_str_eq(msg, "Job ns/b--copy exists and is not ours: it has no owner");
    cJSON_Delete(ref);
    cJSON_Delete(ann);
    cJSON_Delete(none);
}
