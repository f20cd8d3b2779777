/*
 * wh_clientauth - client certificate authentication of the API server.
 *
 * With --client-ca, the TLS handshake asks the caller for a certificate
 * (the CA bundle is given to libmicrohttpd as MHD_OPTION_HTTPS_MEM_TRUST,
 * which makes GnuTLS send a CertificateRequest naming those CAs). GnuTLS
 * does not refuse a handshake without one, so every webhook request is
 * checked before anything is decided: the peer presented a certificate,
 * GnuTLS verifies its chain against the bundle (signature, validity
 * period, key purpose TLS client when it names purposes), and with --client-cn its subject CN is
 * that name. A request that fails is answered 401 (no or untrusted certificate) or 403 (wrong CN)
 * before its body is read: nothing is decided, no claim recorded.
 *
 * The bundle is read once at start; an unreadable file, or one without a
 * single PEM certificate GnuTLS can import, is an error (fail closed).
 *
 * Ownership: wh_clientauth_new's *out OWNS the struct (wh_clientauth_free).
 * Thread safety: wh_clientauth_check may run on any number of threads at
 * once (it only reads the struct).
 */
#ifndef WEBHOOK_WH_CLIENTAUTH_H
#define WEBHOOK_WH_CLIENTAUTH_H

#include <stddef.h>

#include <microhttpd.h>

#include "common/kerr.h"

#define WH_CLIENTAUTH_MAX_FILE (1024u * 1024u)
#define WH_CLIENTAUTH_MAX_CN   256u

struct wh_clientauth;

/*
 * Load the CA bundle at ca_file (BORROWED); cn (BORROWED, copied; NULL or
 * "": any CN) is the subject CN required of the client. KERR_IO when the
 * file cannot be read, KERR_TLS when it holds no certificate GnuTLS can
 * import, KERR_INVAL for a CN longer than WH_CLIENTAUTH_MAX_CN.
 */
enum kerr wh_clientauth_new(const char *ca_file, const char *cn, struct wh_clientauth **out,
                            struct kerr_info *err);

void wh_clientauth_free(struct wh_clientauth *a);

/* The PEM bundle (BORROWED from a): the value of MHD_OPTION_HTTPS_MEM_TRUST. */
const char *wh_clientauth_pem(const struct wh_clientauth *a);

/* Certificates in the bundle. */
unsigned int wh_clientauth_count(const struct wh_clientauth *a);

/*
 * Check the client of connection c. 0: authenticated. Otherwise the HTTP
 * status to answer (401 or 403), with the reason in why (n bytes).
 */
unsigned int wh_clientauth_check(const struct wh_clientauth *a, struct MHD_Connection *c, char *why,
                                 size_t n);

#endif
