/*
 * wh_tlsio - the receiving side of the GnuTLS session of one connection,
 * with read-ahead.
 *
 * Left to itself GnuTLS reads a record in two recv(2) calls: its 5-byte
 * header, then the rest. An AdmissionReview of a few KB is one record, so
 * every review cost two system calls to read. wh_tlsio_attach gives the
 * session a pull function that reads up to WH_TLSIO_READAHEAD bytes at once
 * into a buffer of the connection and serves GnuTLS from it; sending is left
 * to GnuTLS. The buffer is allocated on the first read and kept until
 * wh_tlsio_release.
 *
 * Readiness stays right with libmicrohttpd's edge-triggered epoll: the pull
 * function reports EAGAIN only when the buffer is empty and recv(2) said
 * EAGAIN, so data read ahead is always consumed before the connection
 * waits for the socket again.
 *
 * Thread safety: a struct wh_tlsio belongs to its connection, used by the
 * one thread that serves it.
 */
#ifndef WEBHOOK_WH_TLSIO_H
#define WEBHOOK_WH_TLSIO_H

#include <stddef.h>
#include <sys/types.h>

#include <gnutls/gnutls.h>

#include "common/kerr.h"

/* Bytes read ahead: one recv(2) takes a whole record of up to this size. */
#define WH_TLSIO_READAHEAD 8192u

struct wh_tlsio {
    int fd;
    unsigned char *buf; /* OWNS or NULL: WH_TLSIO_READAHEAD bytes */
    size_t start, end;  /* unread bytes of buf */
};

/* A reader of fd (BORROWED: the connection's socket), without a buffer yet. Cannot fail. */
void wh_tlsio_init(struct wh_tlsio *io, int fd);

/* Free the buffer. Safe to call twice. */
void wh_tlsio_release(struct wh_tlsio *io);

/*
 * Make io the receiving transport of session (the sending one stays
 * GnuTLS's own on the same socket). io must outlive the session's use.
 */
void wh_tlsio_attach(struct wh_tlsio *io, gnutls_session_t session);

/*
 * The pull function: up to size bytes into data, from the buffer or, when it
 * is empty, from one recv(2). recv's result when it fails or the peer
 * closed (0), with errno set.
 */
ssize_t wh_tlsio_read(struct wh_tlsio *io, void *data, size_t size);

/* Bytes read ahead and not yet handed to GnuTLS. */
size_t wh_tlsio_buffered(const struct wh_tlsio *io);

#endif
