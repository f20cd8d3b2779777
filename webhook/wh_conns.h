/*
 * wh_conns - the connections of warden-webhook's server, and which of them to drop when the
 * connection limit is near.
 *
 * libmicrohttpd refuses a connection once --webhook-server-max-connections are open, whatever
 * they do: a few addresses holding idle TCP connections (never a byte) would keep
 * kube-apiserver's calls out, and with failurePolicy Fail every request the webhooks cover
 * would be refused. So, as production servers do, a connection that has no request in
 * progress is cheap to drop under pressure. Each connection is tracked by its socket from
 * libmicrohttpd's start notice to its close notice; it is busy from the access handler's
 * first call of a request (its headers received) to that request's completion notice, and
 * idle otherwise. The idle ones are kept in one list, least recently active first (opened,
 * or its last request completed). When a connection opens while more than the high mark
 * (the limit less a reserve) are open, the least recently active idle ones are dropped until
 * no more than the high mark are: their sockets are shut down (drop; the server's shuts
 * down both directions, libmicrohttpd then reads the end and closes the connection, and its
 * close notice forgets it). A busy connection is never dropped, nor the one just opened. The
 * reserve is room for the connections being opened while the dropped ones close, so a new
 * connection finds room for as long as the rest are idle ones.
 *
 * A socket number names one connection from its open to its close notice: libmicrohttpd
 * sends the close notice before it closes the socket, so a number is never reused while a
 * connection of it is tracked, and a drop never reaches another connection's socket.
 *
 * Thread safety: every function may be called from any thread (one mutex); drop is called
 * with it held and must not call back.
 */
#ifndef WEBHOOK_WH_CONNS_H
#define WEBHOOK_WH_CONNS_H

#include <stddef.h>

#include "common/kerr.h"

struct wh_conns_opts {
    unsigned int limit;   /* the server's connection limit (at least 1) */
    unsigned int reserve; /* kept free of idle connections; 0: limit / 16, at least 1 */
    /* Drop the connection of socket fd; NULL: shutdown(fd, SHUT_RDWR). */
    void (*drop)(void *ctx, int fd);
    void *drop_ctx; /* BORROWED, passed back to drop */
};

/* What the table holds now, and what it dropped since it was made. */
struct wh_conns_stats {
    size_t open;           /* tracked and not dropped */
    size_t busy;           /* of those, with a request in progress */
    unsigned long dropped; /* connections dropped */
};

struct wh_conns;

/* A table for opts (copied). On KERR_OK *out OWNS it: wh_conns_free. */
enum kerr wh_conns_new(const struct wh_conns_opts *opts, struct wh_conns **out,
                       struct kerr_info *err);

/* Free the table. NULL: no-op. */
void wh_conns_free(struct wh_conns *t);

/*
 * A connection opened on socket fd: tracked as idle, the most recently active, after the
 * least recently active idle ones past the high mark are dropped. Returns how many were
 * dropped, or -1 when fd cannot be tracked (a negative fd, out of memory): the caller drops
 * the new connection itself (an untracked one could never be dropped).
 */
int wh_conns_open(struct wh_conns *t, int fd);

/*
 * A request begins on fd's connection: busy until wh_conns_idle. Returns 1 when it is the
 * connection's first request, 0 for a later one or an fd not tracked (dropped, unknown).
 */
int wh_conns_busy(struct wh_conns *t, int fd);

/* fd's request completed: idle again, the most recently active. Unknown fd: no-op. */
void wh_conns_idle(struct wh_conns *t, int fd);

/* fd's connection closed: forgotten. Unknown fd: no-op. */
void wh_conns_close(struct wh_conns *t, int fd);

/* A snapshot of the counts into *out. */
void wh_conns_stats(struct wh_conns *t, struct wh_conns_stats *out);

#endif
