/* snapxml - S3 and ABS XML answers (see snapxml.h). */
#include "controller/snapshot/snapxml.h"

#include <curl/curl.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto.h"
#include "common/ktime.h"

static enum kerr parse_doc(const char *xml, size_t len, xmlDocPtr *doc, struct kerr_info *err)
{
    *doc = NULL;
    if (len > SNAPXML_MAX_BODY || len > (size_t)0x7fffffff) {
        return kerr_set(err, KERR_TOOBIG, "XML answer too large");
    }
    *doc = xmlReadMemory(xml, (int)len, "answer.xml", NULL,
                         XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (*doc == NULL || xmlDocGetRootElement(*doc) == NULL) {
        xmlFreeDoc(*doc);
        *doc = NULL;
        return kerr_set(err, KERR_PARSE, "answer is not XML");
    }
    return KERR_OK;
}

static bool is(const xmlNode *n, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

static const xmlNode *child(const xmlNode *n, const char *name)
{
    for (const xmlNode *c = n ? n->children : NULL; c; c = c->next) {
        if (is(c, name)) {
            return c;
        }
    }
    return NULL;
}

/* Text of n as a malloc'd string ("" for an empty element), NULL without memory. */
static char *text_of(const xmlNode *n)
{
    xmlChar *t = xmlNodeGetContent(n);
    char *s = strdup(t ? (const char *)t : "");
    xmlFree(t);
    return s;
}

/* Text of child name into out[n]; "" when absent. */
static void child_text(const xmlNode *n, const char *name, char *out, size_t size)
{
    const xmlNode *c = child(n, name);
    xmlChar *t = c ? xmlNodeGetContent(c) : NULL;
    snprintf(out, size, "%s", t ? (const char *)t : "");
    xmlFree(t);
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

static void page_from(const xmlNode *root, const char *truncated, const char *next,
                      const char *next_version, struct snapxml_page *page)
{
    char t[16];
    child_text(root, truncated, t, sizeof t);
    page->truncated = strcmp(t, "true") == 0;
    const xmlNode *n = next ? child(root, next) : NULL;
    const xmlNode *v = next_version ? child(root, next_version) : NULL;
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
static enum kerr s3_entry(const xmlNode *c, bool marker, struct ostore_list *out,
                          struct kerr_info *err)
{
    char size[32];
    char mtime[64];
    char etag[96];
    struct ostore_obj o = { 0 };
    struct timespec ts;
    const xmlNode *k = child(c, "Key");
    const xmlNode *v = child(c, "VersionId");
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
    xmlDocPtr doc = NULL;
    memset(page, 0, sizeof *page);
    enum kerr rc = parse_doc(xml, len, &doc, err);
    if (rc != KERR_OK) {
        return rc;
    }
    const xmlNode *root = xmlDocGetRootElement(doc);
    if (!is(root, root_name)) {
        rc = kerr_set(err, KERR_PARSE, "expected <%s>, got <%.32s>", root_name,
                      (const char *)root->name);
    }
    for (const xmlNode *c = root->children; rc == KERR_OK && c; c = c->next) {
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
    xmlFreeDoc(doc);
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
static bool tagset_excludes(const xmlNode *set)
{
    char k[64];
    char v[16];
    for (const xmlNode *t = set ? set->children : NULL; t; t = t->next) {
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
    xmlDocPtr doc = NULL;
    *excluded = false;
    enum kerr rc = parse_doc(xml, len, &doc, err);
    if (rc != KERR_OK) {
        return rc;
    }
    const xmlNode *root = xmlDocGetRootElement(doc);
    if (!is(root, "Tagging")) {
        rc = kerr_set(err, KERR_PARSE, "expected <Tagging>");
    } else {
        *excluded = tagset_excludes(child(root, "TagSet"));
    }
    xmlFreeDoc(doc);
    return rc;
}

static const xmlNode *find_any(const xmlNode *n, const char *name, int depth)
{
    for (const xmlNode *c = n; c && depth < 16; c = c->next) {
        if (is(c, name)) {
            return c;
        }
        const xmlNode *f = find_any(c->children, name, depth + 1);
        if (f) {
            return f;
        }
    }
    return NULL;
}

enum kerr snapxml_find(const char *xml, size_t len, const char *name, char **out,
                       struct kerr_info *err)
{
    xmlDocPtr doc = NULL;
    *out = NULL;
    enum kerr rc = parse_doc(xml, len, &doc, err);
    if (rc != KERR_OK) {
        return rc;
    }
    const xmlNode *n = find_any(xmlDocGetRootElement(doc), name, 0);
    if (n == NULL) {
        rc = kerr_set(err, KERR_NOTFOUND, "no <%s> in the answer", name);
    } else if ((*out = text_of(n)) == NULL) {
        rc = kerr_set(err, KERR_NOMEM, NULL);
    }
    xmlFreeDoc(doc);
    return rc;
}

void snapxml_error(const char *xml, size_t len, char *code, size_t code_n, char *msg, size_t msg_n)
{
    xmlDocPtr doc = NULL;
    code[0] = '\0';
    msg[0] = '\0';
    if (len == 0 || parse_doc(xml, len, &doc, NULL) != KERR_OK) {
        return;
    }
    const xmlNode *root = xmlDocGetRootElement(doc);
    if (is(root, "Error")) {
        child_text(root, "Code", code, code_n);
        child_text(root, "Message", msg, msg_n);
        char *nl = strchr(msg, '\n');
        if (nl) {
            *nl = '\0';
        }
    }
    xmlFreeDoc(doc);
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

static enum kerr abs_entry(const xmlNode *b, struct ostore_list *out, struct kerr_info *err)
{
    char size[32];
    char mtime[64];
    char md5[64];
    char etag[96];
    struct ostore_obj o = { 0 };
    const xmlNode *name = child(b, "Name");
    const xmlNode *props = child(b, "Properties");
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
    xmlDocPtr doc = NULL;
    memset(page, 0, sizeof *page);
    enum kerr rc = parse_doc(xml, len, &doc, err);
    if (rc != KERR_OK) {
        return rc;
    }
    const xmlNode *root = xmlDocGetRootElement(doc);
    if (!is(root, "EnumerationResults")) {
        rc = kerr_set(err, KERR_PARSE, "expected <EnumerationResults>");
    }
    const xmlNode *blobs = rc == KERR_OK ? child(root, "Blobs") : NULL;
    for (const xmlNode *b = blobs ? blobs->children : NULL; rc == KERR_OK && b; b = b->next) {
        if (is(b, "Blob")) {
            rc = abs_entry(b, out, err);
        }
    }
    if (rc == KERR_OK) {
        page_from(root, "IsTruncated", "NextMarker", NULL, page);
        page->truncated = page->next != NULL;
    }
    xmlFreeDoc(doc);
    if (rc != KERR_OK) {
        snapxml_page_release(page);
    }
    return rc;
}
