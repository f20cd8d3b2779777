/*
 * libFuzzer target: the member pods warden-controller asks for the backup sidecar
 * (controller/hibernation/smember.h), read from a StatefulSet and pods it did not write.
 *
 * Input: JSON text {"sts": StatefulSet, "pods": [Pod, ...]}. Properties checked:
 *   - smember_pick never crashes and returns at most max members, in strictly increasing
 *     ordinal order (no pod twice);
 *   - each member is named <sts>-<ordinal>, carries the template's port (1..65535) and a
 *     non-empty pod IP that fits its buffer;
 *   - KERR_OK exactly when at least one member was picked.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "controller/hibernation/smember.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct smember m[4];
    struct kerr_info e;
    char want[SMEMBER_NAME_MAX + 32];
    cJSON *doc = NULL;
    const cJSON *sts;
    enum kerr rc;
    int n = -1, port;

    if (kjson_parse((const char *)data, size, NULL, &doc, NULL, NULL) != KERR_OK)
        return 0;
    sts = kjson_get_obj(doc, "sts");
    port = smember_port(sts);
    if (port != -1 && (port < 1 || port > 65535))
        abort();
    rc = smember_pick(sts, kjson_get_arr(doc, "pods"), m, 4, &n, &e);
    if ((rc == KERR_OK) != (n > 0) || n < 0 || n > 4)
        abort();
    for (int i = 0; i < n; i++) {
        snprintf(want, sizeof(want), "%s-%ld", kjson_get_str(sts, "metadata.name"), m[i].ordinal);
        if (strcmp(want, m[i].pod) != 0 || m[i].port != port || !m[i].ip[0] ||
            strlen(m[i].ip) >= SMEMBER_IP_MAX || (i > 0 && m[i - 1].ordinal >= m[i].ordinal))
            abort();
    }
    cJSON_Delete(doc);
    return 0;
}
