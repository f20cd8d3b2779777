/* bstore - the identity of a backup store and of a prefix in it; see bstore.h. */
#include "common/bstore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/blocal.h"
#include "common/crypto.h"
#include "common/kpath.h"

/*
 * The provider names etcd-druid accepts: internal/store/store.go,
 * StorageProviderFromInfraProvider (v0.35.0 and later to HEAD: each kind, its infrastructure
 * name and strings.ToLower of the kind; "stackit" is S3; v0.30 lacked the lower-case ones).
 * Case matters: "Aws" or "S3 " is "unsupported storage provider".
 */
static const char *const PROVIDERS[][2] = {
    { "aws", "S3" },      { "S3", "S3" },        { "s3", "S3" },           { "stackit", "S3" },
    { "azure", "ABS" },   { "ABS", "ABS" },      { "abs", "ABS" },         { "gcp", "GCS" },
    { "GCS", "GCS" },     { "gcs", "GCS" },      { "openstack", "Swift" }, { "Swift", "Swift" },
    { "swift", "Swift" }, { "alicloud", "OSS" }, { "OSS", "OSS" },         { "oss", "OSS" },
    { "dell", "ECS" },    { "ECS", "ECS" },      { "ecs", "ECS" },         { "openshift", "OCS" },
    { "OCS", "OCS" },     { "ocs", "OCS" },      { "Local", "Local" },     { "local", "Local" },
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
    return "aws, S3, s3, stackit, azure, ABS, abs, gcp, GCS, gcs, openstack, Swift, swift, "
           "alicloud, OSS, oss, dell, ECS, ecs, openshift, OCS, ocs, Local, local";
}

const char *bstore_family(const char *kind)
{
    if (kind && (strcmp(kind, "ECS") == 0 || strcmp(kind, "OCS") == 0))
        return "S3";
    return kind;
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

static int container_char(char ch, int edge)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           (!edge && (ch == '.' || ch == '_' || ch == '-'));
}

enum kerr bstore_container_check(const char *provider, const char *container, struct kerr_info *err)
{
    const char *kind = bstore_provider_kind(provider);
    size_t i, len = container ? strlen(container) : 0;

    if (!len)
        return kerr_set(err, KERR_INVAL, "no container");
    if (kind && strcmp(kind, "Local") == 0)
        return KERR_OK; /* a directory (its hostPath), joined with the prefix */
    for (i = 0; i < len && len >= 3 && len <= 63; i++)
        if (!container_char(container[i], i == 0 || i == len - 1))
            break;
    if (len >= 3 && len <= 63 && i == len)
        return KERR_OK;
    return kerr_set(
        err, KERR_INVAL,
        "container \"%.80s%s\" is not a bucket name: 3 to 63 letters, digits, '.', "
        "'_' or '-', starting and ending with a letter or digit (" BSTORE_CONTAINER_PATTERN
        ", as etcd-druid validates an Etcd's); a '/' would address another bucket's "
        "or another prefix's objects",
        container, len > 80 ? "..." : "");
}

enum kerr bstore_key(const char *provider, const char *container, const char *endpoint, char *out,
                     size_t n)
{
    const char *kind = bstore_provider_kind(provider);
    int len;

    /* The endpoint is not part of the key (bstore.h): where the sidecar sends its requests
     * can be in the Secret, which the Etcd does not show. */
    (void)endpoint;
    if (n)
        out[0] = '\0';
    if (!kind || bstore_container_check(provider, container, NULL) != KERR_OK)
        return KERR_INVAL;
    /* Every object store of one container name is one store (bstore.h): an S3 client reaches
     * GCS, OSS, Ceph's Swift buckets and any other S3-compatible service through the Secret's
     * endpoint. Local keeps its family: a directory is no bucket. */
    len = strcmp(kind, "Local") == 0 ? snprintf(out, n, "Local|%s|", container)
                                     : snprintf(out, n, BSTORE_OBJECT "|%s|", container);
    return len < 0 || (size_t)len >= n ? KERR_TOOBIG : KERR_OK;
}

enum kerr bstore_claim_init(struct bstore_claim *c, const char *provider, const char *container,
                            const char *endpoint, const char *prefix, struct kerr_info *err)
{
    const char *kind = bstore_provider_kind(provider);
    size_t n;
    enum kerr rc;

    memset(c, 0, sizeof(*c));
    if (!kind)
        return kerr_set(err, KERR_INVAL, "unknown provider \"%s\" (accepted: %s)",
                        provider ? provider : "", bstore_provider_list());
    if ((rc = bstore_container_check(provider, container, err)) != KERR_OK)
        return rc;
    if (!prefix)
        return kerr_set(err, KERR_INVAL, "no prefix");
    if (strlen(prefix) > BSTORE_PREFIX_MAX)
        return kerr_set(err, KERR_INVAL,
                        "prefix of %zu bytes: at most %d (an object store's keys are at most %d "
                        "bytes, so the backup sidecar could never write under a longer one)",
                        strlen(prefix), BSTORE_PREFIX_MAX, BSTORE_PREFIX_MAX);
    if (strcmp(kind, "Local") == 0) /* the directory on the node, hostPath unknown here */
        return bstore_local_claim_init(c, NULL, container, prefix, err);
    rc = bstore_key(provider, container, endpoint, c->key, sizeof(c->key));
    n = strlen(prefix) + 2;
    c->prefix = rc == KERR_OK ? malloc(n) : NULL;
    if (rc == KERR_OK)
        rc = c->prefix ? bstore_prefix(prefix, c->prefix, n) : KERR_NOMEM;
    if (rc == KERR_OK && (strcmp(c->prefix, "..") == 0 || strncmp(c->prefix, "../", 3) == 0)) {
        rc = kerr_set(err, KERR_INVAL, "prefix \"%s\" leaves its container", prefix);
        bstore_claim_release(c);
        return rc;
    }
    if (rc != KERR_OK) {
        bstore_claim_release(c);
        return kerr_set(err, rc, "store or prefix too long");
    }
    return KERR_OK;
}

enum kerr bstore_local_claim_init(struct bstore_claim *c, const char *hostpath,
                                  const char *container, const char *prefix, struct kerr_info *err)
{
    size_t n = (hostpath ? strlen(hostpath) : sizeof(BLOCAL_HOSTPATH_DEFAULT)) +
               (container ? strlen(container) : 0) + (prefix ? strlen(prefix) : 0) + 4;
    enum kerr rc;

    memset(c, 0, sizeof(*c));
    snprintf(c->key, sizeof(c->key), "%s", BLOCAL_KEY);
    if (!(c->prefix = malloc(n)))
        return kerr_set(err, KERR_NOMEM, NULL);
    rc = blocal_dir(hostpath, container, prefix, c->prefix, n, err);
    if (rc != KERR_OK)
        bstore_claim_release(c);
    return rc;
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

int bstore_no_store(const char *provider)
{
    return provider == NULL;
}

int bstore_unkeyed_overlap(const char *key, const char *container)
{
    const char *c = strchr(key, '|'), *end = c ? strchr(c + 1, '|') : NULL;

    /* Local's key holds no container (it is in the prefix): any directory may be it */
    if (!container || !*container || !c || !end || strncmp(key, "Local|", 6) == 0)
        return 1;
    return strlen(container) == (size_t)(end - c - 1) &&
           strncmp(container, c + 1, (size_t)(end - c - 1)) == 0;
}

enum kerr bstore_legacy_keys(const char *container, char out[BSTORE_LEGACY_N][BSTORE_KEY_MAX])
{
    static const char *const fam[BSTORE_LEGACY_N] = { "S3", "ABS", "GCS", "Swift", "OSS" };
    int len;

    for (int i = 0; i < BSTORE_LEGACY_N; i++) {
        len = snprintf(out[i], BSTORE_KEY_MAX, "%s|%s|", fam[i], container ? container : "");
        if (len < 0 || len >= BSTORE_KEY_MAX)
            return KERR_TOOBIG;
    }
    return KERR_OK;
}

enum kerr bstore_object_prefixes(const char *kind, const char *prefix, char *first, char *second,
                                 size_t n)
{
    const char *fam = bstore_family(kind);
    enum kerr rc = bstore_object_prefix(kind, prefix, first, n);

    second[0] = '\0';
    if (rc != KERR_OK || !fam || strcmp(fam, "S3") != 0 || !*first)
        return rc;
    /* aws-sdk-go-v2 (etcd-backup-restore v0.37.0 and later) keeps the leading '/' of
     * path.Join(prefix, ...): the cleaned prefix as path.Clean leaves it */
    rc = kpath_clean(prefix, second, n);
    if (rc == KERR_OK && second[0] != '/')
        second[0] = '\0';
    return rc;
}

int bstore_prefix_unparsable(const char *c)
{
    size_t n = strlen(c);

    /* "v1/" inside c, or c ending in "v1" (the "/" after it is the sidecar's) */
    return strstr(c, "v1/") != NULL || (n >= 2 && strcmp(c + n - 2, "v1") == 0);
}

int bstore_prefix_owner(const char *c, char *out, size_t n)
{
    const char *slash = strchr(c, '/'), *p, *cut = NULL;
    size_t len;

    out[0] = '\0';
    if (!slash || !slash[1]) /* a canonical prefix has no trailing "/"; be strict anyway */
        return 0;
    for (p = c; p + 1 < slash; p++)
        if (p[0] == '-' && p[1] == '-')
            cut = p;
    len = (size_t)((cut ? cut : slash) - c);
    if (len == 0 || len >= n)
        return 0;
    memcpy(out, c, len);
    out[len] = '\0';
    return 1;
}

/* The entry name of claim c with hexlen hex digits of its hash (bstore_entry_name). */
static enum kerr entry_name(const struct bstore_claim *c, int hexlen,
                            char out[BSTORE_ENTRY_NAME_MAX + 1])
{
    char hash[CRYPTO_SHA256_HEX_LEN + 1], *id;
    size_t n = strlen(c->key) + strlen(c->prefix) + 2, w = 0;
    enum kerr rc;

    id = malloc(n);
    if (!id)
        return KERR_NOMEM;
    snprintf(id, n, "%s\n%s", c->key, c->prefix);
    rc = crypto_sha256_hex(id, strlen(id), hash, NULL);
    free(id);
    if (rc != KERR_OK)
        return rc;
    for (const char *p = c->prefix; *p && w < 64; p++) { /* the prefix as a name */
        char ch = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;

        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')))
            ch = '-';
        if (ch != '-' || w > 0)
            out[w++] = ch;
    }
    while (w > 0 && out[w - 1] == '-')
        w--;
    if (w == 0) { /* the whole container */
        memcpy(out, "root", 4);
        w = 4;
    }
    snprintf(out + w, BSTORE_ENTRY_NAME_MAX + 1 - w, "--%.*s", hexlen, hash);
    return KERR_OK;
}

enum kerr bstore_entry_name(const struct bstore_claim *c, char out[BSTORE_ENTRY_NAME_MAX + 1])
{
    return entry_name(c, BSTORE_ENTRY_HASH_LEN, out);
}

enum kerr bstore_entry_name_v1(const struct bstore_claim *c, char out[BSTORE_ENTRY_NAME_MAX + 1])
{
    return entry_name(c, BSTORE_ENTRY_HASH_LEN_V1, out);
}
