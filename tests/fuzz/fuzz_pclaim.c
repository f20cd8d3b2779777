/*
 * libFuzzer target: common/pclaim, the claim records of a store's Lease (an annotation any
 * holder of the Lease could have written) read as the next admission reads them.
 *
 * Input: bytes taken as the annotation's JSON. Properties checked: reading never crashes;
 * a conflict found is a bounded string naming a record whose namespace it reports; a
 * restore's source (PCLAIM_KIND_SOURCE) is read, never claimed, so it finds none.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/pclaim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *rec = cJSON_ParseWithLength((const char *)data, size);
    const struct pclaim c = { "ns", "etcd", "Object|bkt|", "p/etcd", NULL, NULL, NULL, NULL, NULL };
    const struct pclaim src = { "ns", "r",  "Object|bkt|", "p", PCLAIM_KIND_SOURCE,
                                NULL, NULL, NULL,          NULL };
    struct pclaim_other o;

    pclaim_conflict(rec, &c, 1000, &o);
    if (strlen(o.what) >= sizeof(o.what) || strlen(o.ns) >= sizeof(o.ns) || (!*o.what && *o.ns))
        abort();
    pclaim_conflict(rec, &src, 1000, &o);
    if (*o.what || *o.ns)
        abort();
    cJSON_Delete(rec);
    return 0;
}
