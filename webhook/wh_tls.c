/* wh_tls - the hot-swapped serving certificate; see wh_tls.h. */
#include "webhook/wh_tls.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/ktime.h"
#include "common/log.h"
#include "webhook/wh_tlsio.h"

/* A certificate chain and key as GnuTLS uses them, shared by the connections using it. */
struct cred {
    atomic_int refs;
    gnutls_pcert_st pcert[WH_TLS_MAX_CHAIN];
    unsigned int n;
    gnutls_privkey_t key;
    time_t not_after;
};

/* What the files looked like when last loaded. */
struct filesig {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
};

struct wh_tls {
    char *cert_file, *key_file; /* OWNS or NULL */
    long poll_ms;
    pthread_mutex_t load_mu; /* one load_files at a time (the watcher, SIGHUP, start-up) */
    pthread_mutex_t mu;      /* guards cur and the signatures */
    struct cred *cur;        /* OWNS one reference */
    struct filesig sig_cert, sig_key;
    uint64_t generation;
    struct metrics_child *reads, *read_errors; /* BORROWED or NULL */
    pthread_t watcher;
    int watching;
    pthread_mutex_t stop_mu;
    pthread_cond_t stop_cv;
    int stop;
};

/* Per connection: which holder, the pair it was handshaken with, the read-ahead. */
struct conn_ctx {
    struct wh_tls *tls;
    struct cred *cred; /* OWNS one reference, or NULL before the handshake */
    struct wh_tlsio io;
};

static void cred_unref(struct cred *c)
{
    unsigned int i;

    if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    for (i = 0; i < c->n; i++)
        gnutls_pcert_deinit(&c->pcert[i]);
    if (c->key)
        gnutls_privkey_deinit(c->key);
    free(c);
}

static enum kerr cred_from_pem(const struct tlsx_pem *pem, struct cred **out, struct kerr_info *err)
{
    struct cred *c = calloc(1, sizeof(*c));
    gnutls_datum_t cert, key;
    enum kerr rc;
    int g;

    *out = NULL;
    if (!c)
        return kerr_set(err, KERR_NOMEM, "allocating TLS credentials");
    atomic_init(&c->refs, 1);
    if ((rc = tlsx_check_pair(pem, err)) ||
        (rc = tlsx_cert_validity(pem->cert, strlen(pem->cert), NULL, &c->not_after, err)))
        goto fail;
    cert.data = (unsigned char *)pem->cert;
    cert.size = (unsigned int)strlen(pem->cert);
    key.data = (unsigned char *)pem->key;
    key.size = (unsigned int)strlen(pem->key);
    c->n = WH_TLS_MAX_CHAIN;
    g = gnutls_pcert_list_import_x509_raw(c->pcert, &c->n, &cert, GNUTLS_X509_FMT_PEM, 0);
    if (g < 0) {
        c->n = 0;
        rc =
            kerr_set(err, KERR_TLS, "GnuTLS cannot import the certificate: %s", gnutls_strerror(g));
        goto fail;
    }
    if ((g = gnutls_privkey_init(&c->key)) < 0 ||
        (g = gnutls_privkey_import_x509_raw(c->key, &key, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
        rc = kerr_set(err, KERR_TLS, "GnuTLS cannot import the key: %s", gnutls_strerror(g));
        goto fail;
    }
    *out = c;
    return KERR_OK;
fail:
    cred_unref(c);
    return rc;
}

static void install(struct wh_tls *t, struct cred *c)
{
    struct cred *old;

    pthread_mutex_lock(&t->mu);
    old = t->cur;
    t->cur = c;
    t->generation++;
    pthread_mutex_unlock(&t->mu);
    cred_unref(old);
}

enum kerr wh_tls_set_pem(struct wh_tls *t, const struct tlsx_pem *pem, struct kerr_info *err)
{
    struct cred *c = NULL;
    enum kerr rc = cred_from_pem(pem, &c, err);

    if (rc)
        return rc;
    install(t, c);
    return KERR_OK;
}

static int sig_of(const char *path, struct filesig *s)
{
    struct stat st;

    if (stat(path, &st) != 0)
        return -1;
    memset(s, 0, sizeof(*s));
    s->dev = st.st_dev;
    s->ino = st.st_ino;
    s->size = st.st_size;
    s->mtime = st.st_mtim;
    return 0;
}

static int sig_eq(const struct filesig *a, const struct filesig *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/*
 * Load the files; force: even when their signatures did not change. Loads
 * are serialised (load_mu): two of them running at once (the file watcher
 * and a SIGHUP) could read the old and the new files and install the older
 * one last, and with it its signatures, so the new pair would wait for the
 * next change.
 */
static enum kerr load_files_locked(struct wh_tls *t, int force, struct kerr_info *err);

static enum kerr load_files(struct wh_tls *t, int force, struct kerr_info *err)
{
    enum kerr rc;

    pthread_mutex_lock(&t->load_mu);
    rc = load_files_locked(t, force, err);
    pthread_mutex_unlock(&t->load_mu);
    return rc;
}

static enum kerr load_files_locked(struct wh_tls *t, int force, struct kerr_info *err)
{
    struct filesig sc, sk;
    struct tlsx_pem pem;
    enum kerr rc;
    int same;

    if (sig_of(t->cert_file, &sc) || sig_of(t->key_file, &sk))
        return force ? kerr_set(err, KERR_IO, "cannot stat %s or %s", t->cert_file, t->key_file)
                     : KERR_OK; /* in the middle of a swap: try again next tick */
    pthread_mutex_lock(&t->mu);
    same = t->cur && sig_eq(&sc, &t->sig_cert) && sig_eq(&sk, &t->sig_key);
    pthread_mutex_unlock(&t->mu);
    if (same && !force)
        return KERR_OK;
    tlsx_pem_init(&pem);
    rc = tlsx_load_files(t->cert_file, t->key_file, &pem, err);
    if (!rc)
        rc = wh_tls_set_pem(t, &pem, err);
    tlsx_pem_release(&pem);
    if (t->reads)
        metrics_inc(t->reads);
    if (rc) {
        if (t->read_errors)
            metrics_inc(t->read_errors);
        return rc;
    }
    pthread_mutex_lock(&t->mu);
    t->sig_cert = sc;
    t->sig_key = sk;
    pthread_mutex_unlock(&t->mu);
    return KERR_OK;
}

enum kerr wh_tls_reload(struct wh_tls *t, struct kerr_info *err)
{
    uint64_t before = wh_tls_generation(t);
    enum kerr rc;

    if (!t->cert_file)
        return KERR_OK;
    rc = load_files(t, 0, err);
    if (rc == KERR_OK && wh_tls_generation(t) != before)
        log_info("serving certificate reloaded", "cert", t->cert_file);
    return rc;
}

static enum kerr register_metrics(struct wh_tls *t, struct metrics_registry *r,
                                  struct kerr_info *err)
{
    struct metrics_vec *v = NULL;
    enum kerr rc;

    if (!r)
        return KERR_OK;
    if ((rc = metrics_register(r, METRICS_COUNTER, "certwatcher_read_certificate_total",
                               "Total number of certificate reads", NULL, NULL, 0, &v, err)) ||
        (rc = metrics_with(v, NULL, &t->reads, err)))
        return rc;
    if ((rc = metrics_register(r, METRICS_COUNTER, "certwatcher_read_certificate_errors_total",
                               "Total number of certificate read errors", NULL, NULL, 0, &v, err)))
        return rc;
    return metrics_with(v, NULL, &t->read_errors, err);
}

enum kerr wh_tls_new(const struct wh_tls_opts *opts, struct wh_tls **out, struct kerr_info *err)
{
    struct wh_tls *t = calloc(1, sizeof(*t));
    enum kerr rc = KERR_NOMEM;

    *out = NULL;
    if (!t)
        return kerr_set(err, KERR_NOMEM, "allocating the certificate holder");
    pthread_mutex_init(&t->load_mu, NULL);
    pthread_mutex_init(&t->mu, NULL);
    pthread_mutex_init(&t->stop_mu, NULL);
    pthread_cond_init(&t->stop_cv, NULL);
    t->poll_ms = opts->poll_ms > 0 ? opts->poll_ms : 1000;
    if ((opts->cert_file && !(t->cert_file = strdup(opts->cert_file))) ||
        (opts->key_file && !(t->key_file = strdup(opts->key_file)))) {
        kerr_set(err, rc, "allocating the certificate holder");
        goto fail;
    }
    if ((rc = register_metrics(t, opts->registry, err)))
        goto fail;
    if (t->cert_file && t->key_file && (rc = load_files(t, 1, err)))
        goto fail;
    *out = t;
    return KERR_OK;
fail:
    wh_tls_free(t);
    return rc;
}

static void *watch_main(void *arg)
{
    struct wh_tls *t = arg;
    struct kerr_info err;
    struct timespec until;

    pthread_mutex_lock(&t->stop_mu);
    while (!t->stop) {
        ktime_deadline_after(&until, t->poll_ms, CLOCK_REALTIME);
        pthread_cond_timedwait(&t->stop_cv, &t->stop_mu, &until);
        if (t->stop)
            break;
        pthread_mutex_unlock(&t->stop_mu);
        kerr_clear(&err);
        if (wh_tls_reload(t, &err))
            log_warn("cannot reload the serving certificate; keeping the current one", "error",
                     err.msg);
        pthread_mutex_lock(&t->stop_mu);
    }
    pthread_mutex_unlock(&t->stop_mu);
    return NULL;
}

enum kerr wh_tls_start_watch(struct wh_tls *t, struct kerr_info *err)
{
    int e;

    if (!t->cert_file || t->watching)
        return KERR_OK;
    e = pthread_create(&t->watcher, NULL, watch_main, t);
    if (e != 0)
        return kerr_set(err, KERR_INTERNAL, "cannot start the certificate watcher (errno %d)", e);
    t->watching = 1;
    return KERR_OK;
}

void wh_tls_free(struct wh_tls *t)
{
    if (!t)
        return;
    if (t->watching) {
        pthread_mutex_lock(&t->stop_mu);
        t->stop = 1;
        pthread_cond_broadcast(&t->stop_cv);
        pthread_mutex_unlock(&t->stop_mu);
        pthread_join(t->watcher, NULL);
    }
    cred_unref(t->cur);
    pthread_mutex_destroy(&t->load_mu);
    pthread_mutex_destroy(&t->mu);
    pthread_mutex_destroy(&t->stop_mu);
    pthread_cond_destroy(&t->stop_cv);
    free(t->cert_file);
    free(t->key_file);
    free(t);
}

int wh_tls_ready(struct wh_tls *t)
{
    int ready;

    pthread_mutex_lock(&t->mu);
    ready = t->cur != NULL;
    pthread_mutex_unlock(&t->mu);
    return ready;
}

uint64_t wh_tls_generation(struct wh_tls *t)
{
    uint64_t g;

    pthread_mutex_lock(&t->mu);
    g = t->generation;
    pthread_mutex_unlock(&t->mu);
    return g;
}

time_t wh_tls_not_after(struct wh_tls *t)
{
    time_t na;

    pthread_mutex_lock(&t->mu);
    na = t->cur ? t->cur->not_after : 0;
    pthread_mutex_unlock(&t->mu);
    return na;
}

void wh_tls_notify_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                              enum MHD_ConnectionNotificationCode toe)
{
    const union MHD_ConnectionInfo *fd, *session;
    struct conn_ctx *cc;

    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        cc = calloc(1, sizeof(*cc));
        if (cc) {
            cc->tls = cls;
            fd = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
            session = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
            wh_tlsio_init(&cc->io, fd ? fd->connect_fd : -1);
            if (fd && session && session->tls_session)
                wh_tlsio_attach(&cc->io, (gnutls_session_t)session->tls_session);
        }
        *socket_context = cc;
        return;
    }
    cc = *socket_context;
    if (cc) {
        cred_unref(cc->cred);
        wh_tlsio_release(&cc->io);
        free(cc);
    }
    *socket_context = NULL;
}

int wh_tls_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
                    const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                    gnutls_pcert_st **pcert, unsigned int *pcert_length, gnutls_privkey_t *privkey)
{
    struct MHD_Connection *conn = gnutls_session_get_ptr(session);
    const union MHD_ConnectionInfo *ci;
    struct conn_ctx *cc;
    struct cred *c;

    (void)req_ca_rdn;
    (void)nreqs;
    (void)pk_algos;
    (void)pk_algos_length;
    ci = conn ? MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT) : NULL;
    cc = ci ? ci->socket_context : NULL;
    if (!cc || !cc->tls)
        return -1;
    pthread_mutex_lock(&cc->tls->mu);
    c = cc->tls->cur;
    if (c)
        atomic_fetch_add(&c->refs, 1);
    pthread_mutex_unlock(&cc->tls->mu);
    if (!c)
        return -1;
    cred_unref(cc->cred); /* a second handshake on the connection */
    cc->cred = c;
    *pcert = c->pcert;
    *pcert_length = c->n;
    *privkey = c->key;
    return 0;
}
