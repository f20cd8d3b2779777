/* ostore - provider interface and copy strategies (see ostore.h). */
#include "controller/snapshot/ostore.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

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

/* Read-back buffer: small, the copy's own buffer is the large one. */
#define OSTORE_VERIFY_BUF (1u << 20)

/* MD5 (hex) of an object's bytes, read back through one bounded buffer. */
enum kerr ostore_read_md5(struct ostore *s, const struct ostore_obj *o, char out[33],
                          struct kerr_info *err)
{
    size_t bl = s->part_size < OSTORE_VERIFY_BUF ? s->part_size : OSTORE_VERIFY_BUF;
    unsigned char *buf = malloc(bl);
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned dl = 0;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    enum kerr rc = KERR_OK;
    if (buf == NULL || md == NULL || EVP_DigestInit_ex(md, EVP_md5(), NULL) != 1) {
        rc = kerr_set(err, KERR_NOMEM, NULL);
    }
    for (int64_t off = 0; rc == KERR_OK && off < o->size;) {
        size_t n = (size_t)(o->size - off < (int64_t)bl ? o->size - off : (int64_t)bl);
        rc = s->ops->read(s, o, off, buf, n, err);
        if (rc == KERR_OK && EVP_DigestUpdate(md, buf, n) != 1) {
            rc = kerr_set(err, KERR_INTERNAL, "MD5 update failed");
        }
        off += (int64_t)n;
    }
    if (rc == KERR_OK && EVP_DigestFinal_ex(md, d, &dl) == 1) {
        hex_of(d, dl, out);
    }
    free(buf);
    EVP_MD_CTX_free(md);
    return rc;
}

/*
 * The new object against its source's content: the same size, and the same MD5, taken
 * from the store only where it guarantees the MD5 (ostore_obj.md5), else computed here by
 * reading the bytes back. want_md5 is the source's MD5 when known ("" otherwise: the
 * source is read too). Size alone is never enough: a 0-byte copy of a 0-byte read is not
 * a verified copy of a snapshot.
 */
static enum kerr verify(struct ostore *s, const struct ostore_obj *src, const char *dst,
                        const char *want_md5, struct kerr_info *err)
{
    struct ostore_obj d = { 0 };
    char src_md5[33] = "";
    char dst_md5[33] = "";
    const char *how = "reported by the store";
    enum kerr rc = s->ops->head(s, dst, &d, err);
    if (rc != KERR_OK) {
        return kerr_wrap(err, "verifying %s", dst);
    }
    if (d.size != src->size) {
        rc = kerr_set(err, KERR_IO, "copy %s has %lld bytes, source %lld", dst, (long long)d.size,
                      (long long)src->size);
        goto out;
    }
    snprintf(src_md5, sizeof src_md5, "%s", want_md5 ? want_md5 : "");
    if (src_md5[0] == '\0') {
        rc = ostore_read_md5(s, src, src_md5, err);
        how = "read back";
    }
    if (rc == KERR_OK && d.md5[0]) {
        memcpy(dst_md5, d.md5, sizeof dst_md5);
    } else if (rc == KERR_OK) {
        rc = ostore_read_md5(s, &d, dst_md5, err);
        how = "read back";
    }
    if (rc == KERR_OK && strcmp(dst_md5, src_md5) != 0) {
        rc = kerr_set(err, KERR_IO, "copy %s has MD5 %s, source %s", dst, dst_md5, src_md5);
    }
    log_debug("copy verified", "key", dst, "md5", dst_md5, "how", how);
out:
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

/* *committed: the upload reached its commit (before it, a failure leaves no object). */
static enum kerr stream_copy(struct ostore *s, const struct ostore_obj *src, const char *dst,
                             char md5hex[33], bool *committed, struct kerr_info *err)
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
    *committed = true;
    rc = s->ops->up_commit(s, u, err);
    if (rc == KERR_OK && EVP_DigestFinal_ex(md, digest, &dlen) == 1) {
        hex_of(digest, dlen, md5hex);
    }
out:
    free(buf);
    EVP_MD_CTX_free(md);
    return rc;
}

/*
 * A copy that failed must not stay visible to a restore: delete it (its version, where the
 * store keeps versions), and where it is immutable mark it excluded instead.
 */
static enum kerr drop_bad_copy(struct ostore *s, const char *dst, enum kerr rc)
{
    struct ostore_obj o = { 0 };
    struct kerr_info e2 = { 0 };
    enum kerr h = s->ops->head(s, dst, &o, &e2);
    if (h == KERR_NOTFOUND) {
        return rc;
    }
    if (h != KERR_OK) {
        log_warn("cannot find the failed copy to delete it", "key", dst, "error", e2.msg);
        return rc;
    }
    enum kerr d = s->ops->del(s, &o, &e2);
    if (d == KERR_FORBIDDEN && s->ops->exclude) {
        log_warn("the failed copy is immutable: marking it excluded", "key", dst, "reason", e2.msg);
        d = s->ops->exclude(s, &o, &e2);
    }
    if (d != KERR_OK) {
        log_warn("cannot delete or exclude the failed copy", "key", dst, "error", e2.msg);
    }
    ostore_obj_release(&o);
    return rc;
}

enum kerr ostore_copy(struct ostore *s, const struct ostore_obj *src, const char *dst, bool server,
                      struct ostore_copy_result *res, struct kerr_info *err)
{
    struct ostore_obj probe = { 0 };
    struct ostore_obj fresh = { 0 };
    memset(res, 0, sizeof *res);
    enum kerr rc = s->ops->head(s, dst, &probe, err);
    ostore_obj_release(&probe);
    if (rc == KERR_OK) {
        return kerr_set(err, KERR_EXISTS, "%s already exists; not overwriting it", dst);
    }
    if (rc != KERR_NOTFOUND) {
        return rc;
    }
    /* The source as the store reports it now: its size and, where guaranteed, its MD5
     * (a listing's ETag may be no MD5 at all, e.g. under SSE-KMS). */
    rc = s->ops->head(s, src->key, &fresh, err);
    if (rc == KERR_NOTFOUND && src->version_id) {
        /* a version under a delete marker (a restore still uses it): the listing's size,
         * no trusted MD5, the bytes read back by version */
        ostore_obj_release(&fresh);
        fresh = *src;
        fresh.md5[0] = '\0';
        fresh.key = strdup(src->key);
        fresh.version_id = NULL;
        rc = fresh.key ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
    }
    if (rc != KERR_OK) {
        ostore_obj_release(&fresh);
        return kerr_wrap(err, "reading the source %s", src->key);
    }
    free(fresh.version_id);
    fresh.version_id = src->version_id ? strdup(src->version_id) : NULL;
    if (src->version_id && fresh.version_id == NULL) {
        ostore_obj_release(&fresh);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    if (server && s->ops->copy) {
        rc = s->ops->copy(s, &fresh, dst, err);
        if (rc == KERR_OK) {
            res->server = true;
            rc = verify(s, &fresh, dst, fresh.md5, err);
            rc = rc ? drop_bad_copy(s, dst, rc) : KERR_OK;
            goto out;
        }
        if (rc != KERR_UNSUPPORTED) {
            /* Nothing to drop here: a failed S3 copy creates no object, an ABS copy that
             * ends failed is deleted by the provider (it alone knows the copy is its own),
             * and whatever else is at dst now is not ours. */
            goto out;
        }
        log_info("server-side copy not available here, streaming instead", "provider", s->ops->name,
                 "reason", err ? err->msg : "");
    }
    bool committed = false;
    rc = stream_copy(s, &fresh, dst, res->md5, &committed, err);
    if (rc != KERR_OK) {
        rc = (rc == KERR_EXISTS || !committed) ? rc : drop_bad_copy(s, dst, rc);
        goto out;
    }
    if (fresh.md5[0] && strcmp(fresh.md5, res->md5) != 0) {
        rc = kerr_set(err, KERR_IO, "read %s with MD5 %s, the store reports %s", src->key, res->md5,
                      fresh.md5);
    }
    rc = rc ? rc : verify(s, &fresh, dst, res->md5, err);
    rc = rc ? drop_bad_copy(s, dst, rc) : KERR_OK;
out:
    ostore_obj_release(&fresh);
    return rc;
}
