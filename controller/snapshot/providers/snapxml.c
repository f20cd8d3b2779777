/* snapxml - S3 and ABS XML answers (see snapxml.h). */
#include "controller/snapshot/providers/snapxml.h"

#include <curl/curl.h>
#include <expat.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto.h"
#include "common/ktime.h"

/* Deeper documents are refused (S3 and ABS answers are a few levels deep). */
#define MAX_DEPTH 256
/* Separates a namespace URI from the local name in expat's element names; a space occurs
 * in no XML name, so the local name is what follows the last one. */
#define NS_SEP ' '

/* The element tree of one answer: elements by local name, and their text. */
struct node {
    char *name; /* OWNS: the element's local name; NULL for a text node */
    char *text; /* OWNS: a text node's characters (len bytes, not terminated) */
    size_t len;
    size_t cap;
    struct node *parent;
    struct node *children; /* OWNS the list */
    struct node *last;
    struct node *next;
};

struct doc {
    XML_Parser parser;
    struct node *root; /* OWNS */
    struct node *cur;  /* the open element */
    int depth;
    enum kerr rc; /* KERR_OK, or why a handler stopped the parser */
};

static void node_free(struct node *n)
{
    while (n) {
        struct node *next = n->next;
        node_free(n->children);
        free(n->name);
        free(n->text);
        free(n);
        n = next;
    }
}

static void doc_stop(struct doc *d, enum kerr rc)
{
    if (d->rc == KERR_OK) {
        d->rc = rc;
    }
    XML_StopParser(d->parser, XML_FALSE);
}

static void add_child(struct doc *d, struct node *n)
{
    n->parent = d->cur;
    if (d->cur == NULL) {
        d->root = n;
    } else if (d->cur->last) {
        d->cur->last->next = n;
        d->cur->last = n;
    } else {
        d->cur->children = d->cur->last = n;
    }
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
    struct doc *d = ud;
    const char *local = strrchr(name, NS_SEP);
    (void)atts;
    if (d->rc != KERR_OK) {
        return;
    }
    if (d->depth >= MAX_DEPTH) {
        doc_stop(d, KERR_PARSE);
        return;
    }
    struct node *n = calloc(1, sizeof *n);
    if (n == NULL || (n->name = strdup(local ? local + 1 : name)) == NULL) {
        free(n);
        doc_stop(d, KERR_NOMEM);
        return;
    }
    add_child(d, n);
    d->cur = n;
    d->depth++;
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
    struct doc *d = ud;
    (void)name;
    if (d->rc == KERR_OK && d->cur) {
        d->cur = d->cur->parent;
        d->depth--;
    }
}

/* Character data (text, CDATA, character references) joins the open element's last text node. */
static void XMLCALL on_text(void *ud, const XML_Char *s, int len)
{
    struct doc *d = ud;
    struct node *t = d->cur ? d->cur->last : NULL;
    if (d->rc != KERR_OK || d->cur == NULL || len <= 0) {
        return;
    }
    if (t == NULL || t->name != NULL) {
        if ((t = calloc(1, sizeof *t)) == NULL) {
            doc_stop(d, KERR_NOMEM);
            return;
        }
        add_child(d, t);
    }
    if (t->len + (size_t)len > t->cap) {
        size_t cap = t->cap ? t->cap : 64;
        while (cap < t->len + (size_t)len) {
            cap *= 2;
        }
        char *grown = realloc(t->text, cap);
        if (grown == NULL) {
            doc_stop(d, KERR_NOMEM);
            return;
        }
        t->text = grown;
        t->cap = cap;
    }
    memcpy(t->text + t->len, s, (size_t)len);
    t->len += (size_t)len;
}

/* No entity is ever expanded: a document declaring one is refused. */
static void XMLCALL on_entity_decl(void *ud, const XML_Char *name, int is_param,
                                   const XML_Char *value, int value_len, const XML_Char *base,
                                   const XML_Char *system_id, const XML_Char *public_id,
                                   const XML_Char *notation)
{
    (void)name, (void)is_param, (void)value, (void)value_len, (void)base, (void)system_id;
    (void)public_id, (void)notation;
    doc_stop(ud, KERR_PARSE);
}

static void doc_free(struct doc *d)
{
    node_free(d->root);
    d->root = NULL;
}

/* Parse the answer into d (doc_free it on KERR_OK). Nothing is loaded from outside. */
static enum kerr parse_doc(const char *xml, size_t len, struct doc *d, struct kerr_info *err)
{
    memset(d, 0, sizeof *d);
    if (len > SNAPXML_MAX_BODY || len > (size_t)0x7fffffff) {
        return kerr_set(err, KERR_TOOBIG, "XML answer too large");
    }
    d->parser = XML_ParserCreateNS(NULL, NS_SEP);
    if (d->parser == NULL) {
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    XML_SetUserData(d->parser, d);
    XML_SetElementHandler(d->parser, on_start, on_end);
    XML_SetCharacterDataHandler(d->parser, on_text);
    XML_SetEntityDeclHandler(d->parser, on_entity_decl);
    XML_SetParamEntityParsing(d->parser, XML_PARAM_ENTITY_PARSING_NEVER);
    enum XML_Status st = XML_Parse(d->parser, xml, (int)len, XML_TRUE);
    XML_ParserFree(d->parser);
    d->parser = NULL;
    if (st != XML_STATUS_OK || d->rc != KERR_OK || d->root == NULL) {
        enum kerr rc = d->rc == KERR_NOMEM ? KERR_NOMEM : KERR_PARSE;
        doc_free(d);
        return kerr_set(err, rc, rc == KERR_NOMEM ? NULL : "answer is not XML");
    }
    return KERR_OK;
}

static bool is(const struct node *n, const char *name)
{
    return n && n->name && strcmp(n->name, name) == 0;
}

static const struct node *child(const struct node *n, const char *name)
{
    for (const struct node *c = n ? n->children : NULL; c; c = c->next) {
        if (is(c, name)) {
            return c;
        }
    }
    return NULL;
}

/* The text of n and its descendants, in document order, into out (when not NULL); its length. */
static size_t content(const struct node *n, char *out)
{
    if (n->name == NULL) {
        if (out) {
            memcpy(out, n->text, n->len);
        }
        return n->len;
    }
    size_t len = 0;
    for (const struct node *c = n->children; c; c = c->next) {
        len += content(c, out ? out + len : NULL);
    }
    return len;
}

/* Text of n as a malloc'd string ("" for an empty element), NULL without memory. */
static char *text_of(const struct node *n)
{
    size_t len = content(n, NULL);
    char *s = malloc(len + 1);
    if (s) {
        content(n, s);
        s[len] = '\0';
    }
    return s;
}

/* Text of child name into out[n]; "" when absent. */
static void child_text(const struct node *n, const char *name, char *out, size_t size)
{
    const struct node *c = child(n, name);
    char *t = c ? text_of(c) : NULL;
    snprintf(out, size, "%s", t ? t : "");
    free(t);
}

static int parse_size(const char *s, int64_t *out)
{
    char *end = NULL;
    if (s[0] < '0' || s[0] > '9') {
        return -1;
    }
    long long v = strtoll(s, &end, 10);
    if (*end != '\0' || v < 0) {
        return -1;
    }
    *out = v;
    return 0;
}

/* "abc" or "\"abc\"" -> etag; md5 too when it is 32 hex digits. */
static void set_etag(struct ostore_obj *o, const char *raw)
{
    size_t n = strlen(raw);
    if (n >= 2 && raw[0] == '"' && raw[n - 1] == '"') {
        raw++;
        n -= 2;
    }
    snprintf(o->etag, sizeof o->etag, "%.*s", (int)(n < sizeof o->etag ? n : 0), raw);
    if (n == 32 && strspn(o->etag, "0123456789abcdef") == 32) {
        memcpy(o->md5, o->etag, 33);
    }
}

static void page_from(const struct node *root, const char *truncated, const char *next,
                      const char *next_version, struct snapxml_page *page)
{
    char t[16];
    child_text(root, truncated, t, sizeof t);
    page->truncated = strcmp(t, "true") == 0;
    const struct node *n = next ? child(root, next) : NULL;
    const struct node *v = next_version ? child(root, next_version) : NULL;
    page->next = n ? text_of(n) : NULL;
    page->next_version = v ? text_of(v) : NULL;
    if (page->next && page->next[0] == '\0') {
        free(page->next);
        page->next = NULL;
    }
}

void snapxml_page_release(struct snapxml_page *p)
{
    if (p) {
        free(p->next);
        free(p->next_version);
        memset(p, 0, sizeof *p);
    }
}

/* One S3 Contents / Version / DeleteMarker element. */
static enum kerr s3_entry(const struct node *c, bool marker, struct ostore_list *out,
                          struct kerr_info *err)
{
    char size[32];
    char mtime[64];
    char etag[96];
    struct ostore_obj o = { 0 };
    struct timespec ts;
    const struct node *k = child(c, "Key");
    const struct node *v = child(c, "VersionId");
    child_text(c, "Size", size, sizeof size);
    child_text(c, "LastModified", mtime, sizeof mtime);
    child_text(c, "ETag", etag, sizeof etag);
    if (k == NULL || (!marker && parse_size(size, &o.size) != 0)) {
        return kerr_set(err, KERR_PARSE, "S3 listing entry without Key or Size");
    }
    if (marker) {
        o.size = -1;
        snprintf(o.etag, sizeof o.etag, "delete-marker");
    } else {
        set_etag(&o, etag);
    }
    if (ktime_parse(mtime, &ts, NULL) == KERR_OK) {
        o.mtime = (int64_t)ts.tv_sec;
    }
    o.key = text_of(k);
    o.version_id = v ? text_of(v) : NULL;
    enum kerr rc = (o.key && (!v || o.version_id)) ? ostore_list_add(out, &o, err)
                                                   : kerr_set(err, KERR_NOMEM, NULL);
    free(o.key);
    free(o.version_id);
    return rc;
}

static enum kerr s3_listing(const char *xml, size_t len, const char *root_name, bool versions,
                            struct ostore_list *out, struct snapxml_page *page,
                            struct kerr_info *err)
{
    struct doc doc;
    memset(page, 0, sizeof *page);
    enum kerr rc = parse_doc(xml, len, &doc, err);
    if (rc != KERR_OK) {
        return rc;
    }
    const struct node *root = doc.root;
    if (!is(root, root_name)) {
        rc = kerr_set(err, KERR_PARSE, "expected <%s>, got <%.32s>", root_name, root->name);
    }
    for (const struct node *c = root->children; rc == KERR_OK && c; c = c->next) {
        if (is(c, versions ? "Version" : "Contents")) {
            rc = s3_entry(c, false, out, err);
        } else if (versions && is(c, "DeleteMarker")) {
            rc = s3_entry(c, true, out, err);
        }
    }
    if (rc == KERR_OK) {
        page_from(root, "IsTruncated", versions ? "NextKeyMarker" : "NextContinuationToken",
                  versions ? "NextVersionIdMarker" : NULL, page);
        if (page->truncated && page->next == NULL) {
            rc = kerr_set(err, KERR_PARSE, "truncated S3 listing without a continuation");
        }
    }
    doc_free(&doc);
    if (rc != KERR_OK) {
        snapxml_page_release(page);
    }
    return rc;
}

enum kerr snapxml_s3_list(const char *xml, size_t len, struct ostore_list *out,
                          struct snapxml_page *page, struct kerr_info *err)
{
    return s3_listing(xml, len, "ListBucketResult", false, out, page, err);
}

enum kerr snapxml_s3_versions(const char *xml, size_t len, struct ostore_list *out,
                              struct snapxml_page *page, struct kerr_info *err)
{
    return s3_listing(xml, len, "ListVersionsResult", true, out, page, err);
}

/* x-etcd-snapshot-exclude=true among the Tag children of set. */
static bool tagset_excludes(const struct node *set)
{
    char k[64];
    char v[16];
    for (const struct node *t = set ? set->children : NULL; t; t = t->next) {
        if (!is(t, "Tag")) {
            continue;
        }
        child_text(t, "Key", k, sizeof k);
        child_text(t, "Value", v, sizeof v);
        if (strcmp(k, "x-etcd-snapshot-exclude") == 0 && strcmp(v, "true") == 0) {
            return true;
        }
    }
    return false;
}

enum kerr snapxml_s3_tagging(const char *xml, size_t len, bool *excluded, struct kerr_info *err)
{
    struct doc doc;
    *excluded = false;
    enum kerr rc = parse_doc(xml, len, &doc, err);
    if (rc != KERR_OK) {
        return rc;
    }
    const struct node *root = doc.root;
    if (!is(root, "Tagging")) {
        rc = kerr_set(err, KERR_PARSE, "expected <Tagging>");
    } else {
        *excluded = tagset_excludes(child(root, "TagSet"));
    }
    doc_free(&doc);
    return rc;
}

static const struct node *find_any(const struct node *n, const char *name, int depth)
{
    for (const struct node *c = n; c && depth < 16; c = c->next) {
        if (is(c, name)) {
            return c;
        }
        const struct node *f = find_any(c->children, name, depth + 1);
        if (f) {
            return f;
        }
    }
    return NULL;
}

enum kerr snapxml_find(const char *xml, size_t len, const char *name, char **out,
                       struct kerr_info *err)
{
    struct doc doc;
    *out = NULL;
    enum kerr rc = parse_doc(xml, len, &doc, err);
    if (rc != KERR_OK) {
        return rc;
    }
    const struct node *n = find_any(doc.root, name, 0);
    if (n == NULL) {
        rc = kerr_set(err, KERR_NOTFOUND, "no <%s> in the answer", name);
    } else if ((*out = text_of(n)) == NULL) {
        rc = kerr_set(err, KERR_NOMEM, NULL);
    }
    doc_free(&doc);
    return rc;
}

void snapxml_error(const char *xml, size_t len, char *code, size_t code_n, char *msg, size_t msg_n)
{
    struct doc doc;
    code[0] = '\0';
    msg[0] = '\0';
    if (len == 0 || parse_doc(xml, len, &doc, NULL) != KERR_OK) {
        return;
    }
    const struct node *root = doc.root;
    if (is(root, "Error")) {
        child_text(root, "Code", code, code_n);
        child_text(root, "Message", msg, msg_n);
        char *nl = strchr(msg, '\n');
        if (nl) {
            *nl = '\0';
        }
    }
    doc_free(&doc);
}

int snapxml_md5_b64_to_hex(const char *b64, char hex[33])
{
    unsigned char *d = NULL;
    size_t n = 0;
    hex[0] = '\0';
    if (b64 == NULL || b64[0] == '\0' ||
        crypto_b64_decode(b64, strlen(b64), &d, &n, NULL) != KERR_OK || n != 16) {
        free(d);
        return -1;
    }
    for (size_t i = 0; i < 16; i++) {
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    }
    free(d);
    return 0;
}

static enum kerr abs_entry(const struct node *b, struct ostore_list *out, struct kerr_info *err)
{
    char size[32];
    char mtime[64];
    char md5[64];
    char etag[96];
    struct ostore_obj o = { 0 };
    const struct node *name = child(b, "Name");
    const struct node *props = child(b, "Properties");
    child_text(props, "Content-Length", size, sizeof size);
    child_text(props, "Last-Modified", mtime, sizeof mtime);
    child_text(props, "Content-MD5", md5, sizeof md5);
    child_text(props, "Etag", etag, sizeof etag);
    if (name == NULL || props == NULL || parse_size(size, &o.size) != 0) {
        return kerr_set(err, KERR_PARSE, "ABS blob entry without Name or Content-Length");
    }
    time_t t = curl_getdate(mtime, NULL);
    o.mtime = t > 0 ? (int64_t)t : 0;
    snapxml_md5_b64_to_hex(md5, o.md5);
    snprintf(o.etag, sizeof o.etag, "%.79s", etag);
    o.excluded = tagset_excludes(child(child(b, "Tags"), "TagSet"));
    child_text(props, "ImmutabilityPolicyUntilDate", mtime, sizeof mtime);
    t = mtime[0] ? curl_getdate(mtime, NULL) : 0;
    o.immutable_until = t > 0 ? (int64_t)t : 0;
    o.key = text_of(name);
    enum kerr rc = o.key ? ostore_list_add(out, &o, err) : kerr_set(err, KERR_NOMEM, NULL);
    free(o.key);
    return rc;
}

enum kerr snapxml_abs_list(const char *xml, size_t len, struct ostore_list *out,
                           struct snapxml_page *page, struct kerr_info *err)
{
    struct doc doc;
    memset(page, 0, sizeof *page);
    enum kerr rc = parse_doc(xml, len, &doc, err);
    if (rc != KERR_OK) {
        return rc;
    }
    const struct node *root = doc.root;
    if (!is(root, "EnumerationResults")) {
        rc = kerr_set(err, KERR_PARSE, "expected <EnumerationResults>");
    }
    const struct node *blobs = rc == KERR_OK ? child(root, "Blobs") : NULL;
    for (const struct node *b = blobs ? blobs->children : NULL; rc == KERR_OK && b; b = b->next) {
        if (is(b, "Blob")) {
            rc = abs_entry(b, out, err);
        }
    }
    if (rc == KERR_OK) {
        page_from(root, "IsTruncated", "NextMarker", NULL, page);
        page->truncated = page->next != NULL;
    }
    doc_free(&doc);
    if (rc != KERR_OK) {
        snapxml_page_release(page);
    }
    return rc;
}
