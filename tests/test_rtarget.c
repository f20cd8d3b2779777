/* rtarget: the one rule for an EtcdRestore's target store, webhook and controller alike. */
#include <stddef.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/rtarget.h"

struct row {
    const char *restore, *etcd_store, *source;
    int etcd_known;
    enum rtarget_from want;
    const char *provider, *endpoint;
};

#define TGT_OWN  "\"target\":{\"store\":{\"provider\":\"ABS\",\"container\":\"c\"}}"
#define TGT_NONE "\"target\":{\"store\":{\"container\":\"c\",\"endpointOverride\":\"x\"}}"
#define TMPL_S3 \
    "\"etcdTemplate\":{\"backup\":{\"store\":{\"provider\":\"S3\",\"endpointOverride\":\"e\"}}}"
#define TMPL_NO "\"etcdTemplate\":{\"backup\":{}}"
#define ETCD    "{\"provider\":\"Local\",\"container\":\"c\"}"
#define SRC     "{\"provider\":\"GCS\",\"container\":\"s\",\"endpointOverride\":\"g\"}"

static const struct row rows[] = {
    { "{\"spec\":{" TGT_OWN "," TMPL_S3 "}}", ETCD, SRC, 1, RTARGET_OWN, "ABS", NULL },
    { "{\"spec\":{" TGT_NONE "," TMPL_S3 "}}", ETCD, SRC, 1, RTARGET_TEMPLATE, "S3", "e" },
    /* a template without a store: the source store, never the live Etcd's it replaces */
    { "{\"spec\":{" TGT_NONE "," TMPL_NO "}}", ETCD, SRC, 1, RTARGET_SOURCE, "GCS", "g" },
    { "{\"spec\":{" TGT_NONE "}}", ETCD, SRC, 1, RTARGET_ETCD, "Local", NULL },
    { "{\"spec\":{" TGT_NONE "}}", NULL, SRC, 1, RTARGET_SOURCE, "GCS", "g" },
    { "{\"spec\":{" TGT_NONE "}}", NULL, SRC, 0, RTARGET_UNKNOWN, NULL, NULL },
    { "{\"spec\":{" TGT_NONE "," TMPL_NO "}}", NULL, NULL, 0, RTARGET_UNKNOWN, NULL, NULL },
    { "{\"spec\":{\"target\":{\"store\":{\"provider\":\"\"}}}}", NULL, SRC, 1, RTARGET_SOURCE,
      "GCS", "g" },
    { "[]", NULL, NULL, 1, RTARGET_UNKNOWN, NULL, NULL },
};

static int str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

Test(rtarget, rule)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        cJSON *r = cJSON_Parse(rows[i].restore);
        cJSON *e = rows[i].etcd_store ? cJSON_Parse(rows[i].etcd_store) : NULL;
        cJSON *s = rows[i].source ? cJSON_Parse(rows[i].source) : NULL;
        struct rtarget t;
        enum rtarget_from f;

        cr_assert_not_null(r, "row %zu", i);
        f = rtarget_resolve(r, e, rows[i].etcd_known, s, &t);
        cr_expect_eq(f, rows[i].want, "row %zu: %s, want %s", i, rtarget_from_str(f),
                     rtarget_from_str(rows[i].want));
        cr_expect(str_eq(t.provider, rows[i].provider), "row %zu: provider %s", i,
                  t.provider ? t.provider : "(null)");
        cr_expect(str_eq(t.endpoint, rows[i].endpoint), "row %zu: endpoint %s", i,
                  t.endpoint ? t.endpoint : "(null)");
        cJSON_Delete(r);
        cJSON_Delete(e);
        cJSON_Delete(s);
    }
}

/* A restore claims its target until Completed, and once Failed only when its copy started. */
Test(rtarget, claims)
{
    static const struct {
        const char *restore;
        int want;
    } claim_rows[] = {
        { "{}", 1 },
        { "{\"status\":{\"phase\":\"Pending\"}}", 1 },
        { "{\"status\":{\"phase\":\"Copying\",\"jobName\":\"r--restore\"}}", 1 },
        { "{\"status\":{\"phase\":\"Creating\",\"jobName\":\"r--restore\"}}", 1 },
        { "{\"status\":{\"phase\":\"Completed\",\"jobName\":\"r--restore\"}}", 0 },
        { "{\"status\":{\"phase\":\"Failed\"}}", 0 },
        { "{\"status\":{\"phase\":\"Failed\",\"jobName\":\"\"}}", 0 },
        { "{\"status\":{\"phase\":\"Failed\",\"jobName\":\"r--restore\"}}", 1 },
        { "{\"status\":{\"phase\":\"Failed\",\"jobName\":7}}", 0 },
    };

    for (size_t i = 0; i < sizeof(claim_rows) / sizeof(claim_rows[0]); i++) {
        cJSON *r = cJSON_Parse(claim_rows[i].restore);

        cr_assert_not_null(r, "row %zu", i);
        cr_expect_eq(rtarget_claims(r), claim_rows[i].want, "row %zu: %s", i,
                     claim_rows[i].restore);
        cJSON_Delete(r);
    }
}
