/*
 * ksimcli - the API client (common/k8s) on an in-process kube-sim: the
 * harness's admin.kubeconfig loaded as a user would, clients made from it,
 * and a record of the HTTP status of every attempt those clients make (their
 * on_done hook), with one-shot actions on kube-sim triggered by an attempt
 * (clear the faults after a 429, expire the watch history after a GET).
 *
 * For tests only: where something fails they fail the running test with a
 * Criterion assertion instead of returning an error. Thread safety: start,
 * stop and client creation from the test's main thread; the attempt record
 * is locked (the hook runs on the clients' threads); set the one-shot flags
 * before the request they are for. KSIMCLI_OK and KSIMCLI_FAILS expand to
 * Criterion assertions: include <criterion/criterion.h> to use them.
 */
#ifndef TESTS_SUPPORT_KSIMCLI_H
#define TESTS_SUPPORT_KSIMCLI_H

#include <pthread.h>

#include "common/cfg.h"
#include "common/k8s.h"
#include "tests/kube-sim/harness.h"

#define KSIMCLI_ATTEMPTS 64

/* call (an enum kerr expression) returned KERR_OK; else the test fails with err's message. */
#define KSIMCLI_OK(call, err) cr_assert_eq((call), KERR_OK, "%s: %s", #call, (err).msg)

/* call failed with code, and err (struct kerr_info) holds HTTP status and the Status reason why. */
#define KSIMCLI_FAILS(call, err, code, status, why)                 \
    do {                                                            \
        cr_assert_eq((call), (code), "%s: %s", #call, (err).msg);   \
        cr_assert_eq((err).http_status, (status), "%s", (err).msg); \
        cr_assert_str_eq((err).reason, (why), "%s", (err).msg);     \
    } while (0)

/* kube-sim, an admin client and the attempts of the clients made through ksimcli_client. */
struct ksimcli {
    struct ksim_harness *h; /* OWNS */
    struct k8s_client *c;   /* OWNS: the admin client */
    pthread_mutex_t mu;     /* guards code, n and the one-shot flags */
    int code[KSIMCLI_ATTEMPTS];
    int n;
    int reset_on_429;     /* clear kube-sim's faults after the next 429 */
    int expire_after_get; /* expire kube-sim's history after the next GET answered 200 */
    char codes[256];      /* the text ksimcli_codes returns */
};

/*
 * Start kube-sim with ho (BORROWED; NULL: no controllers) and an admin client
 * with options co (NULL: a 10 s request timeout) whose attempts are recorded.
 * Release with ksimcli_release (also after a failed start).
 */
void ksimcli_init(struct ksimcli *f, const struct ksim_harness_opts *ho,
                  const struct k8s_client_opts *co);

/* Free the admin client, stop kube-sim. Safe on a zeroed struct and twice. */
void ksimcli_release(struct ksimcli *f);

/* The harness's admin.kubeconfig loaded into rest (release it with cfg_rest_release). */
void ksimcli_load_rest(const struct ksim_harness *h, struct cfg_rest *rest);

/*
 * A client of rest (BORROWED) with options co (NULL: a 10 s request timeout)
 * whose attempts f records. OWNED by the caller: k8s_client_free, before
 * ksimcli_release.
 */
struct k8s_client *ksimcli_client(struct ksimcli *f, const struct cfg_rest *rest,
                                  const struct k8s_client_opts *co);

/*
 * The statuses of the attempts since the last call, as "429,200" ("" when
 * none), then forgets them. BORROWED from f, valid until the next call.
 */
const char *ksimcli_codes(struct ksimcli *f);

/*
 * A ConfigMap named name with data {k: v} and the labels "a=1,b=2" (NULL:
 * none), not created. OWNED by the caller (cJSON_Delete).
 */
cJSON *ksimcli_cm(const char *name, const char *labels);

/* Create ksimcli_cm(name, labels) in ns through c; *out (optional) the stored object. */
void ksimcli_create_cm(struct k8s_client *c, const char *ns, const char *name, const char *labels,
                       cJSON **out);

/* Create the namespace name through c. */
void ksimcli_create_ns(struct k8s_client *c, const char *name);

/* An API client of a kube-sim (h BORROWED) for its admin with default options; OWNED by the caller.
 */
struct k8s_client *ksimcli_admin(const struct ksim_harness *h);

#endif
