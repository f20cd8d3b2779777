/*
 * ydoc - checked reading of one YAML document (libyaml's document API) with
 * errors that name the file and the line.
 *
 * A reader walks known paths: ydoc_scan_map() reads a mapping once and picks
 * the values of the keys it is asked for (rejecting duplicates of those
 * keys), the ydoc_get_* helpers check scalar types. Every mapping and list
 * may be entered once only, so YAML aliases cannot multiply the work on
 * hostile input (an alias to a scalar is fine). All messages have the form
 * "<path>:<line>: <problem>". The scalars are wiped when the document is
 * released, since documents may hold credentials.
 *
 * Ownership: struct ydoc is embedded by its caller (ydoc_load /
 * ydoc_release); node pointers are BORROWED from it and die with it.
 * Thread safety: none; one owner at a time.
 */
#ifndef COMMON_YDOC_H
#define COMMON_YDOC_H

#include <stddef.h>
#include <yaml.h>

#include "common/kerr.h"

struct ydoc {
    yaml_document_t doc; /* valid when loaded */
    int loaded;
    const char *path;      /* BORROWED: file name for messages */
    unsigned char *seen;   /* OWNS: one byte per node, set once a collection is entered */
    struct kerr_info *err; /* BORROWED, may be NULL: where errors go */
};

/* A key to look up in a mapping; val is BORROWED from the document, NULL when absent. */
struct ydoc_field {
    const char *key;
    yaml_node_t *val;
};

/*
 * Parse the first document of text (len bytes, no NUL needed). path (BORROWED,
 * must outlive d) names the input in messages; errors go to err (BORROWED,
 * may be NULL) for this and every later call. KERR_PARSE "not YAML: ..." with
 * libyaml's line, KERR_NOMEM. Call ydoc_release in every case.
 */
enum kerr ydoc_load(struct ydoc *d, const char *text, size_t len, const char *path,
                    struct kerr_info *err);

/* Wipe every scalar and free the document. Safe to call twice. */
void ydoc_release(struct ydoc *d);

/* The root node, NULL for an empty document. BORROWED. */
yaml_node_t *ydoc_root(struct ydoc *d);

/* 1-based line of n (1 for NULL). */
unsigned long ydoc_line(const yaml_node_t *n);

/* Write "<path>:<line of at>: <fmt...>" to the error and return code. */
enum kerr ydoc_fail(struct ydoc *d, enum kerr code, const yaml_node_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* "a string", "a list", "a mapping". Static. */
const char *ydoc_kind(yaml_node_type_t type);

/* Absent: no node, or a plain null / empty scalar. */
int ydoc_is_null(const yaml_node_t *n);

/*
 * Scalar key k names lit (lower-case ASCII) as Go's encoding/json matches a field name
 * (bytes.EqualFold, Unicode simple folding), which is how etcd reads its YAML configuration:
 * ASCII ignoring case, and U+017F (long s) for s and U+212A (Kelvin sign) for k, the only other
 * characters that fold to ASCII letters.
 */
int ydoc_key_is(const yaml_node_t *k, const char *lit);

/* Set: not null and not an empty mapping or list. */
int ydoc_is_present(const yaml_node_t *n);

/* Check n has the type and was not entered before (alias), and mark it. what names it. */
enum kerr ydoc_enter(struct ydoc *d, yaml_node_t *n, yaml_node_type_t type, const char *what);

/* Enter a mapping and fill f[i].val for the keys in f (other keys are ignored). */
enum kerr ydoc_scan_map(struct ydoc *d, yaml_node_t *map, const char *what, struct ydoc_field *f,
                        size_t nf);

/* A string value BORROWED from the document (NUL-terminated, no inner NUL); NULL when absent. */
enum kerr ydoc_get_view(struct ydoc *d, const struct ydoc_field *f, const char *what,
                        const char **out);

/* As ydoc_get_view, but *out TAKES a malloc'd copy. */
enum kerr ydoc_get_str(struct ydoc *d, const struct ydoc_field *f, const char *what, char **out);

/* true / false (also True, TRUE, False, FALSE); absent = 0. */
enum kerr ydoc_get_bool(struct ydoc *d, const struct ydoc_field *f, const char *what, int *out);

#endif
