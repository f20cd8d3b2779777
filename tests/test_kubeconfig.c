#include "common/kubeconfig.h"

#include <criterion/criterion.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cfg.h"
#include "tests/support/testutil.h"

#define CA_PEM   "-----BEGIN CERTIFICATE-----\nQ0FDRVJU\n-----END CERTIFICATE-----\n"
#define CERT_PEM "-----BEGIN CERTIFICATE-----\nQ0xJRU5U\n-----END CERTIFICATE-----\n"
#define KEY_PEM  "-----BEGIN PRIVATE KEY-----\nS0VZ\n-----END PRIVATE KEY-----\n"

static char *b64(const char *s)
{
    size_t n = strlen(s);
    char *out = malloc(n / 3 * 4 + 8);

    cr_assert_not_null(out);
    EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)s, (int)n);
    return out;
}

/* Load text as <dir>/config and expect code with "<dir>/config:<line>: " and problem. */
static void expect_fail(const char *text, const char *context, enum kerr code, int line,
                        const char *problem)
{
    struct testutil_dir d;
    struct cfg_rest r;
    struct kerr_info e;
    char where[128];
    const char *path;

    testutil_dir_make(&d, "kcfg-test");
    path = testutil_dir_write(&d, "config", text);
    snprintf(where, sizeof(where), "%s:%d: ", path, line);
    cr_expect_eq(cfg_load_kubeconfig(path, context, &r, &e), code, "code %s, msg: %s",
                 kerr_name(e.code), e.msg);
    cr_expect_not_null(strstr(e.msg, where), "no \"%s\" in: %s", where, e.msg);
    cr_expect_not_null(strstr(e.msg, problem), "no \"%s\" in: %s", problem, e.msg);
    cr_expect_null(r.server);
    testutil_dir_remove(&d);
}

static const char token_config[] = "apiVersion: v1\n"
                                   "kind: Config\n"
                                   "current-context: dev\n"
                                   "contexts:\n"
                                   "- name: dev\n"
                                   "  context:\n"
                                   "    cluster: c1\n"
                                   "    user: u1\n"
                                   "    namespace: team-a\n"
                                   "- name: prod\n"
                                   "  context: {cluster: c2, user: u2}\n"
                                   "clusters:\n"
                                   "- name: c1\n"
                                   "  cluster:\n"
                                   "    server: https://k.example:6443//\n"
                                   "    insecure-skip-tls-verify: true\n"
                                   "    tls-server-name: api.internal\n"
                                   "- name: c2\n"
                                   "  cluster:\n"
                                   "    server: http://127.0.0.1:8080\n"
                                   "users:\n"
                                   "- name: u1\n"
                                   "  user:\n"
                                   "    token: \"  abc123 \\n\"\n"
                                   "- name: u2\n"
                                   "  user: {token: prodtoken}\n";

Test(kubeconfig, static_token_current_context_and_namespace)
{
    struct cfg_rest r;
    struct kerr_info e;

    cr_assert_eq(
        cfg_parse_kubeconfig(token_config, strlen(token_config), "/etc/kube/config", NULL, &r, &e),
        KERR_OK, "%s", e.msg);
    cr_expect_str_eq(r.server, "https://k.example:6443");
    cr_expect_str_eq(r.token, "abc123");
    cr_expect_null(r.token_file);
    cr_expect_eq(r.insecure, 1);
    cr_expect_str_eq(r.tls_server_name, "api.internal");
    cr_expect_null(r.ca_pem);
    cr_expect_null(r.cert_pem);
    cr_expect_str_eq(r.namespace, "team-a");
    cr_expect_str_eq(r.source, "/etc/kube/config");
    cfg_rest_release(&r);
    cr_expect_null(r.server);
    cfg_rest_release(&r);
}

Test(kubeconfig, explicit_context_overrides_current_and_namespace_defaults)
{
    struct cfg_rest r;
    struct kerr_info e;

    cr_assert_eq(cfg_parse_kubeconfig(token_config, strlen(token_config), NULL, "prod", &r, &e),
                 KERR_OK, "%s", e.msg);
    cr_expect_str_eq(r.server, "http://127.0.0.1:8080");
    cr_expect_str_eq(r.token, "prodtoken");
    cr_expect_eq(r.insecure, 0);
    cr_expect_null(r.tls_server_name);
    cr_expect_str_eq(r.namespace, "default");
    cr_expect_str_eq(r.source, "<kubeconfig>");
    cfg_rest_release(&r);
}

Test(kubeconfig, inline_data_credentials_are_decoded)
{
    char *ca = b64(CA_PEM), *cert = b64(CERT_PEM), *key = b64(KEY_PEM), text[2048];
    struct cfg_rest r;
    struct kerr_info e;

    snprintf(text, sizeof(text),
             "current-context: x\n"
             "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
             "clusters:\n"
             "- name: c\n"
             "  cluster:\n"
             "    server: https://10.1.2.3\n"
             "    certificate-authority-data: %s\n"
             "users:\n"
             "- name: u\n"
             "  user:\n"
             "    client-certificate-data: %s\n"
             "    client-key-data: %s\n",
             ca, cert, key);
    cr_assert_eq(cfg_parse_kubeconfig(text, strlen(text), "cfg", NULL, &r, &e), KERR_OK, "%s",
                 e.msg);
    cr_expect_eq(r.ca_len, strlen(CA_PEM));
    cr_expect_str_eq(r.ca_pem, CA_PEM);
    cr_expect_str_eq(r.cert_pem, CERT_PEM);
    cr_expect_eq(r.cert_len, strlen(CERT_PEM));
    cr_expect_str_eq(r.key_pem, KEY_PEM);
    cr_expect_eq(r.key_len, strlen(KEY_PEM));
    cr_expect_null(r.token);
    cfg_rest_release(&r);
    free(ca);
    free(cert);
    free(key);
}

Test(kubeconfig, files_are_read_relative_to_the_kubeconfig)
{
    static const char text[] = "current-context: x\n"
                               "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
                               "clusters:\n"
                               "- name: c\n"
                               "  cluster:\n"
                               "    server: https://k:443\n"
                               "    certificate-authority: ca.crt\n"
                               "users:\n"
                               "- name: u\n"
                               "  user:\n"
                               "    client-certificate: tls.crt\n"
                               "    client-key: tls.key\n"
                               "    tokenFile: token\n";
    struct testutil_dir d;
    struct cfg_rest r;
    struct kerr_info e;
    char want[160];
    const char *path;

    testutil_dir_make(&d, "kcfg-test");
    testutil_dir_write(&d, "ca.crt", CA_PEM);
    testutil_dir_write(&d, "tls.crt", CERT_PEM);
    testutil_dir_write(&d, "tls.key", KEY_PEM);
    testutil_dir_write(&d, "token", "tok-from-file\n");
    path = testutil_dir_write(&d, "config", text);
    cr_assert_eq(cfg_load_kubeconfig(path, NULL, &r, &e), KERR_OK, "%s", e.msg);
    cr_expect_str_eq(r.ca_pem, CA_PEM);
    cr_expect_str_eq(r.cert_pem, CERT_PEM);
    cr_expect_str_eq(r.key_pem, KEY_PEM);
    snprintf(want, sizeof(want), "%s/token", d.path);
    cr_expect_str_eq(r.token_file, want);
    cr_expect_str_eq(r.source, path);
    cfg_rest_release(&r);
    testutil_dir_remove(&d);
}

Test(kubeconfig, context_without_user_is_anonymous)
{
    static const char text[] = "current-context: a\n"
                               "contexts:\n"
                               "- name: a\n"
                               "  context:\n"
                               "    cluster: c\n"
                               "clusters:\n"
                               "- {name: c, cluster: {server: 'https://h'}}\n"
                               "users: null\n";
    struct cfg_rest r;

    cr_assert_eq(cfg_parse_kubeconfig(text, strlen(text), "k", NULL, &r, NULL), KERR_OK);
    cr_expect_str_eq(r.server, "https://h");
    cr_expect_null(r.token);
    cr_expect_null(r.cert_pem);
    cfg_rest_release(&r);
}

Test(kubeconfig, not_yaml)
{
    expect_fail("current-context: a\nclusters: [\n  - {name: x\nusers: : :\n", NULL, KERR_PARSE, 3,
                "not YAML: did not find expected node content");
    expect_fail("a: b\n  c: d\n", NULL, KERR_PARSE, 2, "not YAML: mapping values are not allowed");
}

Test(kubeconfig, top_level_not_a_mapping)
{
    expect_fail("# comment\n- a\n- b\n", NULL, KERR_PARSE, 2,
                "top level is not a mapping but a list");
    expect_fail("just a string\n", NULL, KERR_PARSE, 1, "top level is not a mapping");
    expect_fail("", NULL, KERR_PARSE, 1, "the file is empty");
}

Test(kubeconfig, no_current_context)
{
    expect_fail("apiVersion: v1\nclusters: []\n", NULL, KERR_NOTFOUND, 1,
                "no current-context is set");
}

Test(kubeconfig, context_not_found)
{
    expect_fail("apiVersion: v1\n"
                "current-context: ghost\n"
                "contexts:\n"
                "- {name: a, context: {cluster: c}}\n",
                NULL, KERR_NOTFOUND, 2, "context \"ghost\" not found");
    expect_fail("contexts:\n- {name: a, context: {cluster: c}}\n", "other", KERR_NOTFOUND, 2,
                "context \"other\" not found");
}

Test(kubeconfig, cluster_and_user_not_found)
{
    expect_fail("current-context: a\n"
                "contexts:\n"
                "- name: a\n"
                "  context:\n"
                "    cluster: nope\n"
                "    user: u\n"
                "clusters: []\n",
                NULL, KERR_NOTFOUND, 5, "cluster \"nope\" not found");
    expect_fail("current-context: a\n"
                "contexts:\n"
                "- name: a\n"
                "  context:\n"
                "    cluster: c\n"
                "    user: who\n"
                "clusters: [{name: c, cluster: {server: 'https://x'}}]\n"
                "users: [{name: u, user: {}}]\n",
                NULL, KERR_NOTFOUND, 6, "user \"who\" not found");
}

static const char ctx_head[] = "current-context: a\n"                          /* 1 */
                               "contexts:\n"                                   /* 2 */
                               "- {name: a, context: {cluster: c, user: u}}\n" /* 3 */
                               "users:\n"                                      /* 4 */
                               "- name: u\n"                                   /* 5 */
                               "  user: {token: t}\n"                          /* 6 */
                               "clusters:\n"                                   /* 7 */
                               "- name: c\n"                                   /* 8 */
                               "  cluster:\n";                                 /* 9 */

/* As expect_fail for the text head followed by body. */
static void expect_fail_after(const char *head, const char *body, enum kerr code, int line,
                              const char *problem)
{
    char text[1024];

    snprintf(text, sizeof(text), "%s%s", head, body);
    expect_fail(text, NULL, code, line, problem);
}

Test(kubeconfig, missing_or_bad_server)
{
    expect_fail_after(ctx_head, "    insecure-skip-tls-verify: true\n", KERR_PARSE, 10,
                      "cluster \"c\" has no server");
    expect_fail_after(ctx_head, "    server: ftp://k:21\n", KERR_PARSE, 10,
                      "must start with https:// or http://");
    expect_fail_after(ctx_head, "    server: k.example:6443\n", KERR_PARSE, 10,
                      "must start with https:// or http://");
    expect_fail_after(ctx_head, "    server: https:///\n", KERR_PARSE, 10, "has no host");
}

Test(kubeconfig, bad_base64)
{
    expect_fail_after(ctx_head,
                      "    server: https://k\n"
                      "    certificate-authority-data: 'not*base64!'\n",
                      KERR_PARSE, 11, "certificate-authority-data is not valid base64");
    expect_fail_after(ctx_head,
                      "    server: https://k\n"
                      "    certificate-authority-data: QUJD=\n",
                      KERR_PARSE, 11, "is not valid base64");
}

Test(kubeconfig, decoded_data_must_be_pem)
{
    expect_fail_after(ctx_head,
                      "    server: https://k\n"
                      "    certificate-authority-data: aGVsbG8gd29ybGQ=\n",
                      KERR_PARSE, 11, "does not contain PEM data");
}

Test(kubeconfig, unreadable_referenced_file)
{
    expect_fail_after(ctx_head,
                      "    server: https://k\n"
                      "    certificate-authority: missing/ca.crt\n",
                      KERR_IO, 11, "certificate-authority: cannot read");
}

Test(kubeconfig, both_file_and_data)
{
    expect_fail_after(ctx_head,
                      "    server: https://k\n"
                      "    certificate-authority: ca.crt\n"
                      "    certificate-authority-data: QUJD\n",
                      KERR_PARSE, 12,
                      "both certificate-authority and certificate-authority-data are set");
}

Test(kubeconfig, insecure_with_ca_is_refused)
{
    char *ca = b64(CA_PEM), body[512];

    snprintf(body, sizeof(body),
             "    server: https://k\n"
             "    certificate-authority-data: %s\n"
             "    insecure-skip-tls-verify: true\n",
             ca);
    expect_fail_after(ctx_head, body, KERR_PARSE, 12,
                      "cannot be combined with a certificate authority");
    free(ca);
}

Test(kubeconfig, wrong_scalar_types)
{
    expect_fail_after(ctx_head, "    server: [https://a, https://b]\n", KERR_PARSE, 10,
                      "server must be a string, not a list");
    expect_fail_after(ctx_head, "    server: https://k\n    insecure-skip-tls-verify: maybe\n",
                      KERR_PARSE, 11, "insecure-skip-tls-verify must be true or false");
    expect_fail("current-context: {a: b}\n", NULL, KERR_PARSE, 1,
                "current-context must be a string, not a mapping");
    expect_fail("current-context: a\ncontexts: {a: b}\n", NULL, KERR_PARSE, 2,
                "contexts must be a list, not a mapping");
    expect_fail("current-context: a\ncontexts:\n- just-a-name\n", NULL, KERR_PARSE, 3,
                "contexts[0] must be a mapping, not a string");
    expect_fail("current-context: a\ncontexts:\n- {context: {cluster: c}}\n", NULL, KERR_PARSE, 3,
                "contexts[0] has no name");
}

static const char user_head[] = "current-context: a\n"                          /* 1 */
                                "contexts:\n"                                   /* 2 */
                                "- {name: a, context: {cluster: c, user: u}}\n" /* 3 */
                                "clusters:\n"                                   /* 4 */
                                "- {name: c, cluster: {server: 'https://k'}}\n" /* 5 */
                                "users:\n"                                      /* 6 */
                                "- name: u\n"                                   /* 7 */
                                "  user:\n";                                    /* 8 */

Test(kubeconfig, client_cert_without_key_and_key_without_cert)
{
    char *cert = b64(CERT_PEM), *key = b64(KEY_PEM), body[512];

    snprintf(body, sizeof(body), "    client-certificate-data: %s\n", cert);
    expect_fail_after(user_head, body, KERR_PARSE, 9,
                      "client certificate given without a client key");
    snprintf(body, sizeof(body), "    token: x\n    client-key-data: %s\n", key);
    expect_fail_after(user_head, body, KERR_PARSE, 9,
                      "client key given without a client certificate");
    free(cert);
    free(key);
}

Test(kubeconfig, exec_and_auth_provider_are_not_supported)
{
    expect_fail_after(user_head,
                      "    exec:\n"
                      "      apiVersion: client.authentication.k8s.io/v1\n"
                      "      command: aws\n",
                      KERR_UNSUPPORTED, 10,
                      "user \"u\": exec credential plugins are not supported");
    expect_fail_after(user_head, "    auth-provider:\n      name: gcp\n", KERR_UNSUPPORTED, 10,
                      "auth-provider plugins are not supported");
    expect_fail_after(user_head, "    username: admin\n    password: secret\n", KERR_UNSUPPORTED, 9,
                      "basic authentication");
    expect_fail_after(user_head, "    token: t\n    as: someone\n", KERR_UNSUPPORTED, 10,
                      "impersonation");
}

Test(kubeconfig, token_must_be_one_printable_word)
{
    expect_fail_after(user_head, "    token: \"abc\\r\\nX-Injected: 1\"\n", KERR_PARSE, 9,
                      "user \"u\": token must be one word of printable characters");
}

Test(kubeconfig, proxy_url_is_not_supported)
{
    expect_fail_after(ctx_head, "    server: https://k\n    proxy-url: http://proxy:3128\n",
                      KERR_UNSUPPORTED, 11, "cluster \"c\": proxy-url is not supported");
}

Test(kubeconfig, token_file_must_be_readable)
{
    expect_fail_after(user_head, "    tokenFile: /nonexistent/token\n", KERR_IO, 9,
                      "tokenFile: cannot read /nonexistent/token");
}

Test(kubeconfig, duplicate_names_and_keys)
{
    expect_fail("current-context: a\n"
                "contexts:\n"
                "- {name: a, context: {cluster: c}}\n"
                "clusters:\n"
                "- {name: c, cluster: {server: 'https://one'}}\n"
                "- {name: d, cluster: {server: 'https://two'}}\n"
                "- {name: c, cluster: {server: 'https://three'}}\n",
                NULL, KERR_PARSE, 7, "duplicate cluster name \"c\" (also on line 5)");
    expect_fail("current-context: a\n"
                "contexts:\n"
                "- {name: a, context: {cluster: c}}\n"
                "- {name: a, context: {cluster: d}}\n",
                NULL, KERR_PARSE, 4, "duplicate context name \"a\"");
    expect_fail_after(ctx_head, "    server: https://k\n    server: https://j\n", KERR_PARSE, 11,
                      "duplicate key \"server\"");
}

Test(kubeconfig, alias_reuse_is_refused)
{
    expect_fail("current-context: a\n"
                "contexts:\n"
                "- &e {name: a, context: {cluster: c}}\n"
                "- *e\n",
                NULL, KERR_PARSE, 3, "YAML alias");
}

Test(kubeconfig, scalar_alias_is_fine)
{
    static const char text[] = "current-context: &n a\n"
                               "contexts: [{name: *n, context: {cluster: c}}]\n"
                               "clusters: [{name: c, cluster: {server: 'https://k'}}]\n";
    struct cfg_rest r;
    struct kerr_info e;

    cr_assert_eq(cfg_parse_kubeconfig(text, strlen(text), "k", NULL, &r, &e), KERR_OK, "%s", e.msg);
    cfg_rest_release(&r);
}

Test(kubeconfig, oversized_input)
{
    struct cfg_rest r;
    struct kerr_info e;

    cr_expect_eq(cfg_parse_kubeconfig("a: b\n", CFG_MAX_FILE + 1, "/big/config", NULL, &r, &e),
                 KERR_TOOBIG);
    cr_expect_not_null(strstr(e.msg, "/big/config: "), "%s", e.msg);
    cr_expect_not_null(strstr(e.msg, "more than the limit"), "%s", e.msg);
}

Test(kubeconfig, oversized_file)
{
    struct testutil_dir d;
    struct cfg_rest r;
    struct kerr_info e;
    char *big = malloc(CFG_MAX_FILE + 2);
    const char *path;

    cr_assert_not_null(big);
    memset(big, '#', CFG_MAX_FILE + 1);
    big[CFG_MAX_FILE + 1] = '\0';
    testutil_dir_make(&d, "kcfg-test");
    path = testutil_dir_write(&d, "config", big);
    cr_expect_eq(cfg_load_kubeconfig(path, NULL, &r, &e), KERR_TOOBIG);
    cr_expect_not_null(strstr(e.msg, path), "%s", e.msg);
    cr_expect_not_null(strstr(e.msg, "larger than"), "%s", e.msg);
    free(big);
    testutil_dir_remove(&d);
}

Test(kubeconfig, missing_file)
{
    struct cfg_rest r;
    struct kerr_info e;

    cr_expect_eq(cfg_load_kubeconfig("/nonexistent/kubeconfig", NULL, &r, &e), KERR_IO);
    cr_expect_str_eq(e.msg, "cannot read /nonexistent/kubeconfig: No such file or directory");
}

Test(kubeconfig, base64_decoder)
{
    static const char spaced[] = "aGVs\nbG8g\r\nd29y bGQ=";
    char *out = NULL;
    size_t n = 0;

    cr_assert_eq(kcfg_base64_decode(spaced, strlen(spaced), &out, &n, NULL), KERR_OK);
    cr_expect_eq(n, 11);
    cr_expect_str_eq(out, "hello world");
    free(out);
    cr_expect_eq(kcfg_base64_decode("aGVsbG8", 7, &out, &n, NULL), KERR_PARSE);
    cr_expect_eq(kcfg_base64_decode("aG=sbG8=", 8, &out, &n, NULL), KERR_PARSE);
    cr_expect_eq(kcfg_base64_decode("aGVs-G8=", 8, &out, &n, NULL), KERR_PARSE);
    cr_expect_eq(kcfg_base64_decode("", 0, &out, &n, NULL), KERR_PARSE);
    cr_expect_null(out);
}

Test(kubeconfig, hostile_inputs_do_not_crash)
{
    static const char *const inputs[] = {
        "\xff\xfe\x00garbage",
        "a: &a [*a, *a]\ncurrent-context: *a\n",
        "current-context: a\ncontexts: &l [*l]\n",
        "? [complex, key]\n: value\n",
        "current-context: a\ncontexts:\n- {name: a, context: &c {cluster: *c}}\n",
        "%YAML 1.1\n---\n{current-context: 'a\\0b'}\n",
        "current-context: \"a\\0b\"\n",
        "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
    };
    struct cfg_rest r;
    struct kerr_info e;
    size_t i;

    for (i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
        cr_expect_neq(cfg_parse_kubeconfig(inputs[i], strlen(inputs[i]) + (i == 0 ? 3 : 0), "h",
                                           NULL, &r, &e),
                      KERR_OK, "input %zu", i);
        cr_expect_not_null(strstr(e.msg, "h:"), "input %zu: %s", i, e.msg);
    }
}
