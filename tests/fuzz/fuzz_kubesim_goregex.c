/*
 * libFuzzer target: kube-sim's translation of a CRD's Go (RE2) pattern into a
 * POSIX extended regular expression (tests/kube-sim/goregex). The input is a
 * pattern, or, when it holds a NUL byte, a pattern (before it) and a string
 * matched against it (after it). Invariants: the translation fits its buffer
 * and is NUL-terminated, is "" exactly when it is refused, is stable (the
 * same twice), and whatever it yields regcomp accepts or refuses without
 * crashing; matching answers 1, 0 or -1.
 */
#include <regex.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/kube-sim/goregex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char a[64 * 1024], b[64 * 1024];
    char *pattern, *subject;
    const uint8_t *nul = memchr(data, 0, size);
    size_t n = nul ? (size_t)(nul - data) : size;
    int rc, m;

    if (size > 4 * KSIM_GOREGEX_MAX)
        return 0;
    pattern = malloc(n + 1);
    subject = malloc(size - n + 1);
    if (!pattern || !subject)
        abort();
    memcpy(pattern, data, n);
    pattern[n] = '\0';
    memcpy(subject, nul ? (const char *)nul + 1 : "", nul ? size - n - 1 : 0);
    subject[nul ? size - n - 1 : 0] = '\0';
    rc = ksim_goregex_translate(pattern, a, sizeof(a));
    if (strlen(a) >= sizeof(a) || (rc == 0 && *pattern && !a[0]))
        abort();
    if (ksim_goregex_translate(pattern, b, sizeof(b)) != rc || strcmp(a, b) != 0)
        abort();
    if (rc != 0 && a[0] != '\0')
        abort();
    m = ksim_goregex_match(pattern, subject);
    if (m < -1 || m > 1 || (rc != 0 && m != -1))
        abort();
    free(pattern);
    free(subject);
    return 0;
}
