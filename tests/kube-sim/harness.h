/*
 * harness - kube-sim in a test process, for the Criterion tests of
 * tests/test_kubesim_*.c: an API server with its controllers on a free port
 * of 127.0.0.1 (certificates and an admin token generated, admin.kubeconfig
 * and ca.crt written to a temporary directory), plain HTTPS calls through
 * libcurl, kubectl runs against it, and a scriptable admission webhook
 * server (HTTPS, certificate for <service>.<namespace>.svc signed by a CA
 * of its own) whose answers a test callback decides.
 *
 * Ownership: ksim_harness_start and ksim_harness_hook_start return objects
 * the caller OWNS (ksim_harness_stop, ksim_harness_hook_stop). Response
 * bodies in struct ksim_http are OWNED by it (ksim_http_release).
 * Thread safety: calls may be made from any thread once started; start and
 * stop from the test's main thread. curl_global_init is done by start.
 */
#ifndef KSIM_HARNESS_H
#define KSIM_HARNESS_H

#include <stddef.h>

#include <cJSON.h>

#include "common/buf.h"
#include "common/kerr.h"
#include "common/tlsx.h"
#include "tests/kube-sim/api.h"

struct ksim_harness_opts {
    const char *token_csv;            /* token file text, or NULL */
    const struct ksim_alias *aliases; /* --service-alias entries, BORROWED */
    size_t naliases;
    size_t history;           /* watch history per resource (0 = 1000) */
    long bookmark_ms;         /* 0 = 60 s */
    long sts_delay_ms;        /* 0 = 1 s, < 0 = at once */
    long gc_interval_ms;      /* 0 = 200 ms */
    int no_controllers;       /* do not run the controllers */
    const char *service_cidr; /* --service-cluster-ip-range, BORROWED; NULL = 10.96.0.0/12 */
};

struct ksim_harness {
    struct ksim_api *api;       /* OWNS */
    struct ksim_auth *auth;     /* OWNS */
    struct ksim_server *server; /* OWNS */
    struct ksim_ctrl *ctrl;     /* OWNS or NULL */
    struct tlsx_pem ca;         /* OWNS: also signs webhook certificates */
    struct tlsx_pem serving;    /* OWNS */
    char url[64];               /* https://127.0.0.1:PORT */
    char token[65];             /* admin bearer token */
    char dir[256];              /* temporary directory with admin.kubeconfig and ca.crt */
};

/* An HTTP answer. */
struct ksim_http {
    long code;
    struct buf body;    /* OWNS */
    struct buf headers; /* OWNS: raw response header lines */
};

/* Start kube-sim in-process. opts may be NULL. On KERR_OK *out OWNS it. */
enum kerr ksim_harness_start(const struct ksim_harness_opts *opts, struct ksim_harness **out,
                             struct kerr_info *err);

/* Stop everything, remove the directory. NULL is a no-op. */
void ksim_harness_stop(struct ksim_harness *h);

/*
 * One request. token: NULL = the admin token, "" = no Authorization header.
 * content_type NULL = application/json when body is given. timeout_ms 0 =
 * 30 s. 0 when an HTTP answer arrived (*r filled; release it), -1 on a
 * transport error.
 */
int ksim_harness_call(struct ksim_harness *h, const char *token, const char *method,
                      const char *path, const char *content_type, const char *body, long timeout_ms,
                      struct ksim_http *r);

/* The body of r parsed as JSON, or NULL. OWNED by the caller. */
cJSON *ksim_http_json(const struct ksim_http *r);

/* The value of response header name (case-insensitive) into out; 0 when found. */
int ksim_http_header(const struct ksim_http *r, const char *name, char *out, size_t size);

void ksim_http_release(struct ksim_http *r);

/*
 * Run `kubectl <args>` (args is one shell-quoted string) against the
 * harness, as the admin or with --token=token. *out (optional) OWNS stdout
 * and stderr together. Returns kubectl's exit status, or -1.
 */
int ksim_harness_kubectl(struct ksim_harness *h, const char *token, const char *args, char **out);

/* An admission webhook for tests. */
struct ksim_harness_hook;

/*
 * The callback: review is the AdmissionReview received (BORROWED), path the
 * request path with its query. Return the AdmissionReview to send (the
 * server takes it), or NULL to answer 500.
 */
typedef cJSON *(*ksim_harness_hook_fn)(const cJSON *review, const char *path, void *arg);

/*
 * Serve HTTPS on a free port of 127.0.0.1 with a certificate for dns_name
 * (e.g. "hook.hooks.svc") and 127.0.0.1, signed by a CA of its own (so it
 * can start before the harness, whose --service-alias needs its port). On
 * KERR_OK *out OWNS the server.
 */
enum kerr ksim_harness_hook_start(const char *dns_name, ksim_harness_hook_fn fn, void *arg,
                                  struct ksim_harness_hook **out, struct kerr_info *err);

int ksim_harness_hook_port(const struct ksim_harness_hook *hk);

/* base64 of the hook's CA, for caBundle. OWNED by the caller (free). */
char *ksim_harness_hook_ca_bundle(const struct ksim_harness_hook *hk);

/* How many reviews the hook has received. */
int ksim_harness_hook_calls(struct ksim_harness_hook *hk);

/* TCP connections the webhook server accepted so far. */
int ksim_harness_hook_connections(struct ksim_harness_hook *hk);

/* NULL is a no-op. */
void ksim_harness_hook_stop(struct ksim_harness_hook *hk);

/*
 * An AdmissionReview answer for review (BORROWED): allowed or denied with
 * code and message, optional JSON patch text (base64-encoded here) and
 * warning. OWNED by the caller.
 */
cJSON *ksim_harness_review_answer(const cJSON *review, int allowed, int code, const char *message,
                                  const char *json_patch, const char *warning);

#endif
