/*
 * libFuzzer target: the data-mount rules of warden-webhook (webhook/datamnt.h), read from
 * StatefulSets and pods a requester wrote.
 *
 * Input: JSON text {"old": StatefulSet, "new": StatefulSet, "pods": [Pod, ...], "p": path,
 * "base": path}. Properties checked:
 *   - nothing crashes; datamnt_below(p, p) holds for every p; a path is below "/";
 *   - datamnt_covers answers a mount of new's container of the name it gives, which old's
 *     container of that name does not have, and a claim mount of old;
 *   - datamnt_adopt_problem(old, pods) is 0 or 1, with a message when 1, and 0 for no pods;
 *   - datamnt_claim_pods(old, "pvcs", pods) makes at most one pod per claim listed, and
 *     datamnt_adopt_problem takes them.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "webhook/datamnt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const cJSON *old, *new, *m, *claim = NULL;
    cJSON *left;
    const char *ctr = NULL, *p, *base;
    cJSON *doc = NULL;
    char why[512];
    int bad;

    if (kjson_parse((const char *)data, size, NULL, &doc, NULL, NULL) != KERR_OK)
        return 0;
    old = kjson_get_obj(doc, "old");
    new = kjson_get_obj(doc, "new");
    p = kjson_get_str(doc, "p");
    base = kjson_get_str(doc, "base");
    if (p && base)
        (void)datamnt_below(p, base);
    if (p && (!datamnt_below(p, p) || !datamnt_below(p, "/")))
        abort();
    m = datamnt_covers(old, new, &ctr, &claim);
    if (m && (!ctr || !claim || !datamnt_container(new, ctr) ||
              datamnt_has_mount(datamnt_container(old, ctr), m) ||
              !datamnt_has_mount(datamnt_container(old, ctr), claim)))
        abort();
    why[0] = '\0';
    bad = datamnt_adopt_problem(old, kjson_get_arr(doc, "pods"), why, sizeof(why));
    if ((bad != 0 && bad != 1) || (bad && !why[0]) || datamnt_adopt_problem(old, NULL, why, 8))
        abort();
    left = datamnt_claim_pods(old, kjson_get_arr(doc, "pvcs"), kjson_get_arr(doc, "pods"));
    if (left && cJSON_GetArraySize(left) > cJSON_GetArraySize(kjson_get_arr(doc, "pvcs")))
        abort();
    (void)datamnt_adopt_problem(new, left, why, sizeof(why));
    cJSON_Delete(left);
    cJSON_Delete(doc);
    return 0;
}
