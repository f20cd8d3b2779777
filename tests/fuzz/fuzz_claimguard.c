/*
 * libFuzzer target: webhook/claimguard's readings of a PVC's name (any name a tenant gives a
 * claim) and of its spec (any JSON a request carries).
 *
 * Input: bytes up to the first newline taken as a PVC name (cut at a NUL), the rest as the
 * PVC object's JSON. Properties checked: reading never crashes and ends; each reading of the
 * name is "<template>-<etcd>-<ordinal>" with template and etcd not empty, the Etcd's name
 * fitting its buffer and found in the name right before "-<ordinal>", the ordinal an int32
 * written without a leading zero, the readings in increasing position; a seeded field is one
 * of the three the rule names.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webhook/claimguard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort unless etcd and ordinal are a reading of name at position pos (past the prior one). */
static void check(const char *name, size_t pos, size_t prior, const char *etcd, long ordinal)
{
    char tail[32];
    size_t ln = strlen(name), le = strlen(etcd), lt;

    snprintf(tail, sizeof(tail), "-%ld", ordinal);
    lt = strlen(tail);
    if (!le || ordinal < 0 || ordinal > 2147483647L || pos <= prior || pos < 2 ||
        ln < lt + le + 2 || strcmp(name + ln - lt, tail) != 0 ||
        memcmp(name + ln - lt - le, etcd, le) != 0 || name[ln - lt - le - 1] != '-' ||
        ln - lt - le - 1 < 1 || pos - 1 != ln - lt - le)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t ln = nl ? (size_t)(nl - data) : size, pos = 0, prior = 0, n = 0;
    char *name = malloc(ln + 1), etcd[64];
    const char *field = NULL;
    cJSON *pvc;
    long ordinal = -1;

    if (!name)
        return 0;
    memcpy(name, data, ln);
    name[ln] = '\0';
    while (claimguard_split(name, &pos, etcd, sizeof(etcd), &ordinal)) {
        if (strlen(etcd) >= sizeof(etcd) || ++n > strlen(name))
            abort();
        check(name, pos, prior, etcd, ordinal);
        prior = pos;
    }
    pvc = nl ? cJSON_ParseWithLength((const char *)nl + 1, size - ln - 1) : NULL;
    if (claimguard_seeded(pvc, &field) &&
        (!field || (strcmp(field, "dataSource") != 0 && strcmp(field, "dataSourceRef") != 0 &&
                    strcmp(field, "volumeName") != 0)))
        abort();
    cJSON_Delete(pvc);
    free(name);
    return 0;
}
