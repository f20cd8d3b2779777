/* ostore - provider interface, factory and copy strategies (see ostore.h). */
#include "controller/snapshot/ostore.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "controller/snapshot/abs.h"
#include "controller/snapshot/lfs.h"
#include "controller/snapshot/s3.h"

static int name_in(const char *name, const char *const *names)
{
    for (; *names; names++) {
        if (strcmp(name, *names) == 0) {
            return 1;
        }
    }
    return 0;
}

enum kerr ostore_open(const struct ostore_config *cfg, struct ostore **out, struct kerr_info *err)
{
    static const char *const s3[] = { "aws", "S3", "stackit", NULL };
    static const char *const abs[] = { "azure", "ABS", NULL };
    static const char *const local[] = { "Local", "local", NULL };
    static const char *const later[] = { "gcp",  "GCS", "openstack", "Swift", "alicloud", "OSS",
                                         "dell", "ECS", "openshift", "OCS",   NULL };
    enum kerr rc;
    *out = NULL;
    if (cfg->provider == NULL || cfg->container == NULL || cfg->container[0] == '\0') {
        return kerr_set(err, KERR_INVAL, "--storage-provider and --store-container are required");
    }
    if (name_in(cfg->provider, s3)) {
        rc = s3_open(cfg->container, cfg->endpoint_override, out, err);
    } else if (name_in(cfg->provider, abs)) {
        rc = abs_open(cfg->container, cfg->endpoint_override, out, err);
    } else if (name_in(cfg->provider, local)) {
        rc = lfs_open(cfg->container, out, err);
    } else if (name_in(cfg->provider, later)) {
        return kerr_set(err, KERR_UNSUPPORTED, "storage provider %s is not supported yet",
                        cfg->provider);
    } else {
        return kerr_set(err, KERR_INVAL, "unknown storage provider \"%.32s\"", cfg->provider);
    }
    if (rc == KERR_OK) {
        (*out)->part_size = cfg->part_size ? cfg->part_size : OSTORE_PART_SIZE;
        (*out)->copy_part_threshold =
            cfg->copy_part_threshold ? cfg->copy_part_threshold : OSTORE_COPY_PART_THRESHOLD;
    }
    return rc;
}

void ostore_free(struct ostore *s)
{
    if (s) {
        s->ops->destroy(s);
    }
}

void ostore_obj_release(struct ostore_obj *o)
{
    if (o) {
        free(o->key);
        free(o->version_id);
        memset(o, 0, sizeof *o);
    }
}

enum kerr ostore_list_add(struct ostore_list *l, const struct ostore_obj *o, struct kerr_info *err)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        struct ostore_obj *v = realloc(l->v, cap * sizeof *v);
        if (v == NULL) {
            return kerr_set(err, KERR_NOMEM, NULL);
        }
        l->v = v;
        l->cap = cap;
    }
    struct ostore_obj *d = &l->v[l->n];
    *d = *o;
    d->key = strdup(o->key);
    d->version_id = o->version_id ? strdup(o->version_id) : NULL;
    if (d->key == NULL || (o->version_id && d->version_id == NULL)) {
        ostore_obj_release(d);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    l->n++;
    return KERR_OK;
}

void ostore_list_release(struct ostore_list *l)
{
    for (size_t i = 0; l && i < l->n; i++) {
        ostore_obj_release(&l->v[i]);
    }
    if (l) {
        free(l->v);
        memset(l, 0, sizeof *l);
    }
}

static void hex_of(const unsigned char *d, size_t n, char *out)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[2 * n] = '\0';
}

/* The new object against its source: size, then MD5 where both sides know it. */
static enum kerr verify(struct ostore *s, const struct ostore_obj *src, const char *dst,
                        const char *streamed_md5, struct kerr_info *err)
{
    struct ostore_obj d = { 0 };
    enum kerr rc = s->ops->head(s, dst, &d, err);
    if (rc != KERR_OK) {
        return kerr_wrap(err, "verifying %s", dst);
    }
    if (d.size != src->size) {
        rc = kerr_set(err, KERR_IO, "copy %s has %lld bytes, source %lld", dst, (long long)d.size,
                      (long long)src->size);
    } else if (d.md5[0] && src->md5[0] && strcmp(d.md5, src->md5) != 0) {
        rc = kerr_set(err, KERR_IO, "copy %s has MD5 %s, source %s", dst, d.md5, src->md5);
    } else if (d.md5[0] && streamed_md5 && streamed_md5[0] && strcmp(d.md5, streamed_md5) != 0) {
        rc = kerr_set(err, KERR_IO, "copy %s has MD5 %s, streamed bytes %s", dst, d.md5,
                      streamed_md5);
    }
    log_debug("copy verified", "key", dst, "md5", d.md5[0] ? d.md5 : "(not reported)");
    ostore_obj_release(&d);
    return rc;
}

static enum kerr stream_parts(struct ostore *s, const struct ostore_obj *src,
                              struct ostore_upload *u, unsigned char *buf, EVP_MD_CTX *md,
                              struct kerr_info *err)
{
    for (int64_t off = 0; off < src->size;) {
        size_t n = (size_t)(src->size - off < (int64_t)s->part_size ? src->size - off
                                                                    : (int64_t)s->part_size);
        enum kerr rc = s->ops->read(s, src, off, buf, n, err);
        if (rc != KERR_OK) {
            return kerr_wrap(err, "reading %s at %lld", src->key, (long long)off);
        }
        if (EVP_DigestUpdate(md, buf, n) != 1) {
            return kerr_set(err, KERR_INTERNAL, "MD5 update failed");
        }
        rc = s->ops->up_part(s, u, buf, n, err);
        if (rc != KERR_OK) {
            return rc;
        }
        off += (int64_t)n;
    }
    return KERR_OK;
}

static enum kerr stream_copy(struct ostore *s, const struct ostore_obj *src, const char *dst,
                             char md5hex[33], struct kerr_info *err)
{
    struct ostore_upload *u = NULL;
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned dlen = 0;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    unsigned char *buf = malloc(s->part_size);
    enum kerr rc = KERR_OK;
    if (md == NULL || buf == NULL || EVP_DigestInit_ex(md, EVP_md5(), NULL) != 1) {
        rc = kerr_set(err, KERR_NOMEM, "cannot allocate the copy buffer");
        goto out;
    }
    rc = s->ops->up_begin(s, dst, src->size, &u, err);
    if (rc != KERR_OK) {
        goto out;
    }
    rc = stream_parts(s, src, u, buf, md, err);
    if (rc != KERR_OK) {
        s->ops->up_abort(s, u);
        goto out;
    }
    rc = s->ops->up_commit(s, u, err);
    if (rc == KERR_OK && EVP_DigestFinal_ex(md, digest, &dlen) == 1) {
        hex_of(digest, dlen, md5hex);
    }
out:
    free(buf);
    EVP_MD_CTX_free(md);
    return rc;
}

/* A copy that failed verification must not stay under the prefix. */
static enum kerr drop_bad_copy(struct ostore *s, const char *dst, enum kerr rc)
{
    struct ostore_obj o = { 0 };
    struct kerr_info e2 = { 0 };
    o.key = (char *)(uintptr_t)dst;
    if (s->ops->del(s, &o, &e2) != KERR_OK) {
        log_error("cannot delete the unverified copy", "key", dst, "error", e2.msg);
    }
    return rc;
}

enum kerr ostore_copy(struct ostore *s, const struct ostore_obj *src, const char *dst, bool server,
                      struct ostore_copy_result *res, struct kerr_info *err)
{
    struct ostore_obj probe = { 0 };
    memset(res, 0, sizeof *res);
    enum kerr rc = s->ops->head(s, dst, &probe, err);
    ostore_obj_release(&probe);
    if (rc == KERR_OK) {
        return kerr_set(err, KERR_EXISTS, "%s already exists; not overwriting it", dst);
    }
    if (rc != KERR_NOTFOUND) {
        return rc;
    }
    if (server && s->ops->copy) {
        rc = s->ops->copy(s, src, dst, err);
        if (rc == KERR_OK) {
            res->server = true;
            rc = verify(s, src, dst, NULL, err);
            return rc ? drop_bad_copy(s, dst, rc) : KERR_OK;
        }
        if (rc != KERR_UNSUPPORTED) {
            return rc;
        }
        log_info("server-side copy not available here, streaming instead", "provider", s->ops->name,
                 "reason", err ? err->msg : "");
    }
    rc = stream_copy(s, src, dst, res->md5, err);
    if (rc != KERR_OK) {
        return rc;
    }
    if (src->md5[0] && strcmp(src->md5, res->md5) != 0) {
        rc = kerr_set(err, KERR_IO, "read %s with MD5 %s, the store reports %s", src->key, res->md5,
                      src->md5);
    }
    rc = rc ? rc : verify(s, src, dst, res->md5, err);
    return rc ? drop_bad_copy(s, dst, rc) : KERR_OK;
}
