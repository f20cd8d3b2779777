/* kube-sim's Service clusterIP allocation (--service-cluster-ip-range): the allocator, then
 * Services created, updated and deleted through the API with a small loopback range. */
#include "tests/kube-sim/svcip.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tests/kube-sim/harness.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimfix.h"

static struct ksim_svcip *make(const char *cidr)
{
    struct ksim_svcip *a = NULL;
    struct kerr_info err;

    cr_assert_eq(ksim_svcip_new(cidr, &a, &err), KERR_OK, "%s: %s", cidr, err.msg);
    return a;
}

static void refused(const char *cidr, const char *want)
{
    struct ksim_svcip *a = NULL;
    struct kerr_info err;

    cr_assert_eq(ksim_svcip_new(cidr, &a, &err), KERR_INVAL, "%s accepted", cidr);
    cr_assert_null(a);
    cr_assert(strstr(err.msg, want), "%s: \"%s\" lacks \"%s\"", cidr, err.msg, want);
}

Test(kubesim_svcip, bad_ranges_are_named)
{
    refused("10.96.0.0", "is not a CIDR");
    refused("10.96.0/12", "is not an IPv4 CIDR");
    refused("10.96.0.0/", "is not an IPv4 CIDR");
    refused("10.96.0.0/12x", "is not an IPv4 CIDR");
    refused("10.0.0.0/8", "too large; the mask must be >= 12");
    refused("10.96.0.0/31", "no usable address");
    refused("fd00::/108", "is not an IPv4 CIDR");
}

Test(kubesim_svcip, range_is_normalised_and_first_is_the_kubernetes_service)
{
    struct ksim_svcip *a = make("10.100.7.9/12");
    char ip[KSIM_SVCIP_LEN];

    cr_assert_str_eq(ksim_svcip_range(a), "10.96.0.0/12");
    ksim_svcip_first(a, ip);
    cr_assert_str_eq(ip, "10.96.0.1");
    cr_assert(ksim_svcip_taken(a, "10.96.0.1"));
    cr_assert_eq(ksim_svcip_alloc(a, ip, NULL), KERR_OK);
    cr_assert_str_eq(ip, "10.96.0.2");
    ksim_svcip_free(a);
}

Test(kubesim_svcip, every_usable_address_once_then_full)
{
    struct ksim_svcip *a = make("127.77.5.8/29");
    char ip[KSIM_SVCIP_LEN], seen[8][KSIM_SVCIP_LEN];
    struct kerr_info err;
    int i, j;

    for (i = 0; i < 5; i++) {
        cr_assert_eq(ksim_svcip_alloc(a, seen[i], NULL), KERR_OK, "address %d", i);
        cr_assert_str_neq(seen[i], "127.77.5.8", "network address handed out");
        cr_assert_str_neq(seen[i], "127.77.5.15", "broadcast address handed out");
        cr_assert_str_neq(seen[i], "127.77.5.9", "the kubernetes Service's address handed out");
        for (j = 0; j < i; j++)
            cr_assert_str_neq(seen[i], seen[j], "%s handed out twice", seen[i]);
    }
    cr_assert_eq(ksim_svcip_alloc(a, ip, &err), KERR_TOOBIG);
    cr_assert_str_eq(err.msg, "range is full");
    ksim_svcip_release(a, seen[2]);
    cr_assert_eq(ksim_svcip_alloc(a, ip, NULL), KERR_OK);
    cr_assert_str_eq(ip, seen[2], "a freed address is handed out again (wrapping around)");
    ksim_svcip_free(a);
}

Test(kubesim_svcip, requested_addresses)
{
    struct ksim_svcip *a = make("127.77.5.0/24");
    char ip[KSIM_SVCIP_LEN];
    struct kerr_info err;

    cr_assert_eq(ksim_svcip_reserve(a, "127.77.5.200", NULL), KERR_OK);
    cr_assert_eq(ksim_svcip_reserve(a, "127.77.5.200", &err), KERR_EXISTS);
    cr_assert_str_eq(err.msg, "provided IP is already allocated");
    cr_assert_eq(ksim_svcip_reserve(a, "127.77.5.1", NULL), KERR_EXISTS, "kubernetes Service");
    cr_assert_eq(ksim_svcip_reserve(a, "127.77.6.1", &err), KERR_INVAL);
    cr_assert_str_eq(err.msg, "provided IP is not in the valid range. The range of valid IPs is "
                              "127.77.5.0/24");
    cr_assert_eq(ksim_svcip_reserve(a, "127.77.5.0", NULL), KERR_INVAL, "network address");
    cr_assert_eq(ksim_svcip_reserve(a, "127.77.5.255", NULL), KERR_INVAL, "broadcast address");
    cr_assert_eq(ksim_svcip_reserve(a, "none", NULL), KERR_INVAL);
    ksim_svcip_release(a, "127.77.5.200");
    cr_assert_not(ksim_svcip_taken(a, "127.77.5.200"));
    ksim_svcip_release(a, "10.0.0.1"); /* outside: ignored */
    cr_assert_eq(ksim_svcip_alloc(a, ip, NULL), KERR_OK);
    cr_assert_str_eq(ip, "127.77.5.2");
    ksim_svcip_free(a);
}

/* ---- through the API */

static struct ksim_harness *h;
static const char *svc_path = "/api/v1/namespaces/default/services";

static void setup(void)
{
    struct ksim_harness_opts o = { 0 };

    o.no_controllers = 1;
    o.service_cidr = "127.77.9.0/29";
    h = ksimfix_start(&o);
}

static void teardown(void)
{
    ksim_harness_stop(h);
}

/* Create Service name (clusterIP ip unless NULL); the answer, *code its status. */
static cJSON *create(const char *name, const char *ip, long *code)
{
    char body[512];

    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"%s\"},"
             "\"spec\":{%s%s%s\"ports\":[{\"name\":\"client\",\"port\":2379}]}}",
             name, ip ? "\"clusterIP\":\"" : "", ip ? ip : "", ip ? "\"," : "");
    return ksimfix_call(h, "POST", svc_path, NULL, body, code);
}

static void create_ok(const char *name, const char *ip, char out[KSIM_SVCIP_LEN])
{
    long code;
    cJSON *s = create(name, ip, &code);

    cr_assert_eq(code, 201, "create %s: %ld", name, code);
    snprintf(out, KSIM_SVCIP_LEN, "%s", jsonfix_str(s, "spec.clusterIP"));
    cr_assert_str_eq(jsonfix_str(s, "spec.clusterIPs.0"), out);
    cJSON_Delete(s);
}

static void create_invalid(const char *name, const char *ip, const char *want)
{
    long code;
    cJSON *s = create(name, ip, &code);

    cr_assert_eq(code, 422, "create %s with %s: %ld", name, ip, code);
    cr_assert_str_eq(jsonfix_str(s, "reason"), "Invalid");
    cr_assert(strstr(jsonfix_str(s, "message"), want), "\"%s\" lacks \"%s\"",
              jsonfix_str(s, "message"), want);
    cJSON_Delete(s);
}

TestSuite(kubesim_svcip_api, .init = setup, .fini = teardown, .timeout = 60);

Test(kubesim_svcip_api, services_get_addresses_of_the_range)
{
    char a[KSIM_SVCIP_LEN], b[KSIM_SVCIP_LEN], c[KSIM_SVCIP_LEN], x[KSIM_SVCIP_LEN];
    long code;
    cJSON *k =
        ksimfix_call(h, "GET", "/api/v1/namespaces/default/services/kubernetes", NULL, NULL, &code);

    cr_assert_str_eq(jsonfix_str(k, "spec.clusterIP"), "127.77.9.1");
    cJSON_Delete(k);
    create_ok("a", NULL, a);
    create_ok("b", "127.77.9.5", b);
    create_ok("c", NULL, c);
    cr_assert_str_eq(a, "127.77.9.2");
    cr_assert_str_eq(b, "127.77.9.5", "a requested address is honoured");
    cr_assert_str_eq(c, "127.77.9.3");
    create_ok("headless", "None", x);
    cr_assert_str_eq(x, "None", "headless stays headless");
    create_invalid("d", "127.77.9.5",
                   "spec.clusterIPs: Invalid value: []string{\"127.77.9.5\"}: failed to allocate "
                   "IP 127.77.9.5: provided IP is already allocated");
    create_invalid("d", "10.96.0.10",
                   "provided IP is not in the valid range. The range of "
                   "valid IPs is 127.77.9.0/29");
    create_invalid("d", "127.77.9.7", "not in the valid range"); /* broadcast */
    create_ok("d", NULL, x);
    cr_assert_str_eq(x, "127.77.9.4", "refused requests took no address");
    create_ok("e", NULL, x);
    cr_assert_str_eq(x, "127.77.9.6");
    k = create("f", NULL, &code);
    cr_assert_eq(code, 500, "a full range: %ld", code);
    cr_assert(strstr(jsonfix_str(k, "message"), "failed to allocate a serviceIP: range is full"));
    cJSON_Delete(k);
}

Test(kubesim_svcip_api, updates_keep_the_address_and_deletes_free_it)
{
    char a[KSIM_SVCIP_LEN], b[KSIM_SVCIP_LEN];
    long code;
    cJSON *s;

    create_ok("a", NULL, a);
    s = ksimfix_call(h, "PATCH", "/api/v1/namespaces/default/services/a",
                     "application/merge-patch+json", "{\"metadata\":{\"labels\":{\"x\":\"y\"}}}",
                     &code);
    cr_assert_eq(code, 200);
    cr_assert_str_eq(jsonfix_str(s, "spec.clusterIP"), a);
    cJSON_Delete(s);
    s = ksimfix_call(h, "PATCH", "/api/v1/namespaces/default/services/a",
                     "application/merge-patch+json", "{\"spec\":{\"clusterIP\":\"127.77.9.6\"}}",
                     &code);
    cr_assert_eq(code, 422, "clusterIP changed: %ld", code);
    cr_assert(strstr(jsonfix_str(s, "message"), "may not change once set"));
    cJSON_Delete(s);
    s = ksimfix_call(h, "POST", "/api/v1/namespaces/default/services?dryRun=All", NULL,
                     "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"dry\"},"
                     "\"spec\":{\"clusterIP\":\"127.77.9.6\",\"ports\":[{\"port\":1}]}}",
                     &code);
    cr_assert_eq(code, 201);
    cJSON_Delete(s);
    create_ok("b", "127.77.9.6", b); /* the dry run took nothing */
    s = ksimfix_call(h, "DELETE", "/api/v1/namespaces/default/services/a", NULL, NULL, &code);
    cr_assert_eq(code, 200);
    cJSON_Delete(s);
    create_ok("a2", a, b);
    cr_assert_str_eq(b, a, "a deleted Service's address can be requested again");
}
