/*
 * libFuzzer target: kube-sim's pruning of custom resources (tests/kube-sim/prune)
 * on what clients send. The input is a JSON object pruned as a resource of a
 * fixed structural schema (properties, additionalProperties, items,
 * x-kubernetes-preserve-unknown-fields nested, an embedded resource), or, when
 * it holds a NUL byte, a schema (before it) and an object (after it).
 * Invariants: pruning is idempotent (a second pass removes nothing) and every
 * reported path was present.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "common/strlist.h"
#include "tests/kube-sim/prune.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char schema_json[] =
    "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{"
    "\"n\":{\"type\":\"integer\"},\"m\":{\"type\":\"object\",\"additionalProperties\":{"
    "\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}}}},"
    "\"l\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"b\":{"
    "\"type\":\"string\"}},\"x-kubernetes-preserve-unknown-fields\":true}},"
    "\"open\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true,"
    "\"properties\":{\"closed\":{\"type\":\"object\",\"properties\":{\"c\":{}}}}},"
    "\"t\":{\"type\":\"object\",\"x-kubernetes-embedded-resource\":true,\"properties\":{"
    "\"spec\":{\"type\":\"object\"}}}}},"
    "\"status\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}";

static void prune_twice(const cJSON *schema, cJSON *obj)
{
    struct strlist paths, again;

    strlist_init(&paths);
    strlist_init(&again);
    if (ksim_prune(schema, obj, &paths) == 0 && ksim_prune(schema, obj, &again) == 0 &&
        again.n != 0)
        abort();
    strlist_release(&paths);
    strlist_release(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static cJSON *fixed;
    const char *text = (const char *)data;
    const char *nul = memchr(data, 0, size);
    cJSON *schema = NULL, *obj = NULL;

    if (!fixed)
        fixed = cJSON_Parse(schema_json);
    if (nul) {
        size_t n = (size_t)(nul - text);

        if (kjson_parse(text, n, NULL, &schema, NULL, NULL) == KERR_OK &&
            kjson_parse(nul + 1, size - n - 1, NULL, &obj, NULL, NULL) == KERR_OK)
            prune_twice(schema, obj);
    } else if (kjson_parse(text, size, NULL, &obj, NULL, NULL) == KERR_OK) {
        prune_twice(fixed, obj);
    }
    cJSON_Delete(schema);
    cJSON_Delete(obj);
    return 0;
}
