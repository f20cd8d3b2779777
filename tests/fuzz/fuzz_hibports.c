/*
 * libFuzzer target: what hibernation and the ops-task executor read from
 * objects they did not write.
 *
 * Input: JSON text taken as the client Service (and, whole, as an
 * EtcdOpsTask). Properties checked:
 *   - the Service state, the cut and the restore never crash;
 *   - a cut Service has neither client nor server port and reads back as
 *     cut (its ports remembered);
 *   - for a Service without the removed-ports annotation whose client and
 *     server ports come before the others (etcd-druid's order), restoring
 *     the cut gives back exactly the ports it had, byte for byte;
 *   - reading a task's spec and the duplicate check never crash.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "controller/hibernation/hib.h"
#include "controller/hibernation/otask.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int has_name(const cJSON *ports, const char *name)
{
    const cJSON *p;

    cJSON_ArrayForEach (p, ports) {
        const char *n = kjson_get_str(p, "name");
        if (n && strcmp(n, name) == 0)
            return 1;
    }
    return 0;
}

/* The client/server ports all come before any other port. */
static int druid_order(const cJSON *ports)
{
    const cJSON *p;
    int other = 0;

    cJSON_ArrayForEach (p, ports) {
        const char *n = kjson_get_str(p, "name");
        int cut = n && (strcmp(n, "client") == 0 || strcmp(n, "server") == 0);
        if (cut && other)
            return 0;
        other |= !cut;
    }
    return 1;
}

static void check_roundtrip(const cJSON *svc, const cJSON *cut)
{
    cJSON *back = NULL;
    char *a = NULL, *b = NULL;

    if (hib_ports_restore(cut, &back, NULL) != KERR_OK)
        abort();
    if (kjson_print(kjson_get(svc, "spec.ports"), &a, NULL, NULL) == KERR_OK &&
        kjson_print(kjson_get(back, "spec.ports"), &b, NULL, NULL) == KERR_OK && strcmp(a, b) != 0)
        abort();
    free(a);
    free(b);
    cJSON_Delete(back);
}

static void check_service(const cJSON *svc)
{
    cJSON *cut = NULL;
    int remembered = 0, had = 0;

    hib_svc_state(svc, &remembered);
    had = remembered;
    if (hib_ports_cut(svc, &cut, NULL) != KERR_OK)
        return;
    if (has_name(kjson_get_arr(cut, "spec.ports"), "client") ||
        has_name(kjson_get_arr(cut, "spec.ports"), "server") ||
        hib_svc_state(cut, &remembered) != HIBPLAN_SVC_CUT || !remembered)
        abort();
    if (!had && druid_order(kjson_get_arr(svc, "spec.ports")))
        check_roundtrip(svc, cut);
    cJSON_Delete(cut);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *obj = NULL, *items;
    struct otask_spec sp;

    if (kjson_parse((const char *)data, size, NULL, &obj, NULL, NULL) != KERR_OK)
        return 0;
    check_service(obj);
    otask_spec_read(obj, &sp, NULL);
    items = cJSON_CreateArray();
    if (items && cJSON_AddItemReferenceToArray(items, obj))
        otask_check_duplicate(obj, items, NULL);
    cJSON_Delete(items);
    cJSON_Delete(obj);
    return 0;
}
