/*
 * libFuzzer target: the break-glass value parser (common/hibguard) on
 * hostile text: KERR_OK only with a reason that is not blank, inside the
 * value, after the expiry; otherwise KERR_PARSE with *expires 0 and
 * *reason "" (aborts otherwise). Then the phase check, on the same text.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/hibguard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    const char *reason = NULL;
    time_t exp = 1;
    enum kerr rc;

    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    rc = hibguard_break_glass(text, &exp, &reason, NULL);
    if (rc == KERR_OK) {
        if (!reason || reason <= text || reason >= text + strlen(text) || !*reason ||
            isspace((unsigned char)*reason))
            abort();
    } else if (rc != KERR_PARSE || exp != 0 || !reason || *reason) {
        abort();
    }
    (void)hibguard_phase_current(text);
    free(text);
    return 0;
}
