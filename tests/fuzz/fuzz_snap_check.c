/*
 * fuzz_snap_check - libFuzzer target for check-prefixes' grouping of a
 * container's keys: the input is split at '\n' into keys (object keys are
 * whatever the store holds), each counted into one report (of a Local store
 * when the first byte is odd), the pairs found and both reports written to
 * a throw-away stream; everything is freed.
 */
#include "controller/snapshot/snapcheck.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct snapcheck c = { 0 };
    char *text = malloc(size + 1);
    FILE *sink = fopen("/dev/null", "w");
    char *key;
    char *next;

    if (text == NULL || sink == NULL) {
        free(text);
        if (sink != NULL) {
            fclose(sink);
        }
        return 0;
    }
    c.local = size > 0 && (data[0] & 1) != 0;
    memcpy(text, data, size);
    text[size] = '\0';
    for (key = text; key != NULL; key = next) {
        next = strchr(key, '\n');
        if (next != NULL) {
            *next++ = '\0';
        }
        if (snapcheck_add(&c, key, NULL) != KERR_OK) {
            break;
        }
    }
    if (snapcheck_pairs(&c, NULL) == KERR_OK) {
        snapcheck_print_text(&c, "Object|b|", sink);
        (void)snapcheck_print_json(&c, "Object|b|", sink, NULL);
    }
    for (size_t i = 0; i < c.npairs; i++) {
        if (c.pairs[i].shorter >= c.n || c.pairs[i].longer >= c.n) {
            abort();
        }
    }
    snapcheck_release(&c);
    fclose(sink);
    free(text);
    return 0;
}
