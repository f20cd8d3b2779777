/*
 * fuzz_kubeconfig - libFuzzer target for the kubeconfig reader.
 *
 * The input is copied into an allocation of exactly its size (so ASan sees
 * any read past the end; the parser must not need a terminating NUL) and
 * parsed with the current context. Relative file references resolve under
 * a directory that does not exist. On success every field is touched, then
 * everything is released.
 */
#include "common/cfg.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t touch(const char *s)
{
    return s ? strlen(s) : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cfg_rest r;
    struct kerr_info err;
    char *copy = malloc(size ? size : 1);
    volatile size_t sum = 0;

    if (!copy)
        return 0;
    if (size)
        memcpy(copy, data, size);
    if (cfg_parse_kubeconfig(copy, size, "/nonexistent-fuzz-dir/config", NULL, &r, &err) ==
        KERR_OK) {
        sum += touch(r.server) + touch(r.tls_server_name) + touch(r.token) + touch(r.token_file) +
               touch(r.namespace) + touch(r.source);
        sum += r.ca_len + r.cert_len + r.key_len + (size_t)r.insecure;
        if (r.ca_pem)
            sum += (unsigned char)r.ca_pem[r.ca_len];
        cfg_rest_release(&r);
    } else {
        sum += strlen(err.msg);
    }
    free(copy);
    (void)sum;
    return 0;
}
