/*
 * fuzz_snap_bolt - libFuzzer target for the bbolt reader of full snapshots: the input is
 * the database file. Any input is scanned or refused with a message, never read out of
 * bounds and never looping; on success the revision is at least 1 and at least every
 * revision handed out.
 */
#include "controller/snapshot/snapbolt.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct in {
    const uint8_t *p;
    size_t n;
    int64_t max;
    unsigned sum;
};

static enum kerr rd(void *ctx, int64_t off, void *dst, size_t len, struct kerr_info *err)
{
    const struct in *in = ctx;
    if (off < 0 || (size_t)off > in->n || len > in->n - (size_t)off)
        return kerr_set(err, KERR_PARSE, "read past the end");
    memcpy(dst, in->p + off, len);
    return KERR_OK;
}

static enum kerr kv(void *ctx, int64_t rev, const unsigned char *key, size_t klen, bool tomb,
                    struct kerr_info *err)
{
    struct in *in = ctx;
    (void)tomb;
    (void)err;
    unsigned sum = 0;
    for (size_t i = 0; i < klen; i++) /* every byte handed out is readable */
        sum += key[i];
    in->sum += sum;
    if (rev > in->max)
        in->max = rev;
    return KERR_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct in in = { data, size, 0, 0 };
    struct snapbolt_info info;
    struct kerr_info err = { 0 };
    enum kerr rc = snapbolt_scan(rd, &in, (int64_t)size, kv, &in, &info, &err);
    if (rc == KERR_OK && (info.revision < 1 || info.revision < in.max))
        abort();
    if (rc != KERR_OK && err.msg[0] == '\0')
        abort();
    return 0;
}
