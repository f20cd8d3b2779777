/* glass: break glass used once - the record logic (a table) and the admission on it. */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "webhook/glass.h"
#include "webhook/glassadm.h"
#include "webhook/lookup.h"

#define V1 "1111111111111111111111111111111111111111111111111111111111111111"
#define V2 "2222222222222222222222222222222222222222222222222222222222222222"
#define E  "\"namespace\":\"ns\",\"name\":\"etcd-main\""
#define O  "\"namespace\":\"ns\",\"name\":\"etcd-other\""

struct judge_row {
    const char *rec; /* the annotation as stored (NULL: none); E and O name Etcds */
    const char *uid, *value;
    int used;
    time_t at;
    const char *user, *what;
};

static const struct judge_row judge_rows[] = {
    /* no record, or a record of another value or Etcd: record this use */
    { NULL, "u1", V1, 0, 0, "", "" },
    { "{" E ",\"value\":\"" V2 "\",\"at\":5,\"user\":\"a\",\"what\":\"w\"}", "u1", V1, 0, 0, "",
      "" },
    { "{" O ",\"value\":\"" V1 "\",\"at\":5,\"user\":\"a\",\"what\":\"w\"}", "u1", V1, 0, 0, "",
      "" },
    /* this value of this Etcd used: refused, saying when, by whom, for what */
    { "{" E ",\"value\":\"" V1 "\",\"at\":5,\"user\":\"a\",\"what\":\"w\"}", "u1", V1, 1, 5, "a",
      "w" },
    /* a record of this value counts whatever else it holds (or lacks) */
    { "{" E ",\"value\":\"" V1 "\"}", "u1", V1, 1, 1, "(unknown)", "(unknown)" },
    { "{" E ",\"value\":\"" V1 "\",\"at\":\"x\",\"user\":3,\"what\":null}", "u1", V1, 1, 1,
      "(unknown)", "(unknown)" },
    { "{" E ",\"value\":\"" V1 "\",\"at\":-7}", "u1", V1, 1, 1, "(unknown)", "(unknown)" },
    /* not a record: replaced */
    { "[]", "u1", V1, 0, 0, "", "" },
    { "\"" V1 "\"", "u1", V1, 0, 0, "", "" },
    { "{\"namespace\":\"ns\",\"name\":1,\"value\":\"" V1 "\"}", "u1", V1, 0, 0, "", "" },
    { "{" E "}", "u1", V1, 0, 0, "", "" },
    /* a list: any record of this value of this Etcd counts (another uid: created again) */
    { "[{" O ",\"value\":\"" V1 "\",\"at\":3},{" E ",\"value\":\"" V2 "\",\"at\":4},{" E
      ",\"uid\":\"old\",\"value\":\"" V1 "\",\"at\":5,\"user\":\"a\",\"what\":\"w\"}]",
      "u1", V1, 1, 5, "a", "w" },
    { "[{" O ",\"value\":\"" V1 "\",\"at\":3},7,null]", "u1", V1, 0, 0, "", "" },
    /* no value hash (it could not be computed): never matches a record */
    { "{" E ",\"value\":\"\"}", "u1", "", 0, 0, "", "" },
};

Test(glass, judge_table)
{
    for (size_t i = 0; i < sizeof(judge_rows) / sizeof(judge_rows[0]); i++) {
        const struct judge_row *r = &judge_rows[i];
        struct glass_use u = { .ns = "ns",
                               .name = "etcd-main",
                               .uid = r->uid,
                               .value = r->value,
                               .user = "bob",
                               .what = "scaling" };
        cJSON *rec = r->rec ? cJSON_Parse(r->rec) : NULL;
        struct glass_prior p;

        cr_assert(!r->rec || rec, "row %zu: bad JSON", i);
        cr_expect_eq(glass_judge(rec, &u, &p), r->used, "row %zu", i);
        cr_expect_eq(p.at, r->at, "row %zu: at %ld", i, (long)p.at);
        cr_expect_str_eq(p.user, r->user, "row %zu", i);
        cr_expect_str_eq(p.what, r->what, "row %zu", i);
        cJSON_Delete(rec);
    }
}

/* What glass_record writes is what glass_judge reads back as used. */
Test(glass, record_round_trip)
{
    struct glass_use u = { .ns = "ns",
                           .name = "etcd-main",
                           .uid = "u1",
                           .value = V1,
                           .user = "alice",
                           .what = "scaling to 0" };
    struct glass_prior p;
    cJSON *r = glass_record(&u, 1795515451);

    cr_assert(r);
    cr_expect(glass_judge(r, &u, &p));
    cr_expect_eq(p.at, 1795515451);
    cr_expect_str_eq(p.user, "alice");
    cr_expect_str_eq(p.what, "scaling to 0");
    u.value = V2;
    cr_expect(!glass_judge(r, &u, &p));
    cJSON_Delete(r);
    /* a record of a request: 2 for that request, 1 for any other */
    u.value = V1;
    u.request = "apps/statefulsets ns/etcd-main s1 41";
    cr_assert(r = glass_record(&u, 1795515451));
    cr_expect_eq(glass_judge(r, &u, &p), 2);
    u.request = "apps/statefulsets ns/etcd-main s1 42";
    cr_expect_eq(glass_judge(r, &u, &p), 1);
    u.request = "";
    cr_expect_eq(glass_judge(r, &u, &p), 1);
    cJSON_Delete(r);
}

/* A use recorded with its target: the target read back, and the record void only when the
 * object stored shows the recorded request never committed and no longer can. */
#define T(gen)                                                                         \
    "\"target\":{\"group\":\"apps\",\"version\":\"v1\",\"resource\":\"statefulsets\"," \
    "\"namespace\":\"ns\",\"name\":\"etcd-main\",\"uid\":\"s1\",\"resourceVersion\":"  \
    "\"41\",\"generation\":" gen "}"
#define S(uid, rv, gen, extra)                                                                    \
    "{\"metadata\":{\"uid\":\"" uid "\",\"resourceVersion\":\"" rv "\",\"generation\":" gen extra \
    "}}"

/* a member claim's DELETE: no generation (a PVC has none) */
#define TD                                                                                   \
    "\"target\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"persistentvolumeclaims\"," \
    "\"namespace\":\"ns\",\"name\":\"etcd-main\",\"uid\":\"s1\",\"resourceVersion\":\"41\"," \
    "\"operation\":\"DELETE\"}"
#define P(uid, rv, extra) \
    "{\"metadata\":{\"uid\":\"" uid "\",\"resourceVersion\":\"" rv "\"" extra "}}"

struct void_row {
    const char *rec, *stored; /* stored NULL: not found */
    int target, is_void;
};

static const struct void_row void_rows[] = {
    /* a status write moved the resourceVersion, the generation did not: never committed */
    { "{" T("2") "}", S("s1", "42", "2", ""), 1, 1 },
    /* the request may still commit (stored at its resourceVersion): kept */
    { "{" T("2") "}", S("s1", "41", "2", ""), 1, 0 },
    /* the spec changed (the scale-down committed, or any other): kept */
    { "{" T("2") "}", S("s1", "42", "3", ""), 1, 0 },
    /* created again (another uid), gone, or going: kept */
    { "{" T("2") "}", S("s2", "42", "2", ""), 1, 0 },
    { "{" T("2") "}", NULL, 1, 0 },
    { "{" T("2") "}", S("s1", "42", "2", ",\"deletionTimestamp\":\"2026-11-30T10:00:00Z\""), 1, 0 },
    /* the stored object without a generation: kept */
    { "{" T("2") "}", "{\"metadata\":{\"uid\":\"s1\",\"resourceVersion\":\"42\"}}", 1, 0 },
    /* a record without a target or generation (a CREATE, an object without generation, a
     * record written before targets were): kept */
    { "{\"value\":\"" V1 "\"}", S("s1", "42", "2", ""), 0, 0 },
    { "{" T("0") "}", S("s1", "42", "0", ""), 0, 0 },
    { "{" T("\"2\"") "}", S("s1", "42", "2", ""), 0, 0 },
    { "{\"target\":{\"group\":\"apps\",\"version\":\"v1\",\"resource\":\"statefulsets\","
      "\"namespace\":\"ns\",\"name\":\"etcd-main\",\"generation\":2}}",
      S("s1", "42", "2", ""), 1, 0 },
    /* a DELETE: void once the object moved on without being deleted; kept while it may still
     * commit, when it is going or gone, or created again */
    { "{" TD "}", P("s1", "42", ""), 1, 1 },
    /* unchanged since the use (the same uid and resourceVersion, no deletionTimestamp): a
     * deletion refused after warden-webhook admitted it looks exactly like one still on its
     * way to commit, so the use is kept (docs/hibernation.md: "A use on an object that does not
     * change stays a use"); touching the object makes it the row above */
    { "{" TD "}", P("s1", "41", ""), 1, 0 },
    { "{" TD "}", P("s1", "41", ",\"labels\":{\"x\":\"y\"}"), 1, 0 },
    { "{" TD "}", P("s1", "42", ",\"deletionTimestamp\":\"2026-11-30T10:00:00Z\""), 1, 0 },
    { "{" TD "}", NULL, 1, 0 },
    { "{" TD "}", P("s2", "42", ""), 1, 0 },
};

Test(glass, void_table)
{
    for (size_t i = 0; i < sizeof(void_rows) / sizeof(void_rows[0]); i++) {
        const struct void_row *r = &void_rows[i];
        cJSON *rec = cJSON_Parse(r->rec), *stored = r->stored ? cJSON_Parse(r->stored) : NULL;
        struct k8s_resource res;
        const char *ns, *name;

        cr_assert(rec && (!r->stored || stored), "row %zu: bad JSON", i);
        cr_expect_eq(glass_target(rec, &res, &ns, &name), r->target, "row %zu", i);
        if (r->target) {
            cr_expect(res.resource && *res.resource, "row %zu", i);
            cr_expect_str_eq(ns, "ns", "row %zu", i);
            cr_expect_str_eq(name, "etcd-main", "row %zu", i);
            cr_expect(res.namespaced, "row %zu", i);
        }
        cr_expect_eq(glass_void(rec, stored), r->is_void, "row %zu", i);
        cJSON_Delete(rec);
        cJSON_Delete(stored);
    }
}

/* glass_record writes the target only for a stored object with a generation. */
Test(glass, record_target)
{
    struct k8s_resource sts = { "apps", "v1", "statefulsets", 1 };
    struct glass_use u = { .ns = "ns",
                           .name = "etcd-main",
                           .uid = "u1",
                           .value = V1,
                           .user = "trudy",
                           .what = "scaling to 0",
                           .target = &sts,
                           .target_ns = "ns",
                           .target_name = "etcd-main",
                           .target_uid = "s1",
                           .target_rv = "41",
                           .target_gen = 2 };
    cJSON *r = glass_record(&u, 1795515451), *stored = cJSON_Parse(S("s1", "42", "2", ""));
    struct k8s_resource res;
    const char *ns, *name;

    cr_assert(r && stored);
    cr_expect(glass_target(r, &res, &ns, &name));
    cr_expect_str_eq(res.group, "apps");
    cr_expect_str_eq(res.version, "v1");
    cr_expect(glass_void(r, stored));
    cJSON_Delete(r);
    u.target_gen = 0; /* no generation: no target, never void */
    cr_assert(r = glass_record(&u, 1795515451));
    cr_expect(!glass_target(r, &res, &ns, &name));
    cr_expect(!glass_void(r, stored));
    cJSON_Delete(r);
    u.deletion = 1; /* a DELETE without generation: a target of a DELETE, never compared */
    cr_assert(r = glass_record(&u, 1795515451));
    cr_expect(glass_target(r, &res, &ns, &name));
    cr_expect(glass_void(r, stored));
    cJSON_Delete(r);
    u.deletion = 0;
    u.target_gen = 2; /* a CREATE: no target */
    u.target_uid = NULL;
    cr_assert(r = glass_record(&u, 1795515451));
    cr_expect(!cJSON_GetObjectItemCaseSensitive(r, "target"));
    cJSON_Delete(r);
    cJSON_Delete(stored);
}

Test(glass, names_and_hashes)
{
    char a[GLASS_HASH_LEN + 1], b[GLASS_HASH_LEN + 1], n[64];

    glass_value_hash("2026-11-29T07:00:00Z bucket lost", a);
    glass_value_hash("2026-11-29T07:00:00Z bucket lost ", b);
    cr_expect_eq(strlen(a), GLASS_HASH_LEN);
    cr_expect_str_neq(a, b);
    glass_lease_name("shoot", "etcd-main", n, sizeof(n));
    cr_expect_eq(strncmp(n, GLASS_LEASE_PREFIX, strlen(GLASS_LEASE_PREFIX)), 0);
    cr_expect_eq(strlen(n), strlen(GLASS_LEASE_PREFIX) + 32);
}

/* glassadm_admit over the in-memory lookup's record store. */
struct adm {
    struct lookup_mem mem;
    struct lookup lk;
    struct lookup_etcd etcd;
    struct review_req req;
    const char *name; /* the Etcd's, of namespace ns */
};

static void adm_init(struct adm *a, cJSON *store)
{
    memset(a, 0, sizeof(*a));
    a->mem.glass = store;
    lookup_mem_bind(&a->mem, &a->lk);
    snprintf(a->etcd.uid, sizeof(a->etcd.uid), "u1");
    a->etcd.break_glass = 1;
    snprintf(a->etcd.break_glass_value, sizeof(a->etcd.break_glass_value), "%s", V1);
    review_req_init(&a->req);
    a->req.username = "alice";
    a->name = "etcd-main";
}

/* Admit one request: 1 when admitted; the message of a refusal into msg. */
static int admit(struct adm *a, const char *what, int *code, char *msg, size_t size)
{
    struct review_resp resp;
    int refused = -1;

    review_resp_init(&resp);
    cr_assert_eq(glassadm_admit(&a->lk, &a->req, "ns", a->name, &a->etcd, what, &resp, &refused),
                 KERR_OK);
    *code = resp.code;
    snprintf(msg, size, "%s", resp.message ? resp.message : "");
    review_resp_release(&resp);
    return !refused;
}

Test(glass, one_use_per_value)
{
    cJSON *store = cJSON_CreateArray();
    struct adm a;
    char msg[2048];
    int code;

    adm_init(&a, store);
    /* a dry run records nothing and is judged as if recorded */
    a.req.dry_run = 1;
    cr_expect(admit(&a, "scaling StatefulSet ns/etcd-main from 3 to 2", &code, msg, sizeof(msg)));
    cr_expect_eq(cJSON_GetArraySize(store), 0);
    a.req.dry_run = 0;
    cr_expect(admit(&a, "scaling StatefulSet ns/etcd-main from 3 to 2", &code, msg, sizeof(msg)));
    cr_expect_eq(cJSON_GetArraySize(store), 1);
    /* the second use of that value: refused, saying when, by whom, for what, and the way out */
    a.req.username = "etcd-druid";
    cr_expect(!admit(&a, "scaling StatefulSet ns/etcd-main to 0", &code, msg, sizeof(msg)));
    cr_expect_eq(code, 403);
    cr_expect(strstr(msg, "was used at "), "%s", msg);
    cr_expect(strstr(msg, "by alice (scaling StatefulSet ns/etcd-main from 3 to 2)"), "%s", msg);
    cr_expect(strstr(msg, "set a new value"), "%s", msg);
    cr_expect(strstr(msg, "kubectl annotate --overwrite etcd -n ns etcd-main"), "%s", msg);
    /* a dry run of it is refused too */
    a.req.dry_run = 1;
    cr_expect(!admit(&a, "scaling StatefulSet ns/etcd-main to 0", &code, msg, sizeof(msg)));
    a.req.dry_run = 0;
    /* a new value allows one more; the old one's record stays */
    snprintf(a.etcd.break_glass_value, sizeof(a.etcd.break_glass_value), "%s", V2);
    cr_expect(admit(&a, "scaling StatefulSet ns/etcd-main to 0", &code, msg, sizeof(msg)));
    cr_expect_eq(cJSON_GetArraySize(store), 2);
    cr_expect(!admit(&a, "scaling StatefulSet ns/etcd-main to 0", &code, msg, sizeof(msg)));
    /* the first value set again (a re-applied manifest): still used */
    snprintf(a.etcd.break_glass_value, sizeof(a.etcd.break_glass_value), "%s", V1);
    cr_expect(!admit(&a, "scaling StatefulSet ns/etcd-main to 0", &code, msg, sizeof(msg)));
    /* the Etcd created again (a new uid) with the same value in its manifest: still used */
    snprintf(a.etcd.uid, sizeof(a.etcd.uid), "u2");
    cr_expect(!admit(&a, "scaling StatefulSet ns/etcd-main to 0", &code, msg, sizeof(msg)));
    /* another Etcd's break glass is its own */
    a.name = "other";
    cr_expect(admit(&a, "scaling StatefulSet ns/other to 0", &code, msg, sizeof(msg)));
    cr_expect_eq(cJSON_GetArraySize(store), 3);
    cJSON_Delete(store);
}

/*
 * A use is one request: the same object at the same resourceVersion again (the API server
 * re-sending it, or the real request after a forged copy) is admitted on the record it
 * left; the object at a later resourceVersion is another request.
 */
Test(glass, same_request_again)
{
    cJSON *store = cJSON_CreateArray();
    cJSON *old = cJSON_Parse("{\"metadata\":{\"uid\":\"s1\",\"resourceVersion\":\"41\"}}");
    cJSON *later = cJSON_Parse("{\"metadata\":{\"uid\":\"s1\",\"resourceVersion\":\"42\"}}");
    struct adm a;
    char msg[2048];
    int code;

    cr_assert(old && later);
    adm_init(&a, store);
    a.req.op = REVIEW_OP_UPDATE;
    a.req.res_group = "apps";
    a.req.res_resource = "statefulsets";
    a.req.namespace = "ns";
    a.req.name = "etcd-main";
    a.req.old_object = old;
    a.req.username = "mallory";
    cr_expect(admit(&a, "scaling StatefulSet ns/etcd-main to 0", &code, msg, sizeof(msg)));
    cr_expect_eq(cJSON_GetArraySize(store), 1);
    a.req.username = "alice";
    a.req.sub_resource = "scale";
    cr_expect(admit(&a, "scaling StatefulSet ns/etcd-main to 0", &code, msg, sizeof(msg)), "%s",
              msg);
    cr_expect_eq(cJSON_GetArraySize(store), 1);
    a.req.old_object = later;
    cr_expect(!admit(&a, "scaling StatefulSet ns/etcd-main to 0", &code, msg, sizeof(msg)));
    cr_expect(strstr(msg, "by mallory"), "%s", msg);
    /* an UPDATE whose oldObject has no resourceVersion or no uid is no request of a known
     * object: refused */
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(old, "metadata"), "resourceVersion");
    a.req.old_object = old;
    cr_expect(!admit(&a, "scaling StatefulSet ns/etcd-main to 0", &code, msg, sizeof(msg)));
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(later, "metadata"), "uid");
    a.req.old_object = later;
    cr_expect(!admit(&a, "scaling StatefulSet ns/etcd-main to 0", &code, msg, sizeof(msg)));
    /* a CREATE is the same request only when the API server sends that call again (its
     * request.uid): another CREATE of the same name (a runbook run twice) is another use */
    snprintf(a.etcd.break_glass_value, sizeof(a.etcd.break_glass_value), "%s", V2);
    a.req.op = REVIEW_OP_CREATE;
    a.req.old_object = NULL;
    a.req.res_group = "";
    a.req.res_resource = "persistentvolumeclaims";
    a.req.name = "etcd-main-etcd-main-1";
    a.req.uid = "call-1";
    cr_expect(admit(&a, "creating claim etcd-main-etcd-main-1", &code, msg, sizeof(msg)));
    cr_expect(admit(&a, "creating claim etcd-main-etcd-main-1", &code, msg, sizeof(msg)));
    a.req.uid = "call-2";
    cr_expect(!admit(&a, "creating claim etcd-main-etcd-main-1", &code, msg, sizeof(msg)));
    a.req.uid = "";
    cr_expect(!admit(&a, "creating claim etcd-main-etcd-main-1", &code, msg, sizeof(msg)));
    cr_expect_eq(cJSON_GetArraySize(store), 2);
    cJSON_Delete(old);
    cJSON_Delete(later);
    cJSON_Delete(store);
}

/* No record, no admission: a failed write and a lookup without a store are refused. */
Test(glass, fails_closed)
{
    cJSON *store = cJSON_CreateArray();
    struct adm a;
    char msg[2048];
    int code;

    adm_init(&a, store);
    a.mem.fail = KERR_IO;
    cr_expect(!admit(&a, "scaling StatefulSet ns/etcd-main to 0", &code, msg, sizeof(msg)));
    cr_expect_eq(code, 500);
    cr_expect(strstr(msg, "could not be recorded"), "%s", msg);
    cr_expect_eq(cJSON_GetArraySize(store), 0);
    a.mem.fail = KERR_OK;
    a.lk.glass = NULL;
    cr_expect(!admit(&a, "scaling StatefulSet ns/etcd-main to 0", &code, msg, sizeof(msg)));
    cr_expect_eq(code, 500);
    cJSON_Delete(store);
}
