/*
 * fuzz_sts - libFuzzer target for the decoder of STS AssumeRoleWithWebIdentity answers
 * (sts.h). The first byte picks the HTTP status class (2xx or an error); the rest is the
 * answer body. Decoded strings are read so a dangling pointer would be noticed.
 */
#include "controller/snapshot/sts.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sts_creds c;
    volatile size_t sum = 0;
    if (size < 1) {
        return 0;
    }
    long status = (data[0] & 1) ? 200 : 400 + (long)(data[0] >> 1) % 200;
    if (sts_parse(status, (const char *)data + 1, size - 1, &c, NULL) == KERR_OK) {
        sum += strlen(c.access_key) + strlen(c.secret_key) + strlen(c.session_token);
        sts_creds_release(&c);
    }
    (void)sum;
    return 0;
}
