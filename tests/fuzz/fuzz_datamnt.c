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
 *   - datamnt_claim_pods(old, "etcd", "pvcs", pods) makes at most one pod per claim listed, and
 *     datamnt_adopt_problem takes them;
 *   - old as the webhook's cache keeps it (lookup_sts_project with datamnt_project) gives the
 *     data-directory rule (webhook/cfgguard.h) the answers old does: the claim under p and
 *     under base, whether etcd mounts a claim, and etcd-druid's place.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "webhook/cfgguard.h"
#include "webhook/datamnt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The same claim, or none on both. */
static int same_claim(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* The data-directory rule reads old and its projection alike (the property above). */
static void check_projection(const cJSON *old, const char *p, const char *base)
{
    static struct cfgguard_dirs d; /* the fuzzer runs one input at a time */
    cJSON *proj;

    if (!old || !(proj = lookup_sts_project(old)))
        return;
    if (datamnt_project(proj, old)) {
        cJSON_Delete(proj);
        return;
    }
    snprintf(d.data, sizeof(d.data), "%s", p ? p : "");
    snprintf(d.wal, sizeof(d.wal), "%s", base ? base : "");
    if (!same_claim(cfgguard_claim_of(old, p), cfgguard_claim_of(proj, p)) ||
        !same_claim(cfgguard_claim_of(old, base), cfgguard_claim_of(proj, base)) ||
        cfgguard_etcd_on_claim(old) != cfgguard_etcd_on_claim(proj) ||
        cfgguard_druid_place(old, &d) != cfgguard_druid_place(proj, &d))
        abort();
    cJSON_Delete(proj);
}

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
    left = datamnt_claim_pods(old, kjson_get_str(doc, "etcd"), kjson_get_arr(doc, "pvcs"),
                              kjson_get_arr(doc, "pods"));
    if (left && cJSON_GetArraySize(left) > cJSON_GetArraySize(kjson_get_arr(doc, "pvcs")))
        abort();
    (void)datamnt_adopt_problem(new, left, why, sizeof(why));
    cJSON_Delete(left);
    check_projection(old, p, base);
    cJSON_Delete(doc);
    return 0;
}
