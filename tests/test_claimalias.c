/*
 * Tests of another application's claim whose name reads as an Etcd's too (webhook/claimalias;
 * issue 30): "data-redis-cache-0" is claim "data" of StatefulSet redis-cache and reads as
 * "<data-redis>-<cache>-0". It is not Etcd cache's only on proof from facts a tenant cannot
 * write for a member's claim: StatefulSet cache (the API server's) created before the claim
 * without that claim template, or an owner reference to another StatefulSet. The pure decision
 * first, then the DELETE, CREATE and UPDATE through the dispatcher on both endpoints.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "tests/support/guardfix.h"
#include "tests/support/testutil.h"
#include "webhook/claimalias.h"
#include "webhook/wh_dispatch.h"

#define PERSON GUARDFIX_PERSON
#define COMP   WH_HOOK_COMPONENTS
#define GUARD  WH_HOOK_SCALEGUARD

/* Etcd apps/cache, awake, 3 members, a backup store. */
#define ETCD_CACHE                                                                          \
    "{\"metadata\":{\"namespace\":\"apps\",\"name\":\"cache\",\"uid\":\"uid-e\"},\"spec\":" \
    "{\"replicas\":3,\"backup\":{\"store\":{\"container\":\"b\",\"prefix\":\"p\","          \
    "\"provider\":\"S3\"}}}}"
/* etcd-druid's StatefulSet apps/cache, created at created, with claim template tmpl. */
#define STS_CACHE(created, tmpl)                                                          \
    "{\"metadata\":{\"namespace\":\"apps\",\"name\":\"cache\",\"uid\":\"uid-sts\","       \
    "\"creationTimestamp\":\"" created "\",\"labels\":{\"app.kubernetes.io/managed-by\":" \
    "\"etcd-druid\",\"app.kubernetes.io/part-of\":\"cache\"}},\"spec\":{\"replicas\":3,"  \
    "\"selector\":{\"matchLabels\":{\"app.kubernetes.io/managed-by\":\"etcd-druid\","     \
    "\"app.kubernetes.io/part-of\":\"cache\"}},\"volumeClaimTemplates\":[{\"metadata\":{" \
    "\"name\":\"" tmpl "\"}}]}}"
#define STS_EARLY STS_CACHE("2026-11-10T00:00:00Z", "cache")
#define BEFORE    "2026-11-09T00:00:00Z"
#define AFTER     "2026-11-11T00:00:00Z"
#define OWNED(sts)                                                                               \
    ",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"name\":\"" sts \
    "\",\"uid\":\"u\",\"controller\":true,\"blockOwnerDeletion\":true}]"

/* PVC apps/name created at created ("": no creationTimestamp), metadata extra. */
static cJSON *pvc(const char *name, const char *created, const char *extra)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"namespace\":\"apps\",\"name\":\"%s\"%s%s%s,\"labels\":{\"app\":"
             "\"redis-cache\"}%s},\"spec\":{}}",
             name, *created ? ",\"creationTimestamp\":\"" : "", created, *created ? "\"" : "",
             extra);
    return cJSON_Parse(text);
}

struct pure_row {
    const char *title, *name;
    size_t tlen;
    const char *created, *extra; /* the claim's; created NULL: a claim being created */
    const char *sts;             /* StatefulSet cache (JSON), NULL: none */
    int proven;
};

static const struct pure_row pure_rows[] = {
    { "an application's claim younger than StatefulSet cache", "data-redis-cache-0", 10, AFTER, "",
      STS_EARLY, 1 },
    { "a claim being created, StatefulSet cache there", "data-queue-cache-0", 10, NULL, "",
      STS_EARLY, 1 },
    { "StatefulSet cache's own template: its member's", "cache-cache-0", 5, AFTER, "", STS_EARLY,
      0 },
    { "etcd-druid's default template (the Etcd's name), whatever S has: its member's",
      "cache-cache-0", 5, AFTER, "", STS_CACHE("2026-11-10T00:00:00Z", "data"), 0 },
    { "a template of that name: its member's", "data-redis-cache-0", 10, AFTER, "",
      STS_CACHE("2026-11-10T00:00:00Z", "data-redis"), 0 },
    { "older than StatefulSet cache: an earlier one may have taken it", "data-redis-cache-0", 10,
      BEFORE, "", STS_EARLY, 0 },
    { "created in the same second: the order cannot be told", "data-redis-cache-0", 10,
      "2026-11-10T00:00:00Z", "", STS_EARLY, 0 },
    { "no creationTimestamp on the claim", "data-redis-cache-0", 10, "", "", STS_EARLY, 0 },
    { "no StatefulSet cache", "data-redis-cache-0", 10, AFTER, "", NULL, 0 },
    { "a StatefulSet cache without a creationTimestamp", "data-redis-cache-0", 10, AFTER, "",
      "{\"metadata\":{\"name\":\"cache\"},\"spec\":{\"volumeClaimTemplates\":[]}}", 0 },
    { "claim templates that are not a list: read as any", "data-redis-cache-0", 10, AFTER, "",
      "{\"metadata\":{\"name\":\"cache\",\"creationTimestamp\":\"2026-11-10T00:00:00Z\"},"
      "\"spec\":{\"volumeClaimTemplates\":{}}}",
      0 },
    { "a nameless claim template: read as any", "data-redis-cache-0", 10, AFTER, "",
      "{\"metadata\":{\"name\":\"cache\",\"creationTimestamp\":\"2026-11-10T00:00:00Z\"},"
      "\"spec\":{\"volumeClaimTemplates\":[{\"metadata\":{}}]}}",
      0 },
    { "owned by StatefulSet redis-cache, whatever the times", "data-redis-cache-0", 10, BEFORE,
      OWNED("redis-cache"), NULL, 1 },
    { "owned by StatefulSet cache: its own", "data-redis-cache-0", 10, BEFORE, OWNED("cache"), NULL,
      0 },
    { "owned by a Deployment: no StatefulSet's proof", "data-redis-cache-0", 10, BEFORE,
      ",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"name\":"
      "\"redis-cache\",\"uid\":\"u\"}]",
      NULL, 0 },
    { "owned by a StatefulSet of another group", "data-redis-cache-0", 10, BEFORE,
      ",\"ownerReferences\":[{\"apiVersion\":\"example.com/v1\",\"kind\":\"StatefulSet\","
      "\"name\":\"redis-cache\",\"uid\":\"u\"}]",
      NULL, 0 },
    { "a template as long as the name: no reading", "data-redis-cache-0", 18, AFTER, "", STS_EARLY,
      0 },
};

ParameterizedTestParameters(claimalias, pure)
{
    static size_t idx[sizeof(pure_rows) / sizeof(pure_rows[0])];

    return testutil_row_params(idx, sizeof(idx) / sizeof(idx[0]));
}

ParameterizedTest(size_t *i, claimalias, pure)
{
    const struct pure_row *t = &pure_rows[*i];
    cJSON *p = t->created ? pvc(t->name, t->created, t->extra) : NULL,
          *s = t->sts ? cJSON_Parse(t->sts) : NULL;
    char why[CLAIMALIAS_WHY_MAX];
    int got;

    cr_assert(!t->created || p, "%s: the claim parses", t->title);
    cr_assert(!t->sts || s, "%s: the StatefulSet parses", t->title);
    got = claimalias_proven(p, !t->created, t->name, t->tlen, "cache", s, why, sizeof(why));
    cr_expect_eq(got, t->proven, "%s: proven %d (%s)", t->title, got, why);
    cr_expect_eq(why[0] != '\0', got, "%s: a reason exactly when proven", t->title);
    cJSON_Delete(p);
    cJSON_Delete(s);
}

struct row {
    const char *title;
    enum wh_hook hook;
    const char *op, *name;
    const char *created, *extra; /* the stored claim (DELETE, UPDATE's old) */
    const char *new_extra;       /* the object of a CREATE or UPDATE */
    const char *sts;             /* StatefulSet cache (JSON), NULL: none */
    int allowed;
    const char *message;
};

#define NOT_DELETED "member cache-"

static const struct row rows[] = {
    /* DELETE: attack12_claim_name_alias A1 */
    { "A1: Redis's claim, StatefulSet redis-cache gone", COMP, "DELETE", "data-redis-cache-0",
      AFTER, "", NULL, STS_EARLY, 1, "" },
    { "A1, guard only", GUARD, "DELETE", "data-redis-cache-2", AFTER, "", NULL, STS_EARLY, 1, "" },
    { "control: Etcd cache's own claim", COMP, "DELETE", "cache-cache-0", AFTER, "", NULL,
      STS_EARLY, 0, "" },
    { "control: Etcd cache's own claim, guard only", GUARD, "DELETE", "cache-cache-0", AFTER, "",
      NULL, STS_EARLY, 0, NOT_DELETED },
    { "older than StatefulSet cache: still Etcd cache's", GUARD, "DELETE", "data-redis-cache-0",
      BEFORE, "", NULL, STS_EARLY, 0, NOT_DELETED },
    { "older, on components: still Etcd cache's", COMP, "DELETE", "data-redis-cache-1", BEFORE, "",
      NULL, STS_EARLY, 0, "" },
    { "no StatefulSet cache: still Etcd cache's", GUARD, "DELETE", "data-redis-cache-0", AFTER, "",
      NULL, NULL, 0, NOT_DELETED },
    { "StatefulSet cache with that template: its member's", GUARD, "DELETE", "data-redis-cache-0",
      AFTER, "", NULL, STS_CACHE("2026-11-10T00:00:00Z", "data-redis"), 0, "" },
    { "owned by StatefulSet redis-cache (whenDeleted: Delete): the garbage collector's", GUARD,
      "DELETE", "data-redis-cache-0", BEFORE, OWNED("redis-cache"), NULL, STS_EARLY, 1, "" },
    { "owned by StatefulSet redis-cache, on components", COMP, "DELETE", "data-redis-cache-0",
      BEFORE, OWNED("redis-cache"), NULL, STS_EARLY, 1, "" },
    /* CREATE: attack12_claim_name_alias A2 */
    { "A2: the StatefulSet controller's claim of queue-cache", GUARD, "CREATE",
      "data-queue-cache-0", "", "", OWNED("queue-cache"), STS_EARLY, 1, "" },
    { "A2 on components", COMP, "CREATE", "data-queue-cache-0", "", "", OWNED("queue-cache"),
      STS_EARLY, 1, "" },
    { "control: a foreign owner on a claim of cache's template", COMP, "CREATE", "cache-cache-0",
      "", "", OWNED("queue-cache"), STS_EARLY, 0, "cannot be owned by StatefulSet queue-cache" },
    { "no StatefulSet cache: a foreign owner is refused", GUARD, "CREATE", "data-queue-cache-0", "",
      "", OWNED("queue-cache"), NULL, 0, "cannot be owned by StatefulSet queue-cache" },
    /* UPDATE: decided on the old object, the proof cannot be written */
    { "a foreign owner added to cache's claim", GUARD, "UPDATE", "cache-cache-0", AFTER, "",
      OWNED("queue-cache"), STS_EARLY, 0, "cannot be owned by StatefulSet queue-cache" },
    { "a foreign owner added to an older claim of that shape", COMP, "UPDATE", "data-queue-cache-0",
      BEFORE, "", OWNED("queue-cache"), STS_EARLY, 0,
      "cannot be owned by StatefulSet queue-cache" },
    { "a foreign owner added to a younger one (the retention policy set later)", GUARD, "UPDATE",
      "data-queue-cache-0", AFTER, "", OWNED("queue-cache"), STS_EARLY, 1, "" },
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* The AdmissionReview of t: its objects as pvc() makes them, the new one with new_extra. */
static char *review(const struct row *t)
{
    cJSON *old = pvc(t->name, t->created, t->extra), *obj = NULL, *doc, *req, *kind, *res;
    char *body;

    if (strcmp(t->op, "DELETE") != 0)
        obj = pvc(t->name, t->created, t->new_extra);
    doc = cJSON_CreateObject();
    cr_assert(old && doc && (obj || strcmp(t->op, "DELETE") == 0));
    cJSON_AddStringToObject(doc, "apiVersion", "admission.k8s.io/v1");
    cJSON_AddStringToObject(doc, "kind", "AdmissionReview");
    req = cJSON_AddObjectToObject(doc, "request");
    cJSON_AddStringToObject(req, "uid", "0000-7777");
    kind = cJSON_AddObjectToObject(req, "kind");
    cJSON_AddStringToObject(kind, "group", "");
    cJSON_AddStringToObject(kind, "version", "v1");
    cJSON_AddStringToObject(kind, "kind", "PersistentVolumeClaim");
    res = cJSON_AddObjectToObject(req, "resource");
    cJSON_AddStringToObject(res, "group", "");
    cJSON_AddStringToObject(res, "version", "v1");
    cJSON_AddStringToObject(res, "resource", "persistentvolumeclaims");
    cJSON_AddStringToObject(req, "name", t->name);
    cJSON_AddStringToObject(req, "namespace", "apps");
    cJSON_AddStringToObject(req, "operation", t->op);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(req, "userInfo"), "username", PERSON);
    if (strcmp(t->op, "CREATE") == 0) {
        cJSON_Delete(old);
        old = NULL;
        /* a CREATE's object has no creationTimestamp before it is stored */
        cJSON_DeleteItemFromObject(cJSON_GetObjectItem(obj, "metadata"), "creationTimestamp");
    }
    cJSON_AddItemToObject(req, "object", obj ? obj : cJSON_CreateNull());
    cJSON_AddItemToObject(req, "oldObject", old ? old : cJSON_CreateNull());
    body = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    cr_assert_not_null(body);
    return body;
}

/* A StatefulSet GET that fails, as an API server that does not answer. */
static enum kerr no_answer(void *ctx, const char *ns, const char *name, cJSON **obj,
                           struct kerr_info *err)
{
    (void)ctx;
    (void)ns;
    (void)name;
    *obj = NULL;
    return kerr_set(err, KERR_TIMEOUT, "the API server did not answer");
}

static cJSON *decide(const struct row *t, int fail_sts)
{
    struct protect_config cfg;
    struct lookup_mem mem = { 0 };
    struct lookup lk;
    cJSON *etcds = cJSON_Parse("[" ETCD_CACHE "]"), *stses = cJSON_CreateArray();
    cJSON *empty = cJSON_CreateArray(), *doc;
    char *body = review(t);

    guardfix_config(&cfg);
    if (t->sts)
        cJSON_AddItemToArray(stses, cJSON_Parse(t->sts));
    mem.etcds = etcds;
    mem.stses = stses;
    mem.tasks = empty;
    mem.pods = empty;
    mem.pvcs = empty;
    lookup_mem_bind(&mem, &lk);
    if (fail_sts)
        lk.sts_fresh = no_answer;
    doc = guardfix_dispatch(&cfg, &mem, &lk, t->hook, !fail_sts, body);
    cJSON_Delete(etcds);
    cJSON_Delete(stses);
    cJSON_Delete(empty);
    free(body);
    return doc;
}

ParameterizedTestParameters(claimalias, rows)
{
    static size_t idx[NROWS];

    return testutil_row_params(idx, NROWS);
}

ParameterizedTest(size_t *i, claimalias, rows)
{
    const struct row *t = &rows[*i];
    cJSON *doc = decide(t, 0);

    guardfix_expect(doc, t->title, t->allowed, t->message);
    cJSON_Delete(doc);
}

/* No answer on StatefulSet cache: whether it ever took the claim cannot be told, a 500. */
Test(claimalias, unanswered_is_500)
{
    static const struct row steps[] = {
        { "DELETE", GUARD, "DELETE", "data-redis-cache-0", AFTER, "", NULL, STS_EARLY, 0,
          "cannot be told" },
        { "CREATE", COMP, "CREATE", "data-queue-cache-0", "", "", OWNED("queue-cache"), STS_EARLY,
          0, "cannot be told" },
    };
    cJSON *doc;

    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        doc = decide(&steps[i], 1);
        guardfix_expect(doc, steps[i].title, 0, steps[i].message);
        cr_expect_eq(kjson_get_count(doc, "response.status.code", 0), 500, "%s: a 500",
                     steps[i].title);
        cJSON_Delete(doc);
    }
}

/* A DELETE or UPDATE review without its stored claim (malformed) proves nothing. */
Test(claimalias, no_stored_claim_proves_nothing)
{
    cJSON *s = cJSON_Parse(STS_EARLY), *null = cJSON_CreateNull();
    char why[CLAIMALIAS_WHY_MAX];

    cr_assert(s && null);
    cr_expect_eq(claimalias_proven(NULL, 0, "data-redis-cache-0", 10, "cache", s, why, sizeof(why)),
                 0);
    cr_expect_eq(claimalias_proven(null, 0, "data-redis-cache-0", 10, "cache", s, why, sizeof(why)),
                 0);
    cr_expect_eq(claimalias_proven(NULL, 1, "data-redis-cache-0", 10, "cache", s, why, sizeof(why)),
                 1, "a claim being created is younger than StatefulSet cache");
    cJSON_Delete(s);
    cJSON_Delete(null);
}
