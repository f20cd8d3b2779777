/*
 * libFuzzer target: common/ststore, the store an Etcd's members write, read from a StatefulSet
 * (hostile JSON: anyone who may edit the StatefulSet writes its template).
 *
 * Input: a StatefulSet as JSON.
 * Properties checked: it never crashes; a store it reads has a known provider, a non-empty
 * container, a prefix and (Local) a hostPath that with "/" + container is the volume's path;
 * "no store" (KERR_NOTFOUND) or "unknown" (KERR_INVAL) with a reason otherwise; ststore_claim of a
 * store read never crashes, and a claim made is released; ststore_rolled_out never crashes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "common/ststore.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *sts = cJSON_ParseWithLength((const char *)data, size);
    struct ststore *s = calloc(1, sizeof(*s));
    struct bstore_claim c;
    char why[STSTORE_WHY_MAX];
    enum kerr rc;

    if (!s)
        abort();
    rc = ststore_read(sts, s, why, sizeof(why));
    if (rc != KERR_OK && rc != KERR_NOTFOUND && rc != KERR_INVAL)
        abort();
    if (rc == KERR_OK) {
        if (!bstore_provider_kind(s->provider) || !s->container[0] || why[0])
            abort();
        if (strcmp(bstore_provider_kind(s->provider), "Local") == 0 && !s->hostpath[0])
            abort();
        if (ststore_claim(s, &c, NULL) == KERR_OK)
            bstore_claim_release(&c);
    } else if (!why[0]) {
        abort();
    }
    (void)ststore_rolled_out(sts, 0);
    (void)ststore_rolled_out(sts, 3);
    cJSON_Delete(sts);
    free(s);
    return 0;
}
