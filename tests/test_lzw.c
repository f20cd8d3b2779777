#include "controller/snapshot/lzw.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Written by Go 1.19's compress/lzw (NewWriter(w, lzw.LSB, 8)). */
static const unsigned char go_tobe[] = { 0x00, 0xa9, 0x3c, 0x11, 0x52, 0xe4, 0x89, 0x14,
                                         0x27, 0x4f, 0xa8, 0x08, 0x24, 0x68, 0x70, 0x61,
                                         0xc1, 0x83, 0x09, 0x47, 0x04, 0x04 };
static const unsigned char go_a44[] = { 0x00, 0xc3, 0x08, 0x1c, 0x48, 0xb0, 0xa0,
                                        0xc1, 0x83, 0x08, 0x11, 0x06, 0x04 };
static const unsigned char go_empty[] = { 0x00, 0x03, 0x02 };

struct buf {
    unsigned char *p;
    size_t n;
    size_t cap;
};

static void append(struct buf *b, const unsigned char *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        b->p = realloc(b->p, b->cap);
        cr_assert_not_null(b->p);
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

/* The decoder's sink: pieces of at most 4096 bytes. */
static enum kerr collect(void *ctx, const unsigned char *p, size_t n, struct kerr_info *err)
{
    (void)err;
    cr_assert(n > 0 && n <= 4096, "piece of %zu bytes", n);
    append(ctx, p, n);
    return KERR_OK;
}

/* Decode in in pieces of step bytes into out (OWNED by the caller); *ended after. */
static enum kerr decode(const unsigned char *in, size_t n, size_t step, struct buf *out,
                        bool *ended, struct kerr_info *err)
{
    struct lzw *z = NULL;
    memset(out, 0, sizeof *out);
    enum kerr rc = lzw_new(&z, err);
    for (size_t off = 0; rc == KERR_OK && off < n; off += step) {
        rc = lzw_update(z, in + off, n - off < step ? n - off : step, collect, out, err);
    }
    *ended = lzw_ended(z);
    lzw_free(z);
    return rc;
}

/* in encoded by tests/support/lzw_encode.py (Go's writer, cross-checked against Go). */
static unsigned char *encode(const unsigned char *in, size_t n, size_t *len)
{
    const char *src = getenv("WARDEN_SOURCE_DIR");
    char tmpl[] = "/tmp/test_lzw.XXXXXX";
    char cmd[4096];
    int fd = mkstemp(tmpl);
    cr_assert(src != NULL, "WARDEN_SOURCE_DIR is not set (run through ctest)");
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, in, n), (ssize_t)n);
    close(fd);
    snprintf(cmd, sizeof cmd, "python3 '%s/tests/support/lzw_encode.py' <'%s'", src, tmpl);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    struct buf b = { 0 };
    unsigned char piece[65536];
    size_t got;
    while ((got = fread(piece, 1, sizeof piece, p)) > 0) {
        append(&b, piece, got);
    }
    cr_assert_eq(pclose(p), 0, "lzw_encode.py failed");
    unlink(tmpl);
    *len = b.n;
    return b.p;
}

Test(lzw, go_streams_decode_in_any_pieces)
{
    static const size_t steps[] = { 1, 2, 3, 5, 64 };
    struct kerr_info err;
    struct buf out;
    bool ended;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        cr_assert_eq(decode(go_tobe, sizeof go_tobe, steps[i], &out, &ended, &err), KERR_OK, "%s",
                     err.msg);
        cr_expect(ended);
        cr_expect(out.n == 25 && memcmp(out.p, "TOBEORNOTTOBEORTOBEORNOT#", 25) == 0);
        free(out.p);
        /* "aaaa...": every code after the first is the one being defined (KwKwK) */
        cr_assert_eq(decode(go_a44, sizeof go_a44, steps[i], &out, &ended, &err), KERR_OK, "%s",
                     err.msg);
        cr_expect(ended && out.n == 44);
        for (size_t k = 0; k < out.n; k++) {
            cr_expect_eq(out.p[k], 'a');
        }
        free(out.p);
    }
    cr_assert_eq(decode(go_empty, sizeof go_empty, 1, &out, &ended, &err), KERR_OK);
    cr_expect(ended && out.n == 0);
    free(out.p);
}

/* Long enough for every width and several table clears, random and repetitive. */
Test(lzw, long_streams_round_trip)
{
    size_t n = 600000, len;
    unsigned char *in = malloc(n);
    unsigned x = 12345;
    cr_assert_not_null(in);
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        in[i] = i < n / 2 ? (unsigned char)(x >> 16) : (unsigned char)"etcd /registry/"[x % 15];
    }
    unsigned char *z = encode(in, n, &len);
    struct kerr_info err;
    struct buf out;
    bool ended;
    static const size_t steps[] = { 1, 7, 4096, 1 << 20 };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        cr_assert_eq(decode(z, len, steps[i], &out, &ended, &err), KERR_OK, "%s", err.msg);
        cr_expect(ended);
        cr_expect(out.n == n && memcmp(out.p, in, n) == 0, "step %zu", steps[i]);
        free(out.p);
    }
    /* cut anywhere: no end code (never "ended"), or an error */
    for (size_t cut = 0; cut < len - 1; cut += len / 37 + 1) {
        enum kerr rc = decode(z, cut, 4096, &out, &ended, &err);
        cr_expect(rc != KERR_OK || !ended, "cut at %zu", cut);
        free(out.p);
    }
    free(z);
    free(in);
}

Test(lzw, invalid_codes_and_trailing_data_fail)
{
    struct kerr_info err;
    struct buf out;
    bool ended;
    /* clear, then code 300 while the next code to assign is 257 */
    const unsigned char bad[] = { 0x00, 0x59, 0x02 };
    cr_expect_eq(decode(bad, sizeof bad, 1, &out, &ended, &err), KERR_PARSE);
    cr_expect(strstr(err.msg, "invalid LZW code 300") != NULL, "%s", err.msg);
    free(out.p);
    unsigned char more[sizeof go_tobe + 1];
    memcpy(more, go_tobe, sizeof go_tobe);
    more[sizeof go_tobe] = 0;
    cr_expect_eq(decode(more, sizeof more, 3, &out, &ended, &err), KERR_PARSE);
    cr_expect(strstr(err.msg, "after the end") != NULL, "%s", err.msg);
    free(out.p);
}
