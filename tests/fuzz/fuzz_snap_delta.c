/*
 * fuzz_snap_delta - libFuzzer target for a delta snapshot's event stream and its replay:
 * the first byte picks the piece size, the rest is the decompressed delta (without its
 * trailer), replayed over an empty key set from revision 1 as the chain's first delta.
 * Any input is replayed or refused with a message, never read out of bounds; the key
 * count never exceeds the events applied.
 */
#include "controller/snapshot/snapdelta.h"
#include "controller/snapshot/snapkeys.h"
#include "controller/snapshot/snapreplay.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static enum kerr pass(const uint8_t *data, size_t size, size_t step, struct snapreplay *r, bool all,
                      bool *again, struct kerr_info *err)
{
    struct snapdelta *d = NULL;
    enum kerr rc = snapdelta_new(1 << 16, snapreplay_event, r, &d, err);
    if (rc != KERR_OK)
        abort();
    snapreplay_begin(r, true, all);
    for (size_t off = 0; rc == KERR_OK && off < size; off += step)
        rc = snapdelta_update(d, data + off, size - off < step ? size - off : step, err);
    rc = rc ? rc : snapdelta_finish(d, err);
    snapdelta_free(d);
    return rc ? rc : snapreplay_end(r, r->rev + 1, again, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct snapkeys *k = NULL;
    struct snapreplay r;
    struct kerr_info err = { 0 };
    bool again = false;
    if (size < 1 || snapkeys_new(1 << 16, &k, NULL) != KERR_OK)
        return 0;
    size_t step = (size_t)data[0] + 1;
    snapreplay_init(&r, k, 1);
    enum kerr rc = pass(data + 1, size - 1, step, &r, false, &again, &err);
    if (rc == KERR_OK && again)
        rc = pass(data + 1, size - 1, step, &r, true, &again, &err);
    if (rc != KERR_OK && err.msg[0] == '\0')
        abort();
    if ((int64_t)snapkeys_count(k) > r.events)
        abort();
    snapreplay_release(&r);
    snapkeys_free(k);
    return 0;
}
