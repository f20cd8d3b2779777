/*
 * libFuzzer target: kube-sim's parsers of what clients send in requests:
 * ?labelSelector= strings, metav1.LabelSelector JSON (namespaceSelector,
 * objectSelector), ?fieldSelector= strings, and kubectl's protobuf bodies.
 * Every parsed selector is matched, rendered and freed. The first byte picks
 * the parser.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/kjson.h"
#include "tests/kube-sim/fsel.h"
#include "tests/kube-sim/pb.h"
#include "tests/kube-sim/sel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char labels_json[] = "{\"app\":\"web\",\"tier\":\"front\",\"n\":\"3\",\"a.b/c\":\"\"}";
static const char object_json[] = "{\"metadata\":{\"name\":\"x\",\"namespace\":\"ns\","
                                  "\"labels\":{\"app\":\"web\"}},\"spec\":{\"n\":3,\"b\":true}}";

static void label_string(const char *text, const cJSON *labels)
{
    struct ksim_sel *sel = NULL;
    struct buf b;

    if (ksim_sel_parse(text, &sel, NULL) != KERR_OK)
        return;
    (void)ksim_sel_matches(sel, labels);
    (void)ksim_sel_matches(sel, NULL);
    buf_init(&b, 1u << 20);
    (void)ksim_sel_to_string(sel, &b);
    buf_release(&b);
    ksim_sel_free(sel);
}

static void label_json(const char *text, size_t len, const cJSON *labels)
{
    struct ksim_sel *sel = NULL;
    cJSON *doc = NULL;

    if (kjson_parse(text, len, NULL, &doc, NULL, NULL) != KERR_OK)
        return;
    if (ksim_sel_from_json(doc, (int)(len & 1), &sel, NULL) == KERR_OK) {
        (void)ksim_sel_matches(sel, labels);
        ksim_sel_free(sel);
    }
    cJSON_Delete(doc);
}

static void field_string(const char *text, const cJSON *obj)
{
    struct ksim_fsel *fs = NULL;

    if (ksim_fsel_parse(text, &fs, NULL) != KERR_OK)
        return;
    (void)ksim_fsel_matches(fs, obj);
    ksim_fsel_free(fs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *labels = NULL, *obj = NULL, *decoded = NULL;
    char *text;

    if (size < 1 || size > 64 * 1024)
        return 0;
    text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    kjson_parse(labels_json, sizeof(labels_json) - 1, NULL, &labels, NULL, NULL);
    kjson_parse(object_json, sizeof(object_json) - 1, NULL, &obj, NULL, NULL);
    switch (data[0] % 4) {
    case 0:
        label_string(text, labels);
        break;
    case 1:
        label_json(text, size - 1, labels);
        break;
    case 2:
        field_string(text, obj);
        break;
    default:
        if (ksim_pb_decode(data + 1, size - 1, &decoded, NULL) == KERR_OK)
            cJSON_Delete(decoded);
        break;
    }
    cJSON_Delete(labels);
    cJSON_Delete(obj);
    free(text);
    return 0;
}
