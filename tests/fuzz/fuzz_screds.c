/*
 * fuzz_screds - libFuzzer target for the JSON credentials files (screds.h): the file
 * $AWS_APPLICATION_CREDENTIALS_JSON names or the *.json file found in a credentials
 * directory. The first byte picks the decoder (S3 or ABS); the rest is the file.
 * Accepted credentials are read field by field and released.
 */
#include "controller/snapshot/providers/screds.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t len_of(const char *s)
{
    return s ? strlen(s) : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    volatile size_t sum = 0;
    if (size < 1) {
        return 0;
    }
    const char *text = (const char *)data + 1;
    if (data[0] & 1) {
        struct screds_s3 c;
        if (screds_s3_parse_json(text, size - 1, &c, NULL) == KERR_OK) {
            sum += len_of(c.access_key) + len_of(c.secret_key) + len_of(c.role_arn) +
                   len_of(c.token_path) + len_of(c.region) + len_of(c.endpoint) + (size_t)c.req_cs +
                   (size_t)c.resp_cs + screds_s3_web_identity(&c);
            screds_s3_release(&c);
        }
    } else {
        struct screds_abs a;
        if (screds_abs_parse_json(text, size - 1, &a, NULL) == KERR_OK) {
            sum += len_of(a.account) + a.key_len + len_of(a.domain);
            screds_abs_release(&a);
        }
    }
    (void)sum;
    return 0;
}
