/*
 * libFuzzer target: the break-glass value parser (common/hibguard) on
 * hostile text: KERR_OK only with a reason that is not blank, inside the
 * value, after the expiry; otherwise KERR_PARSE with *expires 0 and
 * *reason "" (aborts otherwise). Then the phase check, on the same text,
 * and the ScalingDown stamp parser: KERR_OK only with a uid that fits, has
 * no '/' or blank and is what the text starts with, and a generation >= 1;
 * otherwise KERR_PARSE with generation 0 and an empty uid.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/hibguard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_stamp(const char *text)
{
    char uid[HIBGUARD_CHECKED_MAX];
    long long g = -1;
    size_t n;

    if (hibguard_checked_parse(text, uid, sizeof(uid), &g, NULL) != KERR_OK) {
        if (g != 0 || uid[0])
            abort();
        return;
    }
    n = strlen(uid);
    if (g < 1 || n == 0 || n >= sizeof(uid) || strchr(uid, '/') || strncmp(uid, text, n) != 0 ||
        text[n] != '/')
        abort();
    for (size_t i = 0; i < n; i++)
        if (isspace((unsigned char)uid[i]))
            abort();
}

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
    check_stamp(text);
    free(text);
    return 0;
}
