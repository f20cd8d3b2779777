/*
 * fuzz_sts - libFuzzer target for the decoders of the token services' answers: AWS STS
 * AssumeRoleWithWebIdentity (sts.h), Google STS's token exchange and IAM Credentials
 * generateAccessToken (stsgcp.h). The first byte picks the decoder (bits 1-2) and the
 * HTTP status class (bit 0: 2xx or an error); the rest is the answer body. Decoded
 * strings are read so a dangling pointer would be noticed.
 */
#include <stdlib.h>

#include "controller/snapshot/providers/sts.h"
#include "controller/snapshot/providers/stsgcp.h"

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
    long status = (data[0] & 1) ? 200 : 400 + (long)(data[0] >> 3) % 200;
    const char *body = (const char *)data + 1;
    char *tok = NULL;
    int64_t exp = 0;
    switch ((data[0] >> 1) % 3) {
    case 0:
        if (sts_parse(status, body, size - 1, &c, NULL) == KERR_OK) {
            sum += strlen(c.access_key) + strlen(c.secret_key) + strlen(c.session_token);
            sts_creds_release(&c);
        }
        break;
    case 1:
        if (stsgcp_exchange_answer(status, body, size - 1, 0, &tok, &exp, NULL) == KERR_OK) {
            sum += strlen(tok);
        }
        break;
    default:
        if (stsgcp_impersonation_answer(status, body, size - 1, &tok, &exp, NULL) == KERR_OK) {
            sum += strlen(tok);
        }
        break;
    }
    free(tok);
    (void)sum;
    return 0;
}
