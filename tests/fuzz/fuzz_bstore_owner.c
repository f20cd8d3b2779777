/*
 * libFuzzer target: common/bstore's bstore_prefix_owner, the namespace a prefix belongs to
 * under BackupBucket spec.prefixScope Namespace.
 *
 * Input: two prefixes, split at the first NUL.
 * Properties checked: it never crashes, the owner fits its buffer and is a non-empty start of
 * the prefix's first segment; and the partition is sound: two prefixes of different owners
 * never overlap as the backup sidecar lists them (neither a string prefix of the other).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/bstore.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *dup_n(const uint8_t *p, size_t n)
{
    char *s = malloc(n + 1);

    if (!s)
        abort();
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

static int owns(const char *prefix, char *out, size_t n)
{
    int ok = bstore_prefix_owner(prefix, out, n);
    size_t len = strlen(out);

    if (ok ? len == 0 || len >= n || strncmp(out, prefix, len) != 0 || strchr(out, '/') : *out)
        abort();
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t n = nul ? (size_t)(nul - data) : size;
    char *a = dup_n(data, n), *b = dup_n(nul ? nul + 1 : data, nul ? size - n - 1 : 0);
    char oa[64], ob[64], tiny[4];
    size_t la = strlen(a), lb = strlen(b);

    owns(a, tiny, sizeof(tiny));
    if (owns(a, oa, sizeof(oa)) && owns(b, ob, sizeof(ob)) && strcmp(oa, ob) != 0 &&
        (strncmp(a, b, la < lb ? la : lb) == 0))
        abort(); /* two namespaces' prefixes overlap */
    free(a);
    free(b);
    return 0;
}
