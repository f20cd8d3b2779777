/*
 * whfix - a warden-webhook HTTPS server for the Criterion tests (see whfix.h).
 */
#include "tests/support/whfix.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const whfix_reconcilers[] = { WHFIX_RECONCILER };

/* The Etcd lookup of f->mem, after lookup_delay_ms (to keep a review in flight). */
static enum kerr slow_etcd(void *ctx, const char *ns, const char *name, struct lookup_etcd *out,
                           struct kerr_info *err)
{
    struct whfix *f = ctx;
    long ms = atomic_load(&f->lookup_delay_ms);
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    struct lookup inner;

    if (ms > 0)
        nanosleep(&ts, NULL);
    lookup_mem_bind(&f->mem, &inner);
    return inner.etcd(inner.ctx, ns, name, out, err);
}

static void write_file(const char *dir, const char *final, const char *text)
{
    char tmp[128];
    FILE *fp;

    cr_assert_lt(snprintf(tmp, sizeof(tmp), "%s/tmp.pem", dir), (int)sizeof(tmp));
    fp = fopen(tmp, "w");
    cr_assert_not_null(fp, "cannot write %s", tmp);
    cr_assert_geq(fputs(text, fp), 0);
    cr_assert_eq(fclose(fp), 0);
    cr_assert_eq(rename(tmp, final), 0);
}

void whfix_write_pair(struct whfix *f, const char *cn)
{
    static const char *const sans[] = { "127.0.0.1", "localhost", NULL };
    struct tlsx_cert_opts o = { 0 };
    struct tlsx_pem leaf;

    o.cn = cn;
    o.sans = sans;
    tlsx_pem_init(&leaf);
    cr_assert_eq(tlsx_gen_serving(&f->ca, &o, &leaf, NULL), KERR_OK);
    write_file(f->dir, f->cert, leaf.cert);
    write_file(f->dir, f->key, leaf.key);
    tlsx_pem_release(&leaf);
}

static void certs_up(struct whfix *f)
{
    struct tlsx_cert_opts o = { 0 };

    snprintf(f->dir, sizeof(f->dir), "/tmp/wh-test-XXXXXX");
    cr_assert_not_null(mkdtemp(f->dir));
    snprintf(f->cert, sizeof(f->cert), "%s/tls.crt", f->dir);
    snprintf(f->key, sizeof(f->key), "%s/tls.key", f->dir);
    o.cn = "test-ca";
    tlsx_pem_init(&f->ca);
    cr_assert_eq(tlsx_gen_ca(&o, &f->ca, NULL), KERR_OK);
    whfix_write_pair(f, "first");
}

void whfix_init(struct whfix *f, size_t max_body, long budget_ms, unsigned int per_ip)
{
    whfix_init_buffered(f, max_body, budget_ms, per_ip, 0);
}

void whfix_init_buffered(struct whfix *f, size_t max_body, long budget_ms, unsigned int per_ip,
                         size_t max_buffered)
{
    whfix_init_conns(f, max_body, budget_ms, per_ip, max_buffered, 0, 0);
}

void whfix_init_conns(struct whfix *f, size_t max_body, long budget_ms, unsigned int per_ip,
                      size_t max_buffered, unsigned int conn_limit, unsigned int handshake_s)
{
    struct wh_tls_opts to = { 0 };
    struct wh_server_opts so = { 0 };

    memset(f, 0, sizeof(*f));
    atomic_init(&f->lookup_delay_ms, 0);
    certs_up(f);
    cr_assert_eq(metrics_registry_new(&f->reg, NULL), KERR_OK);
    to.cert_file = f->cert;
    to.key_file = f->key;
    to.poll_ms = 20;
    to.registry = f->reg;
    cr_assert_eq(wh_tls_new(&to, &f->tls, NULL), KERR_OK);
    f->pc.reconcilers = whfix_reconcilers;
    f->pc.n_reconcilers = 1;
    lookup_mem_bind(&f->mem, &f->lk);
    f->lk.ctx = f;
    f->lk.etcd = slow_etcd;
    cr_assert_eq(wh_dispatch_init(&f->d, &f->pc, &f->lk, f->reg, NULL), KERR_OK);
    so.bind_address = "127.0.0.1";
    so.threads = 2;
    so.max_body = max_body;
    so.max_buffered = max_buffered;
    so.budget_ms = budget_ms;
    so.per_ip_limit = per_ip;
    so.conn_limit = conn_limit;
    so.handshake_timeout_s = handshake_s;
    so.tls = f->tls;
    so.dispatch = &f->d;
    so.registry = f->reg;
    cr_assert_eq(wh_server_new(&so, &f->srv, NULL), KERR_OK);
    cr_assert_eq(wh_server_start(f->srv, NULL), KERR_OK);
    cr_assert_gt(wh_server_port(f->srv), 0);
}

void whfix_release(struct whfix *f)
{
    wh_server_free(f->srv);
    f->srv = NULL;
    wh_tls_free(f->tls);
    f->tls = NULL;
    metrics_registry_free(f->reg);
    f->reg = NULL;
    tlsx_pem_release(&f->ca);
    unlink(f->cert);
    unlink(f->key);
    rmdir(f->dir);
}
