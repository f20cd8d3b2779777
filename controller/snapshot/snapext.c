/* snapext - list and extend-snapshot-immutability (see snapext.h). */
#include "controller/snapshot/snapext.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "common/buf.h"
#include "common/ktime.h"
#include "common/log.h"
#include "controller/snapshot/snapverify.h"

static int entry_cmp(const void *a, const void *b)
{
    const struct snapext_entry *x = a;
    const struct snapext_entry *y = b;
    int c = snap_cmp(&x->name, &y->name);
    return c ? c : strcmp(x->obj.key, y->obj.key);
}

void snapext_set_release(struct snapext_set *set)
{
    for (size_t i = 0; set && i < set->n; i++) {
        ostore_obj_release(&set->v[i].obj);
    }
    if (set) {
        free(set->v);
        set->v = NULL;
        set->n = 0;
    }
}

enum kerr snapext_collect(struct ostore *s, const char *store_prefix, struct snapext_set *out,
                          struct kerr_info *err)
{
    struct ostore_list l = { 0 };
    size_t pl = strlen(store_prefix);
    char *listp = buf_dupf(4096, "%s%s", store_prefix, pl ? "/" : "");
    enum kerr rc = listp ? s->ops->list(s, listp, &l, err) : kerr_set(err, KERR_NOMEM, NULL);
    out->v = NULL;
    out->n = 0;
    if (rc == KERR_OK && l.n > 0 && (out->v = calloc(l.n, sizeof *out->v)) == NULL) {
        rc = kerr_set(err, KERR_NOMEM, NULL);
    }
    for (size_t i = 0; rc == KERR_OK && i < l.n; i++) {
        struct snap_name sn;
        if (snap_parse(l.v[i].key, &sn, NULL) != KERR_OK || sn.prefix_len != strlen(listp) ||
            strncmp(l.v[i].key, listp, sn.prefix_len) != 0) {
            log_debug("not a snapshot, ignored", "key", l.v[i].key);
            continue;
        }
        out->v[out->n].name = sn;
        out->v[out->n++].obj = l.v[i];
        memset(&l.v[i], 0, sizeof l.v[i]);
    }
    ostore_list_release(&l);
    free(listp);
    if (rc != KERR_OK) {
        snapext_set_release(out);
        return rc;
    }
    if (out->n > 1) {
        qsort(out->v, out->n, sizeof *out->v, entry_cmp);
    }
    return KERR_OK;
}

enum kerr snapext_collect_both(struct ostore *s, const char *store_prefix, const char *also,
                               struct snapext_set *out, struct kerr_info *err)
{
    struct snapext_set b = { 0 };
    struct snapext_entry *v;
    enum kerr rc = snapext_collect(s, store_prefix, out, err);

    if (rc != KERR_OK || !also || !*also)
        return rc;
    rc = snapext_collect(s, also, &b, err);
    if (rc == KERR_OK && b.n > 0) {
        v = realloc(out->v, (out->n + b.n) * sizeof(*v));
        if (!v) {
            rc = kerr_set(err, KERR_NOMEM, NULL);
        } else {
            memcpy(v + out->n, b.v, b.n * sizeof(*v));
            out->v = v;
            out->n += b.n;
            free(b.v); /* its entries are out's now */
            b.v = NULL;
            b.n = 0;
            qsort(out->v, out->n, sizeof *out->v, entry_cmp);
        }
    }
    snapext_set_release(&b);
    if (rc != KERR_OK)
        snapext_set_release(out);
    return rc;
}

static const char *time_str(int64_t t, char out[KTIME_LEN + 1])
{
    if (t <= 0 || ktime_format((time_t)t, out) != KERR_OK) {
        return "unknown";
    }
    return out;
}

enum kerr snapext_print(const struct snapext_set *set, FILE *f, struct kerr_info *err)
{
    for (size_t i = 0; i < set->n; i++) {
        const struct snapext_entry *e = &set->v[i];
        char created[KTIME_LEN + 1];
        char until[KTIME_LEN + 1];
        int n = fprintf(f,
                        "%s kind=%s start=%lld last=%lld created=%s(%lld) compression=%s "
                        "final=%s chunk=%s exclude=%s immutable-until=%s size=%lld%s%s\n",
                        e->obj.key, snap_kind_str(e->name.kind), (long long)e->name.start_rev,
                        (long long)e->name.last_rev, time_str(e->name.created, created),
                        (long long)e->name.created,
                        e->name.compression[0] ? e->name.compression + 1 : "none",
                        e->name.is_final ? "true" : "false", e->name.is_chunk ? "true" : "false",
                        e->obj.excluded ? "true" : "false", time_str(e->obj.immutable_until, until),
                        (long long)e->obj.size, e->hash ? " sha256=" : "", e->hash ? e->hash : "");
        if (n < 0) {
            return kerr_set(err, KERR_IO, "cannot write the listing");
        }
    }
    return fflush(f) == 0 ? KERR_OK : kerr_set(err, KERR_IO, "cannot write the listing");
}

/* KERR_IO naming the object when it is corrupt; KERR_OK when verified (hex: its digest) or
 * unverifiable (LZW: logged, hex ""). */
static enum kerr verify_one(struct ostore *s, const struct snapext_entry *e, const char **mark,
                            char hex[SNAPVERIFY_HEX_LEN + 1], struct kerr_info *err)
{
    struct kerr_info e2 = { 0 };
    hex[0] = '\0';
    enum kerr rc = snapverify_object(s, &e->obj, e->name.compression, hex, &e2);
    if (rc == KERR_UNSUPPORTED) {
        log_warn("snapshot not verified", "key", e->obj.key, "reason", e2.msg);
        *mark = "unchecked";
        hex[0] = '\0';
        return KERR_OK;
    }
    if (rc == KERR_PARSE) {
        *mark = "corrupt";
        return kerr_set(err, KERR_IO, "snapshot %s is corrupt: %s", e->obj.key, e2.msg);
    }
    if (rc != KERR_OK) {
        return kerr_set(err, rc, "verifying %s: %s", e->obj.key, e2.msg);
    }
    *mark = "ok";
    log_info("snapshot verified", "key", e->obj.key, "sha256", hex);
    return KERR_OK;
}

enum kerr snapext_verify_all(struct ostore *s, struct snapext_set *set, struct kerr_info *err)
{
    for (size_t i = 0; i < set->n; i++) {
        struct snapext_entry *e = &set->v[i];
        struct kerr_info e2 = { 0 };
        char hex[SNAPVERIFY_HEX_LEN + 1];
        if (e->name.kind != SNAP_FULL || e->name.is_chunk) {
            continue;
        }
        enum kerr rc = verify_one(s, e, &e->hash, hex, &e2);
        if (rc != KERR_OK && e->hash == NULL) {
            return kerr_set(err, rc, "%s", e2.msg);
        }
        if (rc != KERR_OK) {
            log_warn("corrupt snapshot", "key", e->obj.key, "error", e2.msg);
        }
    }
    return KERR_OK;
}

enum kerr snapext_mark_recorded(struct ostore *s, struct snapext_set *set, struct kerr_info *err)
{
    (void)err;
    for (size_t i = 0; i < set->n; i++) {
        struct snapext_entry *e = &set->v[i];
        struct ostore_obj h = { 0 };
        struct kerr_info e2 = { 0 };
        if (e->name.kind != SNAP_FULL || e->name.is_chunk) {
            continue;
        }
        enum kerr rc = s->ops->head(s, e->obj.key, &h, &e2);
        if (rc != KERR_OK && rc != KERR_NOTFOUND) { /* not found: under a delete marker */
            log_warn("cannot read a snapshot's recorded digest", "key", e->obj.key, "error",
                     e2.msg);
        }
        e->hash = rc == KERR_OK && h.own_copy && strlen(h.sha256) == SNAPVERIFY_HEX_LEN
                      ? "recorded"
                      : "unchecked";
        ostore_obj_release(&h);
    }
    return KERR_OK;
}

/*
 * Before src is copied or extended: a copy warden-snapshot verified before carries the
 * digest (OSTORE_SHA256) and is not read again; anything else is read and verified. The
 * digest is then recorded on the new copy (s->copy_sha256).
 */
static enum kerr verify_source(struct ostore *s, const struct snapext_entry *src,
                               struct kerr_info *err)
{
    struct ostore_obj h = { 0 };
    struct kerr_info e2 = { 0 };
    const char *mark = NULL;
    s->copy_sha256[0] = '\0';
    if (s->ops->head(s, src->obj.key, &h, &e2) == KERR_OK && h.own_copy &&
        strlen(h.sha256) == SNAPVERIFY_HEX_LEN) {
        snprintf(s->copy_sha256, sizeof s->copy_sha256, "%s", h.sha256);
        log_info("snapshot verified before, not read again", "key", src->obj.key, "sha256",
                 h.sha256);
        ostore_obj_release(&h);
        return KERR_OK;
    }
    ostore_obj_release(&h);
    return verify_one(s, src, &mark, s->copy_sha256, err);
}

static bool same_snapshot(const struct snapext_entry *e, const struct snap_name *src)
{
    return e->name.kind == SNAP_FULL && !e->name.is_chunk && e->name.start_rev == src->start_rev &&
           e->name.last_rev == src->last_rev;
}

/*
 * What to copy: the revisions of the latest full snapshot that is not excluded, and of
 * those objects the oldest (the snapshot the sidecar took; later ones are copies, and a
 * copy is never trusted as a source: a bad one would be copied on and on). NULL if none.
 */
static const struct snapext_entry *source_full(const struct snapext_set *set)
{
    const struct snapext_entry *latest = NULL;
    for (size_t i = set->n; i > 0 && latest == NULL; i--) {
        const struct snapext_entry *e = &set->v[i - 1];
        if (e->name.kind == SNAP_FULL && !e->name.is_chunk && !e->obj.excluded) {
            latest = e;
        }
    }
    for (size_t i = 0; latest && i < set->n; i++) {
        if (same_snapshot(&set->v[i], &latest->name) && !set->v[i].obj.excluded) {
            return &set->v[i]; /* sorted by revisions, then creation time */
        }
    }
    return latest;
}

static enum kerr new_key(const struct snapext_opts *o, const struct snap_name *src, char **key,
                         struct kerr_info *err)
{
    struct snap_name n = *src;
    n.created = o->now;
    if (n.layout == 1) {
        snprintf(n.snap_dir, sizeof n.snap_dir, "Backup-%lld", (long long)o->now);
    }
    enum kerr rc = snap_build_name(&n, err);
    return rc ? rc : snap_key(o->prefix, &n, key, err);
}

/*
 * A copy this task made earlier. The oldest object with the source's revisions is the
 * snapshot the sidecar took, never a copy: it is kept even when it was taken in the same
 * second as the task was created (its creation time then equals --gc-from-timestamp).
 */
static bool collectable(const struct snapext_entry *e, const struct snapext_entry *original,
                        const struct snapext_opts *o, const char *new_copy)
{
    return e != original && !e->obj.excluded && e->name.created >= o->gc_from &&
           e->name.created < o->now && strcmp(e->obj.key, new_copy) != 0;
}

static enum kerr collect_garbage(struct ostore *s, const struct snapext_set *set,
                                 const struct snap_name *src, const struct snapext_opts *o,
                                 struct snapext_result *res, struct kerr_info *err)
{
    enum kerr first = KERR_OK;
    const struct snapext_entry *original = NULL;
    for (size_t i = 0; i < set->n; i++) {
        const struct snapext_entry *e = &set->v[i];
        struct kerr_info e2 = { 0 };
        if (!same_snapshot(e, src)) {
            continue;
        }
        if (original == NULL) {
            original = e; /* the set is sorted by revisions, then creation time */
        }
        if (!collectable(e, original, o, res->copy)) {
            continue;
        }
        /* Only what warden-snapshot wrote: the sidecar's own snapshots with these revisions
         * (a wake-up snapshot, a final one taken a second off) carry no mark. */
        struct ostore_obj h = { 0 };
        enum kerr hr = s->ops->head(s, e->obj.key, &h, &e2);
        bool own = hr == KERR_OK && h.own_copy;
        ostore_obj_release(&h);
        if (hr != KERR_OK && hr != KERR_NOTFOUND) {
            log_warn("cannot read an earlier copy's mark, kept", "key", e->obj.key, "error",
                     e2.msg);
        }
        if (!own) {
            log_info("not written by warden-snapshot, kept", "key", e->obj.key);
            continue;
        }
        if (o->dry_run) {
            log_info("dry run: would delete an earlier copy", "key", e->obj.key);
            continue;
        }
        enum kerr rc = s->ops->del(s, &e->obj, &e2);
        if (rc == KERR_OK) {
            res->deleted++;
            log_info("deleted an earlier copy", "key", e->obj.key);
        } else if (rc == KERR_FORBIDDEN) {
            res->immutable++;
            log_info("earlier copy still immutable, kept until a later run", "key", e->obj.key,
                     "reason", e2.msg);
        } else {
            log_warn("cannot delete an earlier copy", "key", e->obj.key, "error", e2.msg);
            if (first == KERR_OK) {
                first = kerr_set(err, rc, "deleting %s: %s", e->obj.key, e2.msg);
            }
        }
    }
    return first;
}

/* The latest full snapshot that is not excluded: the one a restore takes. */
static const struct snapext_entry *restore_full(const struct snapext_set *set)
{
    for (size_t i = set->n; i > 0; i--) {
        const struct snapext_entry *e = &set->v[i - 1];
        if (e->name.kind == SNAP_FULL && !e->name.is_chunk && !e->obj.excluded) {
            return e;
        }
    }
    return NULL;
}

/* --mode extend-in-place/auto: KERR_UNSUPPORTED (auto: copy instead) where the store has
 * no object-level lock. */
static enum kerr extend_in_place(struct ostore *s, const struct snapext_set *set,
                                 const struct snapext_opts *o, struct snapext_result *res,
                                 struct kerr_info *err)
{
    const struct snapext_entry *e = restore_full(set);
    if (e == NULL) {
        return kerr_set(err, KERR_NOTFOUND, "no full snapshot under %s/v1 or %s/v2", o->prefix,
                        o->prefix);
    }
    if (s->ops->extend == NULL) {
        return kerr_set(err, KERR_UNSUPPORTED, "%s has no object-level lock", s->ops->name);
    }
    snprintf(res->source, sizeof res->source, "%s", e->obj.key);
    if (o->verify) {
        enum kerr rc = verify_source(s, e, err);
        if (rc != KERR_OK) {
            return rc; /* not extended */
        }
        res->verified = true;
    }
    if (o->dry_run && o->mode == SNAPEXT_AUTO) {
        return kerr_set(err, KERR_UNSUPPORTED, "a dry run of auto shows the copy");
    }
    if (o->dry_run) {
        log_info("dry run: would extend the retention in place", "key", e->obj.key);
        res->in_place = true;
        return KERR_OK;
    }
    enum kerr rc = s->ops->extend(s, &e->obj, o->retention, &res->until, err);
    res->in_place = rc == KERR_OK;
    return rc;
}

/* The new copy's retain-until date as a head of it reads it; 0 when unknown (logged). */
static void copy_until(struct ostore *s, const char *key, int64_t *until)
{
    struct ostore_obj h = { 0 };
    struct kerr_info e2 = { 0 };
    *until = 0;
    if (s->ops->head(s, key, &h, &e2) == KERR_OK) {
        *until = h.immutable_until;
    } else {
        log_warn("cannot read the new copy's retention", "key", key, "error", e2.msg);
    }
    ostore_obj_release(&h);
}

void snapext_write_termination_log(const struct snapext_result *res, const char *error)
{
    const char *path = getenv("WARDEN_TERMINATION_LOG");
    char until[KTIME_LEN + 1];
    cJSON *o = cJSON_CreateObject();
    char *text = NULL;
    bool ok = o != NULL;
    if (ok && res == NULL) {
        ok = cJSON_AddStringToObject(o, "error", error ? error : "failed") != NULL;
    } else if (ok) {
        ok = cJSON_AddStringToObject(o, "source", res->source) &&
             cJSON_AddStringToObject(o, "copy", res->copy) &&
             cJSON_AddBoolToObject(o, "inPlace", res->in_place) &&
             (res->until <= 0 || ktime_format((time_t)res->until, until) != KERR_OK ||
              cJSON_AddStringToObject(o, "immutableUntil", until));
    }
    text = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    int fd = path && *path ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
                           : open("/dev/termination-log", O_WRONLY | O_TRUNC | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (f == NULL && fd >= 0) {
        close(fd);
    }
    if (f != NULL) {
        fprintf(f, "%s\n", text ? text : "{}");
        fclose(f);
    }
    free(text);
}

enum kerr snapext_extend(struct ostore *s, const struct snapext_opts *o, struct snapext_result *res,
                         struct kerr_info *err)
{
    struct snapext_set set = { 0 };
    struct ostore_copy_result cr;
    char *dst = NULL;
    char verified[sizeof res->source] = "";
    memset(res, 0, sizeof *res);
    enum kerr rc = snapext_collect(s, o->prefix, &set, err);
    if (rc != KERR_OK) {
        return rc;
    }
    if (o->mode != SNAPEXT_COPY) {
        rc = extend_in_place(s, &set, o, res, err);
        if (rc != KERR_UNSUPPORTED || o->mode == SNAPEXT_IN_PLACE) {
            goto out;
        }
        log_info("no object-level lock here: copying instead", "reason", err ? err->msg : "");
        /* the snapshot verified for the extension need not be read again for the copy */
        snprintf(verified, sizeof verified, "%s", res->verified ? res->source : "");
        memset(res, 0, sizeof *res);
        rc = KERR_OK;
    }
    const struct snapext_entry *src = source_full(&set);
    if (src == NULL) {
        rc = kerr_set(err, KERR_NOTFOUND, "no full snapshot under %s/v1 or %s/v2", o->prefix,
                      o->prefix);
        goto out;
    }
    rc = new_key(o, &src->name, &dst, err);
    if (rc != KERR_OK) {
        goto out;
    }
    snprintf(res->source, sizeof res->source, "%s", src->obj.key);
    snprintf(res->copy, sizeof res->copy, "%s", dst);
    if (src->name.created >= o->now) {
        rc = kerr_set(err, KERR_INVAL, "latest full snapshot %s is not older than now (%lld)",
                      src->obj.key, (long long)o->now);
        goto out;
    }
    log_info(o->dry_run ? "dry run: would copy the latest full snapshot"
                        : "copying the latest full snapshot",
             "source", src->obj.key, "copy", dst, "mode", o->server_copy ? "server" : "stream");
    if (o->verify && strcmp(verified, src->obj.key) != 0) {
        rc = verify_source(s, src, err);
        if (rc != KERR_OK) {
            goto out; /* nothing copied, nothing collected */
        }
    }
    if (!o->dry_run) {
        rc = ostore_copy(s, &src->obj, dst, o->server_copy, &cr, err);
        s->copy_sha256[0] = '\0';
        if (rc != KERR_OK) {
            goto out;
        }
        res->server = cr.server;
        log_info("copy verified", "copy", dst, "mode", cr.server ? "server" : "stream");
        copy_until(s, dst, &res->until);
    }
    rc = collect_garbage(s, &set, &src->name, o, res, err);
out:
    s->copy_sha256[0] = '\0';
    free(dst);
    snapext_set_release(&set);
    return rc;
}
