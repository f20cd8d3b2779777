/*
 * libFuzzer target: common/lsel, a BackupBucket's namespaceSelector matched
 * against a namespace's labels.
 *
 * Input: bytes split at the first NUL into a selector and labels, both JSON.
 * Properties checked: matching never crashes; a selector that validates
 * matches or not (0 or 1), and one that does not validate never matches.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/lsel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t n = nul ? (size_t)(nul - data) : size;
    cJSON *sel = cJSON_ParseWithLength((const char *)data, n);
    cJSON *labels = nul ? cJSON_ParseWithLength((const char *)nul + 1, size - n - 1) : NULL;
    int match = -1;
    enum kerr rc = lsel_match(sel, labels, &match, NULL), valid = lsel_validate(sel, NULL);

    if ((rc == KERR_OK) != (valid == KERR_OK))
        abort();
    if (rc == KERR_OK ? (match != 0 && match != 1) : match != 0)
        abort();
    cJSON_Delete(sel);
    cJSON_Delete(labels);
    return 0;
}
