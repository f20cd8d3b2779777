#include "common/ydoc.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

unsigned long ydoc_line(const yaml_node_t *n)
{
    return n ? (unsigned long)n->start_mark.line + 1 : 1;
}

yaml_node_t *ydoc_root(struct ydoc *d)
{
    return d->loaded ? yaml_document_get_root_node(&d->doc) : NULL;
}

enum kerr ydoc_fail(struct ydoc *d, enum kerr code, const yaml_node_t *at, const char *fmt, ...)
{
    char msg[KERR_MSG_LEN];
    unsigned long line = ydoc_line(at);
    va_list ap;

    va_start(ap, fmt);
    if (vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
        msg[0] = '\0';
    va_end(ap);
    return kerr_set(d->err, code, "%s:%lu: %s", d->path, line, msg);
}

const char *ydoc_kind(yaml_node_type_t type)
{
    switch (type) {
    case YAML_SCALAR_NODE:
        return "a string";
    case YAML_SEQUENCE_NODE:
        return "a list";
    case YAML_MAPPING_NODE:
        return "a mapping";
    default:
        return "nothing";
    }
}

static int text_eq(const char *s, size_t n, const char *lit)
{
    return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

static int scalar_is(const yaml_node_t *n, const char *lit)
{
    return n && n->type == YAML_SCALAR_NODE &&
           text_eq((const char *)n->data.scalar.value, n->data.scalar.length, lit);
}

/* An absent value: no node, or a plain null / empty scalar. */
int ydoc_is_null(const yaml_node_t *n)
{
    if (!n)
        return 1;
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return 0;
    return n->data.scalar.length == 0 || scalar_is(n, "~") || scalar_is(n, "null") ||
           scalar_is(n, "Null") || scalar_is(n, "NULL");
}

/* Set: not null and not an empty collection. */
int ydoc_is_present(const yaml_node_t *n)
{
    if (ydoc_is_null(n))
        return 0;
    if (n->type == YAML_MAPPING_NODE)
        return n->data.mapping.pairs.top != n->data.mapping.pairs.start;
    if (n->type == YAML_SEQUENCE_NODE)
        return n->data.sequence.items.top != n->data.sequence.items.start;
    return 1;
}

/* Check the type of a collection and that no alias makes us read it twice. */
enum kerr ydoc_enter(struct ydoc *d, yaml_node_t *n, yaml_node_type_t type, const char *what)
{
    size_t i;

    if (n->type != type)
        return ydoc_fail(d, KERR_PARSE, n, "%s must be %s, not %s", what, ydoc_kind(type),
                         ydoc_kind(n->type));
    i = (size_t)(n - d->doc.nodes.start);
    if (d->seen[i])
        return ydoc_fail(d, KERR_PARSE, n, "%s: YAML alias of a node already read (not supported)",
                         what);
    d->seen[i] = 1;
    return KERR_OK;
}

static size_t field_index(const yaml_node_t *key, const struct ydoc_field *f, size_t nf)
{
    size_t i;

    for (i = 0; i < nf; i++) {
        if (scalar_is(key, f[i].key))
            break;
    }
    return i;
}

/* Read a mapping once, picking the values of the keys in f (unknown keys are ignored). */
enum kerr ydoc_scan_map(struct ydoc *d, yaml_node_t *map, const char *what, struct ydoc_field *f,
                        size_t nf)
{
    yaml_node_pair_t *p;
    yaml_node_t *key;
    enum kerr rc;
    size_t i;

    rc = ydoc_enter(d, map, YAML_MAPPING_NODE, what);
    if (rc != KERR_OK)
        return rc;
    for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        key = yaml_document_get_node(&d->doc, p->key);
        if (!key || key->type != YAML_SCALAR_NODE)
            return ydoc_fail(d, KERR_PARSE, key ? key : map, "%s: keys must be strings", what);
        i = field_index(key, f, nf);
        if (i == nf)
            continue;
        if (f[i].val)
            return ydoc_fail(d, KERR_PARSE, key, "%s: duplicate key \"%s\"", what, f[i].key);
        f[i].val = yaml_document_get_node(&d->doc, p->value);
    }
    return KERR_OK;
}

/* A string field, BORROWED from the document (NUL-terminated); NULL when absent or empty. */
enum kerr ydoc_get_view(struct ydoc *d, const struct ydoc_field *f, const char *what,
                        const char **out)
{
    const yaml_node_t *n = f->val;

    *out = NULL;
    if (ydoc_is_null(n))
        return KERR_OK;
    if (n->type != YAML_SCALAR_NODE)
        return ydoc_fail(d, KERR_PARSE, n, "%s: %s must be a string, not %s", what, f->key,
                         ydoc_kind(n->type));
    if (memchr(n->data.scalar.value, '\0', n->data.scalar.length))
        return ydoc_fail(d, KERR_PARSE, n, "%s: %s contains a NUL byte", what, f->key);
    if (n->data.scalar.length > 0)
        *out = (const char *)n->data.scalar.value;
    return KERR_OK;
}

enum kerr ydoc_get_str(struct ydoc *d, const struct ydoc_field *f, const char *what, char **out)
{
    const char *s;
    enum kerr rc;

    *out = NULL;
    rc = ydoc_get_view(d, f, what, &s);
    if (rc != KERR_OK || !s)
        return rc;
    *out = strdup(s);
    if (!*out)
        return ydoc_fail(d, KERR_NOMEM, f->val, "out of memory");
    return KERR_OK;
}

enum kerr ydoc_get_bool(struct ydoc *d, const struct ydoc_field *f, const char *what, int *out)
{
    const char *s;
    size_t n;
    enum kerr rc;

    *out = 0;
    rc = ydoc_get_view(d, f, what, &s);
    if (rc != KERR_OK || !s)
        return rc;
    n = strlen(s);
    if (text_eq(s, n, "true") || text_eq(s, n, "True") || text_eq(s, n, "TRUE")) {
        *out = 1;
        return KERR_OK;
    }
    if (text_eq(s, n, "false") || text_eq(s, n, "False") || text_eq(s, n, "FALSE"))
        return KERR_OK;
    return ydoc_fail(d, KERR_PARSE, f->val, "%s: %s must be true or false, not \"%.40s\"", what,
                     f->key, s);
}

enum kerr ydoc_load(struct ydoc *d, const char *text, size_t len, const char *path,
                    struct kerr_info *err)
{
    yaml_parser_t p;
    enum kerr rc = KERR_OK;
    size_t nodes;

    memset(d, 0, sizeof(*d));
    d->path = path ? path : "<yaml>";
    d->err = err;
    if (!yaml_parser_initialize(&p))
        return kerr_set(d->err, KERR_NOMEM, "%s: cannot create a YAML parser", d->path);
    yaml_parser_set_input_string(&p, (const unsigned char *)(text ? text : ""), len);
    if (!yaml_parser_load(&p, &d->doc)) {
        rc = kerr_set(d->err, p.error == YAML_MEMORY_ERROR ? KERR_NOMEM : KERR_PARSE,
                      "%s:%lu: not YAML: %s%s%s", d->path, (unsigned long)p.problem_mark.line + 1,
                      p.problem ? p.problem : "syntax error", p.context ? " " : "",
                      p.context ? p.context : "");
        goto out;
    }
    d->loaded = 1;
    nodes = (size_t)(d->doc.nodes.top - d->doc.nodes.start);
    d->seen = calloc(nodes ? nodes : 1, 1);
    if (!d->seen)
        rc = kerr_set(d->err, KERR_NOMEM, "%s: out of memory", d->path);
out:
    yaml_parser_delete(&p);
    return rc;
}

/* Drop the document, wiping every scalar first (they may hold credentials). */
void ydoc_release(struct ydoc *d)
{
    yaml_node_t *n;

    if (d->loaded) {
        for (n = d->doc.nodes.start; n < d->doc.nodes.top; n++) {
            if (n->type == YAML_SCALAR_NODE)
                OPENSSL_cleanse(n->data.scalar.value, n->data.scalar.length);
        }
        yaml_document_delete(&d->doc);
    }
    free(d->seen);
    memset(d, 0, sizeof(*d));
}

int ydoc_key_is(const yaml_node_t *k, const char *lit)
{
    const unsigned char *v = k->data.scalar.value, *end = v + k->data.scalar.length;

    for (; *lit; lit++) {
        if (v < end && *v < 0x80 && tolower(*v) == *lit) {
            v++;
        } else if (*lit == 's' && end - v >= 2 && v[0] == 0xC5 && v[1] == 0xBF) {
            v += 2;
        } else if (*lit == 'k' && end - v >= 3 && v[0] == 0xE2 && v[1] == 0x84 && v[2] == 0xAA) {
            v += 3;
        } else {
            return 0;
        }
    }
    return v == end;
}
