/*
 * Tests of the selective review decoder (review_req_decode_sel, webhook/jscan)
 * against the whole-tree decoder: every review of the fuzz corpora, reviews
 * generated here (a 12 KB StatefulSet UPDATE, every prefix and many one-byte
 * edits of reviews, tricky numbers, strings and nesting placed both where
 * the decisions read and where they do not) must get byte-identical answers
 * from every webhook (wh_decdiff). Also what the selective decoder keeps.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/kjson.h"
#include "common/log.h"
#include "webhook/jscan.h"
#include "webhook/review.h"
#include "webhook/wh_decdiff.h"

static void quiet(void)
{
    log_set_level(LOG_ERROR);
}

TestSuite(wh_decode, .init = quiet);

static void same(const char *body, size_t len, const char *what)
{
    struct kerr_info err;

    kerr_clear(&err);
    cr_assert_eq(wh_decdiff_fixture(body, len, &err), KERR_OK, "%s: %s\nbody: %.*s", what, err.msg,
                 (int)(len > 600 ? 600 : len), body);
}

/* A StatefulSet as etcd-druid writes it: two containers, probes, env, volumes, VCTs. */
static void sts_object(struct buf *b, const char *name, int replicas, const char *owner_uid)
{
    int c, i;

    cr_assert_eq(
        buf_appendf(b,
                    "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{"
                    "\"name\":\"%s\",\"namespace\":\"shoot\",\"uid\":\"9d1c\","
                    "\"resourceVersion\":\"4711\",\"generation\":3,"
                    "\"creationTimestamp\":\"2026-01-01T00:00:00Z\",\"labels\":{"
                    "\"app.kubernetes.io/managed-by\":\"etcd-druid\","
                    "\"app.kubernetes.io/part-of\":\"%s\",\"name\":\"etcd\"},"
                    "\"annotations\":{\"gardener.cloud/timestamp\":\"2026-01-01\"},"
                    "\"ownerReferences\":[{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\","
                    "\"kind\":\"Etcd\",\"name\":\"%s\",\"uid\":\"%s\",\"controller\":true,"
                    "\"blockOwnerDeletion\":true}],\"managedFields\":[{\"manager\":"
                    "\"etcd-druid\",\"operation\":\"Update\",\"apiVersion\":\"apps/v1\","
                    "\"time\":\"2026-01-01T00:00:00Z\",\"fieldsType\":\"FieldsV1\","
                    "\"fieldsV1\":{\"f:spec\":{\"f:replicas\":{},\"f:template\":{}}}}]},"
                    "\"spec\":{\"replicas\":%d,\"serviceName\":\"%s-peer\","
                    "\"selector\":{\"matchLabels\":{\"name\":\"etcd\"}},"
                    "\"podManagementPolicy\":\"Parallel\",\"template\":{\"metadata\":{"
                    "\"labels\":{\"name\":\"etcd\"}},\"spec\":{\"containers\":[",
                    name, name, name, owner_uid, replicas, name),
        KERR_OK);
    for (c = 0; c < 2; c++) {
        cr_assert_eq(
            buf_appendf(b,
                        "%s{\"name\":\"c%d\",\"image\":\"europe-docker.pkg.dev/gardener/"
                        "etcd-wrapper:v0.%d.0\",\"args\":[\"start-etcd\","
                        "\"--backup-restore-tls-enabled=true\",\"--etcd-client-port=2379\"],"
                        "\"ports\":[{\"name\":\"client\",\"containerPort\":2379,"
                        "\"protocol\":\"TCP\"},{\"name\":\"peer\",\"containerPort\":2380,"
                        "\"protocol\":\"TCP\"}],\"env\":[",
                        c ? "," : "", c, c + 4),
            KERR_OK);
        for (i = 0; i < 12; i++)
            cr_assert_eq(buf_appendf(b,
                                     "%s{\"name\":\"ENV_%d_%d\",\"value\":\"value-%d-with-some-"
                                     "length\\n\\u00e9\"}",
                                     i ? "," : "", c, i, i * 7919),
                         KERR_OK);
        cr_assert_eq(
            buf_appends(b, "],\"resources\":{\"limits\":{\"cpu\":\"2\",\"memory\":\"4Gi\"},"
                           "\"requests\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"}},"
                           "\"readinessProbe\":{\"httpGet\":{\"path\":\"/readyz\",\"port\":"
                           "9095,\"scheme\":\"HTTPS\"},\"initialDelaySeconds\":15,"
                           "\"periodSeconds\":5,\"failureThreshold\":5,"
                           "\"successThreshold\":1,\"timeoutSeconds\":1.5e0},"
                           "\"livenessProbe\":{\"exec\":{\"command\":[\"/bin/sh\",\"-ec\","
                           "\"ETCDCTL_API=3 etcdctl endpoint health\"]},"
                           "\"initialDelaySeconds\":15,\"periodSeconds\":5},"
                           "\"volumeMounts\":[{\"name\":\"etcd-main\",\"mountPath\":"
                           "\"/var/etcd/data/\"},{\"name\":\"etcd-config-file\",\"mountPath\":"
                           "\"/var/etcd/config/\"},{\"name\":\"client-url-ca-etcd\","
                           "\"mountPath\":\"/var/etcd/ssl/client/ca\"},{\"name\":"
                           "\"backup-secret\",\"mountPath\":\"/var/etcd-backup/\","
                           "\"readOnly\":true}],\"securityContext\":{\"runAsNonRoot\":true,"
                           "\"runAsUser\":65532,\"allowPrivilegeEscalation\":false}}"),
            KERR_OK);
    }
    cr_assert_eq(buf_appends(b, "],\"volumes\":["), KERR_OK);
    for (i = 0; i < 6; i++)
        cr_assert_eq(buf_appendf(b,
                                 "%s{\"name\":\"vol-%d\",\"secret\":{\"secretName\":\"secret-%d\","
                                 "\"defaultMode\":420,\"items\":[{\"key\":\"ca.crt\",\"path\":"
                                 "\"bundle.crt\"}]}}",
                                 i ? "," : "", i, i),
                     KERR_OK);
    cr_assert_eq(
        buf_appendf(b,
                    "]}},\"volumeClaimTemplates\":[{\"metadata\":{\"name\":\"%s\","
                    "\"ownerReferences\":[{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\","
                    "\"kind\":\"Etcd\",\"name\":\"%s\",\"uid\":\"%s\"}]},\"spec\":{"
                    "\"accessModes\":[\"ReadWriteOnce\"],\"resources\":{\"requests\":{"
                    "\"storage\":\"25Gi\"}},\"storageClassName\":\"default\"}}]},"
                    "\"status\":{\"replicas\":3,\"readyReplicas\":3,"
                    "\"observedGeneration\":3,\"currentRevision\":\"%s-5d8f\"}}",
                    name, name, owner_uid, name),
        KERR_OK);
}

static char *sts_review(const char *op, const char *user, size_t *len)
{
    struct buf b;

    buf_init(&b, 1u << 20);
    cr_assert_eq(buf_appendf(&b,
                             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                             "\"request\":{\"uid\":\"3f6a\",\"kind\":{\"group\":\"apps\","
                             "\"version\":\"v1\",\"kind\":\"StatefulSet\"},\"resource\":{"
                             "\"group\":\"apps\",\"version\":\"v1\",\"resource\":"
                             "\"statefulsets\"},\"requestKind\":{\"group\":\"apps\",\"version\":"
                             "\"v1\",\"kind\":\"StatefulSet\"},\"name\":\"etcd-main\","
                             "\"namespace\":\"shoot\",\"operation\":\"%s\",\"userInfo\":{"
                             "\"username\":\"%s\",\"uid\":\"7\",\"groups\":[\"system:"
                             "authenticated\"]},\"object\":",
                             op, user),
                 KERR_OK);
    sts_object(&b, "etcd-main", 3, "old-uid");
    cr_assert_eq(buf_appends(&b, ",\"oldObject\":"), KERR_OK);
    sts_object(&b, "etcd-main", 1, "u1");
    cr_assert_eq(buf_appends(&b, ",\"dryRun\":false,\"options\":{\"kind\":\"UpdateOptions\","
                                 "\"apiVersion\":\"meta.k8s.io/v1\"}}}"),
                 KERR_OK);
    return buf_detach(&b, len);
}

Test(wh_decode, the_12k_statefulset_review_is_answered_alike_by_every_webhook)
{
    static const char *const ops[] = { "UPDATE", "DELETE", "CREATE", "CONNECT" };
    static const char *const users[] = { "system:serviceaccount:druid:etcd-druid", "alice",
                                         "system:serviceaccount:kube-system:generic-garbage-"
                                         "collector" };
    size_t len, i, j;
    char *body;

    for (i = 0; i < 4; i++) {
        for (j = 0; j < 3; j++) {
            body = sts_review(ops[i], users[j], &len);
            cr_expect_gt(len, 10000, "%zu bytes", len);
            same(body, len, ops[i]);
            free(body);
        }
    }
}

Test(wh_decode, only_what_the_decision_reads_is_parsed)
{
    struct review_req r;
    struct kerr_info err;
    size_t len;
    char *body = sts_review("UPDATE", "alice", &len);

    review_req_init(&r);
    cr_assert_eq(review_req_decode_sel(&r, body, len, REVIEW_NEED_COMPONENTS, &err), KERR_OK, "%s",
                 err.msg);
    cr_expect_str_eq(r.username, "alice");
    cr_expect_not_null(kjson_get(r.object, "metadata.labels"));
    /* the guards read spec.replicas and, of the pod template, the containers' names and
     * volume mounts (a claim's volume unmounted), their env, envFrom, command and args and the
     * volumes (where the containers read etcd's configuration), the selector (the labels of the
     * claims it makes), and nothing else of a component's spec */
    cr_expect_not_null(kjson_get(r.object, "spec.replicas"), "spec.replicas is parsed");
    cr_expect_not_null(kjson_get(r.object, "spec.template.spec.containers.0.volumeMounts"));
    cr_expect_not_null(kjson_get(r.object, "spec.template.spec.containers.1.name"));
    cr_expect_null(kjson_get(r.object, "spec.template.spec.containers.0.image"),
                   "the rest of the pod template is not parsed");
    cr_expect_not_null(kjson_get(r.object, "spec.template.spec.containers.0.env"));
    cr_expect_not_null(kjson_get(r.object, "spec.template.spec.volumes"));
    cr_expect_not_null(kjson_get(r.object, "spec.template.spec.containers.0.args"));
    cr_expect_null(kjson_get(r.object, "spec.template.spec.containers.0.resources"));
    cr_expect_null(kjson_get(r.object, "spec.template.metadata"));
    cr_expect_null(kjson_get(r.object, "spec.podManagementPolicy"), "nor the rest of the spec");
    cr_expect_null(kjson_get(r.object, "metadata.managedFields"));
    cr_expect_null(kjson_get(r.object, "metadata.annotations"));
    /* of the options, only what tells an orphaning DELETE (propagationPolicy, orphanDependents) */
    cr_expect_null(kjson_get(cJSON_GetObjectItemCaseSensitive(r.root, "request"), "options.kind"));
    review_req_release(&r);
    cr_assert_eq(review_req_decode_sel(&r, body, len, REVIEW_NEED_MUTATE, &err), KERR_OK, "%s",
                 err.msg);
    cr_expect_null(kjson_get(r.old_object, "spec"), "of oldObject, the mutating endpoint reads "
                                                    "the metadata only");
    cr_expect_not_null(kjson_get(r.old_object, "metadata.labels"));
    cr_expect_not_null(kjson_get(r.object, "spec.volumeClaimTemplates"));
    cr_expect_null(kjson_get(r.object, "spec.template"));
    cr_expect_not_null(kjson_get(r.object, "metadata.ownerReferences"));
    review_req_release(&r);
    cr_assert_eq(review_req_decode_sel(&r, body, len, REVIEW_NEED_ETCD, &err), KERR_OK, "%s",
                 err.msg);
    cr_expect_not_null(kjson_get(r.object, "spec.template.spec.containers"),
                       "Etcd rules read spec");
    cr_expect_null(kjson_get(r.object, "status"));
    review_req_release(&r);
    free(body);
}

static char *read_text(const char *path, size_t *len)
{
    struct buf b;
    char chunk[4096];
    size_t n;
    FILE *f = fopen(path, "rb");

    cr_assert_not_null(f, "%s", path);
    buf_init(&b, 1u << 24);
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        cr_assert_eq(buf_append(&b, chunk, n), KERR_OK);
    fclose(f);
    if (b.len == 0)
        cr_assert_eq(buf_appends(&b, ""), KERR_OK);
    return buf_detach(&b, len);
}

/* Every file of a corpus directory (relative to the source tree). */
static size_t corpus(const char *dir)
{
    char path[4096];
    const char *src = getenv("WARDEN_SOURCE_DIR");
    struct dirent *e;
    size_t n = 0, len;
    char *text;
    DIR *d;

    snprintf(path, sizeof(path), "%s/%s", src ? src : ".", dir);
    d = opendir(path);
    cr_assert_not_null(d, "%s", path);
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s/%s", src ? src : ".", dir, e->d_name);
        text = read_text(path, &len);
        cr_assert_not_null(text, "%s", path);
        same(text, len, e->d_name);
        free(text);
        n++;
    }
    closedir(d);
    return n;
}

Test(wh_decode, every_review_of_the_fuzz_corpora)
{
    cr_expect_gt(corpus("tests/fuzz/corpus/review"), 5);
    cr_expect_gt(corpus("tests/fuzz/corpus/review_diff"), 5);
}

static const char cm_head[] =
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
    "\"uid\":\"u-1\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"ConfigMap\"},"
    "\"operation\":\"DELETE\",\"userInfo\":{\"username\":\"alice\"},\"namespace\":\"shoot\","
    "\"name\":\"c\",\"oldObject\":{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"c\","
    "\"labels\":{\"app.kubernetes.io/managed-by\":\"etcd-druid\","
    "\"app.kubernetes.io/part-of\":\"etcd-main\"}},";

/* A ConfigMap DELETE whose oldObject carries value under data (skipped) or metadata (kept). */
static void place(const char *value)
{
    char body[8192];

    snprintf(body, sizeof(body), "%s\"data\":{\"k\":%s}}}}", cm_head, value);
    same(body, strlen(body), value);
    snprintf(body, sizeof(body),
             "%s\"spec\":{\"x\":%s}},\"object\":{\"metadata\":{\"labels\":{\"a\":%s}}}}}", cm_head,
             value, value);
    same(body, strlen(body), value);
    snprintf(body, sizeof(body), "%s\"data\":{}},\"x\":%s}} ", cm_head, value);
    same(body, strlen(body), value);
}

Test(wh_decode, numbers_strings_and_literals_are_accepted_and_refused_as_cjson_does)
{
    static const char *const values[] = {
        "0",
        "-0",
        "01",
        "1.",
        "-.5",
        "-",
        "--1",
        "+1",
        "1e",
        "1e+",
        "1e+5",
        "1.5E-3",
        "1.2.3",
        "1e5e5",
        ".5",
        "0x10",
        "-inf",
        "1234567890123456789012345678901234567890123456789012345678901234567890",
        "0.00000000000000000000000000000000000000000000000000000000000001e999",
        "\"\\u0041\"",
        "\"\\u00\"",
        "\"\\uZZZZ\"",
        "\"\\ud800\\udc00\"",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"\\ud800\\u0041\"",
        "\"\\ud800x\\udc00\"",
        "\"\\x\"",
        "\"\\\"\"",
        "\"\\\\\"",
        "\"\\/\\b\\f\\n\\r\\t\"",
        "\"a\\u0000b\"",
        "\"\\u0000\"",
        "\"\xc3\xa9\"",
        "\"\x01\x1f\"",
        "\"unterminated",
        "\"\\",
        "null",
        "nul",
        "true",
        "tru",
        "false",
        "fals",
        "True",
        "[]",
        "[1,]",
        "[,1]",
        "[1 2]",
        "{}",
        "{,}",
        "{\"a\"}",
        "{\"a\":}",
        "{\"a\":1,}",
        "{1:2}",
        "[[[[]]]]",
        "[\"\\u0000\"]",
        "{\"\\u0000\":1}",
        "\x01"
        "1",
        "[\x7f]",
    };
    size_t i;

    for (i = 0; i < sizeof(values) / sizeof(values[0]); i++)
        place(values[i]);
}

static void nest(size_t depth, const char *inner)
{
    struct buf b;
    size_t i, len;
    char *body;

    buf_init(&b, 1u << 20);
    cr_assert_eq(buf_appendf(&b, "%.*s", (int)(sizeof(cm_head) - 2), cm_head), KERR_OK);
    cr_assert_eq(buf_appends(&b, "},\"data\":"), KERR_OK);
    for (i = 0; i < depth; i++)
        cr_assert_eq(buf_appends(&b, "["), KERR_OK);
    cr_assert_eq(buf_appends(&b, inner), KERR_OK);
    for (i = 0; i < depth; i++)
        cr_assert_eq(buf_appends(&b, "]"), KERR_OK);
    cr_assert_eq(buf_appends(&b, "}}"), KERR_OK);
    body = buf_detach(&b, &len);
    same(body, len, "nesting");
    free(body);
}

Test(wh_decode, the_nesting_limit_is_cjsons)
{
    nest(995, "1");
    nest(996, "1");
    nest(997, "{}");
    nest(998, "1");
    nest(999, "1");
    nest(1200, "1");
}

Test(wh_decode, bom_whitespace_nul_bytes_and_trailing_data)
{
    static const char *const frames[][2] = {
        { "\xEF\xBB\xBF", "" }, { " \t\r\n", "\n " },   { "", "x" },        { "", " {}" },
        { "", "\0" },           { "\x01\x02", "\x7f" }, { "\xEF\xBB", "" },
    };
    char body[4096];
    size_t i, n;

    for (i = 0; i < sizeof(frames) / sizeof(frames[0]); i++) {
        n = (size_t)snprintf(body, sizeof(body), "%s%s\"data\":{}}}}%s", frames[i][0], cm_head,
                             frames[i][1]);
        same(body, n + (frames[i][1][0] == '\0' && i == 4 ? 1 : 0), "frame");
    }
    same("\xEF\xBB\xBF{}", 5, "bom object");
    same("\xEF\xBB\xBF", 3, "bom alone");
    same("   ", 3, "blank");
}

/* Every prefix, and a one-byte edit at every position, of base. */
static void edits(const char *base)
{
    static const char swaps[] = { '"', '\\', '}', ']', ',', '0', '\0', 'u' };
    size_t len = strlen(base), i, k;
    char *body = malloc(len + 1);

    cr_assert_not_null(body);
    for (i = 0; i <= len; i++)
        same(base, i, "prefix");
    for (i = 0; i < len; i++) {
        for (k = 0; k < sizeof(swaps); k++) {
            memcpy(body, base, len + 1);
            body[i] = swaps[k];
            same(body, len, "edit");
        }
    }
    free(body);
}

Test(wh_decode, every_prefix_and_one_byte_edit_of_a_component_review)
{
    edits("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
          "\"uid\":\"u\",\"kind\":{\"group\":\"apps\",\"version\":\"v1\",\"kind\":\"StatefulSet\"},"
          "\"operation\":\"CREATE\",\"userInfo\":{\"username\":\"alice\",\"groups\":[\"g\"]},"
          "\"namespace\":\"shoot\",\"object\":{\"metadata\":{\"name\":\"etcd-main\",\"labels\":{"
          "\"app.kubernetes.io/managed-by\":\"etcd-druid\",\"app.kubernetes.io/part-of\":"
          "\"etcd-main\"},\"ownerReferences\":[{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\","
          "\"kind\":\"Etcd\",\"name\":\"etcd-main\",\"uid\":\"x\"}]},\"spec\":{\"replicas\":1.5e0,"
          "\"volumeClaimTemplates\":[{\"metadata\":{\"ownerReferences\":[{\"apiVersion\":"
          "\"druid.gardener.cloud/v1\",\"kind\":\"Etcd\",\"name\":\"etcd-main\"}]}},7,"
          "{\"spec\":null}],\"x\":[true,false,null]}},\"dryRun\":false}}");
}

Test(wh_decode, every_prefix_and_one_byte_edit_of_an_etcd_review)
{
    edits("{\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\",\"kind\":{\"group\":"
          "\"druid.gardener.cloud\",\"kind\":\"Etcd\"},\"operation\":\"UPDATE\",\"oldObject\":{"
          "\"metadata\":{\"labels\":{\"etcd-warden.io/restoring\":\"\"}},\"spec\":{\"replicas\":3,"
          "\"etcd\":{},\"backup\":{\"store\":{\"prefix\":\"p\"}}}},\"object\":{\"metadata\":{"
          "\"name\":\"e\"},\"spec\":{\"replicas\":3,\"etcd\":{},\"backup\":{\"store\":{"
          "\"prefix\":\"p\"}}},\"status\":{\"ready\":true}}}}");
}

Test(wh_decode, keys_match_as_cjson_reads_them)
{
    static const char *const keys[] = {
        "\"meta\\u0064ata\"", "\"metadata\\u0000x\"", "\"metadata\\u0000\"", "\"Metadata\"",
        "\"metadata \"",      "\"labels\\u0000\"",    "\"na\\u006de\"",      "\"\\u006eame\"",
    };
    char body[4096];
    size_t i;

    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        snprintf(
            body, sizeof(body),
            "{\"request\":{\"uid\":\"u\",\"kind\":{\"group\":\"\",\"kind\":\"ConfigMap\"},"
            "\"operation\":\"DELETE\",\"oldObject\":{%s:{\"name\":\"c\",\"labels\":{"
            "\"app.kubernetes.io/managed-by\":\"etcd-druid\"}}, \"metadata\":{\"name\":\"d\"}},"
            "\"object\":{\"metadata\":{%s:\"n\"}}}}",
            keys[i], keys[i]);
        same(body, strlen(body), keys[i]);
    }
}

Test(wh_decode, jscan_refuses_only_what_cjson_refuses)
{
    static const char *const texts[] = { "{\"a\":[1,2,{\"b\":null}]}", "[1,]", "\"x", "-", "1x" };
    struct jscan_result res;
    size_t i;
    cJSON *t;
    const char *end = NULL;

    for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        t = cJSON_ParseWithLengthOpts(texts[i], strlen(texts[i]), &end, 0);
        cr_expect_eq(jscan_filter(texts[i], strlen(texts[i]), NULL, NULL, &res) == KERR_OK,
                     t != NULL, "%s", texts[i]);
        if (t)
            cr_expect_eq(res.end, (size_t)(end - texts[i]), "%s", texts[i]);
        cJSON_Delete(t);
    }
}

/*
 * Strings end where cJSON's end, a backslash hiding the byte after it, wherever the
 * backslash falls: before, on and after the bytes jscan walks in place (STRING_WALK),
 * escaping a quote or the last byte, in a string closed or not; and literals, numbers
 * and containers after a string, as a value of every kind begins.
 */
Test(wh_decode, jscan_ends_strings_where_cjson_does)
{
    static const char *const tails[] = { "\"", "\\\"",      "\\\\\"", "\\",
                                         "",   "\\u0041\"", "\\x\"",  "\\\"x" };
    static const char *const after[] = { "",       "]",     ",null]",       ",false]", ",true]",
                                         ",-1e3]", ",nul]", ",{\"a\":[]}]", ",[tru]",  ",x]" };
    char text[256];
    struct jscan_result res;
    const char *end;
    cJSON *t;
    int n, bs, ti, ai, ok;

    for (n = 0; n < 70; n++)
        for (bs = -1; bs < n; bs++)
            for (ti = 0; ti < (int)(sizeof(tails) / sizeof(tails[0])); ti++)
                for (ai = 0; ai < (int)(sizeof(after) / sizeof(after[0])); ai++) {
                    int len = snprintf(text, sizeof(text), "[\"");
                    for (int i = 0; i < n; i++)
                        text[len++] = i == bs ? '\\' : (char)('a' + i % 26);
                    len += snprintf(text + len, sizeof(text) - (size_t)len, "%s%s", tails[ti],
                                    after[ai]);
                    end = NULL;
                    t = cJSON_ParseWithLengthOpts(text, (size_t)len, &end, 0);
                    ok = jscan_filter(text, (size_t)len, NULL, NULL, &res) == KERR_OK;
                    cr_expect_eq(ok, t != NULL, "%s", text);
                    if (t && ok)
                        cr_expect_eq(res.end, (size_t)(end - text), "%s", text);
                    cJSON_Delete(t);
                }
}
