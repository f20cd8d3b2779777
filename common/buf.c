#include "common/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_MIN_ALLOC 64

void buf_init(struct buf *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max;
}

void buf_release(struct buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

void buf_reset(struct buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

/* Make room for need more bytes plus the NUL. */
static enum kerr reserve(struct buf *b, size_t need)
{
    size_t want;
    size_t ncap;
    char *p;

    if (need > b->max || b->len > b->max - need)
        return KERR_TOOBIG;
    want = b->len + need + 1;
    if (want <= b->cap)
        return KERR_OK;
    ncap = b->cap ? b->cap : BUF_MIN_ALLOC;
    while (ncap < want)
        ncap = ncap > ((size_t)-1) / 2 ? want : ncap * 2;
    if (ncap > b->max + 1)
        ncap = b->max + 1;
    p = realloc(b->data, ncap);
    if (!p)
        return KERR_NOMEM;
    b->data = p;
    b->cap = ncap;
    return KERR_OK;
}

enum kerr buf_append(struct buf *b, const void *p, size_t n)
{
    enum kerr rc = reserve(b, n);

    if (rc != KERR_OK)
        return rc;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return KERR_OK;
}

enum kerr buf_appends(struct buf *b, const char *s)
{
    return buf_append(b, s, strlen(s));
}

enum kerr buf_vappendf(struct buf *b, const char *fmt, va_list ap)
{
    va_list cp;
    int n;
    enum kerr rc;

    va_copy(cp, ap);
    n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n < 0)
        return KERR_INVAL;
    rc = reserve(b, (size_t)n);
    if (rc != KERR_OK)
        return rc;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return KERR_OK;
}

enum kerr buf_appendf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    enum kerr rc;

    va_start(ap, fmt);
    rc = buf_vappendf(b, fmt, ap);
    va_end(ap);
    return rc;
}

void buf_consume(struct buf *b, size_t n)
{
    if (n >= b->len) {
        buf_reset(b);
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
    b->data[b->len] = '\0';
}

const char *buf_str(const struct buf *b)
{
    return b->data ? b->data : "";
}

char *buf_detach(struct buf *b, size_t *len)
{
    char *p = b->data;

    if (len)
        *len = b->len;
    if (!p)
        p = calloc(1, 1);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    return p;
}

char *buf_dupf(size_t max, const char *fmt, ...)
{
    struct buf b;
    va_list ap;
    enum kerr rc;

    buf_init(&b, max);
    va_start(ap, fmt);
    rc = buf_vappendf(&b, fmt, ap);
    va_end(ap);
    if (rc != KERR_OK) {
        buf_release(&b);
        return NULL;
    }
    return buf_detach(&b, NULL);
}
