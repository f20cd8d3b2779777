/* snapcopy - `warden-snapshot copy` between two stores (see snapcopy.h). */
#include "controller/snapshot/snapcopy.h"

#include <openssl/evp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "controller/snapshot/snappipe.h"
#include "controller/snapshot/snapverify.h"

/* Set by SIGTERM/SIGINT (snapcopy_main): the run stops between parts and rolls back. */
static volatile sig_atomic_t stop_requested;

void snapcopy_stop(void)
{
    stop_requested = 1;
}

static enum kerr check_stop(struct kerr_info *err)
{
    return stop_requested ? kerr_set(err, KERR_CANCELLED, "terminated by a signal") : KERR_OK;
}

static bool eligible(const struct snapext_entry *e, int64_t until)
{
    return !e->name.is_chunk && !e->obj.excluded && (until <= 0 || e->name.created <= until);
}

enum kerr snapcopy_choose(const struct snapext_set *set, const struct snapcopy_opts *o,
                          size_t **idx, size_t *n, struct kerr_info *err)
{
    size_t *v = calloc(set->n + 1, sizeof *v);
    size_t k = 0;
    bool have_full = false;
    *idx = NULL;
    *n = 0;
    if (v == NULL) {
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    for (size_t i = 0; i < set->n; i++) {
        const struct snapext_entry *e = &set->v[i];
        if (!eligible(e, o->until)) {
            continue;
        }
        if (o->snapshot) {
            if (strcmp(e->name.name, o->snapshot) == 0) {
                v[0] = i;
                k = 1;
                break;
            }
            continue;
        }
        /* etcd-backup-restore's GetLatestFullSnapshotAndDeltaSnapList, read forwards:
         * every full restarts the list, every delta after it is appended in order. */
        if (e->name.kind == SNAP_FULL) {
            v[0] = i;
            k = 1;
            have_full = true;
        } else if (have_full && !o->latest_full) {
            v[k++] = i;
        }
    }
    if (k == 0) {
        free(v);
        if (o->snapshot) {
            return kerr_set(err, KERR_NOTFOUND, "no snapshot %s under %s", o->snapshot,
                            o->from_prefix);
        }
        return kerr_set(err, KERR_NOTFOUND, "no full snapshot under %s%s", o->from_prefix,
                        o->until > 0 ? " created at or before --until" : "");
    }
    *idx = v;
    *n = k;
    return KERR_OK;
}

void snapcopy_result_release(struct snapcopy_result *r)
{
    for (size_t i = 0; r && i < r->n; i++) {
        free(r->v[i].source);
        free(r->v[i].destination);
    }
    if (r) {
        free(r->v);
        r->v = NULL;
        r->n = 0;
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

/* src's bytes through buf into an upload u of dst, hashed (and verified by v) on the way. */
static enum kerr stream_parts(struct ostore *src, const struct ostore_obj *o, struct ostore *dst,
                              struct ostore_upload *u, unsigned char *bufs[2], size_t bl,
                              EVP_MD_CTX *md, struct snapverify *v, struct kerr_info *err)
{
    unsigned char *buf = bufs[0];
    if (o->size > (int64_t)bl && src != dst) {
        /* more than one part: read the next while this one is sent (snappipe.h) */
        struct snappipe_job j = { .src = src,
                                  .obj = o,
                                  .dst = dst,
                                  .up = u,
                                  .buf = { bufs[0], bufs[1] },
                                  .part = bl,
                                  .md = md,
                                  .v = v,
                                  .stop = check_stop };
        return snappipe_stream(&j, err);
    }
    if (o->size == 0) {
        return snapverify_piece(v, o->key, 0, 0, buf, 0, err);
    }
    for (int64_t off = 0; off < o->size;) {
        size_t n = (size_t)(o->size - off < (int64_t)bl ? o->size - off : (int64_t)bl);
        enum kerr rc = check_stop(err);
        rc = rc ? rc : src->ops->read(src, o, off, buf, n, err);
        if (rc != KERR_OK) {
            return kerr_wrap(err, "reading %s at %lld", o->key, (long long)off);
        }
        if (EVP_DigestUpdate(md, buf, n) != 1) {
            return kerr_set(err, KERR_INTERNAL, "MD5 update failed");
        }
        /* the verdict before the last part is sent: a corrupt snapshot is never visible */
        rc = snapverify_piece(v, o->key, o->size, off, buf, n, err);
        if (rc != KERR_OK) {
            return rc;
        }
        rc = dst->ops->up_part(dst, u, buf, n, err);
        if (rc != KERR_OK) {
            return kerr_wrap(err, "writing %s", o->key);
        }
        off += (int64_t)n;
    }
    return KERR_OK;
}

/* The destination object against the bytes streamed: size, then MD5 (the store's where
 * it guarantees one, else read back). */
static enum kerr verify(struct ostore *dst, const char *key, int64_t size, const char *md5,
                        struct kerr_info *err)
{
    struct ostore_obj d = { 0 };
    char got[33] = "";
    enum kerr rc = dst->ops->head(dst, key, &d, err);
    if (rc != KERR_OK) {
        return kerr_wrap(err, "verifying %s", key);
    }
    if (d.size != size) {
        rc = kerr_set(err, KERR_IO, "copy %s has %lld bytes, source %lld", key, (long long)d.size,
                      (long long)size);
    } else if (d.md5[0]) {
        memcpy(got, d.md5, sizeof got);
    } else {
        rc = ostore_read_md5(dst, &d, got, err);
    }
    if (rc == KERR_OK && strcmp(got, md5) != 0) {
        rc = kerr_set(err, KERR_IO, "copy %s has MD5 %s, source %s", key, got, md5);
    }
    log_debug("copy verified", "key", key, "md5", got, "how", d.md5[0] ? "store" : "read back");
    ostore_obj_release(&d);
    return rc;
}

/* One object: src (as listed) to key in dst; it->md5/size filled; v (NULL: none) verifies
 * it. *committed: the upload began, so an object of ours may exist at key (a provider may
 * send a one-part object in up_part already), unless the store answered KERR_EXISTS (the
 * key is someone else's). */
static enum kerr copy_one(struct ostore *src, const struct ostore_obj *listed, struct ostore *dst,
                          const char *key, unsigned char *buf[2], size_t bl, struct snapverify *v,
                          struct snapcopy_item *it, bool *committed, struct kerr_info *err)
{
    struct ostore_obj o = { 0 };
    struct ostore_upload *u = NULL;
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned dl = 0;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    enum kerr rc = src->ops->head(src, listed->key, &o, err);
    *committed = false;
    if (rc == KERR_NOTFOUND && listed->version_id) {
        /* a version under a delete marker (a restore still takes it): read by version */
        ostore_obj_release(&o);
        o = *listed;
        o.md5[0] = '\0';
        o.key = strdup(listed->key);
        o.version_id = strdup(listed->version_id);
        rc = (o.key && o.version_id) ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
    } else if (rc == KERR_OK && listed->version_id) {
        free(o.version_id);
        o.version_id = strdup(listed->version_id);
        rc = o.version_id ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
    }
    if (rc != KERR_OK) {
        rc = kerr_wrap(err, "reading the source %s", listed->key);
        goto out;
    }
    if (md == NULL || EVP_DigestInit_ex(md, EVP_md5(), NULL) != 1) {
        rc = kerr_set(err, KERR_NOMEM, NULL);
        goto out;
    }
    rc = dst->ops->up_begin(dst, key, o.size, &u, err);
    if (rc != KERR_OK) {
        goto out;
    }
    *committed = true;
    rc = stream_parts(src, &o, dst, u, buf, bl, md, v, err);
    rc = rc ? rc : check_stop(err);
    if (rc != KERR_OK) {
        dst->ops->up_abort(dst, u);
        goto out;
    }
    rc = dst->ops->up_commit(dst, u, err);
    if (rc != KERR_OK) {
        goto out;
    }
    if (EVP_DigestFinal_ex(md, digest, &dl) != 1) {
        rc = kerr_set(err, KERR_INTERNAL, "MD5 final failed");
        goto out;
    }
    hex_of(digest, dl, it->md5);
    it->size = o.size;
    if (o.md5[0] && strcmp(o.md5, it->md5) != 0) {
        rc = kerr_set(err, KERR_IO, "read %s with MD5 %s, the source store reports %s", o.key,
                      it->md5, o.md5);
        goto out;
    }
    rc = verify(dst, key, o.size, it->md5, err);
out:
    EVP_MD_CTX_free(md);
    ostore_obj_release(&o);
    return rc;
}

/* Delete key from dst (best effort; an immutable object is marked excluded instead). */
static void drop(struct ostore *dst, const char *key)
{
    struct ostore_obj o = { 0 };
    struct kerr_info e = { 0 };
    enum kerr rc = dst->ops->head(dst, key, &o, &e);
    if (rc == KERR_NOTFOUND) {
        return;
    }
    if (rc == KERR_OK) {
        rc = dst->ops->del(dst, &o, &e);
        if (rc == KERR_FORBIDDEN && dst->ops->exclude) {
            rc = dst->ops->exclude(dst, &o, &e);
        }
    }
    if (rc != KERR_OK) {
        log_warn("cannot delete the partial copy", "key", key, "error", e.msg);
    } else {
        log_info("partial copy deleted", "key", key);
    }
    ostore_obj_release(&o);
}

/* Every destination key of the chosen snapshots, checked absent. */
static enum kerr plan(struct ostore *dst, const struct snapext_set *set, const size_t *idx,
                      size_t n, const struct snapcopy_opts *o, struct snapcopy_result *res,
                      struct kerr_info *err)
{
    res->v = calloc(n, sizeof *res->v);
    if (res->v == NULL) {
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    for (size_t i = 0; i < n; i++) {
        struct snapcopy_item *it = &res->v[res->n++];
        struct ostore_obj probe = { 0 };
        it->name = set->v[idx[i]].name;
        it->name.layout = 2;
        it->name.snap_dir[0] = '\0';
        it->source = strdup(set->v[idx[i]].obj.key);
        if (it->source == NULL) {
            return kerr_set(err, KERR_NOMEM, NULL);
        }
        enum kerr rc = snap_key(o->to_prefix, &it->name, &it->destination, err);
        rc = rc ? rc : dst->ops->head(dst, it->destination, &probe, err);
        ostore_obj_release(&probe);
        if (rc == KERR_OK) {
            return kerr_set(err, KERR_EXISTS,
                            "%s already exists in the destination; not "
                            "overwriting it",
                            it->destination);
        }
        if (rc != KERR_NOTFOUND) {
            return rc;
        }
    }
    return KERR_OK;
}

enum kerr snapcopy_run(struct ostore *src, struct ostore *dst, const struct snapcopy_opts *o,
                       struct snapcopy_result *res, struct kerr_info *err)
{
    struct snapext_set set = { 0 };
    size_t *idx = NULL;
    size_t n = 0, failed_at = 0;
    size_t bl = dst->part_size;
    unsigned char *buf[2] = { NULL, NULL };
    bool committed = false;
    memset(res, 0, sizeof *res);
    enum kerr rc = snapext_collect_both(src, o->from_prefix, o->from_also, &set, err);
    rc = rc ? rc : snapcopy_choose(&set, o, &idx, &n, err);
    rc = rc ? rc : plan(dst, &set, idx, n, o, res, err);
    /* two part buffers (snappipe.h); the second is touched only by objects of several parts */
    if (rc == KERR_OK && ((buf[0] = malloc(bl)) == NULL || (buf[1] = malloc(bl)) == NULL)) {
        rc = kerr_set(err, KERR_NOMEM, "cannot allocate the copy buffer");
    }
    for (size_t i = 0; rc == KERR_OK && i < n; i++) {
        struct snapcopy_item *it = &res->v[i];
        struct snapverify *v = NULL;
        committed = false;
        rc = check_stop(err);
        if (!o->skip_hash_check) {
            rc = rc ? rc : snapverify_for(&set.v[idx[i]].name, set.v[idx[i]].obj.key, &v, err);
        }
        rc = rc ? rc
                : copy_one(src, &set.v[idx[i]].obj, dst, it->destination, buf, bl, v, it,
                           &committed, err);
        snapverify_free(v);
        if (rc != KERR_OK) {
            failed_at = i;
        } else {
            log_info("snapshot copied", "name", it->name.name, "destination", it->destination);
        }
    }
    if (rc != KERR_OK) {
        /* Nothing partial: every object this run committed, and the one in flight once its
         * upload began, unless the store found the key taken by another writer. */
        size_t upto = failed_at + ((committed && rc != KERR_EXISTS) ? 1 : 0);
        for (size_t i = 0; i < upto; i++) {
            drop(dst, res->v[i].destination);
        }
    }
    if (rc != KERR_OK) {
        snapcopy_result_release(res);
    }
    free(buf[0]);
    free(buf[1]);
    free(idx);
    snapext_set_release(&set);
    return rc;
}

/* ---- the subcommand ---- */
