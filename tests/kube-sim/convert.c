#include "tests/kube-sim/convert.h"

#include <stdio.h>
#include <string.h>

#include "tests/kube-sim/schemadef.h"

/* events.k8s.io/v1 field, core v1 field. */
static const char *const event_fields[][2] = {
    { "regarding", "involvedObject" },
    { "note", "message" },
    { "reportingController", "reportingComponent" },
    { "deprecatedSource", "source" },
    { "deprecatedFirstTimestamp", "firstTimestamp" },
    { "deprecatedLastTimestamp", "lastTimestamp" },
    { "deprecatedCount", "count" },
};

#define NFIELDS (sizeof(event_fields) / sizeof(event_fields[0]))

int ksim_convert_needed(const struct ksim_rtype *rt)
{
    return !rt->custom && strcmp(rt->group, "events.k8s.io") == 0 &&
           strcmp(rt->plural, "events") == 0;
}

static int rename_keys(cJSON *obj, int from, int to)
{
    cJSON *v;
    size_t i;

    for (i = 0; i < NFIELDS; i++) {
        v = cJSON_DetachItemFromObjectCaseSensitive(obj, event_fields[i][from]);
        if (!v)
            continue;
        cJSON_DeleteItemFromObjectCaseSensitive(obj, event_fields[i][to]);
        if (!cJSON_AddItemToObject(obj, event_fields[i][to], v)) {
            cJSON_Delete(v);
            return -1;
        }
    }
    return 0;
}

int ksim_convert_out(const struct ksim_rtype *rt, cJSON *obj)
{
    if (rt->custom && rt->schema)
        return ksim_schemadef_default(rt->schema, obj);
    return ksim_convert_needed(rt) ? rename_keys(obj, 1, 0) : 0;
}

int ksim_convert_in(const struct ksim_rtype *rt, cJSON *obj)
{
    if (!ksim_convert_needed(rt))
        return 0;
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "apiVersion");
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "kind");
    if (!cJSON_AddStringToObject(obj, "apiVersion", "v1") ||
        !cJSON_AddStringToObject(obj, "kind", "Event"))
        return -1;
    return rename_keys(obj, 0, 1);
}

void ksim_convert_field(const struct ksim_rtype *rt, const char *path, char *out, size_t size)
{
    size_t i, n;

    for (i = 0; ksim_convert_needed(rt) && i < NFIELDS; i++) {
        n = strlen(event_fields[i][0]);
        if (strncmp(path, event_fields[i][0], n) == 0 && (path[n] == '\0' || path[n] == '.')) {
            snprintf(out, size, "%s%s", event_fields[i][1], path + n);
            return;
        }
    }
    snprintf(out, size, "%s", path);
}
