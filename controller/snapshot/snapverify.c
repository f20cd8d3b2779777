/* snapverify - the SHA-256 at the end of an etcd snapshot (see snapverify.h). */
#include "controller/snapshot/snapverify.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/log.h"
#include "controller/snapshot/lzw.h"

#define DIGEST_LEN 32
#define SECTOR     512u
#define OUT_BUF    (64u * 1024u)
#define READ_BUF   (1u << 20)

struct snapverify {
    EVP_MD_CTX *md;
    bool inflating; /* compressed: the bytes go through zs */
    bool ended;     /* the compressed stream ended */
    z_stream zs;
    struct lzw *lzw;                /* OWNS; ".Z": the bytes go through it */
    unsigned char *out;             /* OWNS: OUT_BUF inflated bytes */
    unsigned char tail[DIGEST_LEN]; /* the last bytes seen, not hashed yet */
    size_t tail_len;
    unsigned long long total; /* decompressed bytes */
    snapverify_sink sink;     /* BORROWED; NULL: none */
    void *sink_ctx;
    bool delta;
};

void snapverify_tap(struct snapverify *v, snapverify_sink sink, void *ctx, bool delta)
{
    v->sink = sink;
    v->sink_ctx = ctx;
    v->delta = delta;
}

/* n bytes known not to be the trailer: hashed and handed to the sink. */
static enum kerr hash(struct snapverify *v, const unsigned char *p, size_t n, struct kerr_info *err)
{
    if (n == 0)
        return KERR_OK;
    if (EVP_DigestUpdate(v->md, p, n) != 1)
        return kerr_set(err, KERR_INTERNAL, "SHA-256 update failed");
    return v->sink ? v->sink(v->sink_ctx, p, n, err) : KERR_OK;
}

enum kerr snapverify_new(const char *compression, struct snapverify **out, struct kerr_info *err)
{
    int wbits;
    *out = NULL;
    if (compression == NULL || compression[0] == '\0') {
        wbits = 0;
    } else if (strcmp(compression, ".gz") == 0) {
        wbits = 16 + MAX_WBITS;
    } else if (strcmp(compression, ".zlib") == 0) {
        wbits = MAX_WBITS;
    } else if (strcmp(compression, ".Z") == 0) {
        wbits = -1;
    } else {
        return kerr_set(err, KERR_UNSUPPORTED, "cannot verify %s-compressed snapshots",
                        compression + 1);
    }
    struct snapverify *v = calloc(1, sizeof *v);
    if (v == NULL || (v->md = EVP_MD_CTX_new()) == NULL ||
        EVP_DigestInit_ex(v->md, EVP_sha256(), NULL) != 1) {
        snapverify_free(v);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    if (wbits < 0 && lzw_new(&v->lzw, err) != KERR_OK) {
        snapverify_free(v);
        return KERR_NOMEM;
    }
    if (wbits > 0) {
        if ((v->out = malloc(OUT_BUF)) == NULL || inflateInit2(&v->zs, wbits) != Z_OK) {
            snapverify_free(v);
            return kerr_set(err, KERR_NOMEM, NULL);
        }
        v->inflating = true;
    }
    *out = v;
    return KERR_OK;
}

void snapverify_free(struct snapverify *v)
{
    if (v) {
        if (v->inflating) {
            inflateEnd(&v->zs);
        }
        lzw_free(v->lzw);
        EVP_MD_CTX_free(v->md);
        free(v->out);
        free(v);
    }
}

/* Hash everything but the last DIGEST_LEN bytes seen so far. */
static enum kerr feed(struct snapverify *v, const unsigned char *p, size_t n, struct kerr_info *err)
{
    v->total += n;
    if (n >= DIGEST_LEN) {
        enum kerr rc = hash(v, v->tail, v->tail_len, err);
        rc = rc ? rc : hash(v, p, n - DIGEST_LEN, err);
        if (rc != KERR_OK) {
            return rc;
        }
        memcpy(v->tail, p + n - DIGEST_LEN, DIGEST_LEN);
        v->tail_len = DIGEST_LEN;
        return KERR_OK;
    }
    size_t over = v->tail_len + n > DIGEST_LEN ? v->tail_len + n - DIGEST_LEN : 0;
    enum kerr rc = hash(v, v->tail, over, err);
    if (rc != KERR_OK) {
        return rc;
    }
    memmove(v->tail, v->tail + over, v->tail_len - over);
    v->tail_len -= over;
    memcpy(v->tail + v->tail_len, p, n);
    v->tail_len += n;
    return KERR_OK;
}

static enum kerr feed_sink(void *ctx, const unsigned char *p, size_t n, struct kerr_info *err)
{
    return feed(ctx, p, n, err);
}

enum kerr snapverify_update(struct snapverify *v, const void *data, size_t len,
                            struct kerr_info *err)
{
    if (v->lzw) {
        return lzw_update(v->lzw, data, len, feed_sink, v, err);
    }
    if (!v->inflating) {
        return feed(v, data, len, err);
    }
    if (v->ended && len > 0) {
        return kerr_set(err, KERR_PARSE, "data after the end of the compressed stream");
    }
    v->zs.next_in = (unsigned char *)(uintptr_t)data;
    while (len > 0) {
        uInt chunk = len > (1u << 30) ? (1u << 30) : (uInt)len;
        v->zs.avail_in = chunk;
        len -= chunk;
        while (v->zs.avail_in > 0 && !v->ended) {
            v->zs.next_out = v->out;
            v->zs.avail_out = OUT_BUF;
            int zr = inflate(&v->zs, Z_NO_FLUSH);
            if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
                return kerr_set(err, KERR_PARSE, "cannot decompress: %s",
                                v->zs.msg ? v->zs.msg : "corrupt data");
            }
            enum kerr rc = feed(v, v->out, OUT_BUF - v->zs.avail_out, err);
            if (rc != KERR_OK) {
                return rc;
            }
            v->ended = zr == Z_STREAM_END;
            if (zr == Z_BUF_ERROR && v->zs.avail_out == OUT_BUF) {
                break; /* no progress possible without more input */
            }
        }
        if (v->ended && (v->zs.avail_in > 0 || len > 0)) {
            return kerr_set(err, KERR_PARSE, "data after the end of the compressed stream");
        }
    }
    return KERR_OK;
}

enum kerr snapverify_finish(struct snapverify *v, char hex[SNAPVERIFY_HEX_LEN + 1],
                            struct kerr_info *err)
{
    static const char digits[] = "0123456789abcdef";
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned dl = 0;
    if ((v->inflating && !v->ended) || (v->lzw && !lzw_ended(v->lzw))) {
        return kerr_set(err, KERR_PARSE, "truncated: the compressed stream does not end");
    }
    /* etcd's rule (etcdctl snapshot restore, etcd-backup-restore before an upload): the
     * database is whole 512-byte sectors, so the digest is there when the length is
     * 512 k + 32. */
    if (v->delta && v->total <= DIGEST_LEN) {
        return kerr_set(err, KERR_PARSE, "%llu bytes: no room for the SHA-256 at the end",
                        v->total);
    }
    if (!v->delta && (v->tail_len < DIGEST_LEN || v->total % SECTOR != DIGEST_LEN)) {
        return kerr_set(err, KERR_PARSE,
                        "no SHA-256 at the end: %llu bytes, not 512 k + 32 (truncated, or not "
                        "an etcd snapshot)",
                        v->total);
    }
    if (EVP_DigestFinal_ex(v->md, d, &dl) != 1 || dl != DIGEST_LEN) {
        return kerr_set(err, KERR_INTERNAL, "SHA-256 failed");
    }
    for (size_t i = 0; i < DIGEST_LEN; i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[SNAPVERIFY_HEX_LEN] = '\0';
    if (CRYPTO_memcmp(d, v->tail, DIGEST_LEN) != 0) {
        return kerr_set(err, KERR_PARSE, "SHA-256 mismatch: the snapshot is corrupt or truncated");
    }
    return KERR_OK;
}

enum kerr snapverify_object(struct ostore *s, const struct ostore_obj *obj, const char *compression,
                            char hex[SNAPVERIFY_HEX_LEN + 1], struct kerr_info *err)
{
    struct snapverify *v = NULL;
    enum kerr rc = snapverify_new(compression, &v, err);
    if (rc != KERR_OK) {
        return rc;
    }
    size_t bl = s->part_size && s->part_size < READ_BUF ? s->part_size : READ_BUF;
    unsigned char *buf = malloc(bl);
    if (buf == NULL) {
        rc = kerr_set(err, KERR_NOMEM, NULL);
    }
    for (int64_t off = 0; rc == KERR_OK && off < obj->size;) {
        size_t n = (size_t)(obj->size - off < (int64_t)bl ? obj->size - off : (int64_t)bl);
        rc = s->ops->read(s, obj, off, buf, n, err);
        rc = rc ? kerr_wrap(err, "reading at %lld", (long long)off)
                : snapverify_update(v, buf, n, err);
        off += (int64_t)n;
    }
    rc = rc ? rc : snapverify_finish(v, hex, err);
    free(buf);
    snapverify_free(v);
    return rc;
}

enum kerr snapverify_for(const struct snap_name *n, const char *key, struct snapverify **out,
                         struct kerr_info *err)
{
    struct kerr_info e2 = { 0 };
    *out = NULL;
    if (n->kind != SNAP_FULL || n->is_chunk) {
        return KERR_OK;
    }
    enum kerr rc = snapverify_new(n->compression, out, &e2);
    if (rc == KERR_UNSUPPORTED) {
        log_warn("snapshot not verified", "key", key, "reason", e2.msg);
        return KERR_OK;
    }
    return rc ? kerr_set(err, rc, "%s", e2.msg) : KERR_OK;
}

enum kerr snapverify_piece(struct snapverify *v, const char *key, int64_t size, int64_t off,
                           const void *data, size_t len, struct kerr_info *err)
{
    struct kerr_info e2 = { 0 };
    char hex[SNAPVERIFY_HEX_LEN + 1];
    enum kerr rc = v ? snapverify_update(v, data, len, &e2) : KERR_OK;
    if (rc == KERR_OK && v && off + (int64_t)len == size) {
        rc = snapverify_finish(v, hex, &e2);
    }
    if (rc == KERR_PARSE) {
        return kerr_set(err, KERR_IO, "snapshot %s is corrupt: %s", key, e2.msg);
    }
    return rc ? kerr_set(err, rc, "verifying %s: %s", key, e2.msg) : KERR_OK;
}
