/*
 * Tests of common/hibguard's stamps of a sleep (issue 30): the StatefulSet a final snapshot
 * was checked against holds only while its generation is the stamp's or the next (the one
 * scale to 0), never after a scale-up and down; the store stamp names the Secret the store
 * reads (its secretRef and a digest of its keys that say where the sidecar writes), so a
 * store moved through the Secret changes it while a rotated secret key does not.
 */
#include "common/hibguard.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static cJSON *sts_at(const char *uid, int generation, int replicas)
{
    char buf[256];

    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"uid\":\"%s\",\"generation\":%d},\"spec\":{\"replicas\":%d}}", uid,
             generation, replicas);
    return cJSON_Parse(buf);
}

static int slept(const char *stamp, const char *uid, int generation, int replicas)
{
    cJSON *sts = sts_at(uid, generation, replicas);
    int ok = hibguard_checked_slept(stamp, sts);

    cJSON_Delete(sts);
    return ok;
}

Test(hibstamp, the_scale_to_zero_on_the_snapshot_and_nothing_after)
{
    cr_expect(slept("uid-s/7", "uid-s", 8, 0), "warden-controller's scale to 0 (the next)");
    cr_expect(slept("uid-s/7", "uid-s", 7, 0), "at 0 already when checked, unchanged since");
    cr_expect_not(slept("uid-s/7", "uid-s", 9, 0), "scaled up and down again since");
    cr_expect_not(slept("uid-s/7", "uid-s", 10, 0), "scaled up and down again since");
    cr_expect_not(slept("uid-s/7", "uid-s", 8, 3), "scaled up since");
    cr_expect_not(slept("uid-s/7", "uid-s", 7, 3), "not scaled down yet");
    cr_expect_not(slept("uid-s/7", "uid-s", 6, 0), "an earlier generation: not this object");
    cr_expect_not(slept("uid-s/7", "uid-t", 8, 0), "another StatefulSet (re-created)");
    cr_expect_not(slept("uid-s/9223372036854775807", "uid-s", 8, 0));
    cr_expect_not(slept(NULL, "uid-s", 8, 0), "no stamp");
    cr_expect_not(slept("uid-s", "uid-s", 8, 0), "not a stamp");
    cr_expect_not(hibguard_checked_slept("uid-s/7", NULL));
}

static int next(const char *stamp, const char *uid, int generation, int replicas)
{
    cJSON *sts = sts_at(uid, generation, replicas);
    int ok = hibguard_checked_next(stamp, sts);

    cJSON_Delete(sts);
    return ok;
}

/* issue 30: etcd-druid rolls the template of a sleeping StatefulSet (one change at 0) */
Test(hibstamp, one_change_at_zero_is_no_wake_and_moves_the_stamp)
{
    cr_expect(next("uid-s/8", "uid-s", 9, 0), "one change at 0 after the scale to 0");
    cr_expect(next("uid-s/7", "uid-s", 8, 0), "the scale to 0 itself");
    cr_expect_not(next("uid-s/8", "uid-s", 8, 0), "the stamp's own generation: nothing to move");
    cr_expect_not(next("uid-s/8", "uid-s", 10, 0), "two changes: a scale-up and down may hide");
    cr_expect_not(next("uid-s/8", "uid-s", 9, 3), "one change, to 3: a wake");
    cr_expect_not(next("uid-s/8", "uid-t", 9, 0), "re-created");
    cr_expect_not(next(NULL, "uid-s", 9, 0), "no stamp");
    cr_expect_not(next("uid-s/9223372036854775807", "uid-s", 8, 0));
    /* moved (hibguard_checked_format), the next template change is one generation away again */
    {
        cJSON *sts = sts_at("uid-s", 9, 0);
        char moved[HIBGUARD_CHECKED_MAX];

        cr_assert_eq(hibguard_checked_format(sts, moved, sizeof(moved), NULL), KERR_OK);
        cr_expect_str_eq(moved, "uid-s/9");
        cr_expect(slept(moved, "uid-s", 10, 0));
        cr_expect(next(moved, "uid-s", 10, 0));
        cr_expect_not(slept(moved, "uid-s", 11, 0), "up and down again since the move");
        cJSON_Delete(sts);
    }
}

/* Pods counted in the status ran after the scale to 0, whatever the generation says. */
Test(hibstamp, pods_in_the_status_are_a_wake)
{
    static const char *const status[] = { "{\"replicas\":2}", "{\"readyReplicas\":1}",
                                          "{\"replicas\":\"2\"}", "{\"replicas\":-1}" };
    char buf[256];
    cJSON *s;

    for (size_t i = 0; i < sizeof(status) / sizeof(status[0]); i++) {
        snprintf(buf, sizeof(buf),
                 "{\"metadata\":{\"uid\":\"u\",\"generation\":8},\"spec\":{\"replicas\":0},"
                 "\"status\":%s}",
                 status[i]);
        s = cJSON_Parse(buf);
        cr_assert_not_null(s);
        cr_expect_not(hibguard_checked_slept("u/8", s), "%s", status[i]);
        cr_expect_not(hibguard_checked_next("u/7", s), "%s", status[i]);
        cJSON_Delete(s);
    }
    s = cJSON_Parse("{\"metadata\":{\"uid\":\"u\",\"generation\":8},\"spec\":{"
                    "\"replicas\":0},\"status\":{\"replicas\":0,\"observedGeneration\":8,"
                    "\"currentRevision\":\"r2\",\"updateRevision\":\"r2\"}}");
    cr_expect(hibguard_checked_slept("u/8", s), "a settled status at 0");
    cr_expect(hibguard_checked_next("u/7", s), "a settled status at 0, new revision");
    cJSON_Delete(s);
}

Test(hibstamp, replicas_and_generation_that_are_not_numbers)
{
    cJSON *s = cJSON_Parse("{\"metadata\":{\"uid\":\"u\",\"generation\":8},\"spec\":{}}");

    cr_expect_not(hibguard_checked_slept("u/7", s), "spec.replicas absent is 1");
    cJSON_Delete(s);
    s = cJSON_Parse(
        "{\"metadata\":{\"uid\":\"u\",\"generation\":\"8\"},\"spec\":{\"replicas\":0}}");
    cr_expect_not(hibguard_checked_slept("u/7", s));
    cJSON_Delete(s);
    s = cJSON_Parse("{\"metadata\":{\"uid\":\"u\",\"generation\":8},\"spec\":{\"replicas\":0.5}}");
    cr_expect_not(hibguard_checked_slept("u/7", s));
    cJSON_Delete(s);
}

#define ETCD_REF(ref)                                                                       \
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\"},\"spec\":{\"backup\":{" \
    "\"store\":{\"provider\":\"S3\",\"container\":\"b\",\"prefix\":\"p\"" ref "}}}}"
#define REF ",\"secretRef\":{\"name\":\"etcd-backup\"}"
/* aHR0cHM6Ly9taW5pby1hLmV4YW1wbGU6OTAwMA== is https://minio-a.example:9000 */
#define SECRET(data) "{\"metadata\":{\"name\":\"etcd-backup\"},\"data\":{" data "}}"
#define EP_A         "\"endpoint\":\"aHR0cHM6Ly9taW5pby1hLmV4YW1wbGU6OTAwMA==\""
#define EP_B         "\"endpoint\":\"aHR0cHM6Ly9taW5pby1iLmV4YW1wbGU6OTAwMA==\""
#define KEYS         "\"accessKeyID\":\"QUtJQQ==\",\"secretAccessKey\":\"czE=\""

/* The stamp of Etcd text etcd whose Secret is text secret (NULL: absent) into out. */
static enum kerr stamp_of(const char *etcd, const char *secret, char out[HIBGUARD_STAMP_MAX])
{
    cJSON *e = cJSON_Parse(etcd), *s = secret ? cJSON_Parse(secret) : NULL;
    enum kerr rc;

    cr_assert_not_null(e);
    cr_assert(!secret || s);
    rc = hibguard_store_stamp(e, s, out);
    cJSON_Delete(e);
    cJSON_Delete(s);
    return rc;
}

static int is_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr("0123456789abcdef", s[i]))
            return 0;
    return 1;
}

Test(hibstamp, the_store_stamp_names_its_secret)
{
    char a[HIBGUARD_STAMP_MAX], b[HIBGUARD_STAMP_MAX], store[HIBGUARD_STORE_LEN + 1];
    cJSON *e = cJSON_Parse(ETCD_REF(REF));

    cr_assert_eq(hibguard_store_digest(e, store), KERR_OK);
    cr_assert_eq(stamp_of(ETCD_REF(REF), SECRET(EP_A "," KEYS), a), KERR_OK);
    /* "<store>/<secretRef>/<secret>" */
    cr_assert_eq(strlen(a), 2 * HIBGUARD_STORE_LEN + strlen("/etcd-backup/"), "%s", a);
    cr_expect(strncmp(a, store, HIBGUARD_STORE_LEN) == 0, "%s", a);
    cr_expect(strncmp(a + HIBGUARD_STORE_LEN, "/etcd-backup/", 13) == 0, "%s", a);
    cr_expect(is_hex(a + HIBGUARD_STORE_LEN + 13, HIBGUARD_STORE_LEN), "%s", a);
    /* the endpoint moved in the Secret: another stamp */
    cr_assert_eq(stamp_of(ETCD_REF(REF), SECRET(EP_B "," KEYS), b), KERR_OK);
    cr_expect_str_neq(a, b);
    /* the secret key rotated, the keys in another order: the same */
    cr_assert_eq(stamp_of(ETCD_REF(REF),
                          SECRET("\"secretAccessKey\":\"czI=\",\"accessKeyID\":\"QUtJQQ==\"," EP_A),
                          b),
                 KERR_OK);
    cr_expect_str_eq(a, b);
    /* another access key ID (another tenant of the service): another stamp */
    cr_assert_eq(stamp_of(ETCD_REF(REF),
                          SECRET(EP_A ",\"accessKeyID\":\"QUtJQg==\",\"secretAccessKey\":\"czE=\""),
                          b),
                 KERR_OK);
    cr_expect_str_neq(a, b);
    /* a key nobody knows yet counts (fail closed) */
    cr_assert_eq(stamp_of(ETCD_REF(REF), SECRET(EP_A "," KEYS ",\"newField\":\"eA==\""), b),
                 KERR_OK);
    cr_expect_str_neq(a, b);
    /* the Secret absent, no Secret named */
    cr_assert_eq(stamp_of(ETCD_REF(REF), NULL, b), KERR_OK);
    cr_expect(strcmp(b + HIBGUARD_STORE_LEN, "/etcd-backup/-") == 0, "%s", b);
    cr_assert_eq(stamp_of(ETCD_REF(""), SECRET(EP_A), b), KERR_OK);
    cr_expect(strcmp(b + HIBGUARD_STORE_LEN, "/-/-") == 0, "%s", b);
    /* another secretRef with the same data: another stamp */
    cr_assert_eq(
        stamp_of(ETCD_REF(",\"secretRef\":{\"name\":\"etcd-backup-b\"}"), SECRET(EP_A "," KEYS), b),
        KERR_OK);
    cr_expect_str_neq(a, b);
    /* an earlier version's stamp (the store digest alone) is never one */
    cr_expect_str_neq(a, store);
    cJSON_Delete(e);
}

Test(hibstamp, a_secret_ref_that_names_no_object)
{
    char out[HIBGUARD_STAMP_MAX], big[400];

    cr_expect_eq(stamp_of(ETCD_REF(",\"secretRef\":{\"name\":\"\"}"), NULL, out), KERR_INVAL);
    cr_expect_eq(stamp_of(ETCD_REF(",\"secretRef\":{\"name\":\"a/b\"}"), NULL, out), KERR_INVAL);
    cr_expect_eq(stamp_of(ETCD_REF(",\"secretRef\":{\"name\":7}"), NULL, out), KERR_INVAL);
    cr_expect_eq(stamp_of(ETCD_REF(",\"secretRef\":{}"), NULL, out), KERR_INVAL);
    cr_expect_str_eq(out, "");
    memset(big, 'a', 254);
    big[254] = '\0';
    {
        char etcd[800];

        snprintf(etcd, sizeof(etcd), ETCD_REF(",\"secretRef\":{\"name\":\"%s\"}"), big);
        cr_expect_eq(stamp_of(etcd, NULL, out), KERR_INVAL, "254 bytes");
        big[253] = '\0';
        snprintf(etcd, sizeof(etcd), ETCD_REF(",\"secretRef\":{\"name\":\"%s\"}"), big);
        cr_expect_eq(stamp_of(etcd, NULL, out), KERR_OK, "253 bytes");
        cr_expect_lt(strlen(out), HIBGUARD_STAMP_MAX);
    }
    cr_expect_eq(stamp_of("{\"spec\":{}}", NULL, out), KERR_NOTFOUND, "no store");
}

Test(hibstamp, hostile_secrets)
{
    char d[HIBGUARD_STORE_LEN + 1], e[HIBGUARD_STORE_LEN + 1];
    cJSON *s = cJSON_Parse("{\"data\":[1,2]}"), *t = cJSON_Parse("{}");

    cr_assert_eq(hibguard_secret_digest(s, d), KERR_OK);
    cr_assert_eq(hibguard_secret_digest(t, e), KERR_OK);
    cr_expect_str_eq(d, e, "data that is no object: no keys");
    cJSON_Delete(s);
    s = cJSON_Parse("{\"data\":{\"endpoint\":{\"x\":null},\"region\":3}}");
    cr_assert_eq(hibguard_secret_digest(s, d), KERR_OK);
    cr_expect_str_neq(d, e, "values of any type count");
    cr_expect_eq(strlen(d), HIBGUARD_STORE_LEN);
    cr_assert_eq(hibguard_secret_digest(NULL, e), KERR_OK);
    cJSON_Delete(s);
    cJSON_Delete(t);
}
