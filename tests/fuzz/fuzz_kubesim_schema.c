/*
 * libFuzzer target: kube-sim's defaulting and OpenAPI validation of custom
 * resources (tests/kube-sim/schemadef, schemaval) on what clients send. The
 * input is a JSON object checked against a fixed schema that uses every
 * keyword kube-sim knows (types, formats, enum, pattern, lengths, bounds,
 * multipleOf, item and property counts, required, anyOf/oneOf/allOf/not,
 * defaults, nullable, list-type set and map), or, when it holds a NUL byte, a schema (before it)
 * and an object (after it). Invariants: defaulting is idempotent, validation
 * answers the same twice, stores no more errors than asked, every stored
 * error has a field and a body, and ratcheting against the object itself
 * finds no more errors.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "tests/kube-sim/schemadef.h"
#include "tests/kube-sim/schemaval.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char schema_json[] =
    "{\"type\":\"object\",\"required\":[\"spec\"],\"properties\":{\"spec\":{\"type\":\"object\","
    "\"required\":[\"n\"],\"maxProperties\":12,\"properties\":{"
    "\"n\":{\"type\":\"integer\",\"format\":\"int32\",\"minimum\":1,\"maximum\":9,"
    "\"multipleOf\":3,\"default\":3},"
    "\"r\":{\"type\":\"number\",\"minimum\":0.5,\"exclusiveMaximum\":true,\"maximum\":1e6},"
    "\"s\":{\"type\":\"string\",\"pattern\":\"^[a-z](\\\\d|-)*$\",\"maxLength\":8,"
    "\"minLength\":1,\"enum\":[\"a\",\"a-1\",5]},"
    "\"t\":{\"type\":\"string\",\"format\":\"date-time\",\"nullable\":true},"
    "\"set\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"set\"},"
    "\"q\":{\"x-kubernetes-int-or-string\":true,\"anyOf\":[{\"type\":\"integer\"},{\"type\":"
    "\"string\"}]},"
    "\"o\":{\"oneOf\":[{\"required\":[\"a\"]},{\"required\":[\"b\"]}],\"not\":{\"required\":["
    "\"c\"]},\"allOf\":[{\"minProperties\":1}],\"type\":\"object\",\"additionalProperties\":{"
    "\"type\":\"boolean\",\"default\":true}},"
    "\"l\":{\"type\":\"array\",\"maxItems\":4,\"minItems\":1,\"uniqueItems\":true,"
    "\"x-kubernetes-list-type\":\"map\",\"x-kubernetes-list-map-keys\":[\"k\",\"ip\"],\"items\":{"
    "\"type\":\"object\",\"default\":{},\"properties\":{\"k\":{\"type\":\"string\",\"default\":"
    "\"v\",\"format\":\"uuid\"},\"ip\":{\"type\":\"string\",\"format\":\"cidr\"}}}},"
    "\"m\":{\"type\":\"object\",\"default\":{\"x\":1},\"properties\":{\"x\":{\"type\":"
    "\"integer\"},\"y\":{\"type\":\"string\",\"default\":\"z\",\"format\":\"byte\"}}}}},"
    "\"status\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}";

static void check(const cJSON *schema, cJSON *obj)
{
    struct ksim_fielderr errs[8];
    char *once, *twice;
    size_t n, again, i;

    ksim_schemadef_prune_nulls(schema, obj);
    if (ksim_schemadef_default(schema, obj) != 0)
        return;
    once = cJSON_PrintUnformatted(obj);
    ksim_schemadef_prune_nulls(schema, obj);
    if (ksim_schemadef_default(schema, obj) != 0) {
        free(once);
        return;
    }
    twice = cJSON_PrintUnformatted(obj);
    if (once && twice && strcmp(once, twice) != 0)
        abort();
    free(once);
    free(twice);
    n = ksim_schemaval_check(schema, obj, NULL, errs, 8);
    again = ksim_schemaval_check(schema, obj, NULL, errs, 8);
    if (n != again)
        abort();
    for (i = 0; i < n && i < 8; i++) {
        if (!errs[i].field[0] || !errs[i].body[0] || !errs[i].reason[0])
            abort();
    }
    /* an update that changes nothing is ratcheted: at most the list-type errors remain */
    if (ksim_schemaval_check(schema, obj, obj, errs, 8) > n)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static cJSON *fixed;
    const char *text = (const char *)data;
    const char *nul = memchr(data, 0, size);
    cJSON *schema = NULL, *obj = NULL;

    if (!fixed)
        fixed = cJSON_Parse(schema_json);
    if (!fixed)
        abort();
    if (nul) {
        size_t n = (size_t)(nul - text);

        if (kjson_parse(text, n, NULL, &schema, NULL, NULL) == KERR_OK &&
            kjson_parse(nul + 1, size - n - 1, NULL, &obj, NULL, NULL) == KERR_OK)
            check(schema, obj);
    } else if (kjson_parse(text, size, NULL, &obj, NULL, NULL) == KERR_OK) {
        check(fixed, obj);
    }
    cJSON_Delete(schema);
    cJSON_Delete(obj);
    return 0;
}
