/*
 * libFuzzer target: the differential check of the review decoders. Any input,
 * answered by every webhook with the whole-tree decoder and with the
 * selective one (webhook/jscan), must get byte-identical answers and the
 * same parent lookups (wh_decdiff_fixture); a difference aborts.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/log.h"
#include "webhook/wh_decdiff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet;
    struct kerr_info err;
    enum kerr rc;

    if (!quiet) {
        log_set_level(LOG_ERROR);
        quiet = 1;
    }
    kerr_clear(&err);
    rc = wh_decdiff_fixture((const char *)data, size, &err);
    if (rc == KERR_INVAL) {
        fprintf(stderr, "decoders differ: %s\n", err.msg);
        abort();
    }
    return 0;
}
