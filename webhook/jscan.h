/*
 * jscan - a one-pass JSON filter that accepts exactly what cJSON's parser
 * accepts and copies out only the parts a reader asks for.
 *
 * A review of a StatefulSet is mostly pod template: the decisions read the
 * envelope and the objects' metadata. jscan_filter walks the text once,
 * validating every byte the way cJSON_ParseWithLengthOpts does (the same
 * literals, strings with the same escape and surrogate rules, numbers as
 * strtod reads the characters cJSON hands it, the same nesting limit, a
 * UTF-8 byte-order mark skipped, bytes <= 32 as whitespace), and writes a
 * smaller JSON text holding only what a struct jscan_keep names. Parsing
 * that text with cJSON gives a tree in which every path the schema keeps
 * reads exactly as in the tree of the whole text: kept members keep their
 * order and duplicates (cJSON's lookups take the first), keys are matched
 * as cJSON matches them (decoded, up to the first NUL).
 *
 * It also reports the first kept string (key or value) that decodes to
 * text with a NUL character (an escaped \u0000, a \u escape cJSON reads as
 * 0, or a raw NUL byte): a C string read from the tree would stop there.
 *
 * When jscan_filter refuses a text, cJSON refuses it too; callers that need
 * cJSON's exact error position parse the text with cJSON for the message.
 *
 * Pure functions, reentrant; the schemas are static read-only data.
 */
#ifndef WEBHOOK_JSCAN_H
#define WEBHOOK_JSCAN_H

#include <stddef.h>

#include "common/buf.h"
#include "common/kerr.h"

/* cJSON's CJSON_NESTING_LIMIT: arrays and objects nested deeper are refused. */
#define JSCAN_NESTING_LIMIT 1000

enum jscan_mode {
    JSCAN_ALL = 0,  /* the whole value, verbatim */
    JSCAN_MEMBERS,  /* an object: only the listed members (other values verbatim) */
    JSCAN_ELEMENTS, /* an array: every element, each filtered by elem (other values verbatim) */
};

struct jscan_member;

/* What to keep of one value. */
struct jscan_keep {
    enum jscan_mode mode;
    const struct jscan_member *members; /* JSCAN_MEMBERS: ends with a NULL key */
    const struct jscan_keep *elem;      /* JSCAN_ELEMENTS */
};

struct jscan_member {
    const char *key;               /* matched against the decoded key up to its first NUL */
    const struct jscan_keep *keep; /* what to keep of its value */
};

/* Outcome of a filter pass. */
struct jscan_result {
    size_t end;    /* offset just past the value (cJSON's return_parse_end) */
    int has_nul;   /* a kept string decodes to text containing NUL */
    size_t nul_at; /* offset of the opening quote of the first such string */
};

/*
 * Validate the JSON value at the start of text (len bytes, need not be
 * NUL-terminated) and, when out is not NULL, append the kept parts to out
 * (no whitespace). Returns KERR_OK with *res filled, KERR_PARSE when cJSON
 * would not parse the text (out then holds garbage), or the error of
 * appending to out (KERR_NOMEM / KERR_TOOBIG). Nothing past the value is
 * read.
 */
enum kerr jscan_filter(const char *text, size_t len, const struct jscan_keep *keep, struct buf *out,
                       struct jscan_result *res);

#endif
