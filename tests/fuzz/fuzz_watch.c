/*
 * fuzz_watch - libFuzzer target for the watch-stream decoder.
 *
 * The first byte of the input chooses the chunk size (1..256, so the same
 * stream is also cut at odd places); the second byte, when its low bit is
 * set, selects a small line cap to exercise KERR_TOOBIG. The rest is fed to
 * the decoder chunk by chunk, each chunk copied into its own allocation so
 * ASan catches any read past a chunk; then the stream is finished and
 * everything freed.
 */
#include "common/watch.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static enum kerr touch(void *ctx, struct watch_event *ev)
{
    size_t *sum = ctx;

    /* Read every derived field so a dangling pointer would be noticed. */
    *sum += (size_t)ev->type + (size_t)ev->status_code + (size_t)watch_event_is_expired(ev);
    if (ev->resource_version)
        *sum += strlen(ev->resource_version);
    if (ev->reason)
        *sum += strlen(ev->reason);
    if (ev->message)
        *sum += strlen(ev->message);
    return KERR_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct watch_decoder d;
    struct kerr_info err;
    size_t chunk, line_max, off, n, sum = 0;
    char *copy;

    if (size < 2)
        return 0;
    chunk = (size_t)data[0] + 1;
    line_max = (data[1] & 1) ? 64 + (size_t)(data[1] >> 1) : 0;
    data += 2;
    size -= 2;
    watch_init(&d, line_max, touch, &sum);
    for (off = 0; off < size; off += n) {
        n = size - off < chunk ? size - off : chunk;
        copy = malloc(n);
        if (!copy)
            break;
        memcpy(copy, data + off, n);
        if (watch_feed(&d, copy, n, &err) != KERR_OK)
            watch_reset(&d);
        free(copy);
    }
    (void)watch_finish(&d, &err);
    watch_release(&d);
    return sum == (size_t)-1;
}
