#include "common/promtext.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_alpha_(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

bool promtext_valid_name(const char *name)
{
    size_t i;

    if (!name || !name[0])
        return false;
    for (i = 0; name[i]; i++) {
        if (!is_alpha_(name[i]) && name[i] != ':' && !(i > 0 && is_digit(name[i])))
            return false;
    }
    return true;
}

bool promtext_valid_label_name(const char *name)
{
    size_t i;

    if (!name || !name[0])
        return false;
    for (i = 0; name[i]; i++) {
        if (!is_alpha_(name[i]) && !(i > 0 && is_digit(name[i])))
            return false;
    }
    return true;
}

/* The shortest "%.*e" text of v that reads back as v. */
static void shortest_e(double v, char *e, size_t size)
{
    int p;

    for (p = 0; p < 17; p++) {
        snprintf(e, size, "%.*e", p, v);
        if (strtod(e, NULL) == v)
            return;
    }
}

/*
 * Go's strconv.FormatFloat(v, 'g', -1, 64), which client_golang uses: the
 * shortest digits that read back as v, in %e form when the decimal
 * exponent is < -4 or >= 6 ("1e+06", "1.5e-05"), else in %f form.
 */
void promtext_format_float(double v, char out[PROMTEXT_FLOAT_LEN])
{
    char e[PROMTEXT_FLOAT_LEN], digits[24], *p, *mark;
    size_t nd = 0, i, pos = 0;
    long exp;

    if (isnan(v) || isinf(v) || v == 0) {
        snprintf(out, PROMTEXT_FLOAT_LEN, "%s",
                 isnan(v) ? "NaN"
                 : v > 0  ? "+Inf"
                 : v < 0  ? "-Inf"
                          : "0");
        return;
    }
    shortest_e(v, e, sizeof(e));
    mark = strchr(e, 'e');
    exp = strtol(mark + 1, NULL, 10);
    if (exp < -4 || exp >= 6) {
        snprintf(out, PROMTEXT_FLOAT_LEN, "%s", e);
        return;
    }
    for (p = e; p < mark; p++) {
        if (is_digit(*p))
            digits[nd++] = *p;
    }
    if (v < 0)
        out[pos++] = '-';
    if (exp < 0) {
        out[pos++] = '0';
        out[pos++] = '.';
        for (i = 1; i < (size_t)-exp; i++)
            out[pos++] = '0';
    }
    for (i = 0; i < nd || (exp >= 0 && i <= (size_t)exp); i++) {
        if (exp >= 0 && i == (size_t)exp + 1)
            out[pos++] = '.';
        out[pos++] = i < nd ? digits[i] : '0';
    }
    out[pos] = '\0';
}

/* Append s escaping '\\' and '\n', and '"' too when quoted. */
enum kerr promtext_append_escaped(struct buf *b, const char *s, bool quoted)
{
    enum kerr rc = KERR_OK;
    size_t start = 0, i;
    const char *rep;

    for (i = 0; rc == KERR_OK && s[i]; i++) {
        rep = s[i] == '\\' ? "\\\\" : s[i] == '\n' ? "\\n" : quoted && s[i] == '"' ? "\\\"" : NULL;
        if (!rep)
            continue;
        rc = buf_append(b, s + start, i - start);
        if (rc == KERR_OK)
            rc = buf_appends(b, rep);
        start = i + 1;
    }
    if (rc == KERR_OK)
        rc = buf_appends(b, s + start);
    return rc;
}

enum kerr promtext_append_sample(struct buf *b, const char *name, const char *suffix,
                                 const char *const *labels, const char *const *values,
                                 size_t nlabels, const char *le, double value)
{
    char num[PROMTEXT_FLOAT_LEN];
    enum kerr rc = buf_appendf(b, "%s%s", name, suffix);
    size_t i;

    if (rc == KERR_OK && (nlabels || le))
        rc = buf_append(b, "{", 1);
    for (i = 0; rc == KERR_OK && i < nlabels; i++) {
        rc = buf_appendf(b, "%s%s=\"", i ? "," : "", labels[i]);
        if (rc == KERR_OK)
            rc = promtext_append_escaped(b, values[i], true);
        if (rc == KERR_OK)
            rc = buf_append(b, "\"", 1);
    }
    if (rc == KERR_OK && le)
        rc = buf_appendf(b, "%sle=\"%s\"", nlabels ? "," : "", le);
    if (rc == KERR_OK && (nlabels || le))
        rc = buf_append(b, "}", 1);
    promtext_format_float(value, num);
    if (rc == KERR_OK)
        rc = buf_appendf(b, " %s\n", num);
    return rc;
}
