/*
 * buf - a growable byte buffer with a hard size cap (after curl's dynbuf).
 *
 * The content is always NUL-terminated (the NUL is not counted in len), so a
 * buffer of text can be used as a C string. Every append checks the cap and
 * fails with KERR_TOOBIG instead of growing past it; a failed append leaves
 * the buffer as it was. Network input only ever goes into a struct buf.
 *
 * Ownership: the struct is embedded by its caller (buf_init / buf_release);
 * data is OWNED by the buffer until buf_detach hands it to the caller.
 * Pointers into data are invalid after the next modifying call.
 * Thread safety: none; one owner at a time.
 */
#ifndef COMMON_BUF_H
#define COMMON_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "common/kerr.h"

struct buf {
    char *data; /* NULL until the first append; else len + 1 bytes valid */
    size_t len; /* bytes used, not counting the NUL */
    size_t cap; /* bytes allocated */
    size_t max; /* hard cap on len */
};

/* Initialise an empty buffer that may hold at most max bytes. Cannot fail. */
void buf_init(struct buf *b, size_t max);

/* Free the content; the buffer is empty and usable again. Safe to call twice. */
void buf_release(struct buf *b);

/* Forget the content but keep the allocation. */
void buf_reset(struct buf *b);

/* Append n bytes. KERR_TOOBIG past the cap, KERR_NOMEM; the buffer is unchanged on failure. */
enum kerr buf_append(struct buf *b, const void *p, size_t n) __attribute__((warn_unused_result));

/* Append a C string. */
enum kerr buf_appends(struct buf *b, const char *s) __attribute__((warn_unused_result));

/* Append formatted text. */
enum kerr buf_appendf(struct buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), warn_unused_result));
enum kerr buf_vappendf(struct buf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0), warn_unused_result));

/* Drop the first n bytes (all of them when n >= len). */
void buf_consume(struct buf *b, size_t n);

/* The content as a C string: never NULL ("" when empty). BORROWED. */
const char *buf_str(const struct buf *b);

/*
 * Hand the content to the caller: returns a NUL-terminated malloc'd block
 * (TAKES: free() it), or NULL on allocation failure of an empty buffer.
 * *len (optional) receives the length. The buffer is left empty.
 */
char *buf_detach(struct buf *b, size_t *len);

/*
 * Formatted text of at most max bytes as a new NUL-terminated malloc'd
 * string (TAKES: free() it), e.g. "ns/name" or "dir/file". NULL when it
 * would be longer than max or without memory.
 */
char *buf_dupf(size_t max, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
