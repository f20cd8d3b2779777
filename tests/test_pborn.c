/*
 * Tests of webhook/pborn through prefix_check_local: an Etcd reattaches to its own BackupEntry
 * only in the namespace the entry was made for; a namespace of the same name created after the
 * entry is another owner (its namespace read from an in-process kube-sim).
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/kjson.h"
#include "common/store.h"
#include "tests/support/cfix.h"
#include "webhook/prefix.h"
#include "webhook/review.h"

static const enum prefix_kind k_etcd = PREFIX_ETCD, k_entry = PREFIX_ENTRY;
static struct cfix fx;
static struct store *etcds, *entries;

static void setup(void)
{
    struct store_opts oe = { prefix_project, (void *)&k_etcd, 0, NULL, NULL };
    struct store_opts on = { prefix_project, (void *)&k_entry, 0, NULL, NULL };

    cfix_start(&fx, NULL);
    cr_assert_eq(store_new(&oe, &etcds, NULL), KERR_OK);
    cr_assert_eq(store_new(&on, &entries, NULL), KERR_OK);
    cr_assert_eq(store_add_index(etcds, PREFIX_INDEX_STORE, prefix_index_store, NULL, NULL),
                 KERR_OK);
    cr_assert_eq(store_add_index(entries, PREFIX_INDEX_STORE, prefix_index_store, NULL, NULL),
                 KERR_OK);
}

static void teardown(void)
{
    store_free(etcds);
    store_free(entries);
    cfix_stop(&fx);
}

TestSuite(pborn, .init = setup, .fini = teardown);

/* The entry of Etcd ns/etcd-main on prefix p, made at created, its Etcd deleted. */
static void cache_entry(const char *ns, const char *created)
{
    char text[1024];
    cJSON *o;

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"p--0123abcd4567cdef\",\"creationTimestamp\":\"%s\"},"
             "\"spec\":{\"bucketName\":\"b\",\"prefix\":\"p\",\"store\":{\"provider\":\"S3\","
             "\"container\":\"bkt\"},\"etcd\":{\"namespace\":\"%s\",\"name\":\"etcd-main\"},"
             "\"etcdDeletedAt\":\"2026-01-02T03:04:05Z\"}}",
             created, ns);
    o = cJSON_Parse(text);
    cr_assert_not_null(o);
    cr_assert_eq(store_put(entries, o, NULL, NULL, NULL), KERR_OK);
}

/* The verdict on a CREATE of Etcd ns/etcd-main on prefix p: "" allowed, else the message. */
static const char *create(const char *ns)
{
    static char msg[1024];
    char text[512];
    struct review_req req;
    struct review_resp resp;
    cJSON *obj;

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"namespace\":\"%s\",\"name\":\"etcd-main\"},\"spec\":{\"backup\":"
             "{\"store\":{\"provider\":\"S3\",\"container\":\"bkt\",\"prefix\":\"p\"}}}}",
             ns);
    review_req_init(&req);
    review_resp_init(&resp);
    cr_assert_eq(review_allow(&resp, "%s", ""), KERR_OK);
    req.op = REVIEW_OP_CREATE;
    req.object = obj = cJSON_Parse(text);
    cr_assert_eq(prefix_check_local(etcds, entries, NULL, fx.c, NULL, 1, &req, &resp, NULL),
                 KERR_OK);
    snprintf(msg, sizeof(msg), "%s", resp.allowed ? "" : resp.message);
    review_resp_release(&resp);
    cJSON_Delete(obj);
    return msg;
}

/* CFIX_NS's creation time (kube-sim's clock, seconds) into out. */
static void ns_created(char *out, size_t n)
{
    static const struct k8s_resource res_ns = { "", "v1", "namespaces", 0 };
    struct kerr_info err = { 0 };
    cJSON *o = NULL;

    cr_assert_eq(k8s_get(fx.c, &res_ns, NULL, CFIX_NS, NULL, &o, &err), KERR_OK, "%s", err.msg);
    snprintf(out, n, "%s", kjson_get_str(o, "metadata.creationTimestamp"));
    cJSON_Delete(o);
}

Test(pborn, the_namespace_the_entry_was_made_for_reattaches)
{
    char born[64];

    ns_created(born, sizeof(born));
    cache_entry(CFIX_NS, born); /* made in the same second: the namespace is not newer */
    cr_assert_str_eq(create(CFIX_NS), "");
}

Test(pborn, a_namespace_created_again_is_another_owner)
{
    const char *msg;

    cache_entry(CFIX_NS, "2020-01-01T00:00:00Z"); /* before this namespace existed */
    msg = create(CFIX_NS);
    cr_assert(strstr(msg, "BackupEntry p--0123abcd4567cdef") && strstr(msg, "created after it") &&
                  strstr(msg, "another owner"),
              "%s", msg);
}

Test(pborn, a_time_not_understood_refuses)
{
    const char *msg;

    cache_entry(CFIX_NS, "yesterday");
    msg = create(CFIX_NS);
    cr_assert(strstr(msg, "are not known"), "%s", msg);
}

Test(pborn, a_namespace_that_cannot_be_read_refuses)
{
    const char *msg;

    cache_entry("gone", "2020-01-01T00:00:00Z"); /* kube-sim has no namespace "gone" */
    msg = create("gone");
    cr_assert(strstr(msg, "namespace gone cannot be read"), "%s", msg);
}
