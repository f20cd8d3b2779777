/*
 * libFuzzer target: metric and label names, label values and help texts
 * that reach the metrics registry, and the Go float formatting.
 *
 * Input: 8 bytes read as a double, then up to four NUL-separated strings
 * (metric name, label name, label value, help). Properties checked:
 *   - promtext_format_float gives text that strtod reads back as the value;
 *   - registration succeeds only for valid names;
 *   - the rendered text of one counter is exactly three lines (HELP, TYPE,
 *     the sample), whatever the help text and label value contain.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/metrics.h"
#include "common/promtext.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_float(const uint8_t *data)
{
    char out[PROMTEXT_FLOAT_LEN];
    double d;

    memcpy(&d, data, sizeof(d));
    promtext_format_float(d, out);
    if (isnan(d) ? strcmp(out, "NaN") != 0 : strtod(out, NULL) != d)
        abort();
}

static void check_render(struct metrics_registry *r)
{
    struct buf b;
    size_t lines = 0, i;

    buf_init(&b, 1u << 20);
    if (metrics_render(r, &b, NULL) != KERR_OK)
        abort();
    for (i = 0; i < b.len; i++)
        lines += b.data[i] == '\n';
    if (lines != 3 || b.data[b.len - 1] != '\n' || !strstr(buf_str(&b), "} 1\n"))
        abort();
    buf_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *part[4] = { "", "", "", "" };
    char *text;
    struct metrics_registry *r = NULL;
    struct metrics_vec *v = NULL;
    struct metrics_child *c = NULL;
    size_t i, n = 0;

    if (size < sizeof(double))
        return 0;
    check_float(data);
    text = malloc(size - sizeof(double) + 1);
    if (!text)
        return 0;
    memcpy(text, data + sizeof(double), size - sizeof(double));
    text[size - sizeof(double)] = '\0';
    part[n++] = text;
    for (i = 0; i < size - sizeof(double) && n < 4; i++) {
        if (text[i] == '\0')
            part[n++] = text + i + 1;
    }
    if (metrics_registry_new(&r, NULL) != KERR_OK)
        abort();
    if (metrics_register(r, METRICS_COUNTER, part[0], part[3], (const char *[]){ part[1], NULL },
                         NULL, 0, &v, NULL) == KERR_OK) {
        if (!promtext_valid_name(part[0]) || !promtext_valid_label_name(part[1]))
            abort();
        if (metrics_with(v, (const char *[]){ part[2], NULL }, &c, NULL) != KERR_OK)
            abort();
        metrics_inc(c);
        check_render(r);
    }
    metrics_registry_free(r);
    free(text);
    return 0;
}
