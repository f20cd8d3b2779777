/* The API client (common/k8s) against kube-sim: 429 answers retried after their Retry-After
 * within the retry budget, a 500 without one not retried, a missing token refused, and a
 * rotated bearer token file re-read after a 401. */
#include "common/k8s.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cfg.h"
#include "common/ktime.h"
#include "tests/support/ksimcli.h"
#include "tests/support/ksimfix.h"
#include "tests/support/testutil.h"

static const struct k8s_resource CM = { "", "v1", "configmaps", 1 };
static const struct k8s_resource NS = { "", "v1", "namespaces", 0 };

/* call returned KERR_OK (else the client's message is printed). */
#define OK(call) KSIMCLI_OK(call, err)

/* call failed with code, HTTP status and Status reason. */
#define FAILS(call, code, status, why) KSIMCLI_FAILS(call, err, code, status, why)

static struct ksimcli fx;
static struct kerr_info err;

static void stop(void)
{
    ksimcli_release(&fx);
}

TestSuite(client_kubesim_auth, .fini = stop, .timeout = 30);

Test(client_kubesim_auth, throttling_is_retried_after_retry_after)
{
    struct k8s_client_opts co = { .max_retries = 2, .max_retry_delay_ms = 10 };
    struct cfg_rest rest;
    struct k8s_client *impatient;
    long long t0;
    cJSON *o = NULL;

    ksimcli_init(&fx, NULL, NULL);
    ksimcli_create_cm(fx.c, "default", "t", NULL, NULL);
    ksimfix_faults(fx.h, "{\"throttleRate\":1}");
    ksimcli_codes(&fx);
    fx.reset_on_429 = 1;
    t0 = ktime_mono_ms();
    OK(k8s_get(fx.c, &CM, "default", "t", NULL, &o, &err));
    cr_assert_geq(ktime_mono_ms() - t0, 950, "kube-sim asks for Retry-After: 1");
    cr_assert_str_eq(ksimcli_codes(&fx), "429,200");
    cJSON_Delete(o);
    ksimfix_faults(fx.h, "{\"throttleRate\":1}");
    ksimcli_load_rest(fx.h, &rest);
    impatient = ksimcli_client(&fx, &rest, &co);
    cfg_rest_release(&rest);
    FAILS(k8s_get(impatient, &CM, "default", "t", NULL, &o, &err), KERR_TOOMANY, 429,
          "TooManyRequests");
    cr_assert_str_eq(ksimcli_codes(&fx), "429,429,429",
                     "max_retries 2, each sleep capped at 10 ms");
    k8s_client_free(impatient);
}

Test(client_kubesim_auth, internal_error_without_retry_after_is_final)
{
    cJSON *o = NULL;

    ksimcli_init(&fx, NULL, NULL);
    ksimfix_faults(fx.h,
                   "{\"errorRate\":1,\"match\":\"GET /api/v1/namespaces/default/configmaps\"}");
    FAILS(k8s_get(fx.c, &CM, "default", "t", NULL, &o, &err), KERR_API, 500, "InternalError");
    cr_assert_str_eq(ksimcli_codes(&fx), "500", "no Retry-After, no retry (as client-go)");
    OK(k8s_get(fx.c, &NS, NULL, "default", NULL, &o, &err));
    cJSON_Delete(o);
}

Test(client_kubesim_auth, no_token_is_unauthorized)
{
    struct cfg_rest rest;
    struct k8s_client *anon;
    cJSON *o = NULL;

    ksimcli_init(&fx, NULL, NULL);
    ksimcli_load_rest(fx.h, &rest);
    free(rest.token);
    rest.token = strdup("");
    anon = ksimcli_client(&fx, &rest, NULL);
    cfg_rest_release(&rest);
    FAILS(k8s_get(anon, &NS, NULL, "default", NULL, &o, &err), KERR_UNAUTHORIZED, 401,
          "Unauthorized");
    cr_assert_str_eq(ksimcli_codes(&fx), "401,401", "one retry after re-reading the token");
    k8s_client_free(anon);
}

/* A client that reads its token from path, where token (a line) is written first. */
static struct k8s_client *token_file_client(const char *path, const char *token)
{
    struct cfg_rest rest;
    struct k8s_client *k;

    testutil_write_file(path, token);
    ksimcli_load_rest(fx.h, &rest);
    free(rest.token);
    rest.token = NULL;
    rest.token_file = strdup(path);
    k = ksimcli_client(&fx, &rest, NULL);
    cfg_rest_release(&rest);
    return k;
}

Test(client_kubesim_auth, rotated_token_file_is_reread_after_a_401)
{
    struct ksim_harness_opts ho = { .no_controllers = 1,
                                    .token_csv = "alice-token,alice,uid-a,\n"
                                                 "root-token,root,uid-r,system:masters\n" };
    struct k8s_client *alice, *root;
    char path[300], root_path[300];
    const char *reset = "{\"reset\":true}";
    cJSON *o = NULL;

    ksimcli_init(&fx, &ho, NULL);
    snprintf(path, sizeof(path), "%s/token", fx.h->dir);
    snprintf(root_path, sizeof(root_path), "%s/root-token", fx.h->dir);
    alice = token_file_client(path, "expired-token\n");
    root = token_file_client(root_path, "root-token\n");
    cr_assert_eq(k8s_get(alice, &NS, NULL, "default", NULL, &o, &err), KERR_UNAUTHORIZED);
    cr_assert_str_eq(ksimcli_codes(&fx), "401,401");
    testutil_write_file(path, "alice-token\n"); /* swapped by a rename, as kubelet does */
    OK(k8s_get(alice, &NS, NULL, "default", NULL, &o, &err));
    cr_assert_str_eq(ksimcli_codes(&fx), "401,200",
                     "the cached token failed, the rotated one worked");
    cJSON_Delete(o);
    OK(k8s_get(alice, &NS, NULL, "default", NULL, &o, &err));
    cr_assert_str_eq(ksimcli_codes(&fx), "200", "the new token is kept");
    cJSON_Delete(o);
    cr_assert_eq(k8s_request(alice, "POST", "/kube-sim/faults", "application/json", reset,
                             strlen(reset), NULL, &err),
                 KERR_FORBIDDEN, "alice is no system:master");
    OK(k8s_request(root, "POST", "/kube-sim/faults", "application/json", reset, strlen(reset), NULL,
                   &err));
    k8s_client_free(root);
    k8s_client_free(alice);
}
