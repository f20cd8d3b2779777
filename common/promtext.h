/*
 * promtext - the pieces of the Prometheus text exposition format 0.0.4
 * that common/metrics renders with: name syntax, Go's float syntax,
 * escaping of help texts and label values, and one sample line.
 *
 * Metric names are [a-zA-Z_:][a-zA-Z0-9_:]*, label names
 * [a-zA-Z_][a-zA-Z0-9_]*. Values are written as client_golang writes them
 * (strconv.FormatFloat(v, 'g', -1, 64): shortest round-trip digits, "+Inf",
 * "-Inf", "NaN").
 *
 * Thread safety: pure functions, reentrant; buffers belong to the caller.
 */
#ifndef COMMON_PROMTEXT_H
#define COMMON_PROMTEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/buf.h"
#include "common/kerr.h"

/* Buffer size for promtext_format_float. */
#define PROMTEXT_FLOAT_LEN 32

/* True for a valid metric name / label name (NULL and "" are not). */
bool promtext_valid_name(const char *name);
bool promtext_valid_label_name(const char *name);

/* v in Go's strconv 'g' shortest syntax ("0.005", "1e+06", "+Inf", "NaN") into out. */
void promtext_format_float(double v, char out[PROMTEXT_FLOAT_LEN]);

/* Append s (BORROWED) to b escaping '\\' and '\n' (help texts), and '"' too
 * when quoted (label values). KERR_TOOBIG at the buffer's cap. */
enum kerr promtext_append_escaped(struct buf *b, const char *s, bool quoted)
    __attribute__((warn_unused_result));

/*
 * Append one sample line to b:
 *     <name><suffix>{<labels[0]>="<values[0]>",...[,le="<le>"]} <value>\n
 * with the label values escaped; no braces when there are neither labels
 * nor le. labels and values hold nlabels entries each; every pointer is
 * BORROWED; suffix may be "" and le NULL. KERR_TOOBIG at the buffer's cap.
 */
enum kerr promtext_append_sample(struct buf *b, const char *name, const char *suffix,
                                 const char *const *labels, const char *const *values,
                                 size_t nlabels, const char *le, double value)
    __attribute__((warn_unused_result));

#endif
