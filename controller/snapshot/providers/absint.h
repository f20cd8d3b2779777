/*
 * absint - what abs.c, abssign.c and absimm.c share: the ABS store's state, one request,
 * the SharedKey signature of a request and the version-level immutability extension.
 * Not for other modules.
 */
#ifndef CONTROLLER_SNAPSHOT_PROVIDERS_ABSINT_H
#define CONTROLLER_SNAPSHOT_PROVIDERS_ABSINT_H

#include <stddef.h>

#include "controller/snapshot/ostore.h"
#include "controller/snapshot/providers/screds.h"
#include "controller/snapshot/providers/shttp.h"

#define ABS_VERSION "2021-10-04"

struct abs {
    struct ostore base;
    struct screds_abs creds;
    struct shttp http;
    char *container;
    char *base_url;   /* "http://host:port/account" or "https://account.domain" */
    char *canon_base; /* "/account" + the URL path before the container */
};

/* What the SharedKey signature covers; built by the caller, signed per attempt. */
struct abs_sign_ctx {
    const struct abs *a;
    const char *method;
    const char *path;  /* escaped, "/container/blob" */
    const char *query; /* sorted "k=v&k=v" with plain values, or NULL */
    size_t body_len;
};

/* shttp_sign_fn: x-ms-date and "Authorization: SharedKey <account>:<signature>" appended
 * to *headers for the request in vctx (a struct abs_sign_ctx, BORROWED). */
enum kerr abs_sign(void *vctx, struct curl_slist **headers, struct kerr_info *err);

/*
 * One request on blob key ("" for the container). query: sorted "k=v&..." with plain
 * values, as signed; url_query the escaped form for the URL, or NULL when it is query.
 * extra (BORROWED) headers are sent too. *resp is released by the caller.
 */
enum kerr abs_do_req(struct abs *a, const char *method, const char *key, const char *query,
                     const char *url_query, struct curl_slist *extra, const void *body,
                     size_t body_len, void *dst, size_t dst_len, struct shttp_resp *resp,
                     struct kerr_info *err);

/* The error of an answer that is not the one expected: 404 KERR_NOTFOUND, 409
 * BlobImmutableDueTo* KERR_FORBIDDEN (the immutability refusal), other 409 and 412
 * KERR_EXISTS, 403 KERR_UNAUTHORIZED, 501 KERR_UNSUPPORTED, else KERR_HTTP. */
enum kerr abs_status_err(const char *what, const char *key, const struct shttp_resp *r,
                         struct kerr_info *err);

/* ostore_ops.extend for ABS version-level immutability (absimm.c). */
enum kerr abs_extend(struct ostore *base, const struct ostore_obj *obj, int64_t period,
                     int64_t *until, struct kerr_info *err);

#endif
