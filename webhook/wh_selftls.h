/*
 * wh_selftls - self-provisioned TLS for the webhook (--self-provision-tls).
 *
 * One pass (wh_selftls_ensure):
 *   1. read the Secret <ns>/<secret> (keys ca.crt, ca.key, tls.crt, tls.key);
 *   2. keep its pair when the serving certificate matches its key, chains
 *      to ca.crt, names <service>.<ns>.svc and is younger than two thirds of
 *      its lifetime; otherwise generate a new serving certificate with
 *      OpenSSL (common/tlsx) for <service>, <service>.<ns>,
 *      <service>.<ns>.svc and <service>.<ns>.svc.cluster.local, signed by
 *      the stored CA when it is still good (else by a new CA; ca.crt then
 *      carries the new and the old CA so clients trusting either keep
 *      working), and write the Secret (create, or update with its
 *      resourceVersion: when another replica wins the race its pair is
 *      read back and used);
 *   3. set clientConfig.caBundle of every webhook of the named
 *      Validating/MutatingWebhookConfigurations to ca.crt (JSON patch,
 *      only where it differs; each add follows a "test" of the webhook's
 *      name at that index, so a configuration edited since the GET is not
 *      patched on the wrong webhook: the patch fails and is retried);
 *   4. serve the pair (wh_tls_set_pem) — after step 3, so the API server
 *      trusts its CA before it is served. When a patch failed, a pair
 *      already in service stays (the new one waits), and the next pass
 *      comes after WH_SELFTLS_RETRY_MS instead of the recheck interval.
 * wh_selftls_start runs a thread that repeats the pass at the renewal time
 * (two thirds of the serving certificate's lifetime) and every recheck
 * interval, so renewals by other replicas and reset caBundles are picked
 * up.
 *
 * Thread safety: ensure/start/free from the controlling thread; the
 * renewal thread only calls ensure.
 */
#ifndef WEBHOOK_WH_SELFTLS_H
#define WEBHOOK_WH_SELFTLS_H

#include <stddef.h>
#include <time.h>

#include "common/k8s.h"
#include "common/kerr.h"
#include "webhook/wh_tls.h"

/* How soon a pass is repeated after a caBundle patch failed (ms). */
#define WH_SELFTLS_RETRY_MS 5000L

struct wh_selftls_opts {
    struct k8s_client *client; /* BORROWED, required */
    const char *ns;            /* BORROWED, copied: namespace of the Secret and Service */
    const char *secret;        /* Secret name */
    const char *service;       /* Service name */
    const char *const *vwcs;   /* ValidatingWebhookConfiguration names */
    size_t nvwcs;
    const char *const *mwcs; /* MutatingWebhookConfiguration names */
    size_t nmwcs;
    long lifetime_s;    /* serving certificate lifetime; 0: one year */
    long recheck_ms;    /* 0: one minute */
    struct wh_tls *tls; /* BORROWED, required: where the pair is served */
};

struct wh_selftls;

/* Copy the options. On KERR_OK *out OWNS it: wh_selftls_free(). */
enum kerr wh_selftls_new(const struct wh_selftls_opts *opts, struct wh_selftls **out,
                         struct kerr_info *err);

/* One pass as described above. */
enum kerr wh_selftls_ensure(struct wh_selftls *s, struct kerr_info *err);

/* Start the renewal thread (after a successful ensure). */
enum kerr wh_selftls_start(struct wh_selftls *s, struct kerr_info *err);

/* When the pair in service is to be renewed (0 before the first pass). */
time_t wh_selftls_renew_at(struct wh_selftls *s);

/* Milliseconds until the renewal thread's next pass (from now). */
long wh_selftls_next_pass_ms(struct wh_selftls *s);

/* Two thirds of the way from not_before to not_after. */
time_t wh_selftls_two_thirds(time_t not_before, time_t not_after);

/* Stop the thread and free. NULL: no-op. */
void wh_selftls_free(struct wh_selftls *s);

#endif
