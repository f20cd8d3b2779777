/*
 * hook - the HTTPS call to one admission webhook, as kube-apiserver's
 * webhook client makes it (libcurl): POST of the AdmissionReview to the
 * clientConfig URL, or to https://NAME.NAMESPACE.svc:PORT/PATH for a
 * service (connected through kube-sim's --service-alias table, the name in
 * the URL still being what the certificate must match), with
 * ?timeout=<timeoutSeconds>s, verified against the caBundle, and the
 * timeout enforced.
 *
 * Failures are described the way Go's HTTP client words them, so the
 * `failed calling webhook` messages look like kube-apiserver's:
 * `Post "https://x.ns.svc:443/p?timeout=10s": context deadline exceeded`.
 *
 * Ownership: arguments are BORROWED; *resp_body is OWNED by the caller.
 * Thread safety: reentrant (curl_global_init must have run before threads).
 */
#ifndef KSIM_HOOK_H
#define KSIM_HOOK_H

#include <stddef.h>

#include <cJSON.h>

#include "tests/kube-sim/api.h"

/* Largest webhook answer accepted. */
#define KSIM_HOOK_MAX_RESPONSE (8u * 1024u * 1024u)

/*
 * POST body (len bytes) to the webhook's clientConfig (BORROWED) with a
 * timeout of timeout_s seconds. 0: *resp_body OWNS the 200 answer
 * (NUL-terminated, *resp_len bytes). -1: errbuf holds the failure text.
 */
int ksim_hook_post(struct ksim_api *api, const cJSON *client_config, long timeout_s,
                   const char *body, size_t len, char **resp_body, size_t *resp_len, char *errbuf,
                   size_t errsize);

/* Free the idle webhook clients of api and its pool's lock (at ksim_api_free). */
void ksim_hook_pool_free(struct ksim_api *api);

#endif
