#include "common/httpsrv.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct resp {
    long status;
    struct buf body;
    char ctype[128];
    char allow[64];
};

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    struct resp *r = ud;

    return buf_append(&r->body, p, size * n) == KERR_OK ? size * n : 0;
}

/* Copy header value v into dst (cap bytes); a value that does not fit is kept as
 * "(too long)", so an assertion on it fails instead of comparing a truncated text. */
static void keep_value(char *dst, size_t cap, const char *v)
{
    size_t len = strlen(v);

    if (len >= cap) {
        v = "(too long)";
        len = strlen(v);
    }
    memcpy(dst, v, len + 1);
}

/* Keep the values of Content-Type and Allow. */
static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    struct resp *r = ud;
    size_t len = size * n;
    char line[256];

    if (len >= sizeof(line))
        return len;
    memcpy(line, p, len);
    line[len] = '\0';
    line[strcspn(line, "\r\n")] = '\0';
    if (strncasecmp(line, "Content-Type: ", 14) == 0)
        keep_value(r->ctype, sizeof(r->ctype), line + 14);
    if (strncasecmp(line, "Allow: ", 7) == 0)
        keep_value(r->allow, sizeof(r->allow), line + 7);
    return len;
}

/* One request within timeout_ms; the CURLcode is returned and *r filled (release r->body). */
static CURLcode fetch_within(unsigned short port, const char *method, const char *path,
                             struct resp *r, long timeout_ms)
{
    CURL *c = curl_easy_init();
    char url[256];
    CURLcode cc;

    memset(r, 0, sizeof(*r));
    buf_init(&r->body, 1u << 20);
    cr_assert_not_null(c);
    snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", (unsigned)port, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
    if (strcmp(method, "HEAD") == 0)
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    else if (strcmp(method, "GET") != 0)
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    if (strcmp(method, "POST") == 0)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, "{\"a\":1}");
    cc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_easy_cleanup(c);
    return cc;
}

static CURLcode fetch(unsigned short port, const char *method, const char *path, struct resp *r)
{
    return fetch_within(port, method, path, r, 5000);
}

/* fetch() that must succeed with the given status; returns the body (caller frees). */
static char *expect(unsigned short port, const char *method, const char *path, long status)
{
    struct resp r;
    CURLcode cc = fetch(port, method, path, &r);

    cr_assert_eq(cc, CURLE_OK, "%s %s: %s", method, path, curl_easy_strerror(cc));
    cr_assert_eq(r.status, status, "%s %s: %ld %s", method, path, r.status, buf_str(&r.body));
    return buf_detach(&r.body, NULL);
}

/* As expect, and the body is exactly want. */
static void expect_text(unsigned short port, const char *method, const char *path, long status,
                        const char *want)
{
    char *body = expect(port, method, path, status);

    cr_assert_str_eq(body, want, "%s %s", method, path);
    free(body);
}

static struct httpsrv *start(struct httpsrv_opts *o, struct httpsrv *s)
{
    struct kerr_info err;

    if (!s)
        cr_assert_eq(httpsrv_new(o, &s, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(httpsrv_start(s, &err), KERR_OK, "%s", err.msg);
    cr_assert_neq(httpsrv_port(s), 0);
    return s;
}

Test(httpsrv, metrics_healthz_and_method_checks)
{
    struct metrics_registry *reg;
    struct metrics_vec *v;
    struct httpsrv_opts o = { .bind = "127.0.0.1:0" };
    struct httpsrv *s;
    struct resp r;

    cr_assert_eq(metrics_registry_new(&reg, NULL), KERR_OK);
    cr_assert_eq(metrics_register(reg, METRICS_COUNTER, "warden_test_total", "A test.", NULL, NULL,
                                  0, &v, NULL),
                 KERR_OK);
    cr_assert_eq(metrics_vec_add(v, NULL, 1), KERR_OK);
    o.registry = reg;
    s = start(&o, NULL);
    cr_assert_eq(fetch(httpsrv_port(s), "GET", "/metrics", &r), CURLE_OK);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(r.ctype, "text/plain; version=0.0.4; charset=utf-8");
    cr_assert_str_eq(buf_str(&r.body),
                     "# HELP warden_test_total A test.\n# TYPE warden_test_total counter\n"
                     "warden_test_total 1\n");
    buf_release(&r.body);
    cr_assert_eq(fetch(httpsrv_port(s), "HEAD", "/metrics", &r), CURLE_OK);
    cr_assert_eq(r.status, 200);
    cr_assert_eq(r.body.len, 0);
    buf_release(&r.body);
    expect_text(httpsrv_port(s), "GET", "/healthz", 200, "ok");
    cr_assert_eq(fetch(httpsrv_port(s), "POST", "/metrics", &r), CURLE_OK);
    cr_assert_eq(r.status, 405);
    cr_assert_str_eq(r.allow, "GET, HEAD");
    buf_release(&r.body);
    free(expect(httpsrv_port(s), "DELETE", "/healthz", 405));
    expect_text(httpsrv_port(s), "GET", "/nope", 404, "404 page not found\n");
    free(expect(httpsrv_port(s), "GET", "/healthzz", 404));
    httpsrv_free(s);
    metrics_registry_free(reg);
}

static atomic_int cache_synced;

static enum kerr check_cache(void *ctx, struct kerr_info *err)
{
    (void)ctx;
    if (!atomic_load(&cache_synced))
        return kerr_set(err, KERR_UNSUPPORTED, "caches not synced");
    return KERR_OK;
}

static enum kerr check_ok(void *ctx, struct kerr_info *err)
{
    (void)ctx;
    (void)err;
    return KERR_OK;
}

Test(httpsrv, readyz_flips_from_503_to_200)
{
    struct httpsrv_opts o = { .bind = "127.0.0.1:0" };
    struct httpsrv *s = NULL;
    unsigned short port;

    cr_assert_eq(httpsrv_new(&o, &s, NULL), KERR_OK);
    cr_assert_eq(httpsrv_add_check(s, HTTPSRV_READYZ, "leader", check_ok, NULL, NULL), KERR_OK);
    cr_assert_eq(httpsrv_add_check(s, HTTPSRV_READYZ, "cache", check_cache, NULL, NULL), KERR_OK);
    cr_assert_eq(httpsrv_add_check(s, HTTPSRV_READYZ, "cache", check_ok, NULL, NULL), KERR_EXISTS);
    cr_assert_eq(httpsrv_add_check(s, HTTPSRV_READYZ, "bad name", check_ok, NULL, NULL),
                 KERR_INVAL);
    start(&o, s);
    port = httpsrv_port(s);
    expect_text(port, "GET", "/readyz", 503,
                "[-]cache failed: reason withheld\n[+]leader ok\nreadyz check failed\n");
    expect_text(port, "GET", "/readyz/cache", 503, "[-]cache failed: reason withheld\n");
    free(expect(port, "GET", "/readyz/leader", 200));
    free(expect(port, "GET", "/readyz/unknown", 404));
    expect_text(port, "GET", "/healthz?verbose", 200, "[+]ping ok\nhealthz check passed\n");
    atomic_store(&cache_synced, 1);
    expect_text(port, "GET", "/readyz", 200, "ok");
    expect_text(port, "GET", "/readyz?verbose=1", 200,
                "[+]cache ok\n[+]leader ok\nreadyz check passed\n");
    cr_assert_eq(httpsrv_add_check(s, HTTPSRV_HEALTHZ, "late", check_ok, NULL, NULL), KERR_INVAL);
    httpsrv_stop(s);
    httpsrv_stop(s);
    cr_assert_eq(httpsrv_port(s), 0);
    httpsrv_free(s);
}

static enum kerr route_info(void *ctx, const struct httpsrv_req *req, struct httpsrv_reply *rep,
                            struct kerr_info *err)
{
    const char *name = httpsrv_req_arg(req, "name");
    const char *agent = httpsrv_req_header(req, "user-agent");

    (void)ctx;
    if (name && strcmp(name, "fail") == 0)
        return kerr_set(err, KERR_INTERNAL, "asked to fail");
    rep->content_type = "application/json";
    return buf_appendf(&rep->body, "{\"method\":\"%s\",\"path\":\"%s\",\"name\":\"%s\",\"ua\":%d}",
                       httpsrv_req_method(req), httpsrv_req_path(req), name ? name : "(none)",
                       agent != NULL);
}

Test(httpsrv, extra_routes)
{
    struct httpsrv_opts o = { .bind = "127.0.0.1:0", .threads = 2 };
    struct httpsrv *s = NULL;
    struct resp r;

    cr_assert_eq(httpsrv_new(&o, &s, NULL), KERR_OK);
    cr_assert_eq(httpsrv_add_route(s, "/debug/info", route_info, NULL, NULL), KERR_OK);
    cr_assert_eq(httpsrv_add_route(s, "relative", route_info, NULL, NULL), KERR_INVAL);
    start(&o, s);
    cr_assert_eq(fetch(httpsrv_port(s), "GET", "/debug/info?name=x", &r), CURLE_OK);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(r.ctype, "application/json");
    cr_assert_str_eq(buf_str(&r.body),
                     "{\"method\":\"GET\",\"path\":\"/debug/info\",\"name\":\"x\",\"ua\":0}");
    buf_release(&r.body);
    expect_text(httpsrv_port(s), "GET", "/debug/info?name=fail", 500, "asked to fail\n");
    /* No /metrics without a registry. */
    free(expect(httpsrv_port(s), "GET", "/metrics", 404));
    httpsrv_free(s);
}

Test(httpsrv, bind_addresses)
{
    static const char *const bad[] = { "nonsense", "127.0.0.1:", "127.0.0.1:99999",
                                       "::1:80",   "[::1:80",    "127.0.0.1:8x" };
    struct httpsrv_opts o = { .bind = ":0" };
    struct httpsrv *s, *t;
    struct kerr_info err;
    char bind[64];
    size_t i;

    s = start(&o, NULL);
    free(expect(httpsrv_port(s), "GET", "/healthz", 200));
    snprintf(bind, sizeof(bind), "127.0.0.1:%u", (unsigned)httpsrv_port(s));
    o.bind = bind;
    cr_assert_eq(httpsrv_new(&o, &t, NULL), KERR_OK);
    cr_assert_eq(httpsrv_start(t, &err), KERR_IO);
    cr_assert_not_null(strstr(err.msg, "in use"), "%s", err.msg);
    httpsrv_free(t);
    httpsrv_free(s);
    o.bind = "localhost:0";
    s = start(&o, NULL);
    httpsrv_free(s);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        o.bind = bad[i];
        cr_assert_eq(httpsrv_new(&o, &t, NULL), KERR_OK);
        cr_assert_eq(httpsrv_start(t, &err), KERR_INVAL, "%s", bad[i]);
        httpsrv_free(t);
    }
}

static int raw_connect(unsigned short port)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    cr_assert_geq(fd, 0);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

Test(httpsrv, idle_connections_time_out)
{
    struct httpsrv_opts o = { .bind = "127.0.0.1:0", .conn_timeout_secs = 1 };
    struct httpsrv *s = start(&o, NULL);
    int fd = raw_connect(httpsrv_port(s));
    struct pollfd p = { .fd = fd, .events = POLLIN };
    double t0 = now_s();
    char c;

    /* The server closes the idle connection: EOF well before the deadline. */
    cr_assert_eq(poll(&p, 1, 5000), 1);
    cr_assert_eq(recv(fd, &c, 1, 0), 0);
    cr_assert_gt(now_s() - t0, 0.5);
    close(fd);
    httpsrv_free(s);
}

Test(httpsrv, connection_limit)
{
    struct httpsrv_opts o = { .bind = "127.0.0.1:0", .conn_limit = 1 };
    struct httpsrv *s = start(&o, NULL);
    int fd = raw_connect(httpsrv_port(s));
    double deadline;
    struct resp r;
    CURLcode cc;

    /* The one allowed connection is taken: a second one is not served... */
    cc = fetch_within(httpsrv_port(s), "GET", "/healthz", &r, 300);
    buf_release(&r.body);
    cr_assert_neq(cc, CURLE_OK);
    /* ...until the first one goes away. */
    close(fd);
    deadline = now_s() + 5;
    do {
        nanosleep(&(struct timespec){ .tv_nsec = 20000000 }, NULL);
        cc = fetch(httpsrv_port(s), "GET", "/healthz", &r);
        buf_release(&r.body);
    } while (cc != CURLE_OK && now_s() < deadline);
    cr_assert_eq(cc, CURLE_OK, "%s", curl_easy_strerror(cc));
    cr_assert_eq(r.status, 200);
    httpsrv_free(s);
}
