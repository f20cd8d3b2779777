/* snapchain - the chain a restore would use, selected and verified (see snapchain.h). */
#include "controller/snapshot/snapchain.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "controller/snapshot/snapdb.h"
#include "controller/snapshot/snapdelta.h"
#include "controller/snapshot/snapfetch.h"
#include "controller/snapshot/snapkeys.h"
#include "controller/snapshot/snapreplay.h"
#include "controller/snapshot/snapverify.h"

#define READ_BUF (4u << 20)

static void obj_release(struct snapchain_obj *o)
{
    free(o->key);
    free(o->listed);
    ostore_obj_release(&o->obj);
}

void snapchain_release(struct snapchain *c)
{
    for (size_t i = 0; c && i < c->n; i++)
        obj_release(&c->v[i]);
    if (c) {
        free(c->v);
        free(c->prefix);
        memset(c, 0, sizeof *c);
    }
}

static int obj_cmp(const void *a, const void *b)
{
    return snap_cmp(&((const struct snapchain_obj *)a)->name,
                    &((const struct snapchain_obj *)b)->name);
}

/* path.Join(prefix, rest) as the sidecar's listing rebuilds a key; OWNS. */
static char *rebuild(const char *prefix, const char *rest)
{
    char *joined = buf_dupf(8192, "%s/%s", prefix, rest), *clean = NULL;
    if (joined && snap_clean_prefix(*prefix ? joined : rest, &clean, NULL) != KERR_OK)
        clean = NULL;
    free(joined);
    return clean;
}

/* One listed object into v[*n] when the sidecar's listing takes it. */
static enum kerr take(const struct snapchain *c, const struct ostore_obj *o, int64_t at, bool local,
                      struct snapchain_obj *dst, bool *taken, struct kerr_info *err)
{
    size_t pl = strlen(c->prefix);
    const char *rest = o->key + pl;
    struct snap_name sn;
    char *key;

    *taken = false;
    if (o->excluded || strncmp(o->key, c->prefix, pl) != 0 ||
        (!strstr(rest, "v1/") && !strstr(rest, "v2/")))
        return KERR_OK;
    key = local ? strdup(o->key) : rebuild(c->prefix, rest);
    if (key == NULL)
        return kerr_set(err, KERR_NOMEM, NULL);
    if (snap_parse(key, &sn, NULL) != KERR_OK || sn.created > at) {
        free(key);
        return KERR_OK;
    }
    memset(dst, 0, sizeof *dst);
    dst->name = sn;
    dst->key = key;
    dst->listed = strdup(o->key);
    dst->foreign = sn.prefix_len != pl + (pl > 0) || strncmp(key, c->prefix, pl) != 0;
    if (dst->listed == NULL) {
        obj_release(dst);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    *taken = true;
    return KERR_OK;
}

/* The object of l whose key is o->key, copied into o->obj; none: o->obj.key stays NULL. */
static enum kerr find_obj(const struct ostore_list *l, struct snapchain_obj *o,
                          struct kerr_info *err)
{
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->v[i].key, o->key) != 0)
            continue;
        o->obj = l->v[i];
        o->obj.key = strdup(l->v[i].key);
        o->obj.version_id = l->v[i].version_id ? strdup(l->v[i].version_id) : NULL;
        if (!o->obj.key || (l->v[i].version_id && !o->obj.version_id))
            return kerr_set(err, KERR_NOMEM, NULL);
        return KERR_OK;
    }
    return KERR_OK;
}

/* Keep only the latest full snapshot and the deltas after it (v sorted). */
static void pick(struct snapchain *c)
{
    size_t full = c->n, nd = 0;
    for (size_t i = c->n; i-- > 0;) {
        if (!c->v[i].name.is_chunk && c->v[i].name.kind == SNAP_FULL) {
            full = i;
            break;
        }
    }
    if (full == c->n) {
        for (size_t i = 0; i < c->n; i++)
            obj_release(&c->v[i]);
        c->n = 0;
        return;
    }
    for (size_t i = 0; i < c->n; i++) {
        struct snapchain_obj *o = &c->v[i];
        if (i == full)
            c->v[0] = *o;
        else if (i > full && !o->name.is_chunk)
            c->v[1 + nd++] = *o;
        else
            obj_release(o);
    }
    c->n = 1 + nd;
}

enum kerr snapchain_select(const struct ostore_list *l, const char *prefix, int64_t at, bool local,
                           struct snapchain *out, struct kerr_info *err)
{
    enum kerr rc;

    memset(out, 0, sizeof *out);
    if ((rc = snap_clean_prefix(prefix, &out->prefix, err)) != KERR_OK)
        return rc;
    if (l->n && (out->v = calloc(l->n, sizeof *out->v)) == NULL)
        rc = kerr_set(err, KERR_NOMEM, NULL);
    for (size_t i = 0; rc == KERR_OK && i < l->n; i++) {
        bool taken = false;
        rc = take(out, &l->v[i], at, local, &out->v[out->n], &taken, err);
        out->n += taken;
    }
    out->snapshots = (long)out->n;
    if (rc == KERR_OK && out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, obj_cmp);
    if (rc == KERR_OK)
        pick(out);
    for (size_t i = 0; rc == KERR_OK && i < out->n; i++)
        rc = find_obj(l, &out->v[i], err);
    if (rc != KERR_OK)
        snapchain_release(out);
    return rc;
}

/* Reading one object through the verifier, its bytes tapped. */
struct reader {
    int fd;                  /* the spool of a full snapshot, else -1 */
    struct snapdelta *delta; /* a delta's parser, else NULL */
    struct kerr_info fault;  /* the first fault of the tapped consumer (sticky) */
    bool failed;
};

static enum kerr tap(void *ctx, const unsigned char *p, size_t n, struct kerr_info *err)
{
    struct reader *r = ctx;
    (void)err;
    if (r->failed)
        return KERR_OK;
    if (r->fd >= 0) {
        for (size_t off = 0; off < n;) {
            ssize_t w = write(r->fd, p + off, n - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                r->failed = true;
                kerr_set(&r->fault, KERR_IO, "spooling the snapshot: %m");
                return KERR_OK;
            }
            off += (size_t)w;
        }
    } else if (snapdelta_update(r->delta, p, n, &r->fault) != KERR_OK) {
        r->failed = true;
    }
    return KERR_OK;
}

/* Read o (the chain's object idx) through the verifier into r, its pieces from f where it
 * fetched them ahead; KERR_PARSE with the reason when the object fails. */
static enum kerr read_obj(struct ostore *s, struct snapfetch *f, size_t idx,
                          const struct snapchain_obj *o, struct reader *r, bool delta,
                          char hex[SNAPVERIFY_HEX_LEN + 1], struct kerr_info *err)
{
    struct snapverify *v = NULL;
    unsigned char *buf = NULL;
    enum kerr rc = snapverify_new(o->name.compression, &v, err);

    if (rc == KERR_UNSUPPORTED)
        return KERR_PARSE;
    if (rc == KERR_OK)
        snapverify_tap(v, tap, r, delta);
    for (int64_t off = 0; rc == KERR_OK && off < o->obj.size;) {
        size_t n = (size_t)(o->obj.size - off < READ_BUF ? o->obj.size - off : READ_BUF);
        const unsigned char *data = NULL;
        bool taken = snapfetch_take(f, idx, off, n, &data, &rc, err);
        if (!taken && !buf && (buf = malloc(READ_BUF)) == NULL) {
            rc = kerr_set(err, KERR_NOMEM, NULL);
            break;
        }
        if (!taken) {
            rc = s->ops->read(s, &o->obj, off, buf, n, err);
            data = buf;
        }
        if (rc != KERR_OK) {
            kerr_wrap(err, "cannot read it at %lld", (long long)off);
            rc = KERR_PARSE;
        } else {
            rc = snapverify_update(v, data, n, err);
        }
        if (taken)
            snapfetch_release(f);
        off += (int64_t)n;
    }
    rc = rc ? rc : snapverify_finish(v, hex, err);
    if (rc == KERR_OK && delta && !r->failed && snapdelta_finish(r->delta, &r->fault) != KERR_OK)
        r->failed = true;
    if (rc == KERR_OK && r->failed) {
        *err = r->fault;
        rc = r->fault.code == KERR_PARSE || r->fault.code == KERR_TOOBIG ? KERR_PARSE
                                                                         : r->fault.code;
    }
    free(buf);
    snapverify_free(v);
    return rc;
}

static int spool_open(const char *dir, struct kerr_info *err)
{
    const char *d = dir ? dir : getenv("TMPDIR");
    char *path = buf_dupf(4096, "%s/warden-verify-XXXXXX", d && *d ? d : "/tmp");
    int fd = path ? mkstemp(path) : -1;
    if (fd < 0)
        kerr_set(err, KERR_IO, "cannot create a temporary file in %s: %m", d && *d ? d : "/tmp");
    else
        unlink(path);
    free(path);
    return fd;
}

/* The object's own faults before any byte is read. */
static enum kerr present(const struct snapchain *c, const struct snapchain_obj *o,
                         struct kerr_info *err)
{
    if (o->obj.key == NULL)
        return kerr_set(err, KERR_PARSE,
                        "NoSuchKey: the restore fetches %s, which is not in the store (listed "
                        "as %s, under another prefix)",
                        o->key, o->listed);
    if (o->foreign)
        return kerr_set(err, KERR_PARSE,
                        "the snapshot belongs to another cluster prefix than \"%s\": the "
                        "restore would bring up that cluster's data",
                        c->prefix);
    return KERR_OK;
}

static enum kerr check_full(struct ostore *s, struct snapfetch *f, const struct snapchain *c,
                            const struct snapchain_opts *o, struct snapkeys *keys,
                            struct snapchain_result *res, struct kerr_info *err)
{
    struct reader r = { .fd = -1 };
    enum kerr rc = present(c, &c->v[0], err);
    off_t size;

    if (rc != KERR_OK)
        return rc;
    if ((r.fd = spool_open(o->tmp_dir, err)) < 0)
        return KERR_IO;
    rc = read_obj(s, f, 0, &c->v[0], &r, false, res->full_sha256, err);
    if (rc == KERR_OK && (size = lseek(r.fd, 0, SEEK_END)) < 0)
        rc = kerr_set(err, KERR_IO, "spool: %m");
    if (rc == KERR_OK) {
        rc = snapdb_scan_fd(r.fd, (int64_t)size, keys, &res->bolt, err);
        if (rc != KERR_OK)
            kerr_wrap(err, "the database");
    }
    close(r.fd);
    return rc;
}

static enum kerr check_delta(struct ostore *s, struct snapfetch *f, const struct snapchain *c,
                             size_t i, struct snapreplay *rp, struct kerr_info *err)
{
    char hex[SNAPVERIFY_HEX_LEN + 1];
    bool again = false;
    enum kerr rc = present(c, &c->v[i], err);

    for (int pass = 0; rc == KERR_OK && pass < 2; pass++) {
        struct reader r = { .fd = -1 };
        if ((rc = snapdelta_new(SNAPDELTA_EVENT_MAX, snapreplay_event, rp, &r.delta, err)))
            break;
        snapreplay_begin(rp, i == 1, pass == 1);
        rc = read_obj(s, f, i, &c->v[i], &r, true, hex, err);
        snapdelta_free(r.delta);
        if (rc == KERR_OK)
            rc = snapreplay_end(rp, c->v[i].name.last_rev, &again, err);
        if (rc != KERR_OK || !again)
            break;
    }
    return rc;
}

/* Fetch the chain's objects ahead through o's fetchers (only those the restore can read). */
static enum kerr fetch_start(const struct snapchain *c, const struct snapchain_opts *o,
                             struct snapfetch_item **items, struct snapfetch **f,
                             struct kerr_info *err)
{
    if ((*items = calloc(c->n, sizeof(**items))) == NULL)
        return kerr_set(err, KERR_NOMEM, NULL);
    for (size_t i = 0; i < c->n; i++)
        (*items)[i].obj = c->v[i].obj.key && !c->v[i].foreign ? &c->v[i].obj : NULL;
    return snapfetch_start(o->fetchers, o->nfetchers, *items, c->n, READ_BUF,
                           o->nfetchers + SNAPCHAIN_FETCH_SLOTS_EXTRA, f, err);
}

enum kerr snapchain_verify(struct ostore *s, const struct snapchain *c,
                           const struct snapchain_opts *o, struct snapchain_result *res,
                           struct kerr_info *err)
{
    struct snapkeys *keys = NULL;
    struct snapfetch *f = NULL;
    struct snapfetch_item *items = NULL;
    struct snapreplay rp;
    struct kerr_info why = { 0 };
    enum kerr rc;

    memset(res, 0, sizeof *res);
    res->fault = -1;
    if (c->n == 0) {
        snprintf(res->reason, sizeof res->reason, "no full snapshot under the prefix%s",
                 c->snapshots ? " (only deltas)" : "");
        return KERR_OK;
    }
    if ((rc = snapkeys_new(o->max_keys ? o->max_keys : SNAPCHAIN_DEFAULT_MAX_KEYS, &keys, err)))
        return rc;
    if (o->nfetchers && (rc = fetch_start(c, o, &items, &f, err)) != KERR_OK) {
        snapkeys_free(keys);
        return rc;
    }
    res->checked = 1;
    rc = check_full(s, f, c, o, keys, res, &why);
    snapreplay_init(&rp, keys, res->bolt.revision);
    for (size_t i = 1; rc == KERR_OK && i < c->n; i++) {
        res->checked = i + 1;
        rc = check_delta(s, f, c, i, &rp, &why);
    }
    snapfetch_free(f);
    free(items);
    res->revision = rp.rev;
    res->keys = (int64_t)snapkeys_count(keys);
    res->events = rp.events;
    snapreplay_release(&rp);
    snapkeys_free(keys);
    if (rc == KERR_NOMEM || rc == KERR_IO || rc == KERR_INTERNAL)
        return kerr_set(err, rc, "%s", why.msg);
    res->restorable = rc == KERR_OK;
    if (!res->restorable) {
        res->fault = (long)res->checked - 1;
        snprintf(res->reason, sizeof res->reason, "%s", why.msg[0] ? why.msg : kerr_str(rc));
    }
    return KERR_OK;
}
