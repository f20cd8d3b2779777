/*
 * libFuzzer target: the backup sidecar's port taken from a pod spec warden-controller did not
 * write (controller/core/smport.h): a pod template or a pod a tenant may edit.
 *
 * Input: JSON text, a pod spec. Properties checked:
 *   - smport_check never crashes and answers -1 or the declared port (smport_declared);
 *   - -1 exactly when it says why, and never for a spec with no declared port;
 *   - an accepted spec has only etcd-druid's container names, and no container but
 *     backup-restore declares the port.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "controller/core/smport.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int druids(const char *name)
{
    return name && (strcmp(name, "etcd") == 0 || strcmp(name, "backup-restore") == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[256];
    cJSON *spec = NULL;
    const cJSON *c, *p;
    int port, declared;

    if (kjson_parse((const char *)data, size, NULL, &spec, NULL, NULL) != KERR_OK)
        return 0;
    declared = smport_declared(spec);
    port = smport_check(spec, why, sizeof(why));
    if ((port < 0) != (why[0] != '\0') || (port >= 0 && port != declared) ||
        (declared < 0 && port >= 0) || smport_check(spec, NULL, 0) != port)
        abort();
    if (port >= 0) {
        cJSON_ArrayForEach (c, cJSON_GetObjectItemCaseSensitive(spec, "containers")) {
            const char *n = kjson_get_str(c, "name");
            int64_t v;

            if (!druids(n))
                abort();
            cJSON_ArrayForEach (p, cJSON_GetObjectItemCaseSensitive(c, "ports")) {
                if (strcmp(n, "backup-restore") != 0 &&
                    kjson_get_int64(p, "containerPort", &v) == KERR_OK && v == port)
                    abort();
            }
        }
    }
    cJSON_Delete(spec);
    return 0;
}
