#include "common/crypto.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

enum kerr crypto_ossl_fail(struct kerr_info *err, enum kerr code, const char *who, const char *what)
{
    char detail[256] = "";
    unsigned long e = ERR_peek_error();

    if (e)
        ERR_error_string_n(e, detail, sizeof(detail));
    ERR_clear_error();
    return kerr_set(err, code, "%s: %s%s%s", who, what, detail[0] ? ": " : "", detail);
}

static enum kerr ossl_fail(struct kerr_info *err, enum kerr code, const char *what)
{
    return crypto_ossl_fail(err, code, "crypto", what);
}

enum kerr crypto_b64_encode(const void *data, size_t len, char **out, size_t *out_len,
                            struct kerr_info *err)
{
    size_t cap;
    int n;

    *out = NULL;
    if (out_len)
        *out_len = 0;
    if (len > (size_t)INT_MAX / 4 * 3 - 3)
        return kerr_set(err, KERR_TOOBIG, "crypto: base64 input too large");
    cap = (len + 2) / 3 * 4 + 1;
    *out = malloc(cap);
    if (!*out)
        return kerr_set(err, KERR_NOMEM, "crypto: base64 output");
    n = EVP_EncodeBlock((unsigned char *)*out, (const unsigned char *)data, (int)len);
    (*out)[n] = '\0';
    if (out_len)
        *out_len = (size_t)n;
    return KERR_OK;
}

static int is_b64_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int is_b64_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
           c == '/';
}

/*
 * Strict shape check before EVP_DecodeUpdate, which would silently stop at
 * '-' and accept missing padding: only the alphabet and whitespace, '='
 * only as the last one or two significant characters, a multiple of 4.
 */
static enum kerr b64_validate(const char *s, size_t len, struct kerr_info *err)
{
    size_t i, sig = 0, pad = 0;

    for (i = 0; i < len; i++) {
        if (is_b64_space(s[i]))
            continue;
        if (s[i] == '=' && pad < 2) {
            pad++;
        } else if (!is_b64_char(s[i]) || pad) {
            return kerr_set(err, KERR_PARSE, "crypto: invalid base64 character at offset %zu", i);
        }
        sig++;
    }
    if (sig % 4 != 0)
        return kerr_set(err, KERR_PARSE, "crypto: base64 length %zu is not a multiple of 4", sig);
    return KERR_OK;
}

enum kerr crypto_b64_decode(const char *text, size_t len, unsigned char **out, size_t *out_len,
                            struct kerr_info *err)
{
    EVP_ENCODE_CTX *ctx = NULL;
    int n = 0, fin = 0;
    enum kerr rc;

    *out = NULL;
    *out_len = 0;
    if (len > INT_MAX)
        return kerr_set(err, KERR_TOOBIG, "crypto: base64 input too large");
    if ((rc = b64_validate(text, len, err)) != KERR_OK)
        return rc;
    ctx = EVP_ENCODE_CTX_new();
    *out = malloc(len / 4 * 3 + 4);
    if (!ctx || !*out) {
        rc = kerr_set(err, KERR_NOMEM, "crypto: base64 output");
        goto out;
    }
    EVP_DecodeInit(ctx);
    if (EVP_DecodeUpdate(ctx, *out, &n, (const unsigned char *)text, (int)len) < 0 ||
        EVP_DecodeFinal(ctx, *out + n, &fin) < 0) {
        rc = ossl_fail(err, KERR_PARSE, "invalid base64");
        goto out;
    }
    (*out)[n + fin] = '\0';
    *out_len = (size_t)(n + fin);
out:
    EVP_ENCODE_CTX_free(ctx);
    if (rc != KERR_OK) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

static void hex_encode(const unsigned char *p, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    size_t i;

    for (i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 0x0f];
    }
    out[2 * n] = '\0';
}

/*
 * SHA-256 fetched from the default provider once (set under pthread_once, read-only after):
 * EVP_sha256() makes every EVP_Digest fetch it again, under the provider store's lock, on
 * each admission review that looks an Etcd up. NULL when the fetch failed: EVP_sha256().
 */
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;
static EVP_MD *sha256_md;

static void sha256_fetch(void)
{
    sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

enum kerr crypto_sha256_hex(const void *data, size_t len, char out[CRYPTO_SHA256_HEX_LEN + 1],
                            struct kerr_info *err)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;

    out[0] = '\0';
    pthread_once(&sha256_once, sha256_fetch);
    if (!EVP_Digest(data, len, md, &mdlen, sha256_md ? sha256_md : EVP_sha256(), NULL) ||
        mdlen != 32)
        return ossl_fail(err, KERR_INTERNAL, "sha256");
    hex_encode(md, mdlen, out);
    return KERR_OK;
}

enum kerr crypto_random_hex(size_t nbytes, char *out, size_t out_size, struct kerr_info *err)
{
    unsigned char chunk[32];
    size_t done, n;

    if (out_size == 0 || nbytes > (out_size - 1) / 2)
        return kerr_set(err, KERR_INVAL, "crypto: %zu random bytes do not fit %zu", nbytes,
                        out_size);
    out[0] = '\0';
    for (done = 0; done < nbytes; done += n) {
        n = nbytes - done < sizeof(chunk) ? nbytes - done : sizeof(chunk);
        if (RAND_bytes(chunk, (int)n) != 1)
            return ossl_fail(err, KERR_INTERNAL, "RAND_bytes");
        hex_encode(chunk, n, out + 2 * done);
    }
    OPENSSL_cleanse(chunk, sizeof(chunk));
    return KERR_OK;
}

enum kerr crypto_uuid4(char out[CRYPTO_UUID_LEN + 1], struct kerr_info *err)
{
    unsigned char b[16];
    char hex[33];
    int n;

    out[0] = '\0';
    if (RAND_bytes(b, sizeof(b)) != 1)
        return ossl_fail(err, KERR_INTERNAL, "RAND_bytes");
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    hex_encode(b, sizeof(b), hex);
    n = snprintf(out, CRYPTO_UUID_LEN + 1, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12,
                 hex + 16, hex + 20);
    if (n != CRYPTO_UUID_LEN)
        return kerr_set(err, KERR_INTERNAL, "crypto: uuid formatting");
    return KERR_OK;
}
