/*
 * Tests of controller/sidecar: the snapshot requests reach a scripted
 * server (tests/support/mockapi) on 127.0.0.1 through CURLOPT_CONNECT_TO
 * while the URL, the Host header and the TLS name stay
 * <etcd>-client.<ns>.svc; answers, timeouts, caps and TLS failures.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <string.h>

#include "common/kjson.h"
#include "common/tlsx.h"
#include "controller/hibernation/sidecar.h"
#include "tests/support/mockapi.h"

#define HOST "etcd-a-client.ns1.svc"
#define SNAP                                                                                   \
    "{\"createdOn\":\"2026-11-23T10:00:00Z\",\"kind\":\"Full\",\"snapDir\":\"\",\"snapName\":" \
    "\"Full-00000000-00000042-1795000000.gz.final\",\"startRevision\":0,\"lastRevision\":42,"  \
    "\"isChunk\":false,\"isFinal\":true}"

static struct mockapi *m;

static void start_plain(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    cr_assert_eq(mockapi_new(&m, NULL), KERR_OK);
}

static void stop(void)
{
    mockapi_free(m);
    m = NULL;
}

static struct sidecar_target target(void)
{
    struct sidecar_target t = { .host = HOST, .ip = "127.0.0.1", .port = mockapi_port(m) };
    return t;
}

TestSuite(sidecar, .init = start_plain, .fini = stop);

Test(sidecar, final_full_snapshot_reaches_the_cluster_ip_with_the_service_name_as_host)
{
    struct sidecar_target t = target();
    struct sidecar_result res;
    const struct mockapi_req *rq;
    char host[128];

    mockapi_expect(m, "POST", "/snapshot/full?final=true", 200, SNAP);
    cr_assert_eq(sidecar_snapshot(&t, SIDECAR_FULL, 1, 5000, &res, NULL), KERR_OK);
    cr_assert_eq(res.http_status, 200);
    cr_assert_not_null(res.snapshot);
    cr_assert_str_eq(kjson_get_str(res.snapshot, "snapName"),
                     "Full-00000000-00000042-1795000000.gz.final");
    rq = mockapi_last(m);
    cr_assert_not_null(rq);
    cr_assert_str_eq(rq->method, "POST");
    cr_assert_str_eq(mockapi_req_param(rq, "final"), "true");
    snprintf(host, sizeof(host), "%s:%d", HOST, mockapi_port(m));
    cr_assert_str_eq(mockapi_req_header(rq, "Host"), host);
    cr_assert_eq(mockapi_unexpected(m), 0);
    sidecar_result_release(&res);
}

Test(sidecar, delta_and_plain_full_use_their_paths_and_null_means_skipped)
{
    struct sidecar_target t = target();
    struct sidecar_result res;

    mockapi_expect(m, "POST", "/snapshot/delta?!final", 200, "null");
    mockapi_expect(m, "POST", "/snapshot/full?!final", 200, SNAP);
    cr_assert_eq(sidecar_snapshot(&t, SIDECAR_DELTA, 1, 5000, &res, NULL), KERR_OK);
    cr_assert_eq(res.http_status, 200);
    cr_assert_null(res.snapshot);
    sidecar_result_release(&res);
    cr_assert_eq(sidecar_snapshot(&t, SIDECAR_FULL, 0, 5000, &res, NULL), KERR_OK);
    cr_assert_not_null(res.snapshot);
    sidecar_result_release(&res);
    cr_assert_eq(mockapi_unexpected(m), 0);
    cr_assert_str_eq(sidecar_path(SIDECAR_FULL, 1), "/snapshot/full?final=true");
}

Test(sidecar, an_error_status_is_an_answer_with_its_body_excerpt)
{
    struct sidecar_target t = target();
    struct sidecar_result res;

    mockapi_expect(m, "POST", "/snapshot/full", 500, "snapshotter is not active");
    cr_assert_eq(sidecar_snapshot(&t, SIDECAR_FULL, 1, 5000, &res, NULL), KERR_OK);
    cr_assert_eq(res.http_status, 500);
    cr_assert_null(res.snapshot);
    cr_assert_str_eq(res.excerpt, "snapshotter is not active");
    sidecar_result_release(&res);
}

Test(sidecar, a_slow_sidecar_times_out)
{
    struct mockapi_spec s = {
        .method = "POST", .target = "/snapshot/full", .body = SNAP, .delay_ms = 3000
    };
    struct sidecar_target t = target();
    struct sidecar_result res;
    struct kerr_info e;

    mockapi_add(m, &s);
    cr_assert_eq(sidecar_snapshot(&t, SIDECAR_FULL, 1, 300, &res, &e), KERR_TIMEOUT);
    cr_assert(strstr(e.msg, HOST) != NULL, "%s", e.msg);
    sidecar_result_release(&res);
}

Test(sidecar, oversized_and_malformed_answers_are_refused)
{
    struct sidecar_target t = target();
    struct sidecar_result res;
    char *big = malloc(SIDECAR_MAX_BODY + 100);
    struct kerr_info e;
    enum kerr rc;

    memset(big, 'x', SIDECAR_MAX_BODY + 99);
    big[SIDECAR_MAX_BODY + 99] = '\0';
    int first = mockapi_expect(m, "POST", "/snapshot/full", 200, big);

    mockapi_expect(m, "POST", "/snapshot/full", 200, "{not json");
    mockapi_expect(m, "POST", "/snapshot/full", 200, "[1,2]");
    cr_assert_eq(sidecar_snapshot(&t, SIDECAR_FULL, 1, 5000, &res, NULL), KERR_TOOBIG);
    sidecar_result_release(&res);
    cr_assert_eq(mockapi_wait_served(m, first, 1, 30000), 0); /* its writer saw the abort */
    rc = sidecar_snapshot(&t, SIDECAR_FULL, 1, 5000, &res, &e);
    cr_assert_eq(rc, KERR_PARSE, "%s: %s", kerr_name(rc), e.msg);
    sidecar_result_release(&res);
    cr_assert_eq(sidecar_snapshot(&t, SIDECAR_FULL, 1, 5000, &res, NULL), KERR_PARSE);
    cr_assert_null(res.snapshot);
    sidecar_result_release(&res);
    free(big);
}

Test(sidecar, bad_targets_and_refused_connections)
{
    struct sidecar_target t = target();
    struct sidecar_result res;
    const char *bad_hosts[] = { "", "a b", "host:1@evil", "x/y", NULL };

    for (int i = 0; bad_hosts[i]; i++) {
        t.host = bad_hosts[i];
        cr_assert_eq(sidecar_snapshot(&t, SIDECAR_FULL, 1, 1000, &res, NULL), KERR_INVAL, "host %s",
                     bad_hosts[i]);
    }
    t = target();
    t.ip = "127.0.0.1:99";
    cr_assert_eq(sidecar_snapshot(&t, SIDECAR_FULL, 1, 1000, &res, NULL), KERR_INVAL);
    t = target();
    t.port = 0;
    cr_assert_eq(sidecar_snapshot(&t, SIDECAR_FULL, 1, 1000, &res, NULL), KERR_INVAL);
    t = target();
    cr_assert_eq(sidecar_snapshot(&t, SIDECAR_FULL, 1, 0, &res, NULL), KERR_INVAL);
    t.port = 1; /* nothing listens on port 1 */
    cr_assert_eq(sidecar_snapshot(&t, SIDECAR_FULL, 1, 2000, &res, NULL), KERR_HTTP);
    cr_assert_eq(mockapi_request_count(m), 0);
}

/* ---- https ---- */

struct tlsfix {
    struct tlsx_pem ca, other_ca, serving;
};

static void gen(struct tlsfix *f, const char *san)
{
    const char *sans[] = { san, NULL };
    struct tlsx_cert_opts ca = { .cn = "backup-ca" }, leaf = { .cn = san, .sans = sans };

    tlsx_pem_init(&f->ca);
    tlsx_pem_init(&f->other_ca);
    tlsx_pem_init(&f->serving);
    cr_assert_eq(tlsx_gen_ca(&ca, &f->ca, NULL), KERR_OK);
    cr_assert_eq(tlsx_gen_ca(&ca, &f->other_ca, NULL), KERR_OK);
    cr_assert_eq(tlsx_gen_serving(&f->ca, &leaf, &f->serving, NULL), KERR_OK);
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void release(struct tlsfix *f)
{
    tlsx_pem_release(&f->ca);
    tlsx_pem_release(&f->other_ca);
    tlsx_pem_release(&f->serving);
}

static struct mockapi *start_tls(const struct tlsfix *f)
{
    struct mockapi_tls tls = { .cert_pem = f->serving.cert, .key_pem = f->serving.key };
    struct mockapi *s = NULL;

    cr_assert_eq(mockapi_new_tls(&tls, &s, NULL), KERR_OK);
    return s;
}

Test(sidecar_tls, https_verifies_the_service_name_with_the_given_ca)
{
    struct tlsfix f;
    struct mockapi *s;
    struct sidecar_target t;
    struct sidecar_result res;

    gen(&f, HOST);
    s = start_tls(&f);
    t = (struct sidecar_target){ .host = HOST,
                                 .ip = "127.0.0.1",
                                 .port = mockapi_port(s),
                                 .ca_pem = f.ca.cert,
                                 .ca_len = strlen(f.ca.cert) };
    mockapi_expect(s, "POST", "/snapshot/full?final=true", 200, SNAP);
    cr_assert_eq(sidecar_snapshot(&t, SIDECAR_FULL, 1, 5000, &res, NULL), KERR_OK);
    cr_assert_eq(res.http_status, 200);
    cr_assert_str_eq(mockapi_last(s)->sni, HOST);
    sidecar_result_release(&res);

    t.ca_pem = f.other_ca.cert; /* a CA that did not sign the sidecar's certificate */
    t.ca_len = strlen(f.other_ca.cert);
    cr_assert_eq(sidecar_snapshot(&t, SIDECAR_FULL, 1, 5000, &res, NULL), KERR_TLS);
    sidecar_result_release(&res);
    mockapi_free(s);
    release(&f);
}

Test(sidecar_tls, a_certificate_for_another_name_is_refused)
{
    struct tlsfix f;
    struct mockapi *s;
    struct sidecar_target t;
    struct sidecar_result res;

    gen(&f, "other-client.ns1.svc");
    s = start_tls(&f);
    t = (struct sidecar_target){ .host = HOST,
                                 .ip = "127.0.0.1",
                                 .port = mockapi_port(s),
                                 .ca_pem = f.ca.cert,
                                 .ca_len = strlen(f.ca.cert) };
    mockapi_expect(s, "POST", "/snapshot/full?final=true", 200, SNAP);
    cr_assert_eq(sidecar_snapshot(&t, SIDECAR_FULL, 1, 5000, &res, NULL), KERR_TLS);
    cr_assert_eq(mockapi_request_count(s), 0);
    sidecar_result_release(&res);
    mockapi_free(s);
    release(&f);
}
