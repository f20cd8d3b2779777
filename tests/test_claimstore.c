/*
 * Tests of a hibernated Etcd's member claims and the Secret its backup store reads (issue 30,
 * webhook/claimguard): the final-snapshot-store stamp names spec.backup.store.secretRef and a
 * digest of that Secret's location keys, written when the final snapshot was checked; a claim
 * goes only while the stamp made afresh (the Secret read from the API server) is the same. A
 * store moved through the Secret (its endpoint edited, the secretRef pointed at another) keeps
 * the claims; a rotated secret key does not; a Secret that cannot be read is a 500.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hibguard.h"
#include "common/kjson.h"
#include "tests/support/guardfix.h"
#include "webhook/wh_dispatch.h"

#define CUT "2026-11-17T10:00:00Z"
/* https://minio-a.example:9000 and https://minio-b.example:9000, base64 */
#define EP_A "aHR0cHM6Ly9taW5pby1hLmV4YW1wbGU6OTAwMA=="
#define EP_B "aHR0cHM6Ly9taW5pby1iLmV4YW1wbGU6OTAwMA=="

/* Secret shoot/name with endpoint ep and secret key key. */
static cJSON *secret(const char *name, const char *ep, const char *key)
{
    char buf[512];

    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"%s\"},\"data\":{\"endpoint\":"
             "\"%s\",\"region\":\"ZXUtd2VzdC0x\",\"accessKeyID\":\"QUtJQQ==\","
             "\"secretAccessKey\":\"%s\"}}",
             name, ep, key);
    return cJSON_Parse(buf);
}

/* Etcd shoot/etcd-main, hibernated on a checked final snapshot, its store's Secret ref. */
static cJSON *etcd(const char *ref)
{
    char buf[1024];

    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"uid\":\"uid-e\","
             "\"annotations\":{\"etcd-warden.io/hibernation-phase\":\"Hibernated\","
             "\"etcd-warden.io/traffic-cut-at\":\"" CUT "\","
             "\"etcd-warden.io/final-snapshot-checked\":\"uid-sts/1\"}},"
             "\"spec\":{\"replicas\":3,\"backup\":{\"store\":{\"container\":\"b\",\"prefix\":"
             "\"p\",\"provider\":\"S3\",\"secretRef\":{\"name\":\"%s\"}}}}}",
             ref);
    return cJSON_Parse(buf);
}

/* e stamped as warden-controller stamps it with the Secret s (NULL: absent). */
static void stamp(cJSON *e, const cJSON *s)
{
    char v[HIBGUARD_STAMP_MAX];

    cr_assert_eq(hibguard_store_stamp(e, s, v), KERR_OK);
    cJSON_AddStringToObject((cJSON *)kjson_get_obj(e, "metadata.annotations"), HIBGUARD_ANN_STORE,
                            v);
}

static const char *const sts_text =
    "[{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"uid\":\"uid-sts\","
    "\"generation\":2,\"creationTimestamp\":\"2026-11-01T00:00:00Z\",\"labels\":{"
    "\"app.kubernetes.io/managed-by\":\"etcd-druid\",\"app.kubernetes.io/part-of\":"
    "\"etcd-main\"}},\"spec\":{\"replicas\":0}}]";
static const char *const task_text =
    "[{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main-final-snapshot-1\","
    "\"creationTimestamp\":\"2026-11-17T10:05:00Z\"},\"spec\":{\"etcdName\":\"etcd-main\","
    "\"config\":{\"onDemandSnapshot\":{\"type\":\"full\"}}},\"status\":{\"state\":"
    "\"Succeeded\"}}]";

static enum kerr secret_down(void *ctx, const char *ns, const char *name, cJSON **obj,
                             struct kerr_info *err)
{
    (void)ctx;
    (void)ns;
    *obj = NULL;
    return kerr_set(err, KERR_FORBIDDEN, "secrets \"%s\" is forbidden", name);
}

enum secret_mode { SECRET_READ, SECRET_DOWN, SECRET_NO_LOOKUP };

/* The DELETE of claim etcd-main-etcd-main-0 by alice, Etcd e (OWNED, consumed), the Secrets
 * of the namespace now secrets (OWNED, consumed). */
static cJSON *decide(cJSON *e, cJSON *secrets, enum secret_mode mode)
{
    static const char body[] =
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
        "\"uid\":\"0000-7777\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":"
        "\"PersistentVolumeClaim\"},\"resource\":{\"group\":\"\",\"version\":\"v1\","
        "\"resource\":\"persistentvolumeclaims\"},\"name\":\"etcd-main-etcd-main-0\","
        "\"namespace\":\"shoot\",\"operation\":\"DELETE\",\"userInfo\":{\"username\":"
        "\"" GUARDFIX_PERSON "\"},\"object\":null,\"oldObject\":{\"metadata\":{\"namespace\":"
        "\"shoot\",\"name\":\"etcd-main-etcd-main-0\"},\"spec\":{}}}}";
    struct protect_config cfg;
    struct lookup_mem mem = { 0 };
    struct lookup lk;
    cJSON *etcds = cJSON_CreateArray(), *sts = cJSON_Parse(sts_text);
    cJSON *tasks = cJSON_Parse(task_text), *none = cJSON_CreateArray(), *doc;

    guardfix_config(&cfg);
    cJSON_AddItemToArray(etcds, e);
    mem.etcds = etcds;
    mem.stses = sts;
    mem.tasks = tasks;
    mem.pods = none;
    mem.pvcs = none;
    mem.secrets = secrets;
    lookup_mem_bind(&mem, &lk);
    if (mode == SECRET_DOWN)
        lk.secret = secret_down;
    if (mode == SECRET_NO_LOOKUP)
        lk.secret = NULL;
    doc = guardfix_dispatch(&cfg, &mem, &lk, WH_HOOK_SCALEGUARD, mode == SECRET_READ, body);
    cJSON_Delete(etcds);
    cJSON_Delete(sts);
    cJSON_Delete(tasks);
    cJSON_Delete(none);
    cJSON_Delete(secrets);
    return doc;
}

static cJSON *list1(cJSON *a)
{
    cJSON *l = cJSON_CreateArray();

    cJSON_AddItemToArray(l, a);
    return l;
}

static int64_t code_of(const cJSON *doc)
{
    int64_t c = 0;

    (void)kjson_get_int64(doc, "response.status.code", &c);
    return c;
}

static void expect(cJSON *doc, const char *title, int allowed, const char *message)
{
    guardfix_expect(doc, title, allowed, message);
    cJSON_Delete(doc);
}

Test(claimstore, the_store_as_stamped_lets_the_claims_go)
{
    cJSON *e = etcd("etcd-backup"), *s = secret("etcd-backup", EP_A, "czE=");

    stamp(e, s);
    expect(decide(e, list1(s), SECRET_READ), "control", 1, "");
}

Test(claimstore, the_endpoint_moved_in_the_secret_keeps_the_claims)
{
    cJSON *e = etcd("etcd-backup"), *s = secret("etcd-backup", EP_A, "czE=");

    stamp(e, s);
    cJSON_Delete(s);
    expect(decide(e, list1(secret("etcd-backup", EP_B, "czE=")), SECRET_READ), "K1", 0,
           "its final snapshot was taken for another backup store than the one it names now");
}

Test(claimstore, the_secret_ref_pointed_at_another_keeps_the_claims)
{
    cJSON *e = etcd("etcd-backup"), *s = secret("etcd-backup", EP_A, "czE="), *l = list1(s);

    stamp(e, s);
    cJSON_AddItemToArray(l, secret("etcd-backup-b", EP_A, "czE="));
    cJSON_SetValuestring((cJSON *)kjson_get(e, "spec.backup.store.secretRef.name"),
                         "etcd-backup-b");
    expect(decide(e, l, SECRET_READ), "K2 (the same keys, another Secret)", 0,
           "another backup store");
}

Test(claimstore, a_rotated_secret_key_is_the_same_store)
{
    cJSON *e = etcd("etcd-backup"), *s = secret("etcd-backup", EP_A, "czE=");

    stamp(e, s);
    cJSON_Delete(s);
    expect(decide(e, list1(secret("etcd-backup", EP_A, "czI=")), SECRET_READ), "rotated", 1, "");
}

Test(claimstore, the_secret_gone_since_keeps_the_claims)
{
    cJSON *e = etcd("etcd-backup"), *s = secret("etcd-backup", EP_A, "czE=");

    stamp(e, s);
    cJSON_Delete(s);
    expect(decide(e, cJSON_CreateArray(), SECRET_READ), "gone", 0, "another backup store");
}

Test(claimstore, a_secret_absent_then_and_now_is_the_same_store)
{
    cJSON *e = etcd("etcd-backup");

    stamp(e, NULL);
    expect(decide(e, cJSON_CreateArray(), SECRET_READ), "absent", 1, "");
}

Test(claimstore, a_secret_that_cannot_be_read_is_a_500)
{
    cJSON *e = etcd("etcd-backup"), *s = secret("etcd-backup", EP_A, "czE="), *doc;

    stamp(e, s);
    doc = decide(cJSON_Duplicate(e, 1), list1(cJSON_Duplicate(s, 1)), SECRET_DOWN);
    guardfix_expect(doc, "down", 0, "its backup Secret shoot/etcd-backup cannot be read");
    cr_expect_eq(code_of(doc), 500);
    cJSON_Delete(doc);
    doc = decide(e, list1(s), SECRET_NO_LOOKUP);
    guardfix_expect(doc, "no lookup", 0, "no Secret lookup is configured");
    cr_expect_eq(code_of(doc), 500);
    cJSON_Delete(doc);
}

Test(claimstore, a_secret_ref_that_names_no_object_keeps_the_claims)
{
    cJSON *e = etcd("etcd-backup"), *s = secret("etcd-backup", EP_A, "czE=");

    stamp(e, s);
    cJSON_SetValuestring((cJSON *)kjson_get(e, "spec.backup.store.secretRef.name"), "a/b");
    expect(decide(e, list1(s), SECRET_READ), "a/b", 0,
           "its spec.backup.store.secretRef names no Secret");
}
