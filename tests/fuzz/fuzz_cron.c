/*
 * libFuzzer target: cron_parse on untrusted schedule text (an
 * EtcdBackupSchedule's spec.schedule), and for what parses, cron_next and
 * cron_prev checked against their promises (aborts otherwise): a next time
 * is a whole minute strictly after the start, a previous one a whole minute
 * at or before it, and each is its own previous fire time.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "controller/core/cron.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* 2026-11-24T10:17:31Z */
#define T0 1795515451LL

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    struct cron c;
    int64_t n = 0, p = 0, q = 0;

    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    if (cron_parse(s, &c, NULL) == KERR_OK) {
        if (cron_next(&c, T0, &n) == KERR_OK) {
            if (n <= T0 || n % 60 != 0 || cron_prev(&c, n, &q) != KERR_OK || q != n)
                abort();
        }
        if (cron_prev(&c, T0, &p) == KERR_OK && (p > T0 || p % 60 != 0))
            abort();
    }
    free(s);
    return 0;
}
