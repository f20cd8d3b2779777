/*
 * libFuzzer target: common/rtrec, an EtcdRestore's admitted target found among the records of
 * a claim Lease (an annotation any holder of the Lease could have written) and judged against
 * the target resolved now.
 *
 * Input: bytes taken as the annotation's JSON. Properties checked: reading never crashes; a
 * record found is one of this restore's kind, namespace and name; a verdict is SAME or MOVED,
 * the reason a bounded string set when MOVED.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/pclaim.h"
#include "common/rtrec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *rec = cJSON_ParseWithLength((const char *)data, size);
    cJSON *rs = cJSON_Parse("{\"metadata\":{\"namespace\":\"ns\",\"name\":\"r\",\"uid\":\"u\"}}");
    const struct rtarget live = { "S3", NULL };
    const cJSON *r = rtrec_find(rec, rs);
    char why[256] = "";
    enum rtrec_verdict v;

    if (r &&
        (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r, "name")), "r") != 0 ||
         strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r, "kind")), PCLAIM_KIND_RESTORE) != 0))
        abort();
    v = rtrec_judge(PCLAIM_LEASE_PREFIX "0000000000000000", r, &live, "bkt", "p/r", why,
                    sizeof(why));
    if ((v != RTREC_SAME && v != RTREC_MOVED) || strlen(why) >= sizeof(why) ||
        (v == RTREC_MOVED && !*why))
        abort();
    cJSON_Delete(rs);
    cJSON_Delete(rec);
    return 0;
}
