/*
 * mockapi_int - internals of tests/support/mockapi: the server, reply and
 * connection structs shared by mockapi.c (the API, the accept loop) and
 * mockapi_conn.c (one thread per connection: parsing, matching, answering).
 * Only those two files include it.
 *
 * Thread safety: every field of struct mockapi, struct reply and the fd of
 * struct conn is guarded by mockapi.mu, except the read-only copies of a
 * spec in struct reply (set before the reply is queued).
 */
#ifndef TESTS_SUPPORT_MOCKAPI_INT_H
#define TESTS_SUPPORT_MOCKAPI_INT_H

#include <openssl/ssl.h>
#include <pthread.h>
#include <time.h>

#include "common/buf.h"
#include "tests/support/mockapi.h"

#define MOCKAPI_HEAD_MAX (64u * 1024u)
#define MOCKAPI_BODY_MAX (64u * 1024u * 1024u)

struct pushed {
    char *data;
    size_t len;
    struct pushed *next;
};

/* A queued reply (struct mockapi_spec, copied) and its live state. */
struct reply {
    char *method;
    char *path; /* without the '*' of a prefix pattern */
    int prefix;
    char **conds; /* query conditions: "k=v", "k", "!k" */
    size_t nconds;
    int status;
    char *headers;
    char *body;
    char **chunks;
    size_t nchunks;
    long chunk_delay_ms, delay_ms;
    int hold, close, left; /* left < 0: unlimited */
    int served;
    struct pushed *head, *tail;
    int end, abort;
};

struct conn {
    struct mockapi *m;
    int fd;   /* -1 once closed */
    SSL *ssl; /* TLS servers only */
    char sni[256];
    char client_cn[256];
    int id;
    int done;
    pthread_t th;
    struct buf in;
    struct conn *next;
};

struct mockapi {
    int lfd;
    int port;
    char url[64];
    SSL_CTX *tls; /* NULL: plain HTTP */
    pthread_t accept_th;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* any change: request recorded, reply served, push, end, stop */
    int stopping;
    unsigned drops; /* bumped by mockapi_drop_connections */
    struct reply **replies;
    size_t nreplies;
    struct mockapi_req **reqs;
    size_t nreqs;
    size_t unexpected;
    struct conn *conns;
    int nconns;
};

/* Free a recorded request (NULL ok). */
void mockapi_free_req(struct mockapi_req *q);

/* Thread body of a connection (arg: struct conn *); marks it done when it ends. */
void *mockapi_conn_main(void *arg);

#endif
