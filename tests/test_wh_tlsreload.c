/*
 * Tests of webhook/wh_tls reloads running at once (the file watcher and a
 * SIGHUP): the reload that read the newer files must be the one left in
 * service. A reload is held in the middle of reading its key (the key file
 * is a FIFO) while the files are replaced and another reload runs; the held
 * one then reads an older pair and must not install it last.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/ktime.h"
#include "common/log.h"
#include "common/tlsx.h"
#include "tests/support/testutil.h"
#include "webhook/wh_tls.h"

struct pairs {
    struct tlsx_pem ca, a, b, c;
};

static void gen(const struct tlsx_pem *ca, long lifetime, struct tlsx_pem *out)
{
    static const char *const sans[] = { "127.0.0.1", NULL };
    struct tlsx_cert_opts o = { 0 };

    o.cn = "wh";
    o.sans = sans;
    o.lifetime_secs = lifetime;
    tlsx_pem_init(out);
    cr_assert_eq(tlsx_gen_serving(ca, &o, out, NULL), KERR_OK);
}

static void *reload_main(void *arg)
{
    struct kerr_info err;

    kerr_clear(&err);
    return (void *)(long)wh_tls_reload(arg, &err);
}

static time_t not_after(const char *pem)
{
    time_t na = 0;

    cr_assert_eq(tlsx_cert_validity(pem, strlen(pem), NULL, &na, NULL), KERR_OK);
    return na;
}

Test(wh_tlsreload, the_newer_files_win_when_two_reloads_overlap, .timeout = 30)
{
    struct testutil_dir d;
    struct tlsx_cert_opts co = { 0 };
    struct wh_tls_opts o = { 0 };
    struct wh_tls *t = NULL;
    struct kerr_info err;
    struct pairs p;
    pthread_t held, other;
    char fifo[512], link_tmp[512];
    const char *cert, *key;
    uint64_t gen0;
    int fd;
    ssize_t n;

    log_set_level(LOG_ERROR);
    testutil_dir_make(&d, "wh-tlsreload");
    co.cn = "ca";
    tlsx_pem_init(&p.ca);
    cr_assert_eq(tlsx_gen_ca(&co, &p.ca, NULL), KERR_OK);
    gen(&p.ca, 3600, &p.a);
    gen(&p.ca, 7200, &p.b);
    gen(&p.ca, 10800, &p.c);
    cert = testutil_dir_write(&d, "tls.crt", p.a.cert);
    key = testutil_dir_write(&d, "tls.key", p.a.key);
    o.cert_file = cert;
    o.key_file = key;
    cr_assert_eq(wh_tls_new(&o, &t, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(wh_tls_not_after(t), not_after(p.a.cert));
    /* Pair b: its certificate a plain file, its key behind a FIFO nobody writes yet. */
    testutil_write_file(cert, p.b.cert);
    snprintf(fifo, sizeof(fifo), "%s", testutil_dir_path(&d, "key.fifo"));
    snprintf(link_tmp, sizeof(link_tmp), "%s", testutil_dir_path(&d, "key.link"));
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    cr_assert_eq(link(fifo, link_tmp), 0);
    cr_assert_eq(rename(link_tmp, key), 0);
    cr_assert_eq(pthread_create(&held, NULL, reload_main, t), 0);
    /*
     * It has read b's certificate and waits on the key once it holds the FIFO
     * open: a non-blocking open for writing fails (ENXIO) until a reader has
     * it open, however long the scheduler took to get the reload there.
     */
    fd = -1;
    TESTUTIL_AWAIT((fd = open(fifo, O_WRONLY | O_NONBLOCK)) >= 0, 30000);
    cr_assert_geq(fd, 0, "the reload never opened the key");
    /* Pair c replaces both files; a second reload runs while the first is held. */
    testutil_write_file(cert, p.c.cert);
    testutil_write_file(key, p.c.key);
    gen0 = wh_tls_generation(t);
    cr_assert_eq(pthread_create(&other, NULL, reload_main, t), 0);
    TESTUTIL_AWAIT(wh_tls_generation(t) != gen0, 1000); /* serialised reloads wait instead */
    /* Release the held reload with b's key: it installs b, the older pair. */
    cr_assert_eq(fcntl(fd, F_SETFL, 0), 0);
    n = write(fd, p.b.key, strlen(p.b.key));
    cr_assert_eq(n, (ssize_t)strlen(p.b.key));
    close(fd);
    pthread_join(held, NULL);
    pthread_join(other, NULL);
    cr_expect_eq(wh_tls_not_after(t), not_after(p.c.cert),
                 "the older pair (b) was installed last and stays in service");
    wh_tls_free(t);
    testutil_dir_remove(&d);
    tlsx_pem_release(&p.ca);
    tlsx_pem_release(&p.a);
    tlsx_pem_release(&p.b);
    tlsx_pem_release(&p.c);
}
