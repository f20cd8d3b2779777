/*
 * crypto - small helpers on OpenSSL 3: base64 (the caBundle of webhook
 * configurations, Secret data), SHA-256 as hex, random hex strings and
 * random (version 4) UUIDs from RAND_bytes, and the message of a failed
 * OpenSSL call (for tlsx too).
 *
 * Thread safety: every function is reentrant (OpenSSL 3 initialises itself
 * thread-safely); output buffers belong to the caller.
 */
#ifndef COMMON_CRYPTO_H
#define COMMON_CRYPTO_H

#include <stddef.h>

#include "common/kerr.h"

/* Length of a SHA-256 hex digest and of a UUID string, without the NUL. */
#define CRYPTO_SHA256_HEX_LEN 64
#define CRYPTO_UUID_LEN       36

/*
 * Standard base64 with padding and no line breaks (EVP_EncodeBlock) of the
 * len bytes at data (BORROWED). On KERR_OK *out OWNS a NUL-terminated
 * string (free()); *out_len (optional) gets its length. KERR_TOOBIG above
 * about 1.5 GiB of input.
 */
enum kerr crypto_b64_encode(const void *data, size_t len, char **out, size_t *out_len,
                            struct kerr_info *err);

/*
 * Decode standard base64 (padding required, line breaks and surrounding
 * whitespace allowed) from the len bytes at text (BORROWED). KERR_PARSE on
 * any other character or a bad length. On KERR_OK *out OWNS the bytes plus
 * a trailing NUL not counted in *out_len (free()); otherwise *out is NULL
 * and *out_len 0.
 */
enum kerr crypto_b64_decode(const char *text, size_t len, unsigned char **out, size_t *out_len,
                            struct kerr_info *err);

/* SHA-256 of data as lowercase hex into out (CRYPTO_SHA256_HEX_LEN + 1 bytes). */
enum kerr crypto_sha256_hex(const void *data, size_t len, char out[CRYPTO_SHA256_HEX_LEN + 1],
                            struct kerr_info *err);

/* nbytes random bytes (RAND_bytes) as lowercase hex into out; out_size >= 2 * nbytes + 1,
 * else KERR_INVAL. */
enum kerr crypto_random_hex(size_t nbytes, char *out, size_t out_size, struct kerr_info *err);

/* A random (version 4, RFC 4122 variant) UUID "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx". */
enum kerr crypto_uuid4(char out[CRYPTO_UUID_LEN + 1], struct kerr_info *err);

/*
 * Record in err "<who>: <what>: <the oldest queued OpenSSL error>" (without
 * the last part when the queue is empty), clear the thread's OpenSSL error
 * queue, and return code.
 */
enum kerr crypto_ossl_fail(struct kerr_info *err, enum kerr code, const char *who,
                           const char *what);

#endif
