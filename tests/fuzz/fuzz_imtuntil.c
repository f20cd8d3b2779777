/*
 * libFuzzer target: the summary line extend-snapshot-immutability leaves in
 * its termination log, as the controller reads it for the task's
 * status.immutableUntil (controller/immutability/imtuntil.h).
 *
 * Input: bytes taken as that line. Properties checked: parsing never crashes;
 * a date is returned only on success, as RFC 3339 that parses again to itself.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/ktime.h"
#include "controller/immutability/imtuntil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char out[KTIME_LEN + 1], again[KTIME_LEN + 1];
    struct timespec ts;
    enum kerr rc = imtuntil_parse((const char *)data, size, out, NULL);

    if (rc != KERR_OK) {
        if (out[0] != '\0')
            abort();
        return 0;
    }
    if (strlen(out) != KTIME_LEN || ktime_parse(out, &ts, NULL) != KERR_OK ||
        ktime_format(ts.tv_sec, again) != KERR_OK || strcmp(out, again) != 0)
        abort();
    return 0;
}
