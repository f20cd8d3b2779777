/*
 * govalue - JSON values printed as kube-apiserver's Go code prints them in
 * validation messages, and the string formats of its OpenAPI validator.
 *
 * A custom resource reaches kube-apiserver's validator as Go values: JSON
 * integers as int64, other numbers as float64, objects as
 * map[string]interface{}, arrays as []interface{}. A field error prints its
 * bad value with %q (strings), %v (numbers, booleans) or %#v (objects,
 * arrays), and enum values with strconv.Quote; these functions produce the
 * same text from cJSON values (an integral number that fits int64 counts as
 * an integer).
 *
 * Formats (k8s.io/kube-openapi pkg/validation/strfmt): date-time, date,
 * byte, uuid, uuid3, uuid4, uuid5, ipv4, ipv6 and cidr are checked; other
 * names are unknown and not checked.
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef KSIM_GOVALUE_H
#define KSIM_GOVALUE_H

#include <stddef.h>

#include <cJSON.h>

/* A fixed-size text being built; what does not fit is cut (p stays NUL-terminated). */
struct ksim_text {
    char *p;
    size_t n, len;
};

/* Start t on p (n > 0 bytes), empty. */
void ksim_text_init(struct ksim_text *t, char *p, size_t n);

/* Append k bytes of s / a formatted string. */
void ksim_text_put(struct ksim_text *t, const char *s, size_t k);
void ksim_text_printf(struct ksim_text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* s as Go's strconv.Quote (%q): "a\"b", "\x00", "\u00a0". */
void ksim_goval_quote(struct ksim_text *t, const char *s);

/* f as Go's %v of a float64: 1, 1.5, 1e+06, 1.5e-05. */
void ksim_goval_float(struct ksim_text *t, double f);

/* 1 when v is a number Go decodes as int64 (into *out), else 0. */
int ksim_goval_int(const cJSON *v, long long *out);

/* The JSON schema type Go's validator sees in v: "string", "integer", "number", ... or "null". */
const char *ksim_goval_type(const cJSON *v);

/* v as a field error prints its bad value: "abc" quoted, 1, 1.5, true, map[...]{...}. */
void ksim_goval_value(struct ksim_text *t, const cJSON *v);

/* 1 when format is one kube-sim checks (names compare without '-' and case), else 0. */
int ksim_goval_format_known(const char *format);

/* 1 when s is valid in format (an unknown format accepts everything), else 0. */
int ksim_goval_format_valid(const char *format, const char *s);

#endif
