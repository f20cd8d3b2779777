#include "common/cfg.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "common/buf.h"
#include "common/ktime.h"
#include "common/kubeconfig.h"
#include "common/log.h"

struct cfg_token {
    pthread_mutex_t mu;
    char *file;     /* OWNS or NULL: token file, re-read */
    char *token;    /* OWNS: the last good token, "" when none */
    int have_read;  /* the file was read successfully at least once */
    int stale;      /* cfg_token_invalidate was called */
    int warned;     /* the current streak of failed re-reads was logged */
    long period_ms; /* re-read period */
    struct timespec read_at;
};

static void wipe_free(char *p, size_t n)
{
    if (!p)
        return;
    OPENSSL_cleanse(p, n);
    free(p);
}

static void wipe_free_str(char *p)
{
    if (p)
        wipe_free(p, strlen(p));
}

static const char *errtext(int e, char *b, size_t n)
{
    if (strerror_r(e, b, n) != 0)
        snprintf(b, n, "error %d", e);
    return b;
}

/* dir/name; NULL without memory or past PATH_MAX. */
static char *join(const char *dir, const char *name)
{
    return buf_dupf(PATH_MAX, "%s/%s", dir, name);
}

void cfg_rest_init(struct cfg_rest *r)
{
    memset(r, 0, sizeof(*r));
}

void cfg_rest_release(struct cfg_rest *r)
{
    if (!r)
        return;
    free(r->server);
    free(r->ca_pem);
    free(r->tls_server_name);
    wipe_free_str(r->token);
    free(r->token_file);
    free(r->cert_pem);
    wipe_free(r->key_pem, r->key_len);
    free(r->namespace);
    free(r->source);
    cfg_rest_init(r);
}

static int dup_mem(const char *src, size_t n, char **dst)
{
    *dst = NULL;
    if (!src)
        return 0;
    *dst = malloc(n + 1);
    if (!*dst)
        return -1;
    memcpy(*dst, src, n);
    (*dst)[n] = '\0';
    return 0;
}

static int dup_str(const char *src, char **dst)
{
    return dup_mem(src, src ? strlen(src) : 0, dst);
}

enum kerr cfg_rest_copy(const struct cfg_rest *src, struct cfg_rest *dst, struct kerr_info *err)
{
    int bad = 0;

    cfg_rest_init(dst);
    bad |= dup_str(src->server, &dst->server);
    bad |= dup_mem(src->ca_pem, src->ca_len, &dst->ca_pem);
    bad |= dup_str(src->tls_server_name, &dst->tls_server_name);
    bad |= dup_str(src->token, &dst->token);
    bad |= dup_str(src->token_file, &dst->token_file);
    bad |= dup_mem(src->cert_pem, src->cert_len, &dst->cert_pem);
    bad |= dup_mem(src->key_pem, src->key_len, &dst->key_pem);
    bad |= dup_str(src->namespace, &dst->namespace);
    bad |= dup_str(src->source, &dst->source);
    dst->ca_len = src->ca_pem ? src->ca_len : 0;
    dst->cert_len = src->cert_pem ? src->cert_len : 0;
    dst->key_len = src->key_pem ? src->key_len : 0;
    dst->insecure = src->insecure;
    if (bad) {
        cfg_rest_release(dst);
        return kerr_set(err, KERR_NOMEM, "cfg: out of memory copying the configuration");
    }
    return KERR_OK;
}

char *cfg_strdup_trim(const char *s, size_t n)
{
    static const char ws[] = " \t\r\n\v\f";
    char *p;

    while (n > 0 && strchr(ws, s[0]) && s[0])
        s++, n--;
    while (n > 0 && strchr(ws, s[n - 1]) && s[n - 1])
        n--;
    if (dup_mem(s, n, &p) != 0)
        return NULL;
    return p;
}

int cfg_token_valid(const char *s)
{
    if (!s || !*s)
        return 0;
    for (; *s; s++) {
        if ((unsigned char)*s < 0x21 || (unsigned char)*s > 0x7e)
            return 0;
    }
    return 1;
}

/* Grow a buffer that may hold secrets: copy, wipe the old block, free it. */
static int grow(char **p, size_t used, size_t *cap, size_t max)
{
    size_t ncap = *cap * 2;
    char *np;

    if (ncap > max + 1 || ncap < *cap)
        ncap = max + 1;
    np = malloc(ncap);
    if (!np)
        return -1;
    memcpy(np, *p, used);
    wipe_free(*p, used);
    *p = np;
    *cap = ncap;
    return 0;
}

static ssize_t read_some(int fd, void *p, size_t n)
{
    ssize_t r;

    do {
        r = read(fd, p, n);
    } while (r < 0 && errno == EINTR);
    return r;
}

/* Read fd to the end into *p (allocated here, capacity grown up to max + 1). */
static enum kerr read_fd(int fd, const char *path, size_t size_hint, size_t max, char **p,
                         size_t *used, struct kerr_info *err)
{
    size_t cap = 256;
    char eb[128], probe;
    ssize_t n;

    if (size_hint + 1 > cap)
        cap = size_hint + 1;
    if (cap > max + 1)
        cap = max + 1;
    *p = malloc(cap);
    if (!*p)
        return kerr_set(err, KERR_NOMEM, "cannot read %s: out of memory", path);
    for (;;) {
        if (*used + 1 == cap && cap == max + 1) {
            n = read_some(fd, &probe, 1);
            if (n > 0)
                return kerr_set(err, KERR_TOOBIG, "%s is larger than %zu bytes", path, max);
        } else {
            if (*used + 1 == cap && grow(p, *used, &cap, max) != 0)
                return kerr_set(err, KERR_NOMEM, "cannot read %s: out of memory", path);
            n = read_some(fd, *p + *used, cap - 1 - *used);
        }
        if (n < 0)
            return kerr_set(err, KERR_IO, "cannot read %s: %s", path,
                            errtext(errno, eb, sizeof(eb)));
        if (n == 0)
            return KERR_OK;
        *used += (size_t)n;
    }
}

enum kerr cfg_read_file(const char *path, size_t max, char **out, size_t *len,
                        struct kerr_info *err)
{
    char *p = NULL, eb[128];
    size_t used = 0;
    struct stat st;
    enum kerr rc;
    int fd;

    *out = NULL;
    if (len)
        *len = 0;
    /* O_NONBLOCK: opening a FIFO must not hang; only regular files are read. */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return kerr_set(err, KERR_IO, "cannot read %s: %s", path, errtext(errno, eb, sizeof(eb)));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return kerr_set(err, KERR_IO, "cannot read %s: not a regular file", path);
    }
    rc = read_fd(fd, path, (size_t)st.st_size, max, &p, &used, err);
    close(fd);
    if (rc != KERR_OK) {
        wipe_free(p, used);
        return rc;
    }
    p[used] = '\0';
    *out = p;
    if (len)
        *len = used;
    return KERR_OK;
}

enum kerr cfg_parse_kubeconfig(const char *text, size_t len, const char *path, const char *context,
                               struct cfg_rest *out, struct kerr_info *err)
{
    return kcfg_parse(text, len, path, context, out, err);
}

enum kerr cfg_load_kubeconfig(const char *path, const char *context, struct cfg_rest *out,
                              struct kerr_info *err)
{
    char *text = NULL;
    size_t len = 0;
    enum kerr rc;

    cfg_rest_init(out);
    rc = cfg_read_file(path, CFG_MAX_FILE, &text, &len, err);
    if (rc != KERR_OK)
        return rc;
    rc = kcfg_parse(text, len, path, context, out, err);
    wipe_free(text, len);
    return rc;
}

/* "https://host:port" from the service environment; IPv6 hosts get brackets. */
static enum kerr incluster_server(struct cfg_rest *out, struct kerr_info *err)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    int v6, n;
    size_t sz;
    char *end;
    long p;

    if (!host || !*host || !port || !*port)
        return kerr_set(err, KERR_NOTFOUND,
                        "in-cluster: KUBERNETES_SERVICE_HOST and "
                        "KUBERNETES_SERVICE_PORT must be set");
    errno = 0;
    p = strtol(port, &end, 10);
    if (errno || end == port || *end || p < 1 || p > 65535)
        return kerr_set(err, KERR_INVAL,
                        "in-cluster: KUBERNETES_SERVICE_PORT \"%.32s\" is not a port", port);
    if (strpbrk(host, "/@ \t\r\n[]"))
        return kerr_set(err, KERR_INVAL,
                        "in-cluster: KUBERNETES_SERVICE_HOST \"%.64s\" is not a host", host);
    v6 = strchr(host, ':') != NULL;
    sz = strlen(host) + 32;
    out->server = malloc(sz);
    if (!out->server)
        return kerr_set(err, KERR_NOMEM, "in-cluster: out of memory");
    n = snprintf(out->server, sz, "https://%s%s%s:%ld", v6 ? "[" : "", host, v6 ? "]" : "", p);
    if (n < 0 || (size_t)n >= sz)
        return kerr_set(err, KERR_INTERNAL, "in-cluster: server URL truncated");
    return KERR_OK;
}

/* POD_NAMESPACE, else sa_dir/namespace, else "default" (client-go's order). */
static enum kerr incluster_namespace(const char *sa_dir, struct cfg_rest *out,
                                     struct kerr_info *err)
{
    const char *env = getenv("POD_NAMESPACE");
    char *path = NULL, *text = NULL;
    size_t len = 0;

    if (env && *env) {
        out->namespace = cfg_strdup_trim(env, strlen(env));
    } else {
        path = join(sa_dir, "namespace");
        if (path && cfg_read_file(path, 4096, &text, &len, NULL) == KERR_OK)
            out->namespace = cfg_strdup_trim(text, len);
        free(path);
        free(text);
        if (out->namespace && !out->namespace[0]) {
            free(out->namespace);
            out->namespace = NULL;
        }
        if (path && !out->namespace)
            out->namespace = strdup("default");
    }
    if (!out->namespace)
        return kerr_set(err, KERR_NOMEM, "in-cluster: out of memory");
    return KERR_OK;
}

enum kerr cfg_load_incluster(const char *sa_dir, struct cfg_rest *out, struct kerr_info *err)
{
    char *ca = NULL, *tok = NULL;
    size_t tok_len = 0;
    enum kerr rc;

    cfg_rest_init(out);
    if (!sa_dir)
        sa_dir = CFG_SA_DIR;
    rc = incluster_server(out, err);
    if (rc != KERR_OK)
        goto out;
    out->token_file = join(sa_dir, "token");
    ca = join(sa_dir, "ca.crt");
    out->source = strdup("in-cluster");
    if (!out->token_file || !ca || !out->source) {
        rc = kerr_set(err, KERR_NOMEM, "in-cluster: out of memory");
        goto out;
    }
    rc = cfg_read_file(out->token_file, CFG_MAX_TOKEN, &tok, &tok_len, err);
    if (rc == KERR_OK)
        rc = cfg_read_file(ca, CFG_MAX_FILE, &out->ca_pem, &out->ca_len, err);
    if (rc != KERR_OK) {
        kerr_wrap(err, "in-cluster");
        goto out;
    }
    rc = incluster_namespace(sa_dir, out, err);
out:
    wipe_free(tok, tok_len);
    free(ca);
    if (rc != KERR_OK)
        cfg_rest_release(out);
    return rc;
}

/* The first existing entry of a ':'-separated $KUBECONFIG, else its first entry. */
static char *kubeconfig_from_env(const char *env)
{
    char *list = strdup(env), *save = NULL, *tok, *first = NULL, *pick = NULL;
    struct stat st;

    if (!list)
        return NULL;
    for (tok = strtok_r(list, ":", &save); tok && !pick; tok = strtok_r(NULL, ":", &save)) {
        if (!first)
            first = tok;
        if (stat(tok, &st) == 0)
            pick = tok;
    }
    pick = pick ? pick : first;
    pick = pick ? strdup(pick) : NULL;
    free(list);
    return pick;
}

enum kerr cfg_load_context(const char *kubeconfig_flag, const char *context, struct cfg_rest *out,
                           struct kerr_info *err)
{
    const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
    const char *sa_dir = getenv("WARDEN_SA_DIR");
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    char *path = NULL;
    enum kerr rc;

    cfg_rest_init(out);
    if (kubeconfig_flag && *kubeconfig_flag)
        return cfg_load_kubeconfig(kubeconfig_flag, context, out, err);
    if (env && env[strspn(env, ":")]) {
        path = kubeconfig_from_env(env);
    } else if (host && *host) {
        if (context && *context)
            return kerr_set(err, KERR_INVAL,
                            "context %s needs a kubeconfig: give --kubeconfig or set KUBECONFIG",
                            context);
        return cfg_load_incluster(sa_dir && *sa_dir ? sa_dir : NULL, out, err);
    } else if (home && *home) {
        path = join(home, ".kube/config");
    } else {
        return kerr_set(err, KERR_NOTFOUND,
                        "no configuration: give --kubeconfig, set "
                        "KUBECONFIG or run in a cluster");
    }
    if (!path)
        return kerr_set(err, KERR_NOMEM, "cfg: out of memory");
    rc = cfg_load_kubeconfig(path, context, out, err);
    free(path);
    return rc;
}

enum kerr cfg_load_default(const char *kubeconfig_flag, struct cfg_rest *out, struct kerr_info *err)
{
    return cfg_load_context(kubeconfig_flag, NULL, out, err);
}

enum kerr cfg_token_new(const struct cfg_rest *r, struct cfg_token **out, struct kerr_info *err)
{
    struct cfg_token *t;

    *out = NULL;
    if (r->token && r->token[0] && !cfg_token_valid(r->token))
        return kerr_set(err, KERR_INVAL, "cfg: the token is not one word of printable characters");
    t = calloc(1, sizeof(*t));
    if (!t)
        return kerr_set(err, KERR_NOMEM, "cfg: out of memory");
    t->period_ms = CFG_TOKEN_PERIOD;
    if (dup_str(r->token ? r->token : "", &t->token) != 0 ||
        dup_str(r->token_file, &t->file) != 0 || pthread_mutex_init(&t->mu, NULL) != 0) {
        wipe_free_str(t->token);
        free(t->file);
        free(t);
        return kerr_set(err, KERR_NOMEM, "cfg: out of memory");
    }
    *out = t;
    return KERR_OK;
}

/* Re-read the token file; called with t->mu held. */
static enum kerr token_refresh(struct cfg_token *t, struct kerr_info *err)
{
    struct kerr_info e;
    char *text = NULL, *tok = NULL;
    size_t len = 0;
    enum kerr rc;

    rc = cfg_read_file(t->file, CFG_MAX_TOKEN, &text, &len, &e);
    if (rc == KERR_OK) {
        tok = cfg_strdup_trim(text, len);
        wipe_free(text, len);
        if (!tok)
            rc = kerr_set(&e, KERR_NOMEM, "cfg: out of memory");
        else if (!tok[0])
            rc = kerr_set(&e, KERR_IO, "token file %s is empty", t->file);
        else if (!cfg_token_valid(tok))
            rc = kerr_set(&e, KERR_IO, "token file %s is not one word of printable characters",
                          t->file);
    }
    if (rc == KERR_OK) {
        wipe_free_str(t->token);
        t->token = tok;
        t->have_read = 1;
        t->stale = 0;
        t->warned = 0;
        clock_gettime(CLOCK_MONOTONIC, &t->read_at);
        return KERR_OK;
    }
    wipe_free_str(tok);
    if (!t->have_read && !t->token[0])
        return kerr_set(err, rc, "%s", e.msg);
    if (!t->warned)
        log_warn("cannot re-read the token file, keeping the last token", "file", t->file, "error",
                 e.msg);
    t->warned = 1;
    return KERR_OK;
}

enum kerr cfg_token_get(struct cfg_token *t, char **out, struct kerr_info *err)
{
    enum kerr rc = KERR_OK;

    *out = NULL;
    pthread_mutex_lock(&t->mu);
    if (t->file && (!t->have_read || t->stale || ktime_elapsed_ms(&t->read_at) >= t->period_ms))
        rc = token_refresh(t, err);
    if (rc == KERR_OK && dup_str(t->token, out) != 0)
        rc = kerr_set(err, KERR_NOMEM, "cfg: out of memory");
    pthread_mutex_unlock(&t->mu);
    return rc;
}

void cfg_token_invalidate(struct cfg_token *t)
{
    pthread_mutex_lock(&t->mu);
    t->stale = 1;
    pthread_mutex_unlock(&t->mu);
}

void cfg_token_set_period_ms(struct cfg_token *t, long ms)
{
    pthread_mutex_lock(&t->mu);
    t->period_ms = ms < 0 ? 0 : ms;
    pthread_mutex_unlock(&t->mu);
}

void cfg_token_free(struct cfg_token *t)
{
    if (!t)
        return;
    pthread_mutex_destroy(&t->mu);
    wipe_free_str(t->token);
    free(t->file);
    free(t);
}
