/*
 * The schedules of the chart's CRDs (EtcdBackupSchedule spec.schedule,
 * ExtendFullSnapshotImmutabilityTask spec.config.schedule) are checked at
 * admission by their x-kubernetes-validations rule, on kube-sim with the
 * chart's CRDs applied: typos are refused with the rule's message, and the
 * rule never refuses a schedule the controller's parser (controller/core/cron)
 * takes - shown on a list of valid schedules and on random strings drawn
 * from cron's alphabet (the rule may let through what only the parser sees
 * wrong, such as a range that ends before it begins: the controller's
 * InvalidSchedule condition remains for those).
 */
#include <criterion/criterion.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "controller/core/cron.h"
#include "tests/kube-sim/goregex.h"
#include "tests/support/cfix.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimfix.h"

static struct cfix fx;

static void setup(void)
{
    cfix_start(&fx, NULL);
}

static void teardown(void)
{
    cfix_stop(&fx);
}

TestSuite(crd_cron, .init = setup, .fini = teardown);

static const char *const VALID[] = {
    "* * * * *",
    "0 0 * * *",
    "*/5 * * * *",
    "0 */2 1-15 * MON-FRI",
    "30 4 1,15 * 5",
    "0 0 1 jan,Jul ?",
    "59 23 31 12 6",
    "00 05 09 02 0",
    "1-59/7 0-23/3 ? JAN-DEC/2 sun-sat",
    "  0 0 * * *  ",
    "0\t0\t*\t*\t*",
    "@yearly",
    "@annually",
    "@monthly",
    "@weekly",
    "@daily",
    "@midnight",
    "@hourly",
    " @daily ",
    "5/15 * * * *",
    "0 0 30 2 *",
    "0 0 * * SUN,sat",
    "07 7 7 7 0-6",
};

static const char *const TYPOS[] = {
    "daily",          "every night", "@every 1h",    "* * * *",          "* * * * * *",
    "61 * * * *",     "0 24 * * *",  "0 0 32 * *",   "0 0 0 * *",        "0 0 * 13 *",
    "0 0 * * 7",      "0 0 * FOO *", "*/0 * * * *",  "TZ=UTC 0 0 * * *", "",
    "0 0 * * MONDAY", "@Daily",      "0,,5 * * * *", "0 0 * * -1",       "1.5 * * * *",
};

/* The regular expression of the schedule's rule in the stored CRD of resource plural. */
static char *rule_re(const char *crd, const char *path)
{
    char url[256], *re;
    const char *rule, *b, *e;
    long code;
    cJSON *o;
    const cJSON *s;

    snprintf(url, sizeof(url), "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/%s", crd);
    o = ksimfix_call(fx.h, "GET", url, NULL, NULL, &code);
    cr_assert_eq(code, 200, "%s", url);
    s = kjson_get(kjson_get(o, "spec.versions")->child, "schema.openAPIV3Schema");
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ".");
        char key[64];

        snprintf(key, sizeof(key), "%.*s", (int)n, p);
        s = kjson_get(kjson_get(s, "properties"), key);
        cr_assert_not_null(s, "%s: no %s", crd, key);
        p += n + (p[n] == '.');
    }
    rule = jsonfix_str(s, "x-kubernetes-validations.0.rule");
    b = strstr(rule, "self.matches(r'");
    cr_assert_not_null(b, "%s %s: rule %s", crd, path, rule);
    b += strlen("self.matches(r'");
    e = strchr(b, '\'');
    cr_assert_not_null(e);
    re = strndup(b, (size_t)(e - b));
    cr_assert_eq(ksim_goregex_match(re, "0 0 * * *"), 1, "kube-sim cannot run %s", re);
    cr_assert_eq(kjson_get(s, "maxLength") ? kjson_get(s, "maxLength")->valueint : 0, CRON_MAX_LEN);
    cJSON_Delete(o);
    return re;
}

/* Whether re (compiled) matches s. */
static int takes(const regex_t *re, const char *s)
{
    return regexec(re, s, 0, NULL, 0) == 0;
}

/* A random value for field f: mostly one that field takes, now and then any. */
static const char *value(int f, unsigned *seed)
{
    static const char *const ok[5][6] = {
        { "0", "5", "7", "30", "59", "00" },    { "0", "7", "12", "23", "05", "1" },
        { "1", "7", "15", "31", "01", "28" },   { "1", "7", "12", "jan", "DEC", "Feb" },
        { "0", "1", "6", "sun", "Sat", "tue" },
    };
    static const char *const any[] = { "24", "32", "60",  "13",  "7",   "0",
                                       "x",  "",   "jan", "sun", "007", "-" };

    if (rand_r(seed) % 8)
        return ok[f % 5][rand_r(seed) % 6];
    return any[rand_r(seed) % (sizeof(any) / sizeof(any[0]))];
}

/* One random element of field f: "*", "?", a value or a range, maybe with a step. */
static void element(int f, char *out, size_t n, unsigned *seed)
{
    static const char *const step[] = { "", "", "", "", "/1", "/5", "/15", "/0", "/", "/x" };
    const char *st = step[rand_r(seed) % (rand_r(seed) % 8 ? 7 : 10)];
    unsigned k = rand_r(seed) % 5;

    if (k == 0)
        snprintf(out, n, "%s%s", rand_r(seed) % 4 ? "*" : "?", st);
    else if (k == 1) {
        const char *lo = value(f, seed);

        snprintf(out, n, "%s-%s%s", lo, value(f, seed), st);
    } else
        snprintf(out, n, "%s%s", value(f, seed), st);
}

static void expect_agreement(const char *pattern, const char *what)
{
    struct kerr_info err;
    struct cron c;
    regex_t re;
    unsigned seed = 20261128;
    int valid = 0, through = 0;

    cr_assert_eq(ksim_goregex_compile(pattern, &re), 0, "kube-sim cannot run %s", pattern);
    for (size_t i = 0; i < sizeof(VALID) / sizeof(VALID[0]); i++) {
        cr_assert_eq(cron_parse(VALID[i], &c, &err), KERR_OK, "%s: %s", VALID[i], err.msg);
        cr_expect(takes(&re, VALID[i]), "%s refuses \"%s\"", what, VALID[i]);
    }
    for (size_t i = 0; i < sizeof(TYPOS) / sizeof(TYPOS[0]); i++) {
        cr_assert_neq(cron_parse(TYPOS[i], &c, &err), KERR_OK, "%s", TYPOS[i]);
        cr_expect(!takes(&re, TYPOS[i]), "%s takes \"%s\"", what, TYPOS[i]);
    }
    /* five fields (now and then four or six) of one to three elements each */
    for (int n = 0; n < 20000; n++) {
        char s[256] = "", e[32];
        int fields = 5 + (rand_r(&seed) % 9 == 0) - (rand_r(&seed) % 9 == 0), w = 0;

        for (int f = 0; f < fields; f++) {
            int k = 1 + (int)(rand_r(&seed) % 3);

            for (int t = 0; t < k; t++) {
                element(f, e, sizeof(e), &seed);
                w += snprintf(s + w, sizeof(s) - (size_t)w, "%s%s", t ? "," : f ? " " : "", e);
            }
        }
        if (cron_parse(s, &c, &err) == KERR_OK) {
            valid++;
            cr_assert(takes(&re, s), "%s refuses \"%s\", which cron takes", what, s);
        } else if (takes(&re, s)) {
            through++;
        }
    }
    regfree(&re);
    cr_assert_gt(valid, 200, "too few valid draws (%d) to say anything", valid);
    cr_log_info("%s: %d valid draws taken; %d invalid let through to the controller", what, valid,
                through);
}

Test(crd_cron, the_rules_never_refuse_a_schedule_cron_takes)
{
    char *a = rule_re("etcdbackupschedules.etcd-warden.io", "spec.schedule");
    char *b = rule_re("extendfullsnapshotimmutabilitytasks.etcd-warden.io", "spec.config.schedule");

    cr_assert_str_eq(a, b, "the two schedules take the same expressions");
    expect_agreement(a, "EtcdBackupSchedule's rule");
    free(a);
    free(b);
}

static long create_schedule(const char *name, const char *cron, char **message)
{
    char text[1024];
    long code;
    cJSON *got;

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdBackupSchedule\","
             "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"schedule\":\"%s\",\"backupTemplate\":"
             "{\"etcdName\":\"main\",\"destination\":{\"provider\":\"S3\",\"container\":\"c\","
             "\"prefix\":\"p\",\"secretRef\":{\"name\":\"s\"}}}}}",
             name, cron);
    got = ksimfix_call(fx.h, "POST",
                       "/apis/etcd-warden.io/v1alpha1/namespaces/ns1/etcdbackupschedules", NULL,
                       text, &code);
    *message = strdup(jsonfix_str(got, "message"));
    cJSON_Delete(got);
    return code;
}

Test(crd_cron, a_typo_is_refused_at_admission_with_a_readable_message)
{
    char *msg;

    cr_assert_eq(create_schedule("typo", "daily", &msg), 422, "%s", msg);
    cr_assert_str_eq(msg, "EtcdBackupSchedule.etcd-warden.io \"typo\" is invalid: spec.schedule: "
                          "Invalid value: \"string\": must be a 5-field cron expression (minute "
                          "0-59, hour 0-23, day of month 1-31, month 1-12 or JAN-DEC, day of "
                          "week 0-6 or SUN-SAT; each a list of *, ?, values or ranges, each with "
                          "an optional /step) or one of @yearly, @annually, @monthly, @weekly, "
                          "@daily, @midnight, @hourly");
    free(msg);
    cr_assert_eq(create_schedule("month13", "0 0 1 13 *", &msg), 422, "%s", msg);
    free(msg);
    cr_assert_eq(create_schedule("ok", "0 3 * * MON-FRI", &msg), 201, "%s", msg);
    free(msg);
}
