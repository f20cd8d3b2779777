/*
 * fuzz_pods - libFuzzer target for the member pods of a StatefulSet (webhook/lookup.h):
 * lookup_pods_outside over a pod LIST (the API server's answer, any JSON), and
 * lookup_pod_ordinal of each name. The first byte's low nibble picks lo, the high nibble
 * the width of [lo, hi); the StatefulSet is "etcd-main"; the rest is the LIST body. The
 * count must agree with a second walk over the items.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "webhook/lookup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const cJSON *items, *p;
    cJSON *list;
    int64_t lo, hi, first = 0, ord;
    size_t n, again = 0;

    if (size < 1)
        return 0;
    lo = data[0] & 0xf;
    hi = lo + (data[0] >> 4);
    list = cJSON_ParseWithLength((const char *)data + 1, size - 1);
    items = kjson_get_arr(list, "items");
    n = lookup_pods_outside(items, "etcd-main", lo, hi, &first);
    cJSON_ArrayForEach (p, items) {
        if (lookup_pod_ordinal(lookup_meta_str(p, "name"), "etcd-main", &ord) &&
            (ord < lo || ord >= hi))
            again++;
    }
    if (again != n || (n == 0) != (first == -1) || (n && first >= lo && first < hi))
        abort();
    cJSON_Delete(list);
    return 0;
}
