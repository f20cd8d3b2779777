/* Tests of webhook/wh_clientauth: loading the --client-ca bundle fails closed. */
#define _GNU_SOURCE /* asprintf */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/tlsx.h"
#include "webhook/wh_clientauth.h"

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static enum kerr load_text(const char *text, const char *cn, struct wh_clientauth **out,
                           struct kerr_info *err)
{
    char path[] = "/tmp/wh_clientauth_XXXXXX";
    int fd = mkstemp(path);
    enum kerr rc;

    cr_assert_geq(fd, 0);
    close(fd);
    write_file(path, text);
    kerr_clear(err);
    rc = wh_clientauth_new(path, cn, out, err);
    unlink(path);
    return rc;
}

Test(wh_clientauth, a_bundle_of_cas_is_loaded)
{
    struct tlsx_cert_opts o1 = { .cn = "apiserver-ca" }, o2 = { .cn = "other-ca" };
    struct tlsx_pem a, b;
    struct wh_clientauth *auth = NULL;
    struct kerr_info err;
    char *bundle;

    tlsx_pem_init(&a);
    tlsx_pem_init(&b);
    cr_assert_eq(tlsx_gen_ca(&o1, &a, NULL), KERR_OK);
    cr_assert_eq(tlsx_gen_ca(&o2, &b, NULL), KERR_OK);
    cr_assert_gt(asprintf(&bundle, "%s%s", a.cert, b.cert), 0);
    cr_assert_eq(load_text(bundle, "kube-apiserver", &auth, &err), KERR_OK, "%s", err.msg);
    cr_expect_eq(wh_clientauth_count(auth), 2);
    cr_expect_str_eq(wh_clientauth_pem(auth), bundle);
    wh_clientauth_free(auth);
    free(bundle);
    tlsx_pem_release(&a);
    tlsx_pem_release(&b);
}

Test(wh_clientauth, an_unusable_bundle_is_an_error)
{
    struct wh_clientauth *auth = (struct wh_clientauth *)1;
    struct kerr_info err;
    char cn[WH_CLIENTAUTH_MAX_CN + 2];

    kerr_clear(&err);
    cr_expect_eq(wh_clientauth_new("/nonexistent/ca.crt", NULL, &auth, &err), KERR_IO);
    cr_expect_null(auth);
    cr_expect(strstr(err.msg, "/nonexistent/ca.crt"), "%s", err.msg);
    cr_expect_eq(load_text("", NULL, &auth, &err), KERR_TLS);
    cr_expect(strstr(err.msg, "no PEM certificate"), "%s", err.msg);
    cr_expect_eq(load_text("-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n",
                           NULL, &auth, &err),
                 KERR_TLS);
    cr_expect_null(auth);
    memset(cn, 'a', sizeof(cn) - 1);
    cn[sizeof(cn) - 1] = '\0';
    cr_expect_eq(load_text("x", cn, &auth, &err), KERR_INVAL);
    cr_expect(strstr(err.msg, "--client-cn"), "%s", err.msg);
}
