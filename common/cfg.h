/*
 * cfg - how to reach the Kubernetes API server: kubeconfig files (parsed with
 * libyaml), the in-cluster service-account configuration, and a bearer-token
 * source that re-reads a token file the way client-go does.
 *
 * A struct cfg_rest holds everything a client needs for one API server. All
 * referenced files (CA, client certificate and key) are read into memory when
 * the configuration is loaded; nothing is ever written to disk. Only a token
 * file stays a path, because kubelet rotates it: struct cfg_token re-reads it.
 *
 * Thread safety: the cfg_load_* / cfg_parse_* functions are reentrant (they
 * read the environment, so do not setenv concurrently). A struct cfg_rest
 * belongs to its caller; it is read-only once loaded and may then be shared.
 * A struct cfg_token is safe to use from any number of threads.
 */
#ifndef COMMON_CFG_H
#define COMMON_CFG_H

#include <stddef.h>

#include "common/kerr.h"

#define CFG_MAX_FILE     (4u * 1024u * 1024u) /* cap for a kubeconfig, CA, cert or key file */
#define CFG_MAX_TOKEN    (64u * 1024u)        /* cap for a token file */
#define CFG_TOKEN_PERIOD 60000L               /* ms between token file re-reads (client-go) */
#define CFG_SA_DIR       "/var/run/secrets/kubernetes.io/serviceaccount"

/*
 * Everything a client needs to reach one API server. Zero it (or cfg_rest_init)
 * before use. The PEM buffers are also NUL-terminated (not counted in *_len).
 */
struct cfg_rest {
    char *server; /* OWNS. "https://host:port", no trailing slash */
    char *ca_pem; /* OWNS or NULL (system roots). PEM bundle */
    size_t ca_len;
    int insecure;          /* insecure-skip-tls-verify */
    char *tls_server_name; /* OWNS or NULL */
    char *token;           /* OWNS or NULL: static bearer token */
    char *token_file;      /* OWNS or NULL: bearer token file, re-read (see cfg_token) */
    char *cert_pem;        /* OWNS or NULL: client certificate PEM */
    size_t cert_len;
    char *key_pem; /* OWNS or NULL: client key PEM */
    size_t key_len;
    char *namespace; /* OWNS: context namespace / pod namespace; "default" */
    char *source;    /* OWNS: kubeconfig path or "in-cluster" (for messages) */
};

/* Zero every field. Cannot fail. */
void cfg_rest_init(struct cfg_rest *r);

/* Free every field (key material is wiped first) and zero the struct. Safe to call twice. */
void cfg_rest_release(struct cfg_rest *r);

/* Deep copy of src into *dst (zeroed first; released on failure). */
enum kerr cfg_rest_copy(const struct cfg_rest *src, struct cfg_rest *dst, struct kerr_info *err);

/*
 * Parse a kubeconfig held in memory (text, len: need not be NUL-terminated).
 * path names the file in messages and is the base for relative file
 * references (its directory; NULL = "<kubeconfig>" and the current directory).
 * context NULL selects current-context. On KERR_OK *out OWNS the result
 * (cfg_rest_release); on failure *out is zeroed and err names the file, the
 * line and the problem. Codes: KERR_PARSE (malformed), KERR_NOTFOUND (context,
 * cluster or user missing), KERR_IO (referenced file unreadable),
 * KERR_UNSUPPORTED (exec / auth-provider), KERR_TOOBIG, KERR_NOMEM.
 */
enum kerr cfg_parse_kubeconfig(const char *text, size_t len, const char *path, const char *context,
                               struct cfg_rest *out, struct kerr_info *err);

/* Read path (capped at CFG_MAX_FILE) and parse it as above. */
enum kerr cfg_load_kubeconfig(const char *path, const char *context, struct cfg_rest *out,
                              struct kerr_info *err);

/*
 * In-cluster configuration: server from KUBERNETES_SERVICE_HOST and
 * KUBERNETES_SERVICE_PORT (an IPv6 host is bracketed), token_file
 * sa_dir/token (must be readable now), CA sa_dir/ca.crt, namespace from
 * sa_dir/namespace ("default" when absent). sa_dir NULL = CFG_SA_DIR.
 */
enum kerr cfg_load_incluster(const char *sa_dir, struct cfg_rest *out, struct kerr_info *err);

/*
 * The usual lookup order: the --kubeconfig flag if given (non-NULL, non-empty),
 * else $KUBECONFIG (of a ':'-separated list the first entry that exists, no
 * merging), else in-cluster when
 * KUBERNETES_SERVICE_HOST is set (sa_dir from $WARDEN_SA_DIR if set), else
 * $HOME/.kube/config. Uses the current context.
 */
enum kerr cfg_load_default(const char *kubeconfig_flag, struct cfg_rest *out,
                           struct kerr_info *err);

/*
 * As cfg_load_default, with the kubeconfig's context named context (NULL or
 * "": the current context), as kubectl's --context. A context without a
 * kubeconfig to read it from (in-cluster) is KERR_INVAL.
 */
enum kerr cfg_load_context(const char *kubeconfig_flag, const char *context, struct cfg_rest *out,
                           struct kerr_info *err);

/*
 * Read a whole regular file into memory (FIFOs and devices are refused, so
 * a hostile path cannot block or stream forever), at most max bytes
 * (KERR_TOOBIG beyond). On
 * KERR_OK *out OWNS a malloc'd copy plus a terminating NUL (free() it) and
 * *len (optional) its length. Buffers are wiped when they grow, so no stray
 * copy of a key is left in freed memory. KERR_IO names the path and errno.
 */
enum kerr cfg_read_file(const char *path, size_t max, char **out, size_t *len,
                        struct kerr_info *err);

/* malloc'd copy of s[0..n) without surrounding whitespace (TAKES: free() it); NULL on OOM. */
char *cfg_strdup_trim(const char *s, size_t n);

/* True when s is a usable bearer token: non-empty, printable ASCII only (no CR/LF injection). */
int cfg_token_valid(const char *s);

/* Thread-safe bearer-token source. */
struct cfg_token;

/*
 * Build a token source from r's token / token_file (copied: r may be released
 * afterwards). KERR_INVAL when the static token fails cfg_token_valid.
 */
enum kerr cfg_token_new(const struct cfg_rest *r, struct cfg_token **out, struct kerr_info *err);

/*
 * *out TAKES a malloc'd copy of the current token ("" when the config has
 * none; free() it). A token_file is re-read when the cached copy is older than
 * the period (CFG_TOKEN_PERIOD) or after cfg_token_invalidate. A failed
 * re-read keeps the last good token and logs a warning; only a first read
 * that fails returns an error (KERR_IO).
 */
enum kerr cfg_token_get(struct cfg_token *t, char **out, struct kerr_info *err);

/* After a 401: the next cfg_token_get re-reads the file. */
void cfg_token_invalidate(struct cfg_token *t);

/* Change the re-read period (tests; ms, >= 0). */
void cfg_token_set_period_ms(struct cfg_token *t, long ms);

/* NULL is a no-op. The cached token is wiped before it is freed. */
void cfg_token_free(struct cfg_token *t);

#endif
