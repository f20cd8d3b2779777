/*
 * kube-sim - a Kubernetes API server stand-in that kubectl accepts.
 *
 *   kube-sim --data-dir DIR [--port N] [--token-file FILE]
 *            [--service-alias NAME.NAMESPACE=HOST:PORT]...
 *
 * Serves HTTPS on 127.0.0.1, writes DIR/ca.crt and DIR/admin.kubeconfig,
 * prints "kube-sim ready https://127.0.0.1:PORT" once it serves, and stops
 * cleanly on SIGTERM.
 */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/crypto.h"
#include "common/buf.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/tlsx.h"
#include "tests/kube-sim/api.h"
#include "tests/kube-sim/auth.h"
#include "tests/kube-sim/ctrl.h"
#include "tests/kube-sim/fault.h"
#include "tests/kube-sim/files.h"
#include "tests/kube-sim/server.h"
#include "tests/kube-sim/svcip.h"

#define MAX_TOKEN_FILE (1024u * 1024u)

struct options {
    const char *data_dir;
    const char *token_file;
    const char *error_rate;
    const char *throttle_rate;
    const char *fault_match;
    const char *service_cidr;
    long port;
    long history;
    long max_objects;
    long max_connections;
    long bookmark_ms;
    long sts_delay_ms;
    long latency_ms;
    long watch_max_ms;
    struct proc_strv aliases;
    const char *webhook_cert;
    const char *webhook_key;
};

static int parse_alias(const char *spec, struct ksim_alias *a)
{
    const char *eq = strchr(spec, '='), *dot = strchr(spec, '.'), *colon = strrchr(spec, ':');
    char *end = NULL;
    long port;

    if (!eq || !dot || dot > eq || !colon || colon < eq || dot == spec || dot + 1 == eq ||
        colon == eq + 1)
        return -1;
    port = strtol(colon + 1, &end, 10);
    if (!end || *end || port <= 0 || port > 65535)
        return -1;
    a->service = strndup(spec, (size_t)(dot - spec));
    a->namespace = strndup(dot + 1, (size_t)(eq - dot - 1));
    a->host = strndup(eq + 1, (size_t)(colon - eq - 1));
    a->port = (int)port;
    return a->service && a->namespace && a->host ? 0 : -1;
}

static char *read_file(const char *path, struct kerr_info *err)
{
    FILE *f = fopen(path, "r");
    struct buf b;
    char chunk[4096];
    size_t n;

    if (!f) {
        kerr_set(err, KERR_IO, "cannot read %s", path);
        return NULL;
    }
    buf_init(&b, MAX_TOKEN_FILE);
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (buf_append(&b, chunk, n) != KERR_OK) {
            kerr_set(err, KERR_TOOBIG, "%s is larger than %u bytes", path, MAX_TOKEN_FILE);
            buf_release(&b);
            fclose(f);
            return NULL;
        }
    }
    fclose(f);
    return buf_detach(&b, NULL);
}

static enum kerr make_certs(struct tlsx_pem *ca, struct tlsx_pem *serving, struct kerr_info *err)
{
    static const char *const sans[] = {
        "127.0.0.1", "localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", NULL
    };
    struct tlsx_cert_opts o;
    enum kerr rc;

    memset(&o, 0, sizeof(o));
    o.cn = "kube-sim-ca";
    rc = tlsx_gen_ca(&o, ca, err);
    if (rc != KERR_OK)
        return rc;
    o.cn = "kube-apiserver";
    o.sans = sans;
    return tlsx_gen_serving(ca, &o, serving, err);
}

static int parse_rate(const char *s, double *out)
{
    char *end = NULL;

    *out = 0;
    if (!s || !*s)
        return 0;
    errno = 0;
    *out = strtod(s, &end);
    return errno || !end || *end || *out < 0 || *out > 1 ? -1 : 0;
}

static enum kerr configure_faults(struct ksim_api *api, const struct options *o,
                                  struct kerr_info *err)
{
    cJSON *doc = cJSON_CreateObject();
    double er, tr;
    enum kerr rc;

    if (parse_rate(o->error_rate, &er) != 0 || parse_rate(o->throttle_rate, &tr) != 0) {
        cJSON_Delete(doc);
        return kerr_set(err, KERR_INVAL, "--fault-error-rate and --fault-throttle-rate take 0..1");
    }
    if (!doc || !cJSON_AddNumberToObject(doc, "latencyMs", (double)o->latency_ms) ||
        !cJSON_AddNumberToObject(doc, "errorRate", er) ||
        !cJSON_AddNumberToObject(doc, "throttleRate", tr) ||
        !cJSON_AddNumberToObject(doc, "watchMaxMs", (double)o->watch_max_ms) ||
        !cJSON_AddStringToObject(doc, "match", o->fault_match ? o->fault_match : "")) {
        cJSON_Delete(doc);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    rc = ksim_fault_configure(api->fault, api->store, doc, NULL, err);
    cJSON_Delete(doc);
    return rc;
}

/* 0 when cidr is a usable --service-cluster-ip-range, else a message on stderr and -1. */
static int check_range(const char *cidr)
{
    struct ksim_svcip *a = NULL;
    struct kerr_info err;

    if (ksim_svcip_new(cidr, &a, &err) != KERR_OK) {
        fprintf(stderr, "kube-sim: --service-cluster-ip-range: %s\n", err.msg);
        return -1;
    }
    ksim_svcip_free(a);
    return 0;
}

static enum kerr run(struct options *o, struct ksim_alias *aliases, size_t naliases,
                     struct kerr_info *err)
{
    struct tlsx_pem ca, serving;
    struct ksim_api_opts ao;
    struct ksim_server_opts so;
    struct ksim_api *api = NULL;
    struct ksim_auth *auth = NULL;
    struct ksim_server *srv = NULL;
    struct ksim_ctrl *ctrl = NULL;
    char token[65], url[64], addr[32], *csv = NULL;
    enum kerr rc;

    tlsx_pem_init(&ca);
    tlsx_pem_init(&serving);
    if (mkdir(o->data_dir, 0700) != 0 && errno != EEXIST)
        return kerr_set(err, KERR_IO, "cannot create %s", o->data_dir);
    rc = make_certs(&ca, &serving, err);
    if (rc == KERR_OK)
        rc = crypto_random_hex(32, token, sizeof(token), err);
    if (rc == KERR_OK && o->token_file && *o->token_file && !(csv = read_file(o->token_file, err)))
        rc = err ? err->code : KERR_IO;
    if (rc == KERR_OK)
        rc = ksim_auth_new(csv, token, &auth, err);
    memset(&ao, 0, sizeof(ao));
    ao.aliases = aliases;
    ao.naliases = naliases;
    ao.history = (size_t)o->history;
    ao.max_objects = (size_t)o->max_objects;
    ao.bookmark_ms = o->bookmark_ms;
    ao.sts_delay_ms = o->sts_delay_ms ? o->sts_delay_ms : -1;
    ao.service_cidr = o->service_cidr;
    ao.webhook_cert = o->webhook_cert && *o->webhook_cert ? o->webhook_cert : NULL;
    ao.webhook_key = o->webhook_key && *o->webhook_key ? o->webhook_key : NULL;
    if (rc == KERR_OK)
        rc = ksim_api_new(&ao, &api, err);
    if (rc == KERR_OK)
        rc = configure_faults(api, o, err);
    memset(&so, 0, sizeof(so));
    so.port = (int)o->port;
    so.cert_pem = serving.cert;
    so.key_pem = serving.key;
    so.max_connections = (unsigned)o->max_connections;
    if (rc == KERR_OK)
        rc = ksim_server_start(api, auth, &so, &srv, err);
    if (rc == KERR_OK) {
        snprintf(addr, sizeof(addr), "127.0.0.1:%d", ksim_server_port(srv));
        snprintf(url, sizeof(url), "https://%s", addr);
        rc = ksim_files_write(o->data_dir, url, ca.cert, token, err);
    }
    if (rc == KERR_OK)
        rc = ksim_ctrl_start(api, &ctrl, err);
    if (rc == KERR_OK) {
        printf("kube-sim ready %s\n", url);
        fflush(stdout);
        log_info("serving", "url", url, "data-dir", o->data_dir);
        while (!proc_wait_shutdown(-1))
            ;
        log_info("shutting down");
    }
    ksim_ctrl_stop(ctrl);
    ksim_server_stop(srv);
    ksim_api_free(api);
    ksim_auth_free(auth);
    free(csv);
    tlsx_pem_release(&ca);
    tlsx_pem_release(&serving);
    return rc;
}

int main(int argc, char **argv)
{
    struct options o;
    const struct proc_flag flags[] = {
        { "data-dir", PROC_FLAG_STRING, &o.data_dir, NULL,
          "directory for ca.crt and admin.kubeconfig (created if missing; required)" },
        { "port", PROC_FLAG_INT, &o.port, "0", "HTTPS port on 127.0.0.1 (0: a free port)" },
        { "token-file", PROC_FLAG_STRING, &o.token_file, NULL,
          "bearer tokens, kube-apiserver --token-auth-file CSV: token,user,uid,\"g1,g2\"" },
        { "service-alias", PROC_FLAG_STRINGS, &o.aliases, NULL,
          "NAME.NAMESPACE=HOST:PORT: where webhook clientConfig.service NAME.NAMESPACE listens" },
        { "webhook-client-cert", PROC_FLAG_STRING, &o.webhook_cert, "",
          "PEM client certificate shown to admission webhooks (kube-apiserver's "
          "AdmissionConfiguration kubeConfigFile client-certificate)" },
        { "webhook-client-key", PROC_FLAG_STRING, &o.webhook_key, "",
          "PEM key of --webhook-client-cert" },
        { "watch-history", PROC_FLAG_INT, &o.history, "1000",
          "events kept per resource for watches from an old resourceVersion (older: 410)" },
        { "max-objects", PROC_FLAG_INT, &o.max_objects, "100000", "objects kept at most" },
        { "max-connections", PROC_FLAG_INT, &o.max_connections, "512",
          "concurrent connections at most" },
        { "bookmark-interval", PROC_FLAG_DURATION, &o.bookmark_ms, "1m",
          "interval of watch BOOKMARK events (allowWatchBookmarks=true)" },
        { "service-cluster-ip-range", PROC_FLAG_STRING, &o.service_cidr, KSIM_SVCIP_DEFAULT_RANGE,
          "CIDR (IPv4, /12 to /30) Service clusterIPs are allocated from, as kube-apiserver" },
        { "statefulset-delay", PROC_FLAG_DURATION, &o.sts_delay_ms, "1s",
          "how long StatefulSet status takes to follow spec.replicas (0: at once)" },
        { "fault-latency", PROC_FLAG_DURATION, &o.latency_ms, "0",
          "latency added to every API request" },
        { "fault-error-rate", PROC_FLAG_STRING, &o.error_rate, "0",
          "share of API requests answered 500 (0..1)" },
        { "fault-throttle-rate", PROC_FLAG_STRING, &o.throttle_rate, "0",
          "share of API requests answered 429 with Retry-After (0..1)" },
        { "fault-match", PROC_FLAG_STRING, &o.fault_match, NULL,
          "inject faults only into requests whose \"METHOD /path\" contains this" },
        { "fault-watch-max", PROC_FLAG_DURATION, &o.watch_max_ms, "0",
          "cut every watch stream after this long (0: never)" },
    };
    const size_t nflags = sizeof(flags) / sizeof(flags[0]);
    struct ksim_alias *aliases = NULL;
    struct proc_args args;
    struct kerr_info err;
    char *help = NULL;
    size_t i, n = 0;
    int status = 0;

    memset(&o, 0, sizeof(o));
    if (proc_flags_parse(flags, nflags, argc, argv, &args, &err) != KERR_OK) {
        fprintf(stderr, "kube-sim: %s\n", err.msg);
        return 2;
    }
    if (args.help || !o.data_dir || !*o.data_dir || args.npos) {
        if (proc_flags_help("kube-sim", "A Kubernetes API server stand-in that kubectl accepts.",
                            flags, nflags, &help, NULL) == KERR_OK)
            fputs(help, args.help ? stdout : stderr);
        free(help);
        status = args.help ? 0 : 2;
        goto out;
    }
    log_set_level(log_level_from_verbosity(args.verbosity));
    if (check_range(o.service_cidr) != 0) {
        status = 2;
        goto out;
    }
    aliases = calloc(o.aliases.n ? o.aliases.n : 1, sizeof(*aliases));
    for (i = 0; aliases && i < o.aliases.n; i++, n++) {
        if (parse_alias(o.aliases.v[i], &aliases[i]) != 0) {
            fprintf(stderr, "kube-sim: --service-alias %s: want NAME.NAMESPACE=HOST:PORT\n",
                    o.aliases.v[i]);
            status = 2;
            n++;
            goto out;
        }
    }
    if (!aliases || proc_signals_install(&err) != KERR_OK ||
        curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "kube-sim: cannot start\n");
        status = 1;
        goto out;
    }
    if (run(&o, aliases, n, &err) != KERR_OK) {
        fprintf(stderr, "kube-sim: %s\n", err.msg);
        status = 1;
    }
    curl_global_cleanup();
out:
    for (i = 0; aliases && i < n; i++) {
        free(aliases[i].service);
        free(aliases[i].namespace);
        free(aliases[i].host);
    }
    free(aliases);
    proc_args_release(&args);
    proc_flags_release(flags, nflags);
    return status;
}
