#include "common/kubeconfig.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <yaml.h>

#include "common/buf.h"
#include "common/ydoc.h"

/* The walk over one loaded kubeconfig. */
struct kc {
    struct ydoc y;
    const char *path;      /* BORROWED: file name for messages */
    char *dir;             /* OWNS or NULL (current directory): base for relative references */
    struct kerr_info *err; /* BORROWED, may be NULL */
};

/* A name in clusters / contexts / users, for the duplicate check. */
struct name_ref {
    const char *s;
    unsigned long line;
};

/* What the selected context points at. Strings are BORROWED from the document. */
struct sel {
    const char *cluster, *user;
    yaml_node_t *cluster_at, *user_at; /* the context's fields, for messages */
};

static int name_cmp(const void *a, const void *b)
{
    const struct name_ref *x = a, *y = b;
    int c = strcmp(x->s, y->s);

    if (c)
        return c;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* Sort the names and report the first duplicate. */
static enum kerr check_dups(struct kc *kc, struct name_ref *names, size_t n, const char *what)
{
    size_t i;

    qsort(names, n, sizeof(*names), name_cmp);
    for (i = 1; i < n; i++) {
        if (strcmp(names[i - 1].s, names[i].s) == 0)
            return kerr_set(kc->err, KERR_PARSE,
                            "%s:%lu: duplicate %s name \"%.100s\" (also on line %lu)", kc->path,
                            names[i].line, what, names[i].s, names[i - 1].line);
    }
    return KERR_OK;
}

/* One entry of a named list: {name: <name>, <inner>: {...}}. */
static enum kerr read_entry(struct kc *kc, yaml_node_t *item, const char *list, size_t idx,
                            const char *inner, struct name_ref *name, yaml_node_t **section)
{
    struct ydoc_field f[2] = { { .key = "name" }, { .key = inner } };
    char what[64];
    enum kerr rc;

    snprintf(what, sizeof(what), "%s[%zu]", list, idx);
    rc = ydoc_scan_map(&kc->y, item, what, f, 2);
    if (rc == KERR_OK)
        rc = ydoc_get_view(&kc->y, &f[0], what, &name->s);
    if (rc != KERR_OK)
        return rc;
    if (!name->s)
        return ydoc_fail(&kc->y, KERR_PARSE, item, "%s has no name", what);
    name->line = ydoc_line(item);
    *section = f[1].val;
    return KERR_OK;
}

/*
 * Read a clusters / contexts / users list: every entry must be well-formed
 * and names unique. When want is found, *entry is its list item and
 * *section its inner mapping (possibly NULL); *entry stays NULL otherwise.
 */
static enum kerr find_named(struct kc *kc, yaml_node_t *list, const char *list_key,
                            const char *inner, const char *want, yaml_node_t **section,
                            yaml_node_t **entry)
{
    struct name_ref *names = NULL;
    yaml_node_item_t *it;
    yaml_node_t *item, *sec = NULL;
    size_t n = 0, count;
    enum kerr rc = KERR_OK;

    *section = *entry = NULL;
    if (ydoc_is_null(list))
        return KERR_OK;
    rc = ydoc_enter(&kc->y, list, YAML_SEQUENCE_NODE, list_key);
    if (rc != KERR_OK)
        return rc;
    count = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
    names = calloc(count ? count : 1, sizeof(*names));
    if (!names)
        return ydoc_fail(&kc->y, KERR_NOMEM, list, "out of memory");
    for (it = list->data.sequence.items.start; it < list->data.sequence.items.top; it++) {
        item = yaml_document_get_node(&kc->y.doc, *it);
        if (!item)
            continue;
        rc = read_entry(kc, item, list_key, n, inner, &names[n], &sec);
        if (rc != KERR_OK)
            goto out;
        if (want && !*entry && strcmp(names[n].s, want) == 0) {
            *entry = item;
            *section = sec;
        }
        n++;
    }
    rc = check_dups(kc, names, n, inner);
out:
    free(names);
    return rc;
}

static char *resolve(struct kc *kc, const char *rel)
{
    if (rel[0] == '/' || !kc->dir)
        return strdup(rel);
    return buf_dupf(PATH_MAX, "%s/%s", kc->dir, rel);
}

static int has_pem(const char *p, size_t n)
{
    static const char tag[] = "-----BEGIN ";
    size_t i;

    for (i = 0; i + sizeof(tag) - 1 <= n; i++) {
        if (memcmp(p + i, tag, sizeof(tag) - 1) == 0)
            return 1;
    }
    return 0;
}

/* Read a referenced file (path relative to the kubeconfig) into memory. */
static enum kerr read_ref(struct kc *kc, const struct ydoc_field *f, const char *what,
                          const char *rel, size_t max, char **out, size_t *len)
{
    struct kerr_info e;
    char *path = resolve(kc, rel);
    enum kerr rc;

    if (!path)
        return ydoc_fail(&kc->y, KERR_NOMEM, f->val, "out of memory");
    rc = cfg_read_file(path, max, out, len, &e);
    free(path);
    if (rc != KERR_OK)
        return ydoc_fail(&kc->y, rc, f->val, "%s: %s: %s", what, f->key, e.msg);
    return KERR_OK;
}

/* A PEM given either as a file (file_f) or inline as base64 (data_f), not both. */
static enum kerr load_pem(struct kc *kc, const struct ydoc_field *file_f,
                          const struct ydoc_field *data_f, const char *what, char **pem,
                          size_t *len)
{
    const char *file, *data;
    enum kerr rc;

    rc = ydoc_get_view(&kc->y, file_f, what, &file);
    if (rc == KERR_OK)
        rc = ydoc_get_view(&kc->y, data_f, what, &data);
    if (rc != KERR_OK)
        return rc;
    if (file && data)
        return ydoc_fail(&kc->y, KERR_PARSE, data_f->val, "%s: both %s and %s are set", what,
                         file_f->key, data_f->key);
    if (file) {
        rc = read_ref(kc, file_f, what, file, CFG_MAX_FILE, pem, len);
    } else if (data) {
        rc = kcfg_base64_decode(data, strlen(data), pem, len, NULL);
        if (rc != KERR_OK)
            return ydoc_fail(&kc->y, rc, data_f->val, "%s: %s is not valid base64", what,
                             data_f->key);
    }
    if (rc == KERR_OK && *pem && !has_pem(*pem, *len))
        return ydoc_fail(&kc->y, KERR_PARSE, file ? file_f->val : data_f->val,
                         "%s: %s does not contain PEM data", what,
                         file ? file_f->key : data_f->key);
    return rc;
}

static enum kerr check_server(struct kc *kc, const struct ydoc_field *f, const char *what, char *s)
{
    size_t n = strlen(s), skip, i;

    if (strncmp(s, "https://", 8) == 0)
        skip = 8;
    else if (strncmp(s, "http://", 7) == 0)
        skip = 7;
    else
        return ydoc_fail(&kc->y, KERR_PARSE, f->val,
                         "%s: server \"%.100s\" must start with https:// or http://", what, s);
    for (i = 0; i < n; i++) {
        if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f)
            return ydoc_fail(&kc->y, KERR_PARSE, f->val, "%s: server contains whitespace", what);
    }
    while (n > skip && s[n - 1] == '/')
        s[--n] = '\0';
    if (n == skip || s[skip] == '/')
        return ydoc_fail(&kc->y, KERR_PARSE, f->val, "%s: server \"%.100s\" has no host", what, s);
    return KERR_OK;
}

enum { CL_SERVER, CL_CA, CL_CA_DATA, CL_INSECURE, CL_SNI, CL_PROXY, CL_N };

static enum kerr parse_cluster(struct kc *kc, const struct sel *sel, yaml_node_t *sec,
                               yaml_node_t *entry, struct cfg_rest *out)
{
    struct ydoc_field f[CL_N] = {
        [CL_SERVER] = { .key = "server" },
        [CL_CA] = { .key = "certificate-authority" },
        [CL_CA_DATA] = { .key = "certificate-authority-data" },
        [CL_INSECURE] = { .key = "insecure-skip-tls-verify" },
        [CL_SNI] = { .key = "tls-server-name" },
        [CL_PROXY] = { .key = "proxy-url" },
    };
    char what[128];
    enum kerr rc = KERR_OK;

    snprintf(what, sizeof(what), "cluster \"%.100s\"", sel->cluster);
    if (!ydoc_is_null(sec))
        rc = ydoc_scan_map(&kc->y, sec, what, f, CL_N);
    if (rc == KERR_OK)
        rc = ydoc_get_str(&kc->y, &f[CL_SERVER], what, &out->server);
    if (rc == KERR_OK && ydoc_is_present(f[CL_PROXY].val))
        return ydoc_fail(&kc->y, KERR_UNSUPPORTED, f[CL_PROXY].val,
                         "%s: proxy-url is not supported", what);
    if (rc != KERR_OK)
        return rc;
    if (!out->server)
        return ydoc_fail(&kc->y, KERR_PARSE, sec ? sec : entry, "%s has no server", what);
    rc = check_server(kc, &f[CL_SERVER], what, out->server);
    if (rc == KERR_OK)
        rc = load_pem(kc, &f[CL_CA], &f[CL_CA_DATA], what, &out->ca_pem, &out->ca_len);
    if (rc == KERR_OK)
        rc = ydoc_get_bool(&kc->y, &f[CL_INSECURE], what, &out->insecure);
    if (rc == KERR_OK)
        rc = ydoc_get_str(&kc->y, &f[CL_SNI], what, &out->tls_server_name);
    if (rc == KERR_OK && out->insecure && out->ca_pem)
        return ydoc_fail(
            &kc->y, KERR_PARSE, f[CL_INSECURE].val,
            "%s: insecure-skip-tls-verify cannot be combined with a certificate authority", what);
    return rc;
}

enum {
    US_TOKEN,
    US_TOKEN_FILE,
    US_CERT,
    US_CERT_DATA,
    US_KEY,
    US_KEY_DATA,
    US_EXEC,
    US_AUTH_PROVIDER,
    US_USERNAME,
    US_PASSWORD,
    US_AS,
    US_AS_GROUPS,
    US_AS_UID,
    US_AS_EXTRA,
    US_N
};

static const char *const unsupported_text[US_N] = {
    [US_EXEC] = "exec credential plugins are not supported",
    [US_AUTH_PROVIDER] = "auth-provider plugins are not supported",
    [US_USERNAME] = "basic authentication (username/password) is not supported",
    [US_PASSWORD] = "basic authentication (username/password) is not supported",
    [US_AS] = "impersonation (as, as-groups, as-uid, as-user-extra) is not supported",
    [US_AS_GROUPS] = "impersonation (as, as-groups, as-uid, as-user-extra) is not supported",
    [US_AS_UID] = "impersonation (as, as-groups, as-uid, as-user-extra) is not supported",
    [US_AS_EXTRA] = "impersonation (as, as-groups, as-uid, as-user-extra) is not supported",
};

static enum kerr user_token(struct kc *kc, const struct ydoc_field *f, const char *what,
                            struct cfg_rest *out)
{
    const char *tok, *file;
    char *data = NULL;
    size_t len = 0;
    enum kerr rc;

    rc = ydoc_get_view(&kc->y, &f[US_TOKEN], what, &tok);
    if (rc == KERR_OK)
        rc = ydoc_get_view(&kc->y, &f[US_TOKEN_FILE], what, &file);
    if (rc != KERR_OK)
        return rc;
    if (tok) {
        out->token = cfg_strdup_trim(tok, strlen(tok));
        if (!out->token)
            return ydoc_fail(&kc->y, KERR_NOMEM, f[US_TOKEN].val, "out of memory");
        if (!cfg_token_valid(out->token))
            return ydoc_fail(&kc->y, KERR_PARSE, f[US_TOKEN].val,
                             "%s: token must be one word of printable characters", what);
    }
    if (!file)
        return KERR_OK;
    /* Must be readable now; the token itself is read (and re-read) by struct cfg_token. */
    rc = read_ref(kc, &f[US_TOKEN_FILE], what, file, CFG_MAX_TOKEN, &data, &len);
    if (data) {
        OPENSSL_cleanse(data, len);
        free(data);
    }
    if (rc != KERR_OK)
        return rc;
    out->token_file = resolve(kc, file);
    if (!out->token_file)
        return ydoc_fail(&kc->y, KERR_NOMEM, f[US_TOKEN_FILE].val, "out of memory");
    return KERR_OK;
}

static enum kerr parse_user(struct kc *kc, const struct sel *sel, yaml_node_t *sec,
                            struct cfg_rest *out)
{
    struct ydoc_field f[US_N] = {
        [US_TOKEN] = { .key = "token" },
        [US_TOKEN_FILE] = { .key = "tokenFile" },
        [US_CERT] = { .key = "client-certificate" },
        [US_CERT_DATA] = { .key = "client-certificate-data" },
        [US_KEY] = { .key = "client-key" },
        [US_KEY_DATA] = { .key = "client-key-data" },
        [US_EXEC] = { .key = "exec" },
        [US_AUTH_PROVIDER] = { .key = "auth-provider" },
        [US_USERNAME] = { .key = "username" },
        [US_PASSWORD] = { .key = "password" },
        [US_AS] = { .key = "as" },
        [US_AS_GROUPS] = { .key = "as-groups" },
        [US_AS_UID] = { .key = "as-uid" },
        [US_AS_EXTRA] = { .key = "as-user-extra" },
    };
    char what[128];
    enum kerr rc;
    int i;

    snprintf(what, sizeof(what), "user \"%.100s\"", sel->user);
    if (ydoc_is_null(sec))
        return KERR_OK;
    rc = ydoc_scan_map(&kc->y, sec, what, f, US_N);
    for (i = US_EXEC; rc == KERR_OK && i < US_N; i++) {
        if (ydoc_is_present(f[i].val))
            return ydoc_fail(&kc->y, KERR_UNSUPPORTED, f[i].val, "%s: %s", what,
                             unsupported_text[i]);
    }
    if (rc == KERR_OK)
        rc = user_token(kc, f, what, out);
    if (rc == KERR_OK)
        rc = load_pem(kc, &f[US_CERT], &f[US_CERT_DATA], what, &out->cert_pem, &out->cert_len);
    if (rc == KERR_OK)
        rc = load_pem(kc, &f[US_KEY], &f[US_KEY_DATA], what, &out->key_pem, &out->key_len);
    if (rc != KERR_OK)
        return rc;
    if (out->cert_pem && !out->key_pem)
        return ydoc_fail(&kc->y, KERR_PARSE, sec,
                         "%s: client certificate given without a client key", what);
    if (out->key_pem && !out->cert_pem)
        return ydoc_fail(&kc->y, KERR_PARSE, sec,
                         "%s: client key given without a client certificate", what);
    return KERR_OK;
}

enum { CX_CLUSTER, CX_USER, CX_NAMESPACE, CX_N };

static enum kerr parse_context(struct kc *kc, const char *name, yaml_node_t *sec,
                               yaml_node_t *entry, struct sel *sel, struct cfg_rest *out)
{
    struct ydoc_field f[CX_N] = {
        [CX_CLUSTER] = { .key = "cluster" },
        [CX_USER] = { .key = "user" },
        [CX_NAMESPACE] = { .key = "namespace" },
    };
    char what[128];
    enum kerr rc;

    snprintf(what, sizeof(what), "context \"%.100s\"", name);
    if (ydoc_is_null(sec))
        return ydoc_fail(&kc->y, KERR_PARSE, entry, "%s has no cluster", what);
    rc = ydoc_scan_map(&kc->y, sec, what, f, CX_N);
    if (rc == KERR_OK)
        rc = ydoc_get_view(&kc->y, &f[CX_CLUSTER], what, &sel->cluster);
    if (rc == KERR_OK)
        rc = ydoc_get_view(&kc->y, &f[CX_USER], what, &sel->user);
    if (rc == KERR_OK)
        rc = ydoc_get_str(&kc->y, &f[CX_NAMESPACE], what, &out->namespace);
    if (rc != KERR_OK)
        return rc;
    if (!sel->cluster)
        return ydoc_fail(&kc->y, KERR_PARSE, sec, "%s has no cluster", what);
    sel->cluster_at = f[CX_CLUSTER].val;
    sel->user_at = f[CX_USER].val;
    return KERR_OK;
}

enum { RT_CURRENT, RT_CLUSTERS, RT_CONTEXTS, RT_USERS, RT_N };

/* Resolve the cluster and user the selected context names, and read them. */
static enum kerr read_refs(struct kc *kc, const struct ydoc_field *rt, const struct sel *sel,
                           struct cfg_rest *out)
{
    yaml_node_t *csec, *centry, *usec, *uentry;
    enum kerr rc;

    rc = find_named(kc, rt[RT_CLUSTERS].val, "clusters", "cluster", sel->cluster, &csec, &centry);
    if (rc == KERR_OK)
        rc = find_named(kc, rt[RT_USERS].val, "users", "user", sel->user, &usec, &uentry);
    if (rc != KERR_OK)
        return rc;
    if (!centry)
        return ydoc_fail(&kc->y, KERR_NOTFOUND, sel->cluster_at, "cluster \"%.100s\" not found",
                         sel->cluster);
    if (sel->user && !uentry)
        return ydoc_fail(&kc->y, KERR_NOTFOUND, sel->user_at, "user \"%.100s\" not found",
                         sel->user);
    rc = parse_cluster(kc, sel, csec, centry, out);
    if (rc == KERR_OK && sel->user)
        rc = parse_user(kc, sel, usec, out);
    return rc;
}

static enum kerr walk(struct kc *kc, const char *context, struct cfg_rest *out)
{
    struct ydoc_field rt[RT_N] = {
        [RT_CURRENT] = { .key = "current-context" },
        [RT_CLUSTERS] = { .key = "clusters" },
        [RT_CONTEXTS] = { .key = "contexts" },
        [RT_USERS] = { .key = "users" },
    };
    yaml_node_t *root = ydoc_root(&kc->y), *sec, *entry, *at;
    struct sel sel = { 0 };
    const char *name = NULL;
    enum kerr rc;

    if (!root)
        return ydoc_fail(&kc->y, KERR_PARSE, NULL, "the file is empty, not a kubeconfig");
    if (root->type != YAML_MAPPING_NODE)
        return ydoc_fail(&kc->y, KERR_PARSE, root, "top level is not a mapping but %s",
                         ydoc_kind(root->type));
    rc = ydoc_scan_map(&kc->y, root, "kubeconfig", rt, RT_N);
    if (rc == KERR_OK)
        rc = ydoc_get_view(&kc->y, &rt[RT_CURRENT], "kubeconfig", &name);
    if (rc != KERR_OK)
        return rc;
    if (context && *context)
        name = context;
    if (!name)
        return ydoc_fail(&kc->y, KERR_NOTFOUND, root,
                         "no current-context is set and no context was requested");
    rc = find_named(kc, rt[RT_CONTEXTS].val, "contexts", "context", name, &sec, &entry);
    if (rc != KERR_OK)
        return rc;
    if (!entry) {
        at = context && *context ? (rt[RT_CONTEXTS].val ? rt[RT_CONTEXTS].val : root)
                                 : rt[RT_CURRENT].val;
        return ydoc_fail(&kc->y, KERR_NOTFOUND, at, "context \"%.100s\" not found", name);
    }
    rc = parse_context(kc, name, sec, entry, &sel, out);
    if (rc == KERR_OK)
        rc = read_refs(kc, rt, &sel, out);
    return rc;
}

static enum kerr set_dir(struct kc *kc, const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    size_t n;

    if (!slash)
        return KERR_OK; /* relative references are relative to the current directory */
    n = slash == path ? 1 : (size_t)(slash - path);
    kc->dir = strndup(path, n);
    if (!kc->dir)
        return kerr_set(kc->err, KERR_NOMEM, "%s: out of memory", kc->path);
    return KERR_OK;
}

enum kerr kcfg_parse(const char *text, size_t len, const char *path, const char *context,
                     struct cfg_rest *out, struct kerr_info *err)
{
    struct kc kc;
    enum kerr rc;

    cfg_rest_init(out);
    memset(&kc, 0, sizeof(kc));
    kc.path = path ? path : "<kubeconfig>";
    kc.err = err;
    if (len > CFG_MAX_FILE)
        return kerr_set(err, KERR_TOOBIG, "%s: %zu bytes, more than the limit of %u bytes", kc.path,
                        len, CFG_MAX_FILE);
    rc = set_dir(&kc, path);
    if (rc == KERR_OK)
        rc = ydoc_load(&kc.y, text, len, kc.path, err);
    if (rc == KERR_OK)
        rc = walk(&kc, context, out);
    if (rc == KERR_OK && !out->namespace) {
        out->namespace = strdup("default");
        if (!out->namespace)
            rc = kerr_set(err, KERR_NOMEM, "%s: out of memory", kc.path);
    }
    if (rc == KERR_OK) {
        out->source = strdup(kc.path);
        if (!out->source)
            rc = kerr_set(err, KERR_NOMEM, "%s: out of memory", kc.path);
    }
    ydoc_release(&kc.y);
    free(kc.dir);
    if (rc != KERR_OK)
        cfg_rest_release(out);
    return rc;
}

/* Strict shape check before EVP: the alphabet, whitespace, '=' only as final padding. */
static enum kerr b64_check(const char *in, size_t len, struct kerr_info *err)
{
    size_t i, chars = 0, pad = 0;
    unsigned char c;

    for (i = 0; i < len; i++) {
        c = (unsigned char)in[i];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
            continue;
        if (c == '=') {
            pad++;
        } else if (pad || !((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                            (c >= '0' && c <= '9') || c == '+' || c == '/')) {
            return kerr_set(err, KERR_PARSE, "invalid base64 character at offset %zu", i);
        }
        chars++;
    }
    if (chars == 0 || chars % 4 != 0 || pad > 2)
        return kerr_set(err, KERR_PARSE, "base64 of %zu characters is truncated", chars);
    return KERR_OK;
}

enum kerr kcfg_base64_decode(const char *in, size_t len, char **out, size_t *out_len,
                             struct kerr_info *err)
{
    EVP_ENCODE_CTX *ctx = NULL;
    unsigned char *buf = NULL;
    int n = 0, m = 0;
    enum kerr rc;

    *out = NULL;
    *out_len = 0;
    if (len > INT_MAX)
        return kerr_set(err, KERR_TOOBIG, "base64 input too large");
    rc = b64_check(in, len, err);
    if (rc != KERR_OK)
        return rc;
    buf = malloc(len / 4 * 3 + 4);
    ctx = EVP_ENCODE_CTX_new();
    if (!buf || !ctx) {
        rc = kerr_set(err, KERR_NOMEM, "out of memory");
        goto out;
    }
    EVP_DecodeInit(ctx);
    if (EVP_DecodeUpdate(ctx, buf, &n, (const unsigned char *)in, (int)len) < 0 ||
        EVP_DecodeFinal(ctx, buf + n, &m) < 0 || n + m == 0) {
        rc = kerr_set(err, KERR_PARSE, "invalid base64");
        goto out;
    }
    buf[n + m] = '\0';
    *out = (char *)buf;
    *out_len = (size_t)(n + m);
    buf = NULL;
out:
    if (buf) {
        OPENSSL_cleanse(buf, len / 4 * 3 + 4);
        free(buf);
    }
    EVP_ENCODE_CTX_free(ctx);
    return rc;
}
