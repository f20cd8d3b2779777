/*
 * fuzz_lzw - libFuzzer target for the LZW decoder (lzw.h): the first byte
 * picks the piece size, the rest is the stream. Any input is decoded or
 * refused with a message, never read or written out of bounds, every
 * decoded piece between 1 and 4096 bytes; pieces of any size decode alike.
 */
#include "controller/snapshot/lzw.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct sum {
    size_t n;
    uint32_t h;
};

static enum kerr add(void *ctx, const unsigned char *p, size_t n, struct kerr_info *err)
{
    struct sum *s = ctx;
    (void)err;
    if (n == 0 || n > 4096) {
        abort();
    }
    for (size_t i = 0; i < n; i++) {
        s->h = s->h * 31u + p[i];
    }
    s->n += n;
    return KERR_OK;
}

static enum kerr decode(const uint8_t *data, size_t size, size_t step, struct sum *s, bool *ended,
                        struct kerr_info *err)
{
    struct lzw *z = NULL;
    memset(s, 0, sizeof *s);
    if (lzw_new(&z, err) != KERR_OK) {
        abort();
    }
    enum kerr rc = KERR_OK;
    for (size_t off = 0; rc == KERR_OK && off < size; off += step) {
        rc = lzw_update(z, data + off, size - off < step ? size - off : step, add, s, err);
    }
    *ended = lzw_ended(z);
    lzw_free(z);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kerr_info err;
    struct sum a, b;
    bool ea, eb;
    if (size < 1) {
        return 0;
    }
    size_t step = (size_t)data[0] + 1;
    data++;
    size--;
    enum kerr ra = decode(data, size, step, &a, &ea, &err);
    if (ra != KERR_OK && err.msg[0] == '\0') {
        abort();
    }
    enum kerr rb = decode(data, size, size ? size : 1, &b, &eb, &err);
    if (ra != rb || (ra == KERR_OK && (ea != eb || a.n != b.n || a.h != b.h))) {
        abort();
    }
    return 0;
}
