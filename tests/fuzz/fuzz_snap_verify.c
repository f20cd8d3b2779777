/*
 * fuzz_snap_verify - libFuzzer target for the snapshot verifier: the first
 * byte picks the compression (none, gzip, zlib, LZW) and the piece size, the rest
 * is the stored object. Any input is accepted or refused with a message,
 * never read out of bounds; an uncompressed input passes exactly when it is
 * 512 k + 32 bytes and ends with the SHA-256 of the rest.
 */
#include "controller/snapshot/snapverify.h"

#include <openssl/evp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const comp[] = { "", ".gz", ".zlib", ".Z" };
    struct snapverify *v = NULL;
    struct kerr_info err;
    char hex[SNAPVERIFY_HEX_LEN + 1];
    if (size < 1) {
        return 0;
    }
    const char *c = comp[data[0] & 3];
    size_t step = (size_t)(data[0] >> 2) + 1;
    data++;
    size--;
    if (snapverify_new(c, &v, &err) != KERR_OK) {
        abort();
    }
    enum kerr rc = KERR_OK;
    for (size_t off = 0; rc == KERR_OK && off < size; off += step) {
        rc = snapverify_update(v, data + off, size - off < step ? size - off : step, &err);
    }
    rc = rc ? rc : snapverify_finish(v, hex, &err);
    snapverify_free(v);
    if (c[0] == '\0' && size >= 32) {
        unsigned char d[EVP_MAX_MD_SIZE];
        unsigned dl = 0;
        EVP_Digest(data, size - 32, d, &dl, EVP_sha256(), NULL);
        bool whole = size % 512 == 32 && memcmp(d, data + size - 32, 32) == 0;
        if (whole != (rc == KERR_OK)) {
            abort();
        }
    } else if (rc != KERR_OK && err.msg[0] == '\0') {
        abort();
    }
    return 0;
}
