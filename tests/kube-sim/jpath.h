/*
 * jpath - the JSONPath subset of CRD additionalPrinterColumns (.a.b, [n],
 * ['key'], [*], [?(@.k=="v")], [?(@.k!=v)], optionally in {} and after $),
 * and the text kubectl prints for the value it selects.
 *
 * Ownership: inputs are BORROWED; values returned point into obj.
 * Thread safety: reentrant.
 */
#ifndef KSIM_JPATH_H
#define KSIM_JPATH_H

#include <stddef.h>

#include <cJSON.h>

/*
 * The first value the JSONPath expression (a CRD column jsonPath such as
 * .status.conditions[?(@.type=="Ready")].status) selects in obj, or NULL
 * (path NULL or malformed, nothing selected). BORROWED from obj.
 */
const cJSON *ksim_jpath_eval(const cJSON *obj, const char *path);

/*
 * v as a table cell into out (size bytes): strings as they are, booleans
 * and numbers (%.15g) as text, objects and arrays as compact JSON, and
 * "<none>" for NULL or null.
 */
void ksim_jpath_text(const cJSON *v, char *out, size_t size);

#endif
