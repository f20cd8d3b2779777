#include "webhook/wh_clientauth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "common/cfg.h"

struct wh_clientauth {
    char *pem;         /* OWNS: the CA bundle, NUL-terminated */
    unsigned int ncas; /* certificates in it */
    char *cn;          /* OWNS or NULL: the required subject CN */
};

static enum kerr count_cas(struct wh_clientauth *a, size_t len, const char *path,
                           struct kerr_info *err)
{
    gnutls_x509_crt_t *list = NULL;
    gnutls_datum_t d = { (unsigned char *)a->pem, (unsigned int)len };
    unsigned int n = 0, i;
    int g;

    g = gnutls_x509_crt_list_import2(&list, &n, &d, GNUTLS_X509_FMT_PEM, 0);
    if (g < 0 || n == 0) {
        if (g >= 0)
            gnutls_free(list);
        return kerr_set(err, KERR_TLS, "%s: no PEM certificate GnuTLS can import: %s", path,
                        g < 0 ? gnutls_strerror(g) : "none found");
    }
    for (i = 0; i < n; i++)
        gnutls_x509_crt_deinit(list[i]);
    gnutls_free(list);
    a->ncas = n;
    return KERR_OK;
}

enum kerr wh_clientauth_new(const char *ca_file, const char *cn, struct wh_clientauth **out,
                            struct kerr_info *err)
{
    struct wh_clientauth *a;
    size_t len = 0;
    enum kerr rc;

    *out = NULL;
    if (cn && strlen(cn) > WH_CLIENTAUTH_MAX_CN)
        return kerr_set(err, KERR_INVAL, "--client-cn: longer than %u bytes", WH_CLIENTAUTH_MAX_CN);
    if (!(a = calloc(1, sizeof(*a))))
        return kerr_set(err, KERR_NOMEM, "allocating the client authenticator");
    if ((rc = cfg_read_file(ca_file, WH_CLIENTAUTH_MAX_FILE, &a->pem, &len, err)) ||
        (rc = count_cas(a, len, ca_file, err))) {
        wh_clientauth_free(a);
        return rc;
    }
    if (cn && *cn && !(a->cn = strdup(cn))) {
        wh_clientauth_free(a);
        return kerr_set(err, KERR_NOMEM, "allocating the client authenticator");
    }
    *out = a;
    return KERR_OK;
}

void wh_clientauth_free(struct wh_clientauth *a)
{
    if (!a)
        return;
    free(a->pem);
    free(a->cn);
    free(a);
}

const char *wh_clientauth_pem(const struct wh_clientauth *a)
{
    return a->pem;
}

unsigned int wh_clientauth_count(const struct wh_clientauth *a)
{
    return a->ncas;
}

/* 0 when the leaf's subject CN is want; 403 otherwise. */
static unsigned int check_cn(const char *want, const gnutls_datum_t *leaf, char *why, size_t n)
{
    gnutls_x509_crt_t crt;
    char cn[WH_CLIENTAUTH_MAX_CN + 1];
    size_t size = sizeof(cn);
    int g;

    if (gnutls_x509_crt_init(&crt) < 0)
        return snprintf(why, n, "cannot read the client certificate"), 403;
    g = gnutls_x509_crt_import(crt, leaf, GNUTLS_X509_FMT_DER);
    if (g >= 0)
        g = gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, cn, &size);
    gnutls_x509_crt_deinit(crt);
    if (g < 0 || strlen(cn) != size || strcmp(cn, want) != 0) {
        snprintf(why, n, "client certificate subject CN is not %s", want);
        return 403;
    }
    return 0;
}

unsigned int wh_clientauth_check(const struct wh_clientauth *a, struct MHD_Connection *c, char *why,
                                 size_t n)
{
    const union MHD_ConnectionInfo *info;
    gnutls_session_t session;
    const gnutls_datum_t *peers;
    gnutls_typed_vdata_st purpose[1] = { { GNUTLS_DT_KEY_PURPOSE_OID,
                                           (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT, 0 } };
    unsigned int npeers = 0, status = 0;
    int g;

    info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (!info || !info->tls_session) {
        snprintf(why, n, "no TLS session");
        return 401;
    }
    session = (gnutls_session_t)info->tls_session;
    if (gnutls_certificate_type_get(session) != GNUTLS_CRT_X509 ||
        !(peers = gnutls_certificate_get_peers(session, &npeers)) || npeers == 0) {
        snprintf(why, n, "a client certificate is required");
        return 401;
    }
    /* the chain, validity, and the key purpose: a certificate that is not for clients fails */
    g = gnutls_certificate_verify_peers(session, purpose, 1, &status);
    if (g < 0 || status != 0) {
        gnutls_datum_t text = { NULL, 0 };

        if (g >= 0 &&
            gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &text, 0) >= 0)
            snprintf(why, n, "client certificate not trusted: %s", (const char *)text.data);
        else
            snprintf(why, n, "client certificate not trusted: %s",
                     g < 0 ? gnutls_strerror(g) : "verification failed");
        gnutls_free(text.data);
        return 401;
    }
    if (a->cn)
        return check_cn(a->cn, &peers[0], why, n);
    return 0;
}
