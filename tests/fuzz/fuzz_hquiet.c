/*
 * libFuzzer target: the revision check's quiet-second decision
 * (controller/hibernation/hquiet.h), fed the sidecar's answers it did not write.
 *
 * Input: JSON text {"stored": Snapshot, "answer": Snapshot, "date": "<HTTP Date>",
 * "waited": bool, "storedRev": N, "answerRev": N}. Properties checked:
 *   - nothing crashes; a wait is always 1..HQUIET_MS ms, and only with HQUIET_WAIT;
 *   - a higher revision is always HQUIET_MOVED; HQUIET_QUIET without a wait needs both
 *     times readable and at least HQUIET_MS apart; a Date is a whole second.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/kjson.h"
#include "controller/hibernation/hquiet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hquiet_in in = { 0 };
    cJSON *doc = NULL;
    enum hquiet_verdict v;
    int64_t n, start;
    long w = -1;

    if (kjson_parse((const char *)data, size, NULL, &doc, NULL, NULL) != KERR_OK)
        return 0;
    in.stored = kjson_get_obj(doc, "stored");
    in.answer = kjson_get_obj(doc, "answer");
    in.date_ms = hquiet_date_ms(kjson_get_str(doc, "date"));
    in.waited = cJSON_IsTrue(cJSON_GetObjectItem(doc, "waited"));
    in.stored_rev = kjson_get_int64(doc, "storedRev", &n) == KERR_OK ? n : 0;
    in.answer_rev = kjson_get_int64(doc, "answerRev", &n) == KERR_OK ? n : 0;
    start = hquiet_snapshot_ms(in.answer);
    if (in.date_ms != -1 && (in.date_ms < 0 || in.date_ms % 1000 != 0))
        abort();
    v = hquiet_decide(&in, &w);
    if ((v == HQUIET_WAIT) != (w > 0) || w < 0 || w > HQUIET_MS)
        abort();
    if ((in.answer_rev > in.stored_rev) != (v == HQUIET_MOVED))
        abort();
    if (v == HQUIET_QUIET && !in.waited &&
        (start < 0 || in.date_ms < 0 || in.date_ms - start < HQUIET_MS))
        abort();
    if (hquiet_verdict_name(v)[0] == '?')
        abort();
    cJSON_Delete(doc);
    return 0;
}
