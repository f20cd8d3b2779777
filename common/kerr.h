/*
 * kerr - the one error enum of etcd-warden, and the message out-parameter.
 *
 * Every fallible function returns an enum kerr (KERR_OK == 0) and takes an
 * optional struct kerr_info *err that receives a human-readable message and,
 * for errors that came from the Kubernetes API, the HTTP status and the
 * Status reason. Write errors with `return kerr_set(err, CODE, "fmt", ...)`.
 *
 * Thread safety: all functions are reentrant; a struct kerr_info belongs to
 * its caller.
 */
#ifndef COMMON_KERR_H
#define COMMON_KERR_H

#include <stddef.h>

#define KERR_CODES(X)                   \
    X(OK, "success")                    \
    X(NOMEM, "out of memory")           \
    X(TOOBIG, "size limit exceeded")    \
    X(INVAL, "invalid argument")        \
    X(PARSE, "malformed input")         \
    X(IO, "input/output error")         \
    X(TLS, "TLS or certificate error")  \
    X(HTTP, "HTTP transport error")     \
    X(TIMEOUT, "timed out")             \
    X(API, "Kubernetes API error")      \
    X(NOTFOUND, "not found")            \
    X(CONFLICT, "conflict")             \
    X(EXISTS, "already exists")         \
    X(GONE, "resource version expired") \
    X(UNAUTHORIZED, "unauthorized")     \
    X(FORBIDDEN, "forbidden")           \
    X(TOOMANY, "too many requests")     \
    X(CANCELLED, "cancelled")           \
    X(CLOSED, "closed")                 \
    X(UNSUPPORTED, "not supported")     \
    X(INTERNAL, "internal error")

enum kerr {
#define X(name, text) KERR_##name,
    KERR_CODES(X)
#undef X
        KERR__COUNT
};

#define KERR_MSG_LEN    512
#define KERR_REASON_LEN 64

struct kerr_info {
    enum kerr code;
    int http_status;              /* HTTP status of an API answer, else 0 */
    char reason[KERR_REASON_LEN]; /* metav1.Status reason ("Conflict", ...), else "" */
    char msg[KERR_MSG_LEN];       /* human-readable message, always NUL-terminated */
};

/* Static text for a code; never NULL (unknown codes give "unknown error"). */
const char *kerr_str(enum kerr code);

/* Short stable name for a code ("NOTFOUND"); never NULL. */
const char *kerr_name(enum kerr code);

/* Clear *err to KERR_OK with empty texts. NULL is a no-op. */
void kerr_clear(struct kerr_info *err);

/*
 * Fill *err (if not NULL) with code and the formatted message, clearing
 * http_status and reason, and return code. A NULL fmt uses kerr_str(code).
 */
enum kerr kerr_set(struct kerr_info *err, enum kerr code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* As kerr_set, also recording the HTTP status and Status reason of an API answer. */
enum kerr kerr_set_api(struct kerr_info *err, enum kerr code, int http_status, const char *reason,
                       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * Prefix the message already in *err with "<prefix>: " (truncating at the
 * buffer size) and return err->code. NULL err returns KERR_INTERNAL.
 */
enum kerr kerr_wrap(struct kerr_info *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
