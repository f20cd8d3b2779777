/* lzw - Go compress/lzw (LSB, literal width 8) decoding (see lzw.h). */
#include "controller/snapshot/lzw.h"

#include <stdint.h>
#include <stdlib.h>

#define LIT_WIDTH 8u
#define CLEAR     (1u << LIT_WIDTH)
#define END       (CLEAR + 1u)
#define MAX_WIDTH 12u
#define MAX_CODE  ((1u << MAX_WIDTH) - 1u)
#define NO_CODE   0xffffu

struct lzw {
    uint32_t bits;  /* bits read, not yet taken as codes (LSB first) */
    unsigned nbits; /* how many */
    unsigned width; /* bits of the next code */
    unsigned hi;    /* the next code to assign */
    unsigned overflow;
    unsigned last; /* the previous code, NO_CODE after a clear */
    bool ended;
    uint16_t prefix[MAX_CODE + 1];
    unsigned char suffix[MAX_CODE + 1];
    unsigned char out[MAX_CODE + 1]; /* one code's expansion, written back to front */
};

static void reset(struct lzw *z)
{
    z->width = LIT_WIDTH + 1;
    z->hi = END;
    z->overflow = 1u << z->width;
    z->last = NO_CODE;
}

enum kerr lzw_new(struct lzw **out, struct kerr_info *err)
{
    struct lzw *z = calloc(1, sizeof *z);
    *out = NULL;
    if (z == NULL) {
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    reset(z);
    *out = z;
    return KERR_OK;
}

void lzw_free(struct lzw *z)
{
    free(z);
}

bool lzw_ended(const struct lzw *z)
{
    return z->ended;
}

/* One code, as Go's reader decodes it: its expansion to sink, the table extended. */
static enum kerr code(struct lzw *z, unsigned c, lzw_sink sink, void *ctx, struct kerr_info *err)
{
    size_t i = sizeof z->out;
    unsigned first;
    if (c == CLEAR) {
        reset(z);
        return KERR_OK;
    }
    if (c == END) {
        z->ended = true;
        return KERR_OK;
    }
    if (c > z->hi) {
        return kerr_set(err, KERR_PARSE, "invalid LZW code %u (next %u)", c, z->hi);
    }
    unsigned w = c;
    if (c == z->hi && z->last != NO_CODE) {
        /* KwKwK: the last expansion followed by its own first byte */
        unsigned h = z->last;
        while (h >= CLEAR) {
            h = z->prefix[h];
        }
        z->out[--i] = (unsigned char)h;
        w = z->last;
    }
    /* codes END+1 .. hi-1 are defined since the last clear, each from a lower one */
    while (w >= CLEAR && i > 1) {
        z->out[--i] = z->suffix[w];
        w = z->prefix[w];
    }
    if (w >= CLEAR) {
        return kerr_set(err, KERR_PARSE, "invalid LZW code %u", c);
    }
    z->out[--i] = (unsigned char)w;
    first = w;
    if (z->last != NO_CODE) {
        z->suffix[z->hi] = (unsigned char)first;
        z->prefix[z->hi] = (uint16_t)z->last;
    }
    z->last = c;
    z->hi++;
    if (z->hi >= z->overflow) {
        if (z->width == MAX_WIDTH) {
            z->last = NO_CODE; /* the table is full: keep it, add nothing */
            z->hi--;
        } else {
            z->width++;
            z->overflow = 1u << z->width;
        }
    }
    return sink(ctx, z->out + i, sizeof z->out - i, err);
}

enum kerr lzw_update(struct lzw *z, const void *data, size_t len, lzw_sink sink, void *ctx,
                     struct kerr_info *err)
{
    const unsigned char *p = data;
    for (size_t k = 0; k < len; k++) {
        if (z->ended) {
            return kerr_set(err, KERR_PARSE, "data after the end of the LZW stream");
        }
        z->bits |= (uint32_t)p[k] << z->nbits;
        z->nbits += 8;
        while (!z->ended && z->nbits >= z->width) {
            unsigned c = z->bits & ((1u << z->width) - 1u);
            z->bits >>= z->width;
            z->nbits -= z->width;
            enum kerr rc = code(z, c, sink, ctx, err);
            if (rc != KERR_OK) {
                return rc;
            }
        }
    }
    return KERR_OK;
}
