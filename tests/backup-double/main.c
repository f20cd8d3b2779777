/*
 * backup-double - a stand-in for etcd-backup-restore's HTTP API in the tests.
 *
 *   backup-double --listen ADDR:PORT [--tls-dir DIR] [-v]
 *
 * Serves bkd (bkd.h: the snapshot routes and the admin routes) over HTTP, or
 * HTTPS with DIR/tls.crt and DIR/tls.key (then with the sidecar's
 * Strict-Transport-Security and Content-Security-Policy headers). PORT 0
 * picks a free port. Prints "backup-double ready http(s)://ADDR:PORT" on
 * stdout once it serves; SIGTERM or SIGINT stop it with status 0 (a delayed
 * answer in progress ends early). Bad flags: a message and status 2.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/buf.h"
#include "common/proc.h"
#include "tests/backup-double/bkd.h"

#define MAX_ARGS     16
#define MAX_PEM_SIZE (64u * 1024u)

struct server {
    struct bkd *d;
    int tls;
};

struct args {
    struct bkd_arg v[MAX_ARGS];
    size_t n;
};

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    struct args *a = cls;

    (void)kind;
    if (a->n < MAX_ARGS) {
        a->v[a->n].key = key;
        a->v[a->n].value = value ? value : "";
        a->n++;
    }
    return MHD_YES;
}

static int shutting_down(void *arg)
{
    (void)arg;
    return proc_shutdown_requested();
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **con_cls)
{
    static int started;
    struct server *s = cls;
    struct args a = { 0 };
    struct bkd_req req = { 0 };
    struct bkd_reply r;
    struct MHD_Response *resp;
    enum MHD_Result ret;

    (void)version;
    (void)data;
    if (!*con_cls) {
        *con_cls = &started;
        return MHD_YES;
    }
    if (*size) {
        *size = 0; /* bodies are not used */
        return MHD_YES;
    }
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_arg, &a);
    req.method = method;
    req.path = url;
    req.args = a.v;
    req.nargs = a.n;
    bkd_handle(s->d, &req, &r, shutting_down, NULL);
    resp =
        MHD_create_response_from_buffer(r.len, r.body ? r.body : (char *)"", MHD_RESPMEM_MUST_COPY);
    if (!resp) {
        bkd_reply_release(&r);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", r.content_type ? r.content_type : "text/plain");
    if (s->tls) {
        MHD_add_response_header(resp, "Strict-Transport-Security", "max-age=31536000");
        MHD_add_response_header(resp, "Content-Security-Policy", "default-src 'self'");
    }
    ret = MHD_queue_response(conn, r.code, resp);
    MHD_destroy_response(resp);
    bkd_reply_release(&r);
    return ret;
}

/* The contents of dir/name (NUL-terminated) into out (OWNS). */
static enum kerr read_pem(const char *dir, const char *name, char **out, struct kerr_info *err)
{
    char path[4096], chunk[4096];
    struct buf b;
    FILE *f;
    size_t n;
    enum kerr rc = KERR_OK;

    *out = NULL;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "r");
    if (!f)
        return kerr_set(err, KERR_IO, "cannot read %s", path);
    buf_init(&b, MAX_PEM_SIZE);
    while (rc == KERR_OK && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        rc = buf_append(&b, chunk, n);
    fclose(f);
    if (rc != KERR_OK || b.len == 0) {
        buf_release(&b);
        return kerr_set(err, KERR_IO, "%s is empty or larger than %u bytes", path, MAX_PEM_SIZE);
    }
    *out = buf_detach(&b, NULL);
    return *out ? KERR_OK : kerr_set(err, KERR_NOMEM, "out of memory");
}

/* "ADDR:PORT" (IPv4) into addr. */
static enum kerr parse_listen(const char *spec, struct sockaddr_in *addr, struct kerr_info *err)
{
    const char *colon = spec ? strrchr(spec, ':') : NULL;
    char host[64];
    char *end = NULL;
    long port;

    memset(addr, 0, sizeof(*addr));
    if (!colon || (size_t)(colon - spec) >= sizeof(host))
        return kerr_set(err, KERR_INVAL, "--listen: want ADDR:PORT, got \"%s\"", spec ? spec : "");
    memcpy(host, spec, (size_t)(colon - spec));
    host[colon - spec] = '\0';
    port = strtol(colon + 1, &end, 10);
    addr->sin_family = AF_INET;
    if (!*host || inet_pton(AF_INET, host, &addr->sin_addr) != 1 || !end || *end ||
        end == colon + 1 || port < 0 || port > 65535)
        return kerr_set(err, KERR_INVAL, "--listen: want an IPv4 ADDR:PORT, got \"%s\"", spec);
    addr->sin_port = htons((uint16_t)port);
    return KERR_OK;
}

static unsigned short bound_port(struct MHD_Daemon *d)
{
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_LISTEN_FD);
    struct sockaddr_in a;
    socklen_t len = sizeof(a);

    if (!di || getsockname(di->listen_fd, (struct sockaddr *)&a, &len) != 0)
        return 0;
    return ntohs(a.sin_port);
}

static struct MHD_Daemon *start(struct server *s, struct sockaddr_in *addr, const char *cert,
                                const char *key)
{
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD |
                     MHD_USE_ERROR_LOG | (s->tls ? MHD_USE_TLS : 0);

    if (s->tls)
        return MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR,
                                (struct sockaddr *)addr, MHD_OPTION_HTTPS_MEM_CERT, cert,
                                MHD_OPTION_HTTPS_MEM_KEY, key, MHD_OPTION_CONNECTION_TIMEOUT,
                                (unsigned)120, MHD_OPTION_END);
    return MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR,
                            (struct sockaddr *)addr, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
                            MHD_OPTION_END);
}

static int run(const char *listen, const char *tls_dir)
{
    struct server s = { 0 };
    struct sockaddr_in addr;
    struct kerr_info err;
    struct MHD_Daemon *mhd = NULL;
    char *cert = NULL, *key = NULL, ip[INET_ADDRSTRLEN];
    int status = 1;

    s.tls = tls_dir != NULL && *tls_dir;
    if (parse_listen(listen, &addr, &err) != KERR_OK) {
        fprintf(stderr, "backup-double: %s\n", err.msg);
        return 2;
    }
    if ((s.tls && (read_pem(tls_dir, "tls.crt", &cert, &err) != KERR_OK ||
                   read_pem(tls_dir, "tls.key", &key, &err) != KERR_OK)) ||
        proc_signals_install(&err) != KERR_OK || bkd_new(&s.d, &err) != KERR_OK) {
        fprintf(stderr, "backup-double: %s\n", err.msg);
        goto out;
    }
    mhd = start(&s, &addr, cert, key);
    if (!mhd) {
        fprintf(stderr, "backup-double: cannot serve on %s\n", listen);
        goto out;
    }
    inet_ntop(AF_INET, &addr.sin_addr, ip, sizeof(ip));
    printf("backup-double ready %s://%s:%u\n", s.tls ? "https" : "http", ip, bound_port(mhd));
    fflush(stdout);
    proc_wait_shutdown(-1);
    MHD_stop_daemon(mhd);
    status = 0;
out:
    bkd_free(s.d);
    free(cert);
    free(key);
    return status;
}

int main(int argc, char **argv)
{
    const char *listen = NULL, *tls_dir = NULL;
    const struct proc_flag flags[] = {
        { "listen", PROC_FLAG_STRING, &listen, NULL, "ADDR:PORT to serve on (IPv4; port 0: any)" },
        { "tls-dir", PROC_FLAG_STRING, &tls_dir, NULL,
          "serve HTTPS with tls.crt and tls.key from this directory" },
    };
    const size_t nflags = sizeof(flags) / sizeof(flags[0]);
    struct proc_args args;
    struct kerr_info err;
    char *help = NULL;
    int asked;

    if (proc_flags_parse(flags, nflags, argc, argv, &args, &err) != KERR_OK) {
        fprintf(stderr, "backup-double: %s\n", err.msg);
        return 2;
    }
    asked = args.help;
    if (asked || !listen || args.npos) {
        if (proc_flags_help("backup-double", "etcd-backup-restore's HTTP API, for the tests.",
                            flags, nflags, &help, &err) == KERR_OK)
            fputs(help, asked ? stdout : stderr);
        free(help);
        proc_args_release(&args);
        return asked ? 0 : 2;
    }
    proc_args_release(&args);
    return run(listen, tls_dir);
}
