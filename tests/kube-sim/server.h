/*
 * server - kube-sim's HTTPS front end on libmicrohttpd (GnuTLS underneath):
 * one thread per connection so watch streams can block, a connection limit,
 * a capped request body (413 RequestEntityTooLarge past it), bearer-token
 * authentication (401 Unauthorized Status otherwise; /healthz, /livez,
 * /readyz and /version are public), then ksim_api_handle. Watch responses
 * stream with chunked encoding and end when the client goes away.
 *
 * Ownership: the server BORROWS api and auth, which must outlive it.
 * Thread safety: start and stop from one thread; requests run on MHD's
 * connection threads.
 */
#ifndef KSIM_SERVER_H
#define KSIM_SERVER_H

#include <stddef.h>

#include "tests/kube-sim/api.h"
#include "tests/kube-sim/auth.h"

struct ksim_server_opts {
    int port;                 /* 0 = any free port */
    const char *cert_pem;     /* serving certificate chain, BORROWED */
    const char *key_pem;      /* its key, BORROWED */
    unsigned max_connections; /* 0 = 512 */
    size_t max_body;          /* 0 = 3 MiB */
};

struct ksim_server;

/* Listen on 127.0.0.1 and serve. On KERR_OK *out OWNS the server (ksim_server_stop). */
enum kerr ksim_server_start(struct ksim_api *api, const struct ksim_auth *auth,
                            const struct ksim_server_opts *opts, struct ksim_server **out,
                            struct kerr_info *err);

/* The port the server listens on. */
int ksim_server_port(const struct ksim_server *s);

/* Stop serving (open watches end), wait for the connection threads, free. NULL is a no-op. */
void ksim_server_stop(struct ksim_server *s);

#endif
