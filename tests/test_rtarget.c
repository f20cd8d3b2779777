/* rtarget: the one rule for an EtcdRestore's target store, webhook and controller alike. */
#include <stddef.h>
#include <stdio.h>
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

/* The sources found as warden-webhook finds them at admission: the source EtcdBackup by
 * spec.source.backupName (its etcdName and destination), the source Etcd by name, both in the
 * restore's namespace; a source Etcd named and not read tells nothing. */
Test(rtarget, resolve_in_lists)
{
    cJSON *etcds =
        cJSON_Parse("[{\"metadata\":{\"namespace\":\"t\",\"name\":\"main\"},\"spec\":{\"backup\":{"
                    "\"store\":{\"provider\":\"Local\",\"container\":\"c\"}}}},"
                    "{\"metadata\":{\"namespace\":\"u\",\"name\":\"other\"},\"spec\":{\"backup\":{"
                    "\"store\":{\"provider\":\"ABS\",\"container\":\"c\"}}}}]");
    cJSON *backups = cJSON_Parse(
        "[{\"metadata\":{\"namespace\":\"t\",\"name\":\"b\"},\"spec\":{\"etcdName\":\"gone\","
        "\"destination\":{\"provider\":\"GCS\",\"container\":\"s\",\"endpointOverride\":"
        "\"g\"}}},{\"metadata\":{\"namespace\":\"t\",\"name\":\"b2\"},\"spec\":{\"etcdName\":"
        "\"main\",\"destination\":{\"provider\":\"GCS\",\"container\":\"s\"}}}]");
    static const struct {
        const char *restore;
        enum rtarget_from want;
        const char *provider, *endpoint;
    } lrows[] = {
        { "{\"metadata\":{\"namespace\":\"t\"},\"spec\":{" TGT_NONE "," TMPL_S3 "}}",
          RTARGET_TEMPLATE, "S3", "e" },
        { "{\"metadata\":{\"namespace\":\"t\"},\"spec\":{\"source\":{\"etcdName\":\"main\"}"
          "," TGT_NONE "}}",
          RTARGET_ETCD, "Local", NULL },
        /* another namespace's Etcd of that name is not the source */
        { "{\"metadata\":{\"namespace\":\"t\"},\"spec\":{\"source\":{\"etcdName\":\"other\"}"
          "," TGT_NONE "}}",
          RTARGET_UNKNOWN, NULL, NULL },
        { "{\"metadata\":{\"namespace\":\"u\"},\"spec\":{\"source\":{\"etcdName\":\"other\"}"
          "," TGT_NONE "}}",
          RTARGET_ETCD, "ABS", NULL },
        /* the backup's Etcd is gone: named and not read */
        { "{\"metadata\":{\"namespace\":\"t\"},\"spec\":{\"source\":{\"backupName\":\"b\"}"
          "," TGT_NONE "}}",
          RTARGET_UNKNOWN, NULL, NULL },
        { "{\"metadata\":{\"namespace\":\"t\"},\"spec\":{\"source\":{\"backupName\":\"b2\"}"
          "," TGT_NONE "}}",
          RTARGET_ETCD, "Local", NULL },
        { "{\"metadata\":{\"namespace\":\"t\"},\"spec\":{\"source\":{\"backupName\":\"b\"}"
          "," TGT_NONE "," TMPL_NO "}}",
          RTARGET_SOURCE, "GCS", "g" },
        /* a backup not read: no source store to take */
        { "{\"metadata\":{\"namespace\":\"t\"},\"spec\":{\"source\":{\"backupName\":\"x\"}"
          "," TGT_NONE "," TMPL_NO "}}",
          RTARGET_UNKNOWN, NULL, NULL },
    };

    cr_assert_not_null(etcds);
    cr_assert_not_null(backups);
    for (size_t i = 0; i < sizeof(lrows) / sizeof(lrows[0]); i++) {
        cJSON *r = cJSON_Parse(lrows[i].restore);
        struct rtarget t;
        enum rtarget_from f;

        cr_assert_not_null(r, "row %zu", i);
        f = rtarget_resolve_in(r, etcds, backups, &t);
        cr_expect_eq(f, lrows[i].want, "row %zu: %s, want %s", i, rtarget_from_str(f),
                     rtarget_from_str(lrows[i].want));
        cr_expect(str_eq(t.provider, lrows[i].provider), "row %zu: provider %s", i,
                  t.provider ? t.provider : "(null)");
        cr_expect(str_eq(t.endpoint, lrows[i].endpoint), "row %zu: endpoint %s", i,
                  t.endpoint ? t.endpoint : "(null)");
        cJSON_Delete(r);
    }
    cr_expect_eq(
        rtarget_resolve_in(cJSON_GetArrayItem(etcds, 0), NULL, NULL, &(struct rtarget){ 0 }),
        RTARGET_UNKNOWN, "not a restore: nothing tells");
    cJSON_Delete(etcds);
    cJSON_Delete(backups);
}

/* The Secret that places a Local target: target's, template's, then the source's. */
Test(rtarget, local_secret)
{
    cJSON *etcds = cJSON_Parse("[{\"metadata\":{\"namespace\":\"t\",\"name\":\"main\"},\"spec\":{"
                               "\"backup\":{\"store\":{\"secretRef\":{\"name\":\"es\"}}}}}]");
    cJSON *backups =
        cJSON_Parse("[{\"metadata\":{\"namespace\":\"t\",\"name\":\"b\"},\"spec\":{\"etcdName\":"
                    "\"main\",\"destination\":{\"secretRef\":{\"name\":\"bs\"}}}}]");
    static const struct {
        const char *spec;
        int told;
        const char *secret;
    } srows[] = {
        { "\"target\":{\"store\":{\"secretRef\":{\"name\":\"ts\"}}},\"etcdTemplate\":{\"backup\":"
          "{\"store\":{\"secretRef\":{\"name\":\"ms\"}}}}",
          1, "ts" },
        { "\"etcdTemplate\":{\"backup\":{\"store\":{\"secretRef\":{\"name\":\"ms\"}}}},"
          "\"source\":{\"store\":{\"secretRef\":{\"name\":\"ss\"}}}",
          1, "ms" },
        { "\"source\":{\"store\":{\"secretRef\":{\"name\":\"ss\"}},\"etcdName\":\"main\"}", 1,
          "ss" },
        { "\"source\":{\"store\":{}}", 1, NULL },
        { "\"source\":{\"backupName\":\"b\"}", 1, "bs" },
        { "\"source\":{\"backupName\":\"x\"}", 0, NULL },
        { "\"source\":{\"etcdName\":\"main\"}", 1, "es" },
        { "\"source\":{\"etcdName\":\"gone\"}", 0, NULL },
        { "\"source\":{}", 0, NULL },
    };
    char text[1024];

    for (size_t i = 0; i < sizeof(srows) / sizeof(srows[0]); i++) {
        const char *secret = "unset";
        cJSON *r;

        snprintf(text, sizeof(text), "{\"metadata\":{\"namespace\":\"t\"},\"spec\":{%s}}",
                 srows[i].spec);
        r = cJSON_Parse(text);
        cr_assert_not_null(r, "%s", text);
        cr_assert_eq(rtarget_local_secret_in(r, etcds, backups, &secret), srows[i].told, "%zu", i);
        if (srows[i].told && srows[i].secret)
            cr_assert_str_eq(secret, srows[i].secret, "%zu", i);
        else if (srows[i].told)
            cr_assert_null(secret, "%zu", i);
        cJSON_Delete(r);
    }
    cJSON_Delete(etcds);
    cJSON_Delete(backups);
}
