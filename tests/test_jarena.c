/*
 * Tests of common/jarena: trees parsed into the thread's block read like
 * plain cJSON trees, the block is reused once the last tree goes, trees too
 * large for the block spill into malloc and are freed (LeakSanitizer checks),
 * every other cJSON allocation stays a plain malloc, threads have blocks of
 * their own, and an AdmissionReview decoded by webhook/review uses it.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/jarena.h"
#include "webhook/review.h"

static const char doc[] =
    "{\"a\":[1,2,{\"b\":\"text\",\"c\":null,\"d\":true}],\"e\":\"\\u00e9t\\u00e9\"}";

static void install(void)
{
    cr_assert_eq(jarena_install(NULL), KERR_OK);
    cr_assert(jarena_installed());
}

static void fini(void)
{
    jarena_thread_release();
    cr_expect_eq(jarena_thread_used(), 0);
}

/* The same text parsed by plain cJSON, to compare with. */
static int same_as_plain(const cJSON *tree, const char *text)
{
    cJSON *plain = cJSON_ParseWithLengthOpts(text, strlen(text), NULL, 0);
    int same = plain && cJSON_Compare(tree, plain, 1);

    cJSON_Delete(plain);
    return same;
}

Test(jarena, without_install_it_is_plain_cjson)
{
    const char *end = NULL;
    cJSON *t = jarena_parse(doc, sizeof(doc) - 1, &end);

    cr_assert_not_null(t);
    cr_expect(!jarena_installed());
    cr_expect_eq(end, doc + sizeof(doc) - 1);
    cr_expect_eq(jarena_thread_used(), 0);
    cr_expect(same_as_plain(t, doc));
    jarena_delete(t);
    jarena_delete(NULL);
}

Test(jarena, trees_live_in_the_block_until_the_last_goes, .init = install, .fini = fini)
{
    cJSON *a, *b;
    size_t after_a;

    cr_assert_eq(jarena_install(NULL), KERR_OK); /* idempotent */
    a = jarena_parse(doc, sizeof(doc) - 1, NULL);
    cr_assert_not_null(a);
    after_a = jarena_thread_used();
    cr_expect_gt(after_a, sizeof(doc));
    cr_expect_lt(after_a, JARENA_BLOCK);
    b = jarena_parse(doc, sizeof(doc) - 1, NULL);
    cr_assert_not_null(b);
    cr_expect_gt(jarena_thread_used(), after_a, "a second live tree takes more of the block");
    cr_expect(same_as_plain(a, doc));
    cr_expect(same_as_plain(b, doc));
    cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(a, "e")->valuestring, "\xc3\xa9t\xc3\xa9");
    jarena_delete(a);
    cr_expect_gt(jarena_thread_used(), after_a, "b is still alive");
    cr_expect(same_as_plain(b, doc));
    jarena_delete(b);
    cr_expect_eq(jarena_thread_used(), 0);
    /* The block is used again from its start. */
    a = jarena_parse(doc, sizeof(doc) - 1, NULL);
    cr_expect_eq(jarena_thread_used(), after_a);
    jarena_delete(a);
}

Test(jarena, invalid_text_gives_null_and_leaves_the_block_free, .init = install, .fini = fini)
{
    static const char bad[] = "{\"a\":[1,2,{\"b\":";
    const char *end = NULL;
    cJSON *t;

    cr_expect_null(jarena_parse(bad, sizeof(bad) - 1, &end));
    cr_expect_not_null(end);
    t = jarena_parse(doc, sizeof(doc) - 1, NULL);
    cr_assert_not_null(t);
    cr_expect(same_as_plain(t, doc));
    jarena_delete(t);
    cr_expect_eq(jarena_thread_used(), 0);
}

/* A JSON array of n objects with a long string each: far larger than the block. */
static char *big_doc(size_t n)
{
    struct buf b;
    size_t i;

    buf_init(&b, 16u << 20);
    cr_assert_eq(buf_appends(&b, "["), KERR_OK);
    for (i = 0; i < n; i++)
        cr_assert_eq(buf_appendf(&b, "%s{\"i\":%zu,\"s\":\"%0200zu\"}", i ? "," : "", i, i),
                     KERR_OK);
    cr_assert_eq(buf_appends(&b, "]"), KERR_OK);
    return buf_detach(&b, NULL);
}

Test(jarena, a_tree_larger_than_the_block_spills_into_malloc, .init = install, .fini = fini)
{
    char *text = big_doc(2000);
    cJSON *small, *big;

    small = jarena_parse(doc, sizeof(doc) - 1, NULL);
    big = jarena_parse(text, strlen(text), NULL);
    cr_assert_not_null(big);
    cr_expect_eq(cJSON_GetArraySize(big), 2000);
    cr_expect(same_as_plain(big, text));
    cr_expect_leq(jarena_thread_used(), JARENA_BLOCK);
    jarena_delete(small); /* the spilled parts of big are freed with it below */
    jarena_delete(big);
    cr_expect_eq(jarena_thread_used(), 0);
    /* A tree that spills from its first node on is a plain tree. */
    big = jarena_parse(text, strlen(text), NULL);
    small = jarena_parse(text, strlen(text), NULL);
    cr_assert_not_null(small);
    cr_expect(same_as_plain(small, text));
    jarena_delete(small);
    jarena_delete(big);
    free(text);
}

Test(jarena, other_cjson_allocations_stay_malloc, .init = install, .fini = fini)
{
    cJSON *o = cJSON_CreateObject(), *t;
    char *text;

    t = jarena_parse(doc, sizeof(doc) - 1, NULL);
    cr_assert_not_null(o);
    cr_assert_not_null(cJSON_AddStringToObject(o, "k", "v"));
    cr_assert(cJSON_AddItemToObject(o, "copy", cJSON_Duplicate(t, 1)));
    text = cJSON_PrintUnformatted(o);
    cr_assert_not_null(text);
    jarena_delete(t); /* the duplicate does not depend on the block */
    cr_expect_eq(jarena_thread_used(), 0);
    t = jarena_parse(doc, sizeof(doc) - 1, NULL); /* reuses the block */
    cr_expect(same_as_plain(cJSON_GetObjectItemCaseSensitive(o, "copy"), doc));
    cr_expect_not_null(strstr(text, "\"k\":\"v\""));
    free(text); /* printed text is plain malloc memory */
    cJSON_Delete(o);
    jarena_delete(t);
}

static void *parse_many(void *arg)
{
    long ok = 0;
    int i;

    (void)arg;
    for (i = 0; i < 500; i++) {
        cJSON *t = jarena_parse(doc, sizeof(doc) - 1, NULL);

        ok += t && same_as_plain(t, doc) && jarena_thread_used() > 0;
        jarena_delete(t);
        ok -= jarena_thread_used() != 0;
    }
    return (void *)ok; /* the block of this thread is freed when it exits */
}

Test(jarena, each_thread_has_its_own_block, .init = install, .fini = fini)
{
    pthread_t th[4];
    void *ok;
    int i;

    for (i = 0; i < 4; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, parse_many, NULL), 0);
    for (i = 0; i < 4; i++) {
        cr_assert_eq(pthread_join(th[i], &ok), 0);
        cr_expect_eq((long)ok, 500);
    }
    cr_expect_eq(jarena_thread_used(), 0, "the main thread never parsed");
}

Test(jarena, reviews_are_decoded_into_the_block, .init = install, .fini = fini)
{
    static const char body[] =
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":"
        "{\"uid\":\"u-1\",\"operation\":\"UPDATE\",\"userInfo\":{\"username\":\"alice\"},"
        "\"object\":{\"metadata\":{\"name\":\"c\",\"labels\":{\"a\":\"b\"}}}}}";
    struct review_req r;

    review_req_init(&r);
    cr_assert_eq(review_req_decode(&r, body, sizeof(body) - 1, NULL), KERR_OK);
    cr_expect_gt(jarena_thread_used(), 0);
    cr_expect_str_eq(r.uid, "u-1");
    cr_expect_str_eq(r.username, "alice");
    cr_expect_eq(r.op, REVIEW_OP_UPDATE);
    cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(r.object, "metadata")->child->valuestring,
                     "c");
    review_req_release(&r);
    cr_expect_eq(jarena_thread_used(), 0);
    review_req_release(&r); /* twice is fine */
    cr_expect_neq(review_req_decode(&r, body, 20, NULL), KERR_OK);
    cr_expect_eq(jarena_thread_used(), 0);
}

/* The text of an array of n zeros: "[0,0,...]" (malloc'd). */
static char *zeros(size_t n)
{
    char *t = malloc(2 * n + 2);
    size_t i;

    cr_assert_not_null(t);
    t[0] = '[';
    for (i = 0; i < n; i++) {
        t[1 + 2 * i] = '0';
        t[2 + 2 * i] = ',';
    }
    t[2 * n] = ']';
    t[2 * n + 1] = '\0';
    return t;
}

/*
 * A parse budget bounds the tree: 100k zeros (200 KB of text) would take
 * some 6 MB of nodes; with a 1 MiB budget the parse fails, says so, leaks
 * nothing (LeakSanitizer) and leaves the block free; under the budget the
 * tree is whole.
 */
Test(jarena, a_budget_bounds_the_tree, .init = install, .fini = fini)
{
    char *big = zeros(100000), *small = zeros(1000);
    int over = 0;
    cJSON *t = jarena_parse_budget(big, strlen(big), NULL, 1u << 20, &over);

    cr_assert_null(t);
    cr_assert_eq(over, 1);
    cr_expect_eq(jarena_thread_used(), 0);
    t = jarena_parse_budget(small, strlen(small), NULL, 1u << 20, &over);
    cr_assert_not_null(t);
    cr_assert_eq(over, 0);
    cr_expect_eq(cJSON_GetArraySize(t), 1000);
    jarena_delete(t);
    t = jarena_parse_budget(big, strlen(big), NULL, 0, &over);
    cr_assert_not_null(t, "no budget: the whole tree");
    cr_expect_eq(over, 0);
    jarena_delete(t);
    free(big);
    free(small);
}

/* A review whose kept parts would parse into more than REVIEW_PARSE_BUDGET is refused. */
Test(jarena, a_review_past_the_parse_budget_is_refused, .init = install, .fini = fini)
{
    static const char head[] =
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
        "\"request\":{\"uid\":\"u\",\"operation\":\"UPDATE\",\"object\":"
        "{\"metadata\":{\"name\":\"e\"},\"spec\":{\"pad\":";
    static const char tail[] = "}}}}";
    char *pad = zeros(200000);
    struct buf b;
    struct review_req r;
    struct kerr_info err;
    enum review_need needs[] = { REVIEW_NEED_ETCD, REVIEW_NEED_ALL };
    size_t i;

    buf_init(&b, 1u << 24);
    cr_assert_eq(buf_appends(&b, head), KERR_OK);
    cr_assert_eq(buf_appends(&b, pad), KERR_OK);
    cr_assert_eq(buf_appends(&b, tail), KERR_OK);
    for (i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
        review_req_init(&r);
        cr_assert_eq(review_req_decode_sel(&r, b.data, b.len, needs[i], &err), KERR_TOOBIG, "%s",
                     err.msg);
        cr_expect(strstr(err.msg, "too large to decide"), "%s", err.msg);
        cr_assert_eq(review_req_decode_tree(&r, b.data, b.len, needs[i], &err), KERR_TOOBIG);
        review_req_release(&r);
    }
    /* a tenth of it decodes */
    buf_reset(&b);
    free(pad);
    pad = zeros(20000);
    cr_assert_eq(buf_appends(&b, head), KERR_OK);
    cr_assert_eq(buf_appends(&b, pad), KERR_OK);
    cr_assert_eq(buf_appends(&b, tail), KERR_OK);
    review_req_init(&r);
    cr_assert_eq(review_req_decode_sel(&r, b.data, b.len, REVIEW_NEED_ETCD, &err), KERR_OK, "%s",
                 err.msg);
    review_req_release(&r);
    buf_release(&b);
    free(pad);
}

Test(jarena, a_reserved_block_holds_a_large_tree, .init = install, .fini = fini)
{
    char *text = big_doc(2000); /* some 800 KB of text and nodes: far past JARENA_BLOCK */
    cJSON *small = jarena_parse(doc, sizeof(doc) - 1, NULL), *big;
    struct kerr_info err;

    cr_assert_not_null(small);
    cr_expect_eq(jarena_thread_reserve(4u << 20, &err), KERR_INVAL, "a tree lives in the block");
    jarena_delete(small);
    cr_assert_eq(jarena_thread_reserve(4u << 20, &err), KERR_OK, "%s", err.msg);
    cr_expect_eq(jarena_thread_reserve(1024, &err), KERR_OK, "smaller: kept as it is");
    big = jarena_parse(text, strlen(text), NULL);
    cr_assert_not_null(big);
    cr_expect_gt(jarena_thread_used(), JARENA_BLOCK, "the tree is in the reserved block");
    cr_expect(same_as_plain(big, text));
    cr_expect_eq(cJSON_GetArraySize(big), 2000);
    jarena_delete(big);
    cr_expect_eq(jarena_thread_used(), 0);
    jarena_thread_release();
    big = jarena_parse(doc, sizeof(doc) - 1, NULL); /* a fresh block of the default size */
    cr_assert_not_null(big);
    cr_expect(same_as_plain(big, doc));
    jarena_delete(big);
    free(text);
}

Test(jarena, reserve_without_install_does_nothing)
{
    struct kerr_info err;

    cr_expect_eq(jarena_thread_reserve(4u << 20, &err), KERR_OK);
    cr_expect_eq(jarena_thread_used(), 0);
}
