/*
 * libFuzzer target: common/rtarget, an EtcdRestore's target store resolved from the objects read
 * from the API server (rtarget_resolve_in), as warden-controller reads every restore's claim.
 *
 * Input: bytes taken as JSON {"restore":..., "etcds":[...], "backups":[...]}, any of them any
 * shape. Properties checked: resolving never crashes; RTARGET_UNKNOWN exactly when no provider
 * is told, a provider told is a non-empty string; the result does not depend on the order of
 * the calls (resolved twice, the same).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/rtarget.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *in = cJSON_ParseWithLength((const char *)data, size);
    const cJSON *rs = cJSON_GetObjectItem(in, "restore");
    const cJSON *etcds = cJSON_GetObjectItem(in, "etcds");
    const cJSON *backups = cJSON_GetObjectItem(in, "backups");
    struct rtarget a, b;
    enum rtarget_from fa = rtarget_resolve_in(rs, etcds, backups, &a);
    enum rtarget_from fb = rtarget_resolve_in(rs, etcds, backups, &b);

    if (fa != fb || a.provider != b.provider || a.endpoint != b.endpoint)
        abort();
    if ((fa == RTARGET_UNKNOWN) != (a.provider == NULL) || (a.provider && !*a.provider))
        abort();
    if (fa != RTARGET_UNKNOWN && strcmp(rtarget_from_str(fa), "(unknown)") == 0)
        abort();
    cJSON_Delete(in);
    return 0;
}
