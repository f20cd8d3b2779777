#include "controller/snapshot/snapverify.h"

#include <criterion/criterion.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* A snapshot as etcd writes it: n bytes of content, then their SHA-256. */
static unsigned char *snapshot(size_t n, size_t *len)
{
    unsigned char *b = malloc(n + 32);
    unsigned dl = 0;
    cr_assert_not_null(b);
    for (size_t i = 0; i < n; i++) {
        b[i] = (unsigned char)(i * 131u + (i >> 7));
    }
    cr_assert(EVP_Digest(b, n, b + n, &dl, EVP_sha256(), NULL) == 1 && dl == 32);
    *len = n + 32;
    return b;
}

/* wbits: 15 zlib, 31 gzip. */
static unsigned char *compress_as(const unsigned char *in, size_t n, int wbits, size_t *len)
{
    z_stream zs = { 0 };
    size_t cap = n + n / 100 + 1024;
    unsigned char *out = malloc(cap);
    cr_assert_not_null(out);
    cr_assert(deflateInit2(&zs, 6, Z_DEFLATED, wbits, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    zs.next_in = (unsigned char *)(uintptr_t)in;
    zs.avail_in = (uInt)n;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    cr_assert(deflate(&zs, Z_FINISH) == Z_STREAM_END);
    *len = zs.total_out;
    deflateEnd(&zs);
    return out;
}

/* Verify b fed in pieces of step bytes. */
static enum kerr run(const char *comp, const unsigned char *b, size_t n, size_t step,
                     struct kerr_info *err)
{
    struct snapverify *v = NULL;
    char hex[SNAPVERIFY_HEX_LEN + 1];
    enum kerr rc = snapverify_new(comp, &v, err);
    for (size_t off = 0; rc == KERR_OK && off < n; off += step) {
        rc = snapverify_update(v, b + off, n - off < step ? n - off : step, err);
    }
    rc = rc ? rc : snapverify_finish(v, hex, err);
    snapverify_free(v);
    return rc;
}

static const size_t steps[] = { 1, 7, 31, 32, 33, 4096, 1 << 20 };

Test(snapverify, good_snapshots_pass_in_any_pieces)
{
    size_t n, gl, zl;
    unsigned char *s = snapshot(200704, &n);
    unsigned char *gz = compress_as(s, n, 31, &gl);
    unsigned char *zz = compress_as(s, n, 15, &zl);
    struct kerr_info err;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        cr_expect_eq(run("", s, n, steps[i], &err), KERR_OK, "none, step %zu: %s", steps[i],
                     err.msg);
        cr_expect_eq(run(".gz", gz, gl, steps[i], &err), KERR_OK, "gz, step %zu: %s", steps[i],
                     err.msg);
        cr_expect_eq(run(".zlib", zz, zl, steps[i], &err), KERR_OK, "zlib, step %zu: %s", steps[i],
                     err.msg);
    }
    free(s);
    free(gz);
    free(zz);
}

Test(snapverify, digest_is_reported)
{
    size_t n;
    unsigned char *s = snapshot(512, &n);
    struct snapverify *v = NULL;
    struct kerr_info err;
    char hex[SNAPVERIFY_HEX_LEN + 1];
    char want[SNAPVERIFY_HEX_LEN + 1];
    cr_assert_eq(snapverify_new(NULL, &v, &err), KERR_OK);
    cr_assert_eq(snapverify_update(v, s, n, &err), KERR_OK);
    cr_assert_eq(snapverify_finish(v, hex, &err), KERR_OK);
    for (int i = 0; i < 32; i++) {
        snprintf(want + 2 * i, 3, "%02x", s[512 + i]);
    }
    cr_expect_str_eq(hex, want);
    snapverify_free(v);
    free(s);
}

Test(snapverify, one_flipped_byte_anywhere_fails)
{
    size_t n, gl;
    unsigned char *s = snapshot(5120, &n);
    struct kerr_info err;
    for (size_t at = 0; at < n; at += 997) {
        s[at] ^= 0x40;
        cr_expect_eq(run("", s, n, 4096, &err), KERR_PARSE, "flip at %zu", at);
        unsigned char *gz = compress_as(s, n, 31, &gl);
        cr_expect_eq(run(".gz", gz, gl, 4096, &err), KERR_PARSE, "gz, flip at %zu", at);
        free(gz);
        s[at] ^= 0x40;
    }
    s[n - 1] ^= 1; /* in the digest itself */
    cr_expect_eq(run("", s, n, 4096, &err), KERR_PARSE);
    cr_expect(strstr(err.msg, "SHA-256 mismatch") != NULL, "%s", err.msg);
    free(s);
}

Test(snapverify, truncated_fails)
{
    size_t n, gl, zl;
    unsigned char *s = snapshot(102400, &n);
    unsigned char *gz = compress_as(s, n, 31, &gl);
    unsigned char *zz = compress_as(s, n, 15, &zl);
    struct kerr_info err;
    cr_expect_eq(run("", s, n - 1, 4096, &err), KERR_PARSE);
    cr_expect_eq(run("", s, 31, 4096, &err), KERR_PARSE);
    cr_expect(strstr(err.msg, "truncated") != NULL, "%s", err.msg);
    cr_expect_eq(run("", s, 0, 4096, &err), KERR_PARSE);
    cr_expect_eq(run(".gz", gz, gl - 1, 4096, &err), KERR_PARSE); /* gzip trailer cut */
    cr_expect_eq(run(".gz", gz, gl / 2, 4096, &err), KERR_PARSE);
    cr_expect(strstr(err.msg, "truncated") != NULL, "%s", err.msg);
    cr_expect_eq(run(".zlib", zz, zl - 4, 4096, &err), KERR_PARSE);
    free(s);
    free(gz);
    free(zz);
}

Test(snapverify, wrong_or_trailing_data_fails)
{
    size_t n, gl;
    unsigned char *s = snapshot(1024, &n);
    unsigned char *gz = compress_as(s, n, 31, &gl);
    unsigned char *more = malloc(gl + 10);
    struct kerr_info err;
    cr_expect_eq(run(".gz", s, n, 4096, &err), KERR_PARSE);     /* not gzip at all */
    cr_expect_eq(run(".zlib", gz, gl, 4096, &err), KERR_PARSE); /* gzip named zlib */
    memcpy(more, gz, gl);
    memset(more + gl, 'x', 10);
    cr_expect_eq(run(".gz", more, gl + 10, 4096, &err), KERR_PARSE);
    cr_expect_eq(run(".gz", more, gl + 10, 1, &err), KERR_PARSE);
    free(more);
    free(s);
    free(gz);
}

/* etcd's rule: the digest is there only when the length is 512 k + 32. */
Test(snapverify, a_digest_after_a_partial_sector_is_missing)
{
    size_t n;
    struct kerr_info err;
    for (size_t body = 100; body < 2048; body += 300) {
        unsigned char *s = snapshot(body, &n);
        cr_expect_eq(run("", s, n, 4096, &err), body % 512 ? KERR_PARSE : KERR_OK, "%zu", body);
        if (body % 512) {
            cr_expect(strstr(err.msg, "no SHA-256 at the end") != NULL, "%s", err.msg);
        }
        free(s);
    }
}

/* s encoded by tests/support/lzw_encode.py (Go's compress/lzw writer, LSB, width 8). */
static unsigned char *lzw_of(const unsigned char *s, size_t n, size_t *len)
{
    const char *src = getenv("WARDEN_SOURCE_DIR");
    char tmpl[] = "/tmp/test_snapverify.XXXXXX";
    char cmd[4096];
    unsigned char *out = malloc(2 * n + 1024);
    int fd = mkstemp(tmpl);
    cr_assert(src != NULL && out != NULL && fd >= 0, "WARDEN_SOURCE_DIR (run through ctest)");
    cr_assert_eq(write(fd, s, n), (ssize_t)n);
    close(fd);
    snprintf(cmd, sizeof cmd, "python3 '%s/tests/support/lzw_encode.py' <'%s'", src, tmpl);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    *len = fread(out, 1, 2 * n + 1024, p);
    cr_assert_eq(pclose(p), 0);
    unlink(tmpl);
    return out;
}

Test(snapverify, lzw_snapshots_are_verified)
{
    size_t n, zl;
    unsigned char *s = snapshot(102400, &n);
    unsigned char *z = lzw_of(s, n, &zl);
    struct kerr_info err;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        cr_expect_eq(run(".Z", z, zl, steps[i], &err), KERR_OK, "step %zu: %s", steps[i], err.msg);
    }
    cr_expect_eq(run(".Z", z, zl - 1, 4096, &err), KERR_PARSE);
    cr_expect(strstr(err.msg, "truncated") != NULL, "%s", err.msg);
    cr_expect_eq(run(".Z", z, zl / 2, 4096, &err), KERR_PARSE);
    cr_expect_eq(run(".Z", s, n, 4096, &err), KERR_PARSE); /* not LZW */
    free(z);
    s[n / 3] ^= 0x10;
    z = lzw_of(s, n, &zl);
    cr_expect_eq(run(".Z", z, zl, 4096, &err), KERR_PARSE);
    cr_expect(strstr(err.msg, "SHA-256 mismatch") != NULL, "%s", err.msg);
    free(z);
    free(s);
}

Test(snapverify, other_compressions_are_unsupported)
{
    struct snapverify *v = NULL;
    struct kerr_info err;
    cr_expect_eq(snapverify_new(".zst", &v, &err), KERR_UNSUPPORTED);
    cr_expect_null(v);
    cr_expect(strstr(err.msg, "zst-compressed") != NULL, "%s", err.msg);
}
