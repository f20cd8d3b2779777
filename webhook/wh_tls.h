/*
 * wh_tls - the serving certificate of the webhook, swapped without a restart.
 *
 * libmicrohttpd serves TLS through GnuTLS. Instead of handing it a fixed
 * certificate, the daemon is given wh_tls_retrieve as its
 * MHD_OPTION_HTTPS_CERT_CALLBACK: on every handshake it returns the current
 * certificate chain and key. The current pair is swapped atomically when
 * the files change (a watcher thread polls tls.crt / tls.key, which also
 * catches Kubernetes' symlink swaps of a mounted Secret) or when new PEM
 * text is set (self-provisioned certificates). A connection keeps a
 * reference to the pair it was handshaken with until it closes, so
 * in-flight reviews never see a pair freed under them.
 *
 * The callback finds its struct wh_tls through the connection: pass
 * wh_tls_notify_connection with the struct as MHD_OPTION_NOTIFY_CONNECTION;
 * it stores a small per-connection context as the socket context, which
 * also gives the connection's session its read-ahead (webhook/wh_tlsio).
 *
 * A pair is accepted only when OpenSSL finds that the key matches the
 * certificate and GnuTLS imports both; a bad or half-written pair is
 * logged, counted and the previous pair stays in service.
 *
 * Thread safety: wh_tls_retrieve and wh_tls_notify_connection run on the
 * server threads; wh_tls_set_pem / wh_tls_reload may be called from any
 * thread (reloads run one at a time, so the last to finish installs the
 * newest files); new/start_watch/free from the controlling thread.
 */
#ifndef WEBHOOK_WH_TLS_H
#define WEBHOOK_WH_TLS_H

#include <stdint.h>
#include <time.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>

#include "common/kerr.h"
#include "common/metrics.h"
#include "common/tlsx.h"

/* TLS 1.2 and 1.3 only, ECDHE key exchange (no static RSA). */
#define WH_TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-RSA"

#define WH_TLS_MAX_CHAIN  8 /* certificates in a chain */

struct wh_tls;

struct wh_tls_opts {
    const char *cert_file;             /* BORROWED, copied; NULL: PEM is set with wh_tls_set_pem */
    const char *key_file;              /* BORROWED, copied */
    long poll_ms;                      /* file watch interval; 0 = 1000 */
    struct metrics_registry *registry; /* BORROWED, optional: certwatcher_* counters */
};

/*
 * A certificate holder. With files, they are loaded now: an unreadable or
 * mismatched pair fails with the reason (KERR_IO / KERR_TLS). On KERR_OK
 * *out OWNS it: wh_tls_free().
 */
enum kerr wh_tls_new(const struct wh_tls_opts *opts, struct wh_tls **out, struct kerr_info *err);

/* Stop the watcher and free. Every connection must be closed (daemon stopped). NULL: no-op. */
void wh_tls_free(struct wh_tls *t);

/* Start the thread that polls the files (no-op without files). */
enum kerr wh_tls_start_watch(struct wh_tls *t, struct kerr_info *err);

/* Re-read the files now if they changed (what the watcher does each tick). */
enum kerr wh_tls_reload(struct wh_tls *t, struct kerr_info *err);

/* Serve pem (BORROWED, copied) from now on. KERR_TLS when it is not a matching pair. */
enum kerr wh_tls_set_pem(struct wh_tls *t, const struct tlsx_pem *pem, struct kerr_info *err);

/* True once a pair is loaded. */
int wh_tls_ready(struct wh_tls *t);

/* Number of pairs loaded so far (1 after the first). */
uint64_t wh_tls_generation(struct wh_tls *t);

/* notAfter of the pair in service (0 when none). */
time_t wh_tls_not_after(struct wh_tls *t);

/* MHD_OPTION_NOTIFY_CONNECTION callback; cls is the struct wh_tls. */
void wh_tls_notify_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                              enum MHD_ConnectionNotificationCode toe);

/* MHD_OPTION_HTTPS_CERT_CALLBACK (gnutls_certificate_retrieve_function2). */
int wh_tls_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
                    const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                    gnutls_pcert_st **pcert, unsigned int *pcert_length, gnutls_privkey_t *privkey);

#endif
