/*
 * pgone on an in-process kube-sim: warden-webhook records in an Etcd's BackupEntry when it
 * admitted the Etcd's DELETE (the Etcd exists then, and is deleted only after), once, for the
 * entry's own Etcd only, never for a dry run or an Etcd already being deleted; an entry that
 * cannot be written refuses the DELETE with 500. The same for an UPDATE that changes anything of
 * the Etcd's spec.backup.store (spec.etcdStoreChangedAt), in the entries of the earlier and the
 * new claim.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/bentry.h"
#include "common/bstore.h"
#include "common/cfg.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "tests/support/cfix.h"
#include "webhook/pgone.h"
#include "webhook/pmove.h"

static const struct k8s_resource res_entry = { "etcd-warden.io", "v1alpha1", "backupentries", 0 };
static struct cfix fx;
static char ename[BSTORE_ENTRY_NAME_MAX + 1];

static cJSON *etcd(const char *uid, const char *extra)
{
    char text[1024];
    cJSON *e;

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"uid\":\"%s\","
             "\"generation\":1,\"creationTimestamp\":\"2026-01-02T03:04:05Z\"%s},"
             "\"spec\":{\"backup\":{\"store\":{\"provider\":\"aws\",\"container\":\"bkt\","
             "\"prefix\":\"shoot--etcd-main\"}}}}",
             uid, extra);
    e = cJSON_Parse(text);
    cr_assert_not_null(e);
    return e;
}

/* kube-sim, and the entry of etcd-main (uid u1), as warden-controller makes it. */
static void setup(void)
{
    cJSON *old, *e = NULL;

    cfix_start(&fx, NULL);
    old = etcd("u1", "");
    cr_assert_eq(pmove_entry(old, "s3", 1800000000, &e, ename, NULL, NULL), KERR_OK);
    cr_assert_eq(k8s_create(fx.c, &res_entry, NULL, e, NULL, NULL, NULL), KERR_OK);
    cJSON_Delete(e);
    cJSON_Delete(old);
}

static void teardown(void)
{
    cfix_stop(&fx);
}

TestSuite(pgone, .init = setup, .fini = teardown, .timeout = 60);

/* The review of op from old to obj (both OWNED; obj NULL for a DELETE); the answer's allowed and
 * code. */
static int review_op(enum review_op op, cJSON *old, cJSON *obj, int dry_run, int *code)
{
    struct review_req req = { 0 };
    struct review_resp resp;
    struct kerr_info err;
    int allowed;

    review_resp_init(&resp);
    cr_assert_eq(review_allow(&resp, "%s", ""), KERR_OK); /* admitted so far */
    req.op = op;
    req.old_object = old;
    req.object = obj;
    req.dry_run = dry_run;
    cr_assert_eq(pgone_record(fx.c, NULL, &req, &resp, &err), KERR_OK);
    allowed = resp.allowed;
    *code = resp.code;
    review_resp_release(&resp);
    cJSON_Delete(old);
    cJSON_Delete(obj);
    return allowed;
}

static int review(cJSON *old, int dry_run, int *code)
{
    return review_op(REVIEW_OP_DELETE, old, NULL, dry_run, code);
}

static int review_update(cJSON *old, cJSON *obj, int dry_run, int *code)
{
    return review_op(REVIEW_OP_UPDATE, old, obj, dry_run, code);
}

/* The review of op from old to obj (OWNED) against an API server that does not answer: refused
 * with 500, its message naming what, the entry unwritten. */
static void refused_with_500(enum review_op op, cJSON *old, cJSON *obj, const char *what)
{
    struct k8s_client_opts o = { .connect_timeout_ms = 1000, .max_retries = -1 };
    struct cfg_rest rest = { 0 };
    struct k8s_client *gone = NULL;
    struct review_req req = { 0 };
    struct review_resp resp;
    struct kerr_info err;
    char server[] = "https://127.0.0.1:9"; /* discard: nothing listens */

    rest.server = server;
    rest.insecure = 1;
    cr_assert_eq(k8s_client_new(&rest, &o, &gone, &err), KERR_OK, "%s", err.msg);
    review_resp_init(&resp);
    cr_assert_eq(review_allow(&resp, "%s", ""), KERR_OK); /* admitted so far */
    req.op = op;
    req.old_object = old;
    req.object = obj;
    cr_assert_eq(pgone_record(gone, NULL, &req, &resp, &err), KERR_OK);
    cr_assert_not(resp.allowed);
    cr_assert_eq(resp.code, 500);
    cr_assert(strstr(resp.message, what), "%s", resp.message);
    review_resp_release(&resp);
    k8s_client_free(gone);
    cJSON_Delete(old);
    cJSON_Delete(obj);
}

static const char *admitted(char *buf, size_t n)
{
    cJSON *e = cfix_get(&fx, &res_entry, ename);
    const char *t = kjson_get_str(e, BENTRY_DELETE_ADMITTED);

    snprintf(buf, n, "%s", t ? t : "");
    cJSON_Delete(e);
    return buf;
}

Test(pgone, the_delete_of_the_entrys_etcd_is_recorded_once)
{
    char t[64], first[64];
    struct timespec ts;
    time_t before = time(NULL);
    int code;

    cr_assert(review(etcd("u1", ""), 0, &code));
    cr_assert_eq(ktime_parse(admitted(t, sizeof(t)), &ts, NULL), KERR_OK, "%s", t);
    cr_assert(ts.tv_sec >= before && ts.tv_sec <= time(NULL) + 1, "%s", t);
    snprintf(first, sizeof(first), "%s", t);
    sleep(1);
    cr_assert(review(etcd("u1", ""), 0, &code));
    cr_assert_str_eq(admitted(t, sizeof(t)), first, "the earliest admission stays");
}

Test(pgone, nothing_for_a_dry_run_another_etcd_or_one_being_deleted)
{
    char t[64];
    int code;

    cr_assert(review(etcd("u1", ""), 1, &code));
    cr_assert_str_empty(admitted(t, sizeof(t)), "a dry run");
    cr_assert(review(etcd("u2", ""), 0, &code));
    cr_assert_str_empty(admitted(t, sizeof(t)), "an Etcd the entry does not record");
    cr_assert(review(etcd("u1", ",\"deletionTimestamp\":\"2026-01-03T00:00:00Z\""), 0, &code));
    cr_assert_str_empty(admitted(t, sizeof(t)), "its deletionTimestamp says when");
}

Test(pgone, no_entry_no_record_and_allowed)
{
    int code;
    cJSON *e = etcd("u1", "");

    cr_assert_eq(k8s_delete(fx.c, &res_entry, NULL, ename, NULL, NULL, NULL), KERR_OK);
    cr_assert(review(e, 0, &code));
}

Test(pgone, an_entry_that_cannot_be_written_refuses_with_500)
{
    char t[64];

    refused_with_500(REVIEW_OP_DELETE, etcd("u1", ""), NULL, "cannot record");
    cr_assert_str_empty(admitted(t, sizeof(t)));
}

/* etcd-main (uid u1) as etcd() with its store's prefix and secretRef set. */
static cJSON *etcd_at(const char *uid, const char *prefix, const char *secret)
{
    cJSON *e = etcd(uid, "");

    cr_assert_eq(kjson_set_str(e, "spec.backup.store.prefix", prefix, NULL), KERR_OK);
    if (secret)
        cr_assert_eq(kjson_set_str(e, "spec.backup.store.secretRef.name", secret, NULL), KERR_OK);
    return e;
}

static const char *changed(char *buf, size_t n)
{
    cJSON *e = cfix_get(&fx, &res_entry, ename);
    const char *t = kjson_get_str(e, BENTRY_STORE_CHANGED);

    snprintf(buf, n, "%s", t ? t : "");
    cJSON_Delete(e);
    return buf;
}

/* The entry's etcdStoreChangedGeneration, -1 when it has none. */
static int changed_generation(void)
{
    cJSON *e = cfix_get(&fx, &res_entry, ename);
    const cJSON *g = kjson_get(e, BENTRY_STORE_CHANGED_GEN);
    int n = cJSON_IsNumber(g) ? g->valueint : -1;

    cJSON_Delete(e);
    return n;
}

Test(pgone, a_move_away_and_back_is_recorded_in_the_entry_once)
{
    char t[64], first[64];
    struct timespec ts;
    time_t before = time(NULL);
    int code;

    cr_assert(review_update(etcd("u1", ""), etcd_at("u1", "shoot--away", NULL), 0, &code));
    cr_assert_eq(ktime_parse(changed(t, sizeof(t)), &ts, NULL), KERR_OK, "the earlier claim: %s",
                 t);
    cr_assert(ts.tv_sec >= before && ts.tv_sec <= time(NULL) + 1, "%s", t);
    cr_assert_eq(changed_generation(), 1, "the generation the change was made to");
    snprintf(first, sizeof(first), "%s", t);
    sleep(1);
    cr_assert(review_update(etcd_at("u1", "shoot--away", NULL), etcd("u1", ""), 0, &code));
    cr_assert_str_eq(changed(t, sizeof(t)), first, "the new claim's: the earliest time stays");
}

Test(pgone, the_move_back_is_recorded_in_the_new_claims_entry)
{
    char t[64];
    int code;

    cr_assert(review_update(etcd_at("u1", "shoot--away", NULL), etcd("u1", ""), 0, &code));
    cr_assert_str_not_empty(changed(t, sizeof(t)),
                            "a return the controller may not see: the entry knows");
}

Test(pgone, a_secretref_edit_is_a_change_of_store)
{
    char t[64];
    int code;

    cr_assert(review_update(etcd_at("u1", "shoot--etcd-main", "a"),
                            etcd_at("u1", "shoot--etcd-main", "b"), 0, &code));
    cr_assert_str_not_empty(changed(t, sizeof(t)));
}

Test(pgone, nothing_for_another_change_a_dry_run_or_another_etcd)
{
    char t[64];
    int code;
    cJSON *obj = etcd("u1", ",\"labels\":{\"a\":\"b\"}");

    cr_assert(review_update(etcd("u1", ""), obj, 0, &code));
    cr_assert_str_empty(changed(t, sizeof(t)), "the store is the same");
    cr_assert(review_update(etcd("u1", ""), etcd_at("u1", "shoot--away", NULL), 1, &code));
    cr_assert_str_empty(changed(t, sizeof(t)), "a dry run");
    cr_assert(review_update(etcd("u2", ""), etcd_at("u2", "shoot--away", NULL), 0, &code));
    cr_assert_str_empty(changed(t, sizeof(t)), "an Etcd the entry does not record");
    cr_assert_str_empty(admitted(t, sizeof(t)), "an UPDATE is no DELETE");
}

Test(pgone, a_change_that_cannot_be_recorded_refuses_with_500)
{
    char t[64];

    refused_with_500(REVIEW_OP_UPDATE, etcd("u1", ""), etcd_at("u1", "shoot--away", NULL),
                     "cannot record its store's change");
    cr_assert_str_empty(changed(t, sizeof(t)));
}
