/* wh_tlsio - read-ahead for the GnuTLS session of a connection; see wh_tlsio.h. */
#include "webhook/wh_tlsio.h"

#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

void wh_tlsio_init(struct wh_tlsio *io, int fd)
{
    memset(io, 0, sizeof(*io));
    io->fd = fd;
}

void wh_tlsio_release(struct wh_tlsio *io)
{
    free(io->buf);
    io->buf = NULL;
    io->start = io->end = 0;
}

ssize_t wh_tlsio_read(struct wh_tlsio *io, void *data, size_t size)
{
    size_t n;
    ssize_t r;

    if (io->start == io->end) {
        /* A read as large as the buffer gains nothing from a copy. */
        if (size >= WH_TLSIO_READAHEAD)
            return recv(io->fd, data, size, 0);
        if (!io->buf && !(io->buf = malloc(WH_TLSIO_READAHEAD)))
            return recv(io->fd, data, size, 0);
        r = recv(io->fd, io->buf, WH_TLSIO_READAHEAD, 0);
        if (r <= 0)
            return r;
        io->start = 0;
        io->end = (size_t)r;
    }
    n = io->end - io->start < size ? io->end - io->start : size;
    memcpy(data, io->buf + io->start, n);
    io->start += n;
    return (ssize_t)n;
}

size_t wh_tlsio_buffered(const struct wh_tlsio *io)
{
    return io->end - io->start;
}

static ssize_t pull(gnutls_transport_ptr_t ptr, void *data, size_t size)
{
    return wh_tlsio_read(ptr, data, size);
}

/* Data to read within ms: what is buffered counts, then the socket. */
static int pull_timeout(gnutls_transport_ptr_t ptr, unsigned int ms)
{
    struct wh_tlsio *io = ptr;
    struct pollfd p = { io->fd, POLLIN, 0 };

    if (wh_tlsio_buffered(io))
        return 1;
    return poll(&p, 1,
                ms == GNUTLS_INDEFINITE_TIMEOUT ? -1 : (int)(ms > INT32_MAX ? INT32_MAX : ms));
}

void wh_tlsio_attach(struct wh_tlsio *io, gnutls_session_t session)
{
    gnutls_transport_set_ptr2(session, io, (gnutls_transport_ptr_t)(intptr_t)io->fd);
    gnutls_transport_set_pull_function(session, pull);
    gnutls_transport_set_pull_timeout_function(session, pull_timeout);
}
