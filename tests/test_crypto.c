#include "common/crypto.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>

Test(crypto, base64_round_trip)
{
    const unsigned char bin[] = { 0, 1, 2, 0xfe, 0xff, 'a', '\n', 0 };
    char *enc = NULL;
    unsigned char *dec = NULL;
    size_t n = 0, m = 0, len;

    for (len = 0; len <= sizeof(bin); len++) {
        cr_assert_eq(crypto_b64_encode(bin, len, &enc, &n, NULL), KERR_OK);
        cr_assert_eq(n, (len + 2) / 3 * 4);
        cr_assert_eq(crypto_b64_decode(enc, n, &dec, &m, NULL), KERR_OK, "%s", enc);
        cr_assert_eq(m, len);
        cr_assert_arr_eq(dec, bin, len);
        free(enc);
        free(dec);
    }
    cr_assert_eq(crypto_b64_encode("hello", 5, &enc, NULL, NULL), KERR_OK);
    cr_assert_str_eq(enc, "aGVsbG8=");
    free(enc);
    cr_assert_eq(crypto_b64_decode("aGVs\nbG8=\n", 10, &dec, &m, NULL), KERR_OK);
    cr_assert_str_eq((char *)dec, "hello");
    free(dec);
}

Test(crypto, base64_bad_input)
{
    static const char *const bad[] = { "aGVsbG8", "aGVs-G8=", "aGVsbG8=x", "a===",
                                       "aG=s",    "aGV\x01",  "%%%%" };
    unsigned char *dec = NULL;
    size_t m = 1, i;
    struct kerr_info err;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_assert_eq(crypto_b64_decode(bad[i], strlen(bad[i]), &dec, &m, &err), KERR_PARSE, "%s",
                     bad[i]);
        cr_assert_null(dec);
        cr_assert_eq(m, 0);
    }
}

Test(crypto, sha256_random_and_uuid)
{
    char hex[CRYPTO_SHA256_HEX_LEN + 1], r1[33], r2[33], u[CRYPTO_UUID_LEN + 1];
    size_t i;

    cr_assert_eq(crypto_sha256_hex("abc", 3, hex, NULL), KERR_OK);
    cr_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    cr_assert_eq(crypto_random_hex(16, r1, sizeof(r1), NULL), KERR_OK);
    cr_assert_eq(crypto_random_hex(16, r2, sizeof(r2), NULL), KERR_OK);
    cr_assert_eq(strlen(r1), 32);
    cr_assert_str_neq(r1, r2);
    cr_assert_eq(crypto_random_hex(17, r1, sizeof(r1), NULL), KERR_INVAL);
    cr_assert_eq(crypto_uuid4(u, NULL), KERR_OK);
    cr_assert_eq(strlen(u), CRYPTO_UUID_LEN);
    for (i = 0; i < CRYPTO_UUID_LEN; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23)
            cr_assert_eq(u[i], '-', "%s", u);
        else
            cr_assert(strchr("0123456789abcdef", u[i]) != NULL, "%s", u);
    }
    cr_assert_eq(u[14], '4', "%s", u);
    cr_assert(strchr("89ab", u[19]) != NULL, "%s", u);
}

Test(crypto, base64_error_messages_and_large_random)
{
    unsigned char *dec = NULL;
    char big[2 * 100 + 1];
    size_t m = 0, i;
    struct kerr_info err;

    cr_assert_eq(crypto_b64_decode("aGVs-G8=", 8, &dec, &m, &err), KERR_PARSE);
    cr_assert_str_eq(err.msg, "crypto: invalid base64 character at offset 4");
    cr_assert_eq(crypto_b64_decode("aGVsbG8", 7, &dec, &m, &err), KERR_PARSE);
    cr_assert_str_eq(err.msg, "crypto: base64 length 7 is not a multiple of 4");
    /* More than one 32-byte chunk of RAND_bytes. */
    cr_assert_eq(crypto_random_hex(100, big, sizeof(big), NULL), KERR_OK);
    cr_assert_eq(strlen(big), 200);
    for (i = 0; i < 200; i++)
        cr_assert(strchr("0123456789abcdef", big[i]) != NULL, "%s", big);
    cr_assert_eq(crypto_random_hex(1, big, 0, &err), KERR_INVAL);
}

Test(crypto, openssl_failure_message_takes_the_queued_error)
{
    struct kerr_info err;

    ERR_raise(ERR_LIB_USER, ERR_R_PASSED_NULL_PARAMETER);
    ERR_raise(ERR_LIB_USER, ERR_R_INTERNAL_ERROR);
    cr_assert_eq(crypto_ossl_fail(&err, KERR_TLS, "tlsx", "loading"), KERR_TLS);
    cr_assert_eq(err.code, KERR_TLS);
    cr_assert_eq(strncmp(err.msg, "tlsx: loading: error:", 21), 0, "%s", err.msg);
    cr_assert_not_null(strstr(err.msg, "passed a null parameter"), "the oldest: %s", err.msg);
    cr_assert_eq(ERR_peek_error(), 0, "queue cleared");
    cr_assert_eq(crypto_ossl_fail(&err, KERR_NOMEM, "crypto", "digest"), KERR_NOMEM);
    cr_assert_str_eq(err.msg, "crypto: digest");
}
