/*
 * absint - what abs.c and abssign.c share: the ABS store's state and the SharedKey
 * signature of a request. Not for other modules.
 */
#ifndef CONTROLLER_SNAPSHOT_ABSINT_H
#define CONTROLLER_SNAPSHOT_ABSINT_H

#include <stddef.h>

#include "controller/snapshot/ostore.h"
#include "controller/snapshot/screds.h"
#include "controller/snapshot/shttp.h"

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

#endif
