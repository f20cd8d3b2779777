/*
 * sidecar - the HTTP client of etcd-backup-restore, the backup sidecar of
 * every etcd member (shared/reference/etcd-druid.md §4.1): POST
 * /snapshot/full[?final=true] and /snapshot/delta, GET /snapshot/latest.
 *
 * How it is reached: libcurl connects to a member pod's IP on the sidecar's
 * port as the StatefulSet's pod template declares it (both found by the caller,
 * controller/core/smember.h; never the client Service, which a tenant may
 * edit), while the URL keeps the name <etcd>-client.<ns>.svc, which is
 * therefore the Host header and the name the TLS certificate is verified
 * against (CURLOPT_CONNECT_TO). No cluster DNS is needed; production and tests
 * take the same path.
 *
 * https when a CA is given (the PEM of spec.backup.tls's CA secret, passed
 * in memory, never written to disk); the peer and its name are verified.
 * One request, no retries: the caller (controller/otask) decides what a
 * failure means. The answer body is capped at SIDECAR_MAX_BODY.
 *
 * Cancellation: the transfer runs on a curl multi handle polled every
 * SIDECAR_POLL_MS; once the caller's cancel flag is set the call ends
 * within that time (KERR_CANCELLED), whatever the timeout.
 *
 * Thread safety: reentrant (one CURL easy and multi handle per call);
 * curl_global_init must have run (k8s_client_new does it).
 */
#ifndef CONTROLLER_SIDECAR_H
#define CONTROLLER_SIDECAR_H

#include <stdatomic.h>
#include <stddef.h>

#include <cJSON.h>

#include "common/kerr.h"

#define SIDECAR_MAX_BODY    (64u * 1024u) /* a Snapshot JSON is a few hundred bytes */
#define SIDECAR_EXCERPT_LEN 256
#define SIDECAR_POLL_MS     50L
#define SIDECAR_DATE_LEN    64

/* SIDECAR_LATEST: GET /snapshot/latest ({"fullSnapshot":…,"deltaSnapshots":…}) */
enum sidecar_kind { SIDECAR_FULL, SIDECAR_DELTA, SIDECAR_LATEST };

/* Where the sidecar is. Strings BORROWED for the call. */
struct sidecar_target {
    const char *host;         /* "<etcd>-client.<ns>.svc": URL host, Host header, TLS name */
    const char *ip;           /* status.podIP of a member pod (IPv4 or IPv6) */
    int port;                 /* the sidecar's port in the pod template */
    const char *ca_pem;       /* CA bundle (PEM) for https; NULL: plain http */
    size_t ca_len;            /* bytes of ca_pem */
    const atomic_int *cancel; /* BORROWED, optional: set non-zero (any thread) to end the call */
    /* optional: asked every SIDECAR_POLL_MS on the calling thread; non-zero ends the call
     * (KERR_CANCELLED), as cancel does, for a request nobody waits for any more */
    int (*abandon)(void *arg);
    void *abandon_arg; /* BORROWED */
};

/* The answer of one snapshot request. */
struct sidecar_result {
    long http_status;                  /* HTTP status of the answer */
    cJSON *snapshot;                   /* OWNS: the Snapshot of a 200, NULL for `null` */
    char excerpt[SIDECAR_EXCERPT_LEN]; /* start of the body of a non-200 answer */
    char date[SIDECAR_DATE_LEN];       /* the answer's Date header as sent ("" if none or
                                        * longer): the sidecar's clock when it answered */
};

/*
 * POST the snapshot request (final only with SIDECAR_FULL; GET for SIDECAR_LATEST, whose
 * answer object goes to out->snapshot) and wait at most
 * timeout_ms (> 0) for the whole answer. KERR_OK whenever an HTTP answer
 * arrived, whatever its status (out->http_status tells; a 200 body must be
 * a JSON object or null, else KERR_PARSE). Transport failures: KERR_TIMEOUT,
 * KERR_TLS (handshake, certificate), KERR_HTTP (connect, reset), KERR_CANCELLED
 * (t->cancel set or t->abandon said so); KERR_TOOBIG
 * for an answer over SIDECAR_MAX_BODY; KERR_INVAL for a bad target. *out is
 * cleared first; release it with sidecar_result_release in every case.
 */
enum kerr sidecar_snapshot(const struct sidecar_target *t, enum sidecar_kind kind, int final,
                           long timeout_ms, struct sidecar_result *out, struct kerr_info *err);

/* Free what *r holds and clear it. NULL is a no-op. */
void sidecar_result_release(struct sidecar_result *r);

/*
 * The URL path and query of a request: "/snapshot/full?final=true",
 * "/snapshot/full", "/snapshot/delta", "/snapshot/latest". Static.
 */
const char *sidecar_path(enum sidecar_kind kind, int final);

#endif
