/* erd_sum: the summary of warden-snapshot verify and the verdict of a drill's Job and Pod,
 * hostile messages included. */
#include "controller/backups/erd_sum.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tests/support/jsonfix.h"

#define GOOD                                                                                   \
    "{\"restorable\":true,\"prefix\":\"p\",\"snapshots\":3,\"chainLength\":3,\"revision\":61," \
    "\"keys\":45,\"newestSnapshot\":\"p/v2/Incr-1-2-1700000300.gz\",\"newestSnapshotTime\":"   \
    "\"2023-11-14T22:18:20Z\"}"

static struct erd_sum parse(const char *s)
{
    struct erd_sum out;

    erd_sum_parse(s, strlen(s), &out);
    return out;
}

Test(erd_sum, a_summary_is_read_field_by_field)
{
    struct erd_sum s = parse(GOOD);

    cr_expect(s.parsed && s.restorable && s.has_figures);
    cr_expect_eq(s.revision, 61);
    cr_expect_eq(s.keys, 45);
    cr_expect_eq(s.chain_length, 3);
    cr_expect_str_eq(s.newest, "p/v2/Incr-1-2-1700000300.gz");
    cr_expect_str_eq(s.newest_time, "2023-11-14T22:18:20Z");
    cr_expect_not(s.has_restored);
}

Test(erd_sum, hostile_summaries_are_not_taken)
{
    struct erd_sum s;

    cr_expect_not(parse("").parsed);
    cr_expect_not(parse("restorable").parsed);
    cr_expect_not(parse("[true]").parsed);
    cr_expect_not(parse("{\"restorable\":\"true\"}").parsed, "a string is not the boolean");
    s = parse("{\"restorable\":true,\"revision\":-1,\"keys\":1e300}");
    cr_expect(s.parsed);
    cr_expect_not(s.has_figures, "no negative or huge figures");
    s = parse("{\"restorable\":true,\"revision\":1.5,\"keys\":2}");
    cr_expect_not(s.has_figures, "no fractions");
    s = parse("{\"restorable\":false,\"reason\":\"a\\u0001b\\nc\",\"newestSnapshotTime\":\"x\"}");
    cr_expect_str_eq(s.reason, "a?b?c");
    cr_expect_str_eq(s.newest_time, "", "not a time");
    s = parse("{\"error\":\"listing: 403\"}");
    cr_expect_not(s.parsed);
    cr_expect_str_eq(s.reason, "listing: 403");
}

Test(erd_sum, long_strings_are_cut)
{
    char text[3000];
    struct erd_sum s;

    snprintf(text, sizeof(text), "{\"restorable\":false,\"failedObject\":\"%0*d\"}", 2000, 7);
    s = parse(text);
    cr_expect_eq(strlen(s.failed_object), sizeof(s.failed_object) - 1);
}

static cJSON *pod(const char *msg, int code, const char *init_msg, int init_code)
{
    cJSON *p = jsonfix_parse("{\"status\":{}}");
    char text[4096];

    if (msg) {
        cJSON *m = cJSON_CreateString(msg);
        char *q = cJSON_PrintUnformatted(m);

        snprintf(text, sizeof(text),
                 "[{\"name\":\"verify\",\"state\":{\"terminated\":{\"exitCode\":%d,"
                 "\"message\":%s}}}]",
                 code, q);
        cJSON_AddItemToObject(cJSON_GetObjectItem(p, "status"), "containerStatuses",
                              jsonfix_parse(text));
        free(q);
        cJSON_Delete(m);
    }
    if (init_msg) {
        snprintf(text, sizeof(text),
                 "[{\"name\":\"restore\",\"state\":{\"terminated\":{\"exitCode\":%d,"
                 "\"message\":\"%s\"}}}]",
                 init_code, init_msg);
        cJSON_AddItemToObject(cJSON_GetObjectItem(p, "status"), "initContainerStatuses",
                              jsonfix_parse(text));
    }
    return p;
}

Test(erd_sum, verdicts)
{
    cJSON *ok = jsonfix_parse("{\"status\":{\"succeeded\":1}}");
    cJSON *bad = jsonfix_parse("{\"status\":{\"failed\":1}}");
    cJSON *p;
    struct erd_outcome o;

    p = pod("log line\n" GOOD "\n", 0, NULL, 0);
    erd_sum_verdict(ok, p, "", &o);
    cr_expect_eq(o.verdict, ERD_RESTORABLE);
    cr_expect_str_eq(erd_verdict_str(o.verdict), "Restorable");
    /* a restorable summary of a Job that failed contradicts it: the drill proves nothing */
    erd_sum_verdict(bad, p, "BackoffLimitExceeded: x", &o);
    cr_expect_eq(o.verdict, ERD_FAILED);
    cJSON_Delete(p);

    p = pod("{\"restorable\":false,\"failedObject\":\"p/v2/Incr-1\",\"reason\":\"gap\"}", 1, NULL,
            0);
    erd_sum_verdict(bad, p, "BackoffLimitExceeded: x", &o);
    cr_expect_eq(o.verdict, ERD_NOT_RESTORABLE);
    cr_expect_str_eq(o.message, "p/v2/Incr-1: gap");
    cJSON_Delete(p);

    /* the check could not run (exit 3): Failed, not NotRestorable */
    p = pod("{\"error\":\"listing: 403\"}", 3, NULL, 0);
    erd_sum_verdict(bad, p, "BackoffLimitExceeded: x", &o);
    cr_expect_eq(o.verdict, ERD_FAILED);
    cr_expect(strstr(o.message, "BackoffLimitExceeded") != NULL, "%s", o.message);
    cJSON_Delete(p);

    /* the real restore refused the chain: NotRestorable with its last line */
    p = pod(NULL, 0, "line 1\\nFATAL failed to restore: snapshot missing hash", 1);
    erd_sum_verdict(bad, p, "BackoffLimitExceeded: x", &o);
    cr_expect_eq(o.verdict, ERD_NOT_RESTORABLE);
    cr_expect_str_eq(o.message,
                     "etcdbrctl restore exited with 1: FATAL failed to restore: snapshot missing "
                     "hash");
    cJSON_Delete(p);

    /* no Pod (the deadline) */
    erd_sum_verdict(bad, NULL, "DeadlineExceeded: Job was active longer than specified", &o);
    cr_expect_eq(o.verdict, ERD_FAILED);
    cr_expect(strstr(o.message, "DeadlineExceeded") != NULL);
    cJSON_Delete(ok);
    cJSON_Delete(bad);
}
