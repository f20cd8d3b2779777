/*
 * libFuzzer target: glass_judge on the break glass record of a Lease (webhook/glass.h), as
 * the webhook reads it back from the API server: any JSON, or none. Checked against its
 * promises (aborts otherwise): a record judged used names a time after the epoch and strings
 * that fit; what glass_record writes for a use is judged used for that use and not for
 * another value.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "webhook/glass.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define V1 "1111111111111111111111111111111111111111111111111111111111111111"
#define V2 "2222222222222222222222222222222222222222222222222222222222222222"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct glass_use u = { "ns",    "etcd-main", "u1", V1,
                           "alice", "scaling",   NULL, NULL,
                           NULL,    NULL,        NULL, "apps/statefulsets ns/etcd-main s1 41" };
    struct glass_prior p;
    char *s = malloc(size + 1);
    cJSON *rec, *mine;

    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    rec = cJSON_Parse(s);
    if (glass_judge(rec, &u, &p) &&
        (p.at < 1 || strlen(p.user) >= sizeof(p.user) || strlen(p.what) >= sizeof(p.what)))
        abort();
    if (!glass_judge(rec, &u, &p) && p.at != 0)
        abort();
    /* the fuzzed text as who and what: written and read back */
    u.user = u.what = s;
    mine = glass_record(&u, 1795515451);
    if (mine) {
        if (!glass_judge(mine, &u, &p) || p.at != 1795515451)
            abort();
        u.value = V2;
        if (glass_judge(mine, &u, &p))
            abort();
    }
    cJSON_Delete(mine);
    cJSON_Delete(rec);
    free(s);
    return 0;
}
