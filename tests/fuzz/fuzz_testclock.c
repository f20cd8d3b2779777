/* libFuzzer target: controller/core/testclock's offset parser on hostile file contents. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "controller/core/testclock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    long long ms = 0;

    if (testclock_parse((const char *)data, size, &ms) == 0 &&
        (ms > 999999999999999LL || ms < -999999999999999LL))
        abort();
    return 0;
}
