#include "common/kerr.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const texts[] = {
#define X(name, text) text,
    KERR_CODES(X)
#undef X
};

static const char *const names[] = {
#define X(name, text) #name,
    KERR_CODES(X)
#undef X
};

const char *kerr_str(enum kerr code)
{
    if ((unsigned)code >= KERR__COUNT)
        return "unknown error";
    return texts[code];
}

const char *kerr_name(enum kerr code)
{
    if ((unsigned)code >= KERR__COUNT)
        return "UNKNOWN";
    return names[code];
}

void kerr_clear(struct kerr_info *err)
{
    if (!err)
        return;
    err->code = KERR_OK;
    err->http_status = 0;
    err->reason[0] = '\0';
    err->msg[0] = '\0';
}

__attribute__((format(printf, 3, 0))) static void set_msg(struct kerr_info *err, enum kerr code,
                                                          const char *fmt, va_list ap)
{
    if (!fmt) {
        snprintf(err->msg, sizeof(err->msg), "%s", kerr_str(code));
        return;
    }
    if (vsnprintf(err->msg, sizeof(err->msg), fmt, ap) < 0)
        snprintf(err->msg, sizeof(err->msg), "%s", kerr_str(code));
}

enum kerr kerr_set(struct kerr_info *err, enum kerr code, const char *fmt, ...)
{
    va_list ap;

    if (!err)
        return code;
    kerr_clear(err);
    err->code = code;
    va_start(ap, fmt);
    set_msg(err, code, fmt, ap);
    va_end(ap);
    return code;
}

enum kerr kerr_set_api(struct kerr_info *err, enum kerr code, int http_status, const char *reason,
                       const char *fmt, ...)
{
    va_list ap;

    if (!err)
        return code;
    kerr_clear(err);
    err->code = code;
    err->http_status = http_status;
    snprintf(err->reason, sizeof(err->reason), "%s", reason ? reason : "");
    va_start(ap, fmt);
    set_msg(err, code, fmt, ap);
    va_end(ap);
    return code;
}

enum kerr kerr_wrap(struct kerr_info *err, const char *fmt, ...)
{
    char prefix[KERR_MSG_LEN];
    char old[KERR_MSG_LEN];
    size_t n;
    size_t len;
    va_list ap;

    if (!err)
        return KERR_INTERNAL;
    va_start(ap, fmt);
    if (vsnprintf(prefix, sizeof(prefix), fmt, ap) < 0)
        prefix[0] = '\0';
    va_end(ap);
    memcpy(old, err->msg, sizeof(old));
    n = strlen(prefix);
    if (n > sizeof(err->msg) - 3)
        n = sizeof(err->msg) - 3;
    memcpy(err->msg, prefix, n);
    memcpy(err->msg + n, ": ", 2);
    n += 2;
    len = strnlen(old, sizeof(old) - 1);
    if (len > sizeof(err->msg) - 1 - n)
        len = sizeof(err->msg) - 1 - n;
    memcpy(err->msg + n, old, len);
    err->msg[n + len] = '\0';
    return err->code;
}
