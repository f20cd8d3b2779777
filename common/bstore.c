/* bstore - the identity of a backup store and of a prefix in it; see bstore.h. */
#include "common/bstore.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/kpath.h"

/* The provider names etcd-druid accepts (StorageProviderFromInfraProvider). */
static const char *const PROVIDERS[][2] = {
    { "aws", "S3" },      { "S3", "S3" },         { "stackit", "S3" }, { "azure", "ABS" },
    { "ABS", "ABS" },     { "alicloud", "OSS" },  { "OSS", "OSS" },    { "openstack", "Swift" },
    { "Swift", "Swift" }, { "gcp", "GCS" },       { "GCS", "GCS" },    { "dell", "ECS" },
    { "ECS", "ECS" },     { "openshift", "OCS" }, { "OCS", "OCS" },    { "Local", "Local" },
    { "local", "Local" },
};

const char *bstore_provider_kind(const char *provider)
{
    size_t i;

    for (i = 0; provider && i < sizeof(PROVIDERS) / sizeof(PROVIDERS[0]); i++)
        if (strcmp(PROVIDERS[i][0], provider) == 0)
            return PROVIDERS[i][1];
    return NULL;
}

const char *bstore_provider_list(void)
{
    return "aws, S3, stackit, azure, ABS, alicloud, OSS, openstack, Swift, gcp, GCS, dell, ECS, "
           "openshift, OCS, Local, local";
}

const char *bstore_family(const char *kind)
{
    if (kind && (strcmp(kind, "ECS") == 0 || strcmp(kind, "OCS") == 0))
        return "S3";
    return kind;
}

/* Append s[0..len) to out at *w, lower-cased when lower; 0 when it does not fit. */
static int put(char *out, size_t n, size_t *w, const char *s, size_t len, int lower)
{
    if (*w + len >= n)
        return 0;
    for (size_t i = 0; i < len; i++)
        out[(*w)++] = lower ? (char)tolower((unsigned char)s[i]) : s[i];
    out[*w] = '\0';
    return 1;
}

enum kerr bstore_endpoint(const char *endpoint, char *out, size_t n)
{
    const char *e = endpoint ? endpoint : "", *sep = strstr(e, "://"), *host, *path, *port;
    size_t w = 0, hl, pl;
    int ok = 1;

    if (n == 0)
        return KERR_TOOBIG;
    out[0] = '\0';
    host = sep ? sep + 3 : e;
    path = host + strcspn(host, "/?#");
    port = memchr(host, ':', (size_t)(path - host));
    /* An IPv6 literal's colons are not a port's. */
    if (host[0] == '[')
        port = memchr(host, ']', (size_t)(path - host)) ? strchr(host, ']') + 1 : NULL;
    if (port && *port != ':')
        port = NULL;
    hl = (size_t)((port ? port : path) - host);
    if (sep)
        ok = put(out, n, &w, e, (size_t)(sep - e), 1) && put(out, n, &w, "://", 3, 0);
    ok = ok && put(out, n, &w, host, hl, 1);
    if (ok && port) {
        size_t len = (size_t)(path - port);
        int dflt =
            sep &&
            ((strncasecmp(e, "http://", 7) == 0 && len == 3 && strncmp(port, ":80", 3) == 0) ||
             (strncasecmp(e, "https://", 8) == 0 && len == 4 && strncmp(port, ":443", 4) == 0));
        if (!dflt)
            ok = put(out, n, &w, port, len, 0);
    }
    pl = strlen(path);
    while (pl > 0 && path[pl - 1] == '/')
        pl--;
    ok = ok && put(out, n, &w, path, pl, 0);
    return ok ? KERR_OK : KERR_TOOBIG;
}

enum kerr bstore_prefix(const char *prefix, char *out, size_t n)
{
    const char *p = prefix ? prefix : "";
    size_t need = strlen(p) + 2, off;
    char *tmp = malloc(need);
    enum kerr rc = tmp ? kpath_clean(p, tmp, need) : KERR_NOMEM;

    if (rc == KERR_OK) {
        off = strspn(tmp, "/");
        if (strcmp(tmp + off, ".") == 0)
            off = strlen(tmp);
        if (strlen(tmp + off) >= n)
            rc = KERR_TOOBIG;
        else
            memmove(out, tmp + off, strlen(tmp + off) + 1);
    }
    free(tmp);
    return rc;
}

enum kerr bstore_key(const char *provider, const char *container, const char *endpoint, char *out,
                     size_t n)
{
    const char *kind = bstore_provider_kind(provider);
    char ep[BSTORE_KEY_MAX];
    int len;

    if (n)
        out[0] = '\0';
    if (!kind || !container || !*container)
        return KERR_INVAL;
    if (bstore_endpoint(endpoint, ep, sizeof(ep)) != KERR_OK)
        return KERR_TOOBIG;
    len = snprintf(out, n, "%s|%s|%s", bstore_family(kind), container, ep);
    return len < 0 || (size_t)len >= n ? KERR_TOOBIG : KERR_OK;
}

enum kerr bstore_claim_init(struct bstore_claim *c, const char *provider, const char *container,
                            const char *endpoint, const char *prefix, struct kerr_info *err)
{
    const char *kind = bstore_provider_kind(provider);
    char *joined = NULL;
    size_t n;
    enum kerr rc;

    memset(c, 0, sizeof(*c));
    if (!kind)
        return kerr_set(err, KERR_INVAL, "unknown provider \"%s\" (known: %s)",
                        provider ? provider : "", bstore_provider_list());
    if (!container || !*container)
        return kerr_set(err, KERR_INVAL, "no container");
    if (!prefix)
        return kerr_set(err, KERR_INVAL, "no prefix");
    if (strcmp(kind, "Local") == 0) {
        n = strlen(container) + strlen(prefix) + 2;
        joined = malloc(n);
        if (!joined)
            return kerr_set(err, KERR_NOMEM, NULL);
        snprintf(joined, n, "%s/%s", container, prefix);
        prefix = joined;
        rc = snprintf(c->key, sizeof(c->key), "Local||") < 0 ? KERR_INTERNAL : KERR_OK;
    } else {
        rc = bstore_key(provider, container, endpoint, c->key, sizeof(c->key));
    }
    n = strlen(prefix) + 2;
    c->prefix = rc == KERR_OK ? malloc(n) : NULL;
    if (rc == KERR_OK)
        rc = c->prefix ? bstore_prefix(prefix, c->prefix, n) : KERR_NOMEM;
    if (rc == KERR_OK && (strcmp(c->prefix, "..") == 0 || strncmp(c->prefix, "../", 3) == 0)) {
        rc = kerr_set(err, KERR_INVAL, "prefix \"%s\" leaves its container", prefix);
        free(joined);
        bstore_claim_release(c);
        return rc;
    }
    free(joined);
    if (rc != KERR_OK) {
        bstore_claim_release(c);
        return kerr_set(err, rc, "store or prefix too long");
    }
    return KERR_OK;
}

void bstore_claim_release(struct bstore_claim *c)
{
    free(c->prefix);
    c->prefix = NULL;
}

int bstore_prefix_overlap(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);

    return strncmp(a, b, la < lb ? la : lb) == 0;
}

int bstore_overlap(const char *key, const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), n = la < lb ? la : lb;

    if (strncmp(key, "Local|", 6) != 0 || !bstore_prefix_overlap(a, b))
        return bstore_prefix_overlap(a, b);
    /* a directory walk: the shorter one is the longer one or a directory of it */
    return n == 0 || la == lb || (la < lb ? b[la] : a[lb]) == '/';
}

int bstore_claims_overlap(const struct bstore_claim *a, const struct bstore_claim *b)
{
    return a->prefix && b->prefix && strcmp(a->key, b->key) == 0 &&
           bstore_overlap(a->key, a->prefix, b->prefix);
}

enum kerr bstore_object_prefix(const char *kind, const char *prefix, char *out, size_t n)
{
    int keep_root = kind && (strcmp(kind, "ABS") == 0 || strcmp(kind, "GCS") == 0 ||
                             strcmp(kind, "Swift") == 0);
    enum kerr rc;

    if (!keep_root)
        return bstore_prefix(prefix, out, n);
    rc = kpath_clean(prefix ? prefix : "", out, n);
    if (rc == KERR_OK && (strcmp(out, ".") == 0 || strcmp(out, "/") == 0))
        out[0] = '\0';
    return rc;
}
