/* wh_config - flags and the YAML config file; see wh_config.h. */
#include "webhook/wh_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/ydoc.h"

#define MAX_FLAGS 40

static const char summary[] =
    "Admission webhook for etcd-druid Etcd clusters: etcd-druid's component protection\n"
    "(/webhooks/etcdcomponents), the restoring rules for Etcd objects (/webhooks/etcd) and the\n"
    "mutating patches for restored objects (/webhooks/etcd-mutate), over HTTPS.";

static size_t make_table(struct wh_config *c, struct proc_flag *out)
{
    const struct proc_flag t[] = {
        { "config", PROC_FLAG_STRING, &c->config_file, "",
          "YAML file with these settings (keys are the flag names); flags win" },
        { "reconciler-service-account", PROC_FLAG_LIST, &c->reconcilers, NULL,
          "trusted reconciler usernames system:serviceaccount:<ns>:<name>" },
        { "etcd-components-webhook-exempt-service-accounts", PROC_FLAG_LIST, &c->exempt, NULL,
          "usernames exempt from component protection" },
        { "enable-etcd-components-webhook", PROC_FLAG_BOOL, &c->enable_components, "true",
          "serve /webhooks/etcdcomponents (accepted for etcd-druid compatibility)" },
        { "webhook-server-port", PROC_FLAG_INT, &c->port, "9443", "HTTPS port" },
        { "webhook-server-tls-server-cert-dir", PROC_FLAG_STRING, &c->cert_dir,
          "/etc/webhook-server-tls", "directory holding tls.crt and tls.key (watched)" },
        { "webhook-server-bind-address", PROC_FLAG_STRING, &c->bind, "",
          "address to listen on (empty: every address)" },
        { "kubeconfig", PROC_FLAG_STRING, &c->kubeconfig, "",
          "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)" },
        { "metrics-bind-address", PROC_FLAG_STRING, &c->metrics_bind, ":8080",
          "host:port of /metrics (\"0\" disables)" },
        { "health-probe-bind-address", PROC_FLAG_STRING, &c->health_bind, ":8081",
          "host:port of /healthz and /readyz (\"0\" disables)" },
        { "watch-namespace", PROC_FLAG_STRING, &c->watch_namespace, "",
          "cache Etcds and StatefulSets of this namespace only (empty: all)" },
        { "webhook-server-max-request-bytes", PROC_FLAG_INT, &c->max_body, "8388608",
          "largest AdmissionReview body accepted (413 above)" },
        { "webhook-server-idle-timeout", PROC_FLAG_DURATION, &c->conn_timeout_ms, "30s",
          "close connections idle this long" },
        { "webhook-server-max-connections", PROC_FLAG_INT, &c->conn_limit, "1000",
          "concurrent connections" },
        { "webhook-server-max-connections-per-ip", PROC_FLAG_INT, &c->per_ip_limit, "256",
          "concurrent connections from one address" },
        { "webhook-server-request-timeout", PROC_FLAG_DURATION, &c->budget_ms, "10s",
          "time budget of one request, first byte to answer" },
        { "webhook-server-threads", PROC_FLAG_INT, &c->threads, "0",
          "server threads (0: one per core)" },
        { "cache-fallback-limit", PROC_FLAG_INT, &c->fallbacks, "-1",
          "concurrent API calls after cache misses (0: none, -1: half the server threads)" },
        { "compact-cache", PROC_FLAG_BOOL, &c->compact_cache, "true",
          "keep cached objects as text: less memory, a parse per lookup" },
        { "graceful-shutdown-timeout", PROC_FLAG_DURATION, &c->shutdown_ms, "30s",
          "how long reviews in flight may finish after SIGTERM" },
        { "cert-poll-interval", PROC_FLAG_DURATION, &c->cert_poll_ms, "1s",
          "how often tls.crt and tls.key are checked for changes" },
        { "self-provision-tls", PROC_FLAG_BOOL, &c->self_tls, "false",
          "generate the CA and serving certificate, keep them in a Secret, patch caBundle" },
        { "tls-secret-name", PROC_FLAG_STRING, &c->tls_secret, "warden-webhook-tls",
          "Secret holding the self-provisioned CA and certificate" },
        { "tls-namespace", PROC_FLAG_STRING, &c->tls_namespace, "",
          "namespace of that Secret and the Service (empty: the client's namespace)" },
        { "tls-service-name", PROC_FLAG_STRING, &c->tls_service, "warden-webhook",
          "Service the API server calls (the certificate's DNS names)" },
        { "validating-webhook-configuration", PROC_FLAG_LIST, &c->vwcs, NULL,
          "ValidatingWebhookConfigurations to patch caBundle into" },
        { "mutating-webhook-configuration", PROC_FLAG_LIST, &c->mwcs, NULL,
          "MutatingWebhookConfigurations to patch caBundle into" },
        { "tls-cert-lifetime", PROC_FLAG_DURATION, &c->cert_lifetime_ms, "8760h",
          "lifetime of a self-provisioned serving certificate (renewed at 2/3)" },
    };
    size_t n = sizeof(t) / sizeof(t[0]);

    memcpy(out, t, sizeof(t));
    return n;
}

void wh_config_release(struct wh_config *c)
{
    size_t i;
    struct proc_flag f[MAX_FLAGS];
    size_t n = make_table(c, f);

    proc_flags_release(f, n);
    for (i = 0; i < c->nowned; i++)
        free(c->owned[i]);
    free(c->owned);
    c->owned = NULL;
    c->nowned = 0;
}

enum kerr wh_config_help(char **out, struct kerr_info *err)
{
    struct wh_config c;
    struct proc_flag f[MAX_FLAGS];
    size_t n;
    enum kerr rc;

    memset(&c, 0, sizeof(c));
    n = make_table(&c, f);
    rc = proc_flags_help("warden-webhook", summary, f, n, out, err);
    return rc;
}

static enum kerr own(struct wh_config *c, char *s)
{
    char **nv = realloc(c->owned, (c->nowned + 1) * sizeof(*nv));

    if (!nv) {
        free(s);
        return KERR_NOMEM;
    }
    c->owned = nv;
    c->owned[c->nowned++] = s;
    return KERR_OK;
}

/* True when argv sets flag name on the command line. */
static int on_command_line(int argc, char **argv, const char *name)
{
    size_t n = strlen(name);
    int i;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return 0;
        if (strncmp(argv[i], "--", 2) == 0 && strncmp(argv[i] + 2, name, n) == 0 &&
            (argv[i][2 + n] == '\0' || argv[i][2 + n] == '='))
            return 1;
    }
    return 0;
}

static const struct proc_flag *find(const struct proc_flag *f, size_t n, const char *name)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (strcmp(f[i].name, name) == 0)
            return &f[i];
    }
    return NULL;
}

struct argl {
    char **v; /* BORROWED strings (owned by the config) */
    size_t n;
};

/* Check "--key=value" alone, then keep it for the final parse. */
static enum kerr add_arg(struct wh_config *c, const struct proc_flag *f, size_t nf, struct ydoc *d,
                         const char *key, yaml_node_t *val, struct argl *l)
{
    char prog[] = "warden-webhook", *argv[2], *s, **nv;
    struct proc_args a;
    struct kerr_info e;
    struct buf b;
    enum kerr rc;

    if (!val || val->type != YAML_SCALAR_NODE)
        return ydoc_fail(d, KERR_INVAL, val, "%s: expected a value, found %s", key,
                         val ? ydoc_kind(val->type) : "nothing");
    if (strlen((const char *)val->data.scalar.value) != val->data.scalar.length)
        return ydoc_fail(d, KERR_INVAL, val, "%s: the value holds a NUL byte", key);
    buf_init(&b, WH_CONFIG_MAX_FILE);
    rc = buf_appendf(&b, "--%s=%s", key, (const char *)val->data.scalar.value);
    s = rc ? NULL : buf_detach(&b, NULL);
    buf_release(&b);
    if (!s || own(c, s))
        return ydoc_fail(d, KERR_NOMEM, val, "out of memory");
    argv[0] = prog;
    argv[1] = s;
    kerr_clear(&e);
    rc = proc_flags_parse(f, nf, 2, argv, &a, &e);
    proc_args_release(&a);
    if (rc)
        return ydoc_fail(d, rc, val, "%s: %s", key, e.msg);
    nv = realloc(l->v, (l->n + 1) * sizeof(*nv));
    if (!nv)
        return ydoc_fail(d, KERR_NOMEM, val, "out of memory");
    l->v = nv;
    l->v[l->n++] = s;
    return KERR_OK;
}

static enum kerr add_setting(struct wh_config *c, const struct proc_flag *f, size_t nf, int argc,
                             char **argv, struct ydoc *d, yaml_node_pair_t *pair, struct argl *l)
{
    yaml_node_t *k = yaml_document_get_node(&d->doc, pair->key);
    yaml_node_t *v = yaml_document_get_node(&d->doc, pair->value);
    const struct proc_flag *flag;
    const char *key;
    yaml_node_item_t *it;
    enum kerr rc = KERR_OK;

    if (!k || k->type != YAML_SCALAR_NODE)
        return ydoc_fail(d, KERR_INVAL, k, "keys are flag names");
    key = (const char *)k->data.scalar.value;
    flag = find(f, nf, key);
    if (!flag)
        return ydoc_fail(d, KERR_INVAL, k, "unknown setting \"%.64s\"", key);
    if (flag->value == &c->config_file)
        return ydoc_fail(d, KERR_INVAL, k, "config cannot be set in the config file");
    if (!v || ydoc_is_null(v) || on_command_line(argc, argv, key))
        return KERR_OK;
    if (v->type != YAML_SEQUENCE_NODE)
        return add_arg(c, f, nf, d, key, v, l);
    if (flag->type != PROC_FLAG_LIST && flag->type != PROC_FLAG_STRINGS)
        return ydoc_fail(d, KERR_INVAL, v, "%s: expected one value, found a list", key);
    if ((rc = ydoc_enter(d, v, YAML_SEQUENCE_NODE, key)))
        return rc;
    for (it = v->data.sequence.items.start; !rc && it < v->data.sequence.items.top; it++)
        rc = add_arg(c, f, nf, d, key, yaml_document_get_node(&d->doc, *it), l);
    return rc;
}

static enum kerr read_file(const char *path, struct buf *b, struct kerr_info *err)
{
    char chunk[8192];
    size_t n;
    FILE *fp = fopen(path, "rb");
    enum kerr rc = KERR_OK;

    if (!fp)
        return kerr_set(err, KERR_IO, "--config %s: cannot open the file", path);
    while (!rc && (n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
        rc = buf_append(b, chunk, n);
    if (!rc && ferror(fp))
        rc = KERR_IO;
    fclose(fp);
    if (rc)
        return kerr_set(err, rc, "--config %s: %s", path,
                        rc == KERR_TOOBIG ? "file too large" : "cannot read the file");
    return KERR_OK;
}

static enum kerr file_args(struct wh_config *c, const struct proc_flag *f, size_t nf, int argc,
                           char **argv, struct argl *l, struct kerr_info *err)
{
    struct ydoc d;
    struct buf text;
    yaml_node_t *root;
    yaml_node_pair_t *p;
    enum kerr rc;

    buf_init(&text, WH_CONFIG_MAX_FILE);
    memset(&d, 0, sizeof(d));
    rc = read_file(c->config_file, &text, err);
    if (!rc)
        rc = ydoc_load(&d, text.data ? text.data : "", text.len, c->config_file, err);
    root = rc ? NULL : ydoc_root(&d);
    if (root && !(rc = ydoc_enter(&d, root, YAML_MAPPING_NODE, "the config file"))) {
        for (p = root->data.mapping.pairs.start; !rc && p < root->data.mapping.pairs.top; p++)
            rc = add_setting(c, f, nf, argc, argv, &d, p, l);
    }
    ydoc_release(&d);
    buf_release(&text);
    return rc;
}

static enum kerr check_users(const struct proc_strv *l, const char *flag, struct kerr_info *err)
{
    size_t i;

    for (i = 0; i < l->n; i++) {
        if (!l->v[i][0] || strchr(l->v[i], ' '))
            return kerr_set(err, KERR_INVAL, "--%s: \"%s\" is not a username", flag, l->v[i]);
    }
    return KERR_OK;
}

static enum kerr range(long v, long lo, long hi, const char *flag, struct kerr_info *err)
{
    if (v < lo || v > hi)
        return kerr_set(err, KERR_INVAL, "--%s: %ld is out of range [%ld, %ld]", flag, v, lo, hi);
    return KERR_OK;
}

static enum kerr validate(const struct wh_config *c, struct kerr_info *err)
{
    enum kerr rc;

    if (c->reconcilers.n == 0)
        return kerr_set(err, KERR_INVAL,
                        "--reconciler-service-account: at least one trusted reconciler is "
                        "required (system:serviceaccount:<namespace>:<name>)");
    if ((rc = check_users(&c->reconcilers, "reconciler-service-account", err)) ||
        (rc = check_users(&c->exempt, "etcd-components-webhook-exempt-service-accounts", err)) ||
        (rc = range(c->port, 1, 65535, "webhook-server-port", err)) ||
        (rc = range(c->max_body, 1024, 1L << 30, "webhook-server-max-request-bytes", err)) ||
        (rc = range(c->conn_timeout_ms, 1000, 3600000, "webhook-server-idle-timeout", err)) ||
        (rc = range(c->conn_limit, 1, 100000, "webhook-server-max-connections", err)) ||
        (rc = range(c->per_ip_limit, 0, 100000, "webhook-server-max-connections-per-ip", err)) ||
        (rc = range(c->budget_ms, 100, 600000, "webhook-server-request-timeout", err)) ||
        (rc = range(c->threads, 0, 256, "webhook-server-threads", err)) ||
        (rc = range(c->fallbacks, -1, 1000, "cache-fallback-limit", err)) ||
        (rc = range(c->shutdown_ms, 0, 3600000, "graceful-shutdown-timeout", err)) ||
        (rc = range(c->cert_poll_ms, 10, 3600000, "cert-poll-interval", err)))
        return rc;
    if (!c->self_tls && !*c->cert_dir)
        return kerr_set(err, KERR_INVAL,
                        "--webhook-server-tls-server-cert-dir: required unless "
                        "--self-provision-tls is set");
    if (c->self_tls && (!*c->tls_secret || !*c->tls_service))
        return kerr_set(err, KERR_INVAL,
                        "--self-provision-tls needs --tls-secret-name and --tls-service-name");
    if (c->self_tls && c->cert_lifetime_ms < 3600000L)
        return kerr_set(err, KERR_INVAL, "--tls-cert-lifetime: at least 1h");
    return KERR_OK;
}

enum kerr wh_config_load(struct wh_config *c, int argc, char **argv, struct kerr_info *err)
{
    struct proc_flag f[MAX_FLAGS];
    struct proc_args a;
    struct argl l = { NULL, 0 };
    char **all = NULL;
    size_t nf, i;
    enum kerr rc;

    memset(c, 0, sizeof(*c));
    nf = make_table(c, f);
    rc = proc_flags_parse(f, nf, argc, argv, &a, err);
    c->help = a.help;
    proc_args_release(&a);
    if (rc || c->help)
        return rc;
    if (*c->config_file && (rc = file_args(c, f, nf, argc, argv, &l, err)))
        goto out;
    all = calloc((size_t)argc + l.n + 1, sizeof(*all));
    if (!all) {
        rc = kerr_set(err, KERR_NOMEM, "out of memory");
        goto out;
    }
    all[0] = argv[0];
    for (i = 0; i < l.n; i++)
        all[1 + i] = l.v[i];
    for (i = 1; i < (size_t)argc; i++)
        all[l.n + i] = argv[i];
    rc = proc_flags_parse(f, nf, argc + (int)l.n, all, &a, err);
    c->verbosity = a.verbosity;
    if (!rc && a.npos > 0)
        rc = kerr_set(err, KERR_INVAL, "unexpected argument \"%.64s\"", a.pos[0]);
    proc_args_release(&a);
    if (!rc)
        rc = validate(c, err);
out:
    free(all);
    free(l.v);
    return rc;
}
