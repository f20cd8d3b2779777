/*
 * fuzz_gcs_json - libFuzzer target for the decoders of GCS JSON API answers
 * (gcsjson.h). The first byte picks the decoder (listing page, object
 * resource, error answer); the rest is the answer body. Every decoded
 * object's strings are read so a dangling pointer would be noticed;
 * everything is freed.
 */
#include "controller/snapshot/providers/gcsjson.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ostore_list l = { 0 };
    struct ostore_obj o = { 0 };
    char *next = NULL;
    char reason[64], msg[256];
    size_t sum = 0;
    if (size < 1) {
        return 0;
    }
    const char *text = (const char *)data + 1;
    size_t n = size - 1;
    switch (data[0] % 3) {
    case 0:
        if (gcsjson_list(text, n, &l, &next, NULL) == KERR_OK && next) {
            sum += strlen(next);
        }
        break;
    case 1:
        if (gcsjson_object(text, n, &o, NULL) == KERR_OK) {
            ostore_list_add(&l, &o, NULL);
        }
        break;
    default:
        gcsjson_error(text, n, reason, msg);
        sum += strlen(reason) + strlen(msg);
        break;
    }
    for (size_t i = 0; i < l.n; i++) {
        sum += strlen(l.v[i].key) + strlen(l.v[i].md5) + strlen(l.v[i].etag);
        sum += l.v[i].version_id ? strlen(l.v[i].version_id) : 0;
    }
    free(next);
    ostore_obj_release(&o);
    ostore_list_release(&l);
    if (sum == SIZE_MAX) {
        abort();
    }
    return 0;
}
