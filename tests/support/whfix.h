/*
 * whfix - a warden-webhook HTTPS server on 127.0.0.1 for the Criterion
 * tests of webhook/wh_server and wh_tlsio: a fresh CA, a serving
 * certificate in files of a temporary directory (read by wh_tls, which can
 * watch them), a metrics registry, the component-protection dispatcher with
 * one reconciler (WHFIX_RECONCILER) and an empty in-memory lookup that can
 * be slowed down, on an ephemeral port.
 *
 * For tests only: failures fail the running test with a Criterion
 * assertion. Thread safety: whfix_init, whfix_write_pair and whfix_release
 * are called by the test's thread; lookup_delay_ms may be set from any
 * thread while the server runs (it is read by the server's threads).
 */
#ifndef TESTS_SUPPORT_WHFIX_H
#define TESTS_SUPPORT_WHFIX_H

#include <stdatomic.h>
#include <stddef.h>

#include "common/metrics.h"
#include "common/tlsx.h"
#include "webhook/wh_server.h"

/* The one trusted reconciler service account of the dispatcher. */
#define WHFIX_RECONCILER "system:serviceaccount:druid:etcd-druid"

struct whfix {
    char dir[64];                 /* temporary directory of the certificate files */
    char cert[96], key[96];       /* tls.crt, tls.key in dir */
    struct tlsx_pem ca;           /* OWNS: the CA that signs every serving pair */
    struct metrics_registry *reg; /* OWNS */
    struct wh_tls *tls;           /* OWNS; not watching until wh_tls_start_watch */
    struct protect_config pc;
    struct lookup_mem mem; /* no Etcds, no StatefulSets */
    struct lookup lk;      /* mem, delayed by lookup_delay_ms per Etcd lookup */
    struct wh_dispatch d;
    struct wh_server *srv; /* OWNS; started */
    atomic_long lookup_delay_ms;
};

/*
 * Start a server in f with request bodies of max_body bytes at most, a
 * per-request budget of budget_ms and per_ip connections per client
 * address (each 0: the server's default); the serving certificate has CN
 * "first" and SANs 127.0.0.1 and localhost. Release with whfix_release.
 */
void whfix_init(struct whfix *f, size_t max_body, long budget_ms, unsigned int per_ip);

/* The same with the bodies of all connections together capped at max_buffered bytes. */
void whfix_init_buffered(struct whfix *f, size_t max_body, long budget_ms, unsigned int per_ip,
                         size_t max_buffered);

/* The same with at most conn_limit connections, and handshake_s for a new connection's first
 * request (each 0: the server's default). */
void whfix_init_conns(struct whfix *f, size_t max_body, long budget_ms, unsigned int per_ip,
                      size_t max_buffered, unsigned int conn_limit, unsigned int handshake_s);

/* Replace the certificate files by rename (as a Secret volume update does) with a new
 * pair signed by f->ca, CN cn. */
void whfix_write_pair(struct whfix *f, const char *cn);

/* Stop the server and free everything of f; removes the files and the directory. */
void whfix_release(struct whfix *f);

#endif
