/*
 * fsel - Kubernetes field selectors (?fieldSelector=) for kube-sim:
 * "path=value", "path==value", "path!=value" joined by commas, with the
 * backslash escapes of fields.EscapeValue, evaluated on dotted paths of an
 * object as kube-apiserver's field sets render them.
 *
 * Ownership: ksim_fsel_parse returns a selector the caller OWNS
 * (ksim_fsel_free); other pointers are BORROWED for the call.
 * Thread safety: a parsed selector is immutable and may be shared.
 */
#ifndef KSIM_FSEL_H
#define KSIM_FSEL_H

#include <stddef.h>

#include <cJSON.h>

#include "common/kerr.h"

/* A parsed field selector: the AND of "path op value" terms. */
struct ksim_fsel_req {
    char *path;  /* OWNS, e.g. "metadata.name" */
    char *value; /* OWNS */
    int negate;  /* 1 for != */
};

struct ksim_fsel {
    struct ksim_fsel_req *reqs; /* OWNS */
    size_t n;
};

/*
 * Parse ?fieldSelector=. Empty or NULL selects everything. Values may use
 * the backslash escapes of fields.EscapeValue (\, \= \\). KERR_PARSE on
 * bad syntax. On KERR_OK *out OWNS the selector.
 */
enum kerr ksim_fsel_parse(const char *text, struct ksim_fsel **out, struct kerr_info *err);

/*
 * Value of a dotted field path in obj (BORROWED) as kube-apiserver's field
 * sets render it: strings as they are, numbers in decimal, booleans as
 * "true"/"false"; absent fields are "". Writes at most size bytes into out.
 */
void ksim_fsel_value(const cJSON *obj, const char *path, char *out, size_t size);

/* Does obj match every term? */
int ksim_fsel_matches(const struct ksim_fsel *fs, const cJSON *obj);

/* NULL is a no-op. */
void ksim_fsel_free(struct ksim_fsel *fs);

#endif
