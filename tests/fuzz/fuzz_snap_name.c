/*
 * fuzz_snap_name - libFuzzer target for the snapshot-name parser: any key
 * either parses or is refused with a message; a parsed key rebuilds to a
 * name that parses to the same fields (round trip through snap_build_name
 * and snap_key).
 */
#include "controller/snapshot/snapname.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct snap_name s;
    struct snap_name again;
    struct kerr_info err;
    char *key = NULL;
    char *text = malloc(size + 1);
    if (text == NULL) {
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    if (snap_parse(text, &s, &err) == KERR_OK && !s.is_chunk &&
        snap_build_name(&s, &err) == KERR_OK && snap_key("p", &s, &key, &err) == KERR_OK) {
        if (snap_parse(key, &again, &err) != KERR_OK || again.kind != s.kind ||
            again.start_rev != s.start_rev || again.last_rev != s.last_rev ||
            again.created != s.created || again.is_final != s.is_final ||
            strcmp(again.compression, s.compression) != 0 || snap_cmp(&again, &s) != 0) {
            abort();
        }
    }
    free(key);
    free(text);
    return 0;
}
