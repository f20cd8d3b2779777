/* libFuzzer target: controller/core/testclock's offset parser on hostile file contents. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "controller/core/testclock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    long long ms = 0;
    int stopped = 2;

    if (testclock_parse((const char *)data, size, &ms, &stopped) == 0 &&
        (ms > 999999999999999LL || ms < -999999999999999LL || (stopped != 0 && stopped != 1) ||
         (stopped && ms < 0)))
        abort();
    return 0;
}
