/*
 * libFuzzer target: the member pods warden-controller asks for the backup sidecar
 * (controller/core/smember.h), read from a StatefulSet and pods it did not write.
 *
 * Input: JSON text {"sts": StatefulSet, "pods": [Pod, ...]}. Properties checked:
 *   - smember_pick never crashes; KERR_OK only with every ordinal of [start, start + replicas)
 *     (smember_ordinals) picked once, in order, at most max, each pod smember_is_member of it;
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
#include "controller/core/smember.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct smember m[4];
    struct kerr_info e;
    char want[SMEMBER_NAME_MAX + 32];
    cJSON *doc = NULL;
    const cJSON *sts, *pod;
    char why[SMEMBER_NAME_MAX + 160];
    long lo = 0, hi = 0, o;
    enum kerr rc;
    int n = -1, port, ok;

    if (kjson_parse((const char *)data, size, NULL, &doc, NULL, NULL) != KERR_OK)
        return 0;
    sts = kjson_get_obj(doc, "sts");
    port = smember_port(sts);
    if (port != -1 && (port < 1 || port > 65535))
        abort();
    rc = smember_pick(sts, kjson_get_arr(doc, "pods"), m, 4, &n, &e);
    if ((rc == KERR_OK) != (n > 0) || n < 0 || n > 4)
        abort();
    ok = smember_ordinals(sts, &lo, &hi);
    if (rc == KERR_OK && (!ok || hi - lo != n))
        abort();
    for (int i = 0; i < n; i++) {
        snprintf(want, sizeof(want), "%s-%ld", kjson_get_str(sts, "metadata.name"), m[i].ordinal);
        if (strcmp(want, m[i].pod) != 0 || m[i].port != port || !m[i].ip[0] ||
            strlen(m[i].ip) >= SMEMBER_IP_MAX || m[i].ordinal != lo + i)
            abort();
    }
    cJSON_ArrayForEach (pod, kjson_get_arr(doc, "pods")) {
        o = smember_is_member(sts, pod, why, sizeof(why));
        if ((o < 0) != (why[0] != '\0') || (o >= 0 && (!ok || o < lo || o >= hi)))
            abort();
    }
    cJSON_Delete(doc);
    return 0;
}
