/* snapcopy - `warden-snapshot copy` between two stores (see snapcopy.h). */
#include "controller/snapshot/snapcopy.h"

#include <cJSON.h>
#include <getopt.h>
#include <openssl/evp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "common/ktime.h"
#include "common/log.h"
#include "controller/snapshot/snapverify.h"

/* Set by SIGTERM/SIGINT (snapcopy_main): the run stops between parts and rolls back. */
static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
    (void)sig;
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
                              struct ostore_upload *u, unsigned char *buf, size_t bl,
                              EVP_MD_CTX *md, struct snapverify *v, struct kerr_info *err)
{
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
                          const char *key, unsigned char *buf, size_t bl, struct snapverify *v,
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
    unsigned char *buf = NULL;
    bool committed = false;
    memset(res, 0, sizeof *res);
    enum kerr rc = snapext_collect(src, o->from_prefix, &set, err);
    rc = rc ? rc : snapcopy_choose(&set, o, &idx, &n, err);
    rc = rc ? rc : plan(dst, &set, idx, n, o, res, err);
    if (rc == KERR_OK && (buf = malloc(bl)) == NULL) {
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
    free(buf);
    free(idx);
    snapext_set_release(&set);
    return rc;
}

/* ---- the subcommand ---- */

struct side {
    struct ostore_config cfg;
    const char *prefix;
    const char *creds_dir;
    char *clean;       /* OWNS */
    int require_empty; /* --require-empty-destination (the destination side only) */
};

static const char *const cred_vars[] = { "AWS_APPLICATION_CREDENTIALS",
                                         "AWS_APPLICATION_CREDENTIALS_JSON",
                                         "AZURE_APPLICATION_CREDENTIALS",
                                         "AZURE_APPLICATION_CREDENTIALS_JSON" };
#define N_CRED_VARS (sizeof cred_vars / sizeof cred_vars[0])

/* Open one side; with a credentials directory, the providers read it through their usual
 * environment variables, set for the open and restored after. */
static enum kerr open_side(struct side *sd, struct ostore **out, struct kerr_info *err)
{
    char *saved[N_CRED_VARS] = { 0 };
    enum kerr rc = KERR_OK;
    if (sd->creds_dir) {
        for (size_t i = 0; i < N_CRED_VARS; i++) {
            const char *v = getenv(cred_vars[i]);
            if (v && (saved[i] = strdup(v)) == NULL) {
                rc = kerr_set(err, KERR_NOMEM, NULL);
            }
        }
        for (size_t i = 0; rc == KERR_OK && i < N_CRED_VARS; i++) {
            if ((i % 2 == 0 ? setenv(cred_vars[i], sd->creds_dir, 1) : unsetenv(cred_vars[i])) !=
                0) {
                rc = kerr_set(err, KERR_NOMEM, NULL);
            }
        }
    }
    rc = rc ? rc : ostore_open(&sd->cfg, out, err);
    for (size_t i = 0; sd->creds_dir && i < N_CRED_VARS; i++) {
        if (saved[i]) {
            setenv(cred_vars[i], saved[i], 1);
        } else {
            unsetenv(cred_vars[i]);
        }
        free(saved[i]);
    }
    return rc;
}

/*
 * --require-empty-destination: the destination prefix must hold no snapshot at all (as
 * etcd-backup-restore lists them, v1 and v2, excluded ones too), so that a restore copies
 * into a prefix no cluster has written: a store with other snapshots is refused before
 * anything is written.
 */
static enum kerr require_empty(struct ostore *dst, const char *prefix, struct kerr_info *err)
{
    struct snapext_set set = { 0 };
    enum kerr rc = snapext_collect(dst, prefix, &set, err);
    if (rc == KERR_OK && set.n > 0) {
        rc = kerr_set(err, KERR_EXISTS,
                      "the destination prefix \"%s\" already holds %zu snapshot(s) (%s): "
                      "--require-empty-destination",
                      prefix, set.n, set.v[0].obj.key);
    }
    snapext_set_release(&set);
    return rc;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: warden-snapshot copy --from-storage-provider P --from-store-container C "
               "--from-store-prefix X [--from-store-endpoint-override URL] "
               "[--from-credentials-dir DIR]\n"
               "           --to-storage-provider P --to-store-container C --to-store-prefix X "
               "[--to-store-endpoint-override URL] [--to-credentials-dir DIR]\n"
               "           [--snapshot NAME | [--latest-full] [--until TIME]] [--skip-hash-check] "
               "[--require-empty-destination] [-v]\n");
}

static void print_result(const struct snapcopy_opts *o, const struct snapcopy_result *r)
{
    cJSON *j = cJSON_CreateObject();
    cJSON *a = NULL;
    struct rusage ru;
    char *text = NULL;
    char when[KTIME_LEN + 1];
    cJSON_AddStringToObject(j, "from", o->from_prefix);
    cJSON_AddStringToObject(j, "to", o->to_prefix);
    a = cJSON_AddArrayToObject(j, "snapshots");
    for (size_t i = 0; a && i < r->n; i++) {
        const struct snapcopy_item *it = &r->v[i];
        cJSON *s = cJSON_CreateObject();
        if (s == NULL || !cJSON_AddItemToArray(a, s)) {
            cJSON_Delete(s);
            break;
        }
        cJSON_AddStringToObject(s, "name", it->name.name);
        cJSON_AddStringToObject(s, "kind", snap_kind_str(it->name.kind));
        cJSON_AddNumberToObject(s, "startRevision", (double)it->name.start_rev);
        cJSON_AddNumberToObject(s, "lastRevision", (double)it->name.last_rev);
        if (ktime_format((time_t)it->name.created, when) == KERR_OK) {
            cJSON_AddStringToObject(s, "createdOn", when);
        }
        cJSON_AddNumberToObject(s, "size", (double)it->size);
        cJSON_AddStringToObject(s, "md5", it->md5);
        cJSON_AddStringToObject(s, "source", it->source);
        cJSON_AddStringToObject(s, "destination", it->destination);
    }
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        cJSON_AddNumberToObject(j, "peakRssKiB", (double)ru.ru_maxrss);
    }
    text = cJSON_PrintUnformatted(j);
    printf("%s\n", text ? text : "{}");
    fflush(stdout);
    free(text);
    cJSON_Delete(j);
}

static int parse_until(const char *s, int64_t *out)
{
    char *end = NULL;
    struct timespec ts;
    if (s[0] >= '0' && s[0] <= '9') {
        long long v = strtoll(s, &end, 10);
        if (*end == '\0' && v > 0) {
            *out = v;
            return 0;
        }
    }
    if (ktime_parse(s, &ts, NULL) == KERR_OK && ts.tv_sec > 0) {
        *out = (int64_t)ts.tv_sec;
        return 0;
    }
    return -1;
}

enum {
    O_FP = 256,
    O_FC,
    O_FX,
    O_FE,
    O_FD,
    O_TP,
    O_TC,
    O_TX,
    O_TE,
    O_TD,
    O_SNAP,
    O_UNTIL,
    O_PART,
    O_SKIP,
    O_LATEST,
    O_EMPTY
};

static int parse(int argc, char **argv, struct side *from, struct side *to, struct snapcopy_opts *o,
                 int *verbose)
{
    static const struct option opts[] = {
        { "from-storage-provider", required_argument, NULL, O_FP },
        { "from-store-container", required_argument, NULL, O_FC },
        { "from-store-prefix", required_argument, NULL, O_FX },
        { "from-store-endpoint-override", required_argument, NULL, O_FE },
        { "from-credentials-dir", required_argument, NULL, O_FD },
        { "to-storage-provider", required_argument, NULL, O_TP },
        { "to-store-container", required_argument, NULL, O_TC },
        { "to-store-prefix", required_argument, NULL, O_TX },
        { "to-store-endpoint-override", required_argument, NULL, O_TE },
        { "to-credentials-dir", required_argument, NULL, O_TD },
        { "snapshot", required_argument, NULL, O_SNAP },
        { "until", required_argument, NULL, O_UNTIL },
        { "latest-full", no_argument, NULL, O_LATEST },
        { "part-size", required_argument, NULL, O_PART },
        { "skip-hash-check", no_argument, NULL, O_SKIP },
        { "require-empty-destination", no_argument, NULL, O_EMPTY },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char **slot[] = {
        [O_FP - O_FP] = &from->cfg.provider,
        [O_FC - O_FP] = &from->cfg.container,
        [O_FX - O_FP] = &from->prefix,
        [O_FE - O_FP] = &from->cfg.endpoint_override,
        [O_FD - O_FP] = &from->creds_dir,
        [O_TP - O_FP] = &to->cfg.provider,
        [O_TC - O_FP] = &to->cfg.container,
        [O_TX - O_FP] = &to->prefix,
        [O_TE - O_FP] = &to->cfg.endpoint_override,
        [O_TD - O_FP] = &to->creds_dir,
        [O_SNAP - O_FP] = &o->snapshot,
    };
    char *end = NULL;
    long long part = 0;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "v", opts, NULL)) != -1) {
        if (c >= O_FP && c <= O_SNAP) {
            *slot[c - O_FP] = optarg;
        } else if (c == O_UNTIL) {
            if (parse_until(optarg, &o->until) != 0) {
                fprintf(stderr, "warden-snapshot: --until must be Unix seconds or RFC 3339\n");
                return -1;
            }
        } else if (c == O_PART) {
            part = strtoll(optarg, &end, 10);
            if (*end != '\0' || part < 5 * 1024 * 1024 || part > 1024LL * 1024 * 1024) {
                fprintf(stderr, "warden-snapshot: --part-size is 5 MiB to 1 GiB\n");
                return -1;
            }
            from->cfg.part_size = to->cfg.part_size = (size_t)part;
        } else if (c == O_SKIP) {
            o->skip_hash_check = true;
        } else if (c == O_EMPTY) {
            to->require_empty = 1;
        } else if (c == O_LATEST) {
            o->latest_full = true;
        } else if (c == 'v') {
            (*verbose)++;
        } else if (c == 'h') {
            return 1;
        } else {
            return -1;
        }
    }
    if (optind != argc || !from->cfg.provider || !from->cfg.container || !from->prefix ||
        !to->cfg.provider || !to->cfg.container || !to->prefix) {
        return -1;
    }
    if (o->snapshot && (o->until > 0 || o->latest_full)) {
        fprintf(stderr, "warden-snapshot: --snapshot excludes --until and --latest-full\n");
        return -1;
    }
    return 0;
}

int snapcopy_main(int argc, char **argv)
{
    struct side from = { 0 };
    struct side to = { 0 };
    struct snapcopy_opts o = { 0 };
    struct snapcopy_result res = { 0 };
    struct kerr_info err = { 0 };
    struct ostore *src = NULL;
    struct ostore *dst = NULL;
    int verbose = 0;
    enum kerr rc;
    int p = parse(argc, argv, &from, &to, &o, &verbose);
    if (p != 0) {
        usage(p > 0 ? stdout : stderr);
        return p > 0 ? 0 : 2;
    }
    if (snap_clean_prefix(from.prefix, &from.clean, &err) != KERR_OK ||
        snap_clean_prefix(to.prefix, &to.clean, &err) != KERR_OK) {
        fprintf(stderr, "warden-snapshot: %s\n", err.msg);
        free(from.clean);
        return 2;
    }
    o.from_prefix = from.clean;
    o.to_prefix = to.clean;
    log_set_level(log_level_from_verbosity(verbose));
    /* A file size limit must fail the write (EFBIG), not kill the process. */
    signal(SIGXFSZ, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    /* A Job deleted or past its deadline gets SIGTERM: stop and remove what was written. */
    struct sigaction sa = { .sa_handler = on_stop };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    rc = open_side(&from, &src, &err);
    rc = rc ? kerr_wrap(&err, "source store") : open_side(&to, &dst, &err);
    if (rc == KERR_OK && dst == NULL) {
        rc = KERR_INTERNAL;
    }
    rc = rc || !to.require_empty ? rc : require_empty(dst, to.clean, &err);
    rc = rc ? rc : snapcopy_run(src, dst, &o, &res, &err);
    if (rc == KERR_OK) {
        print_result(&o, &res);
        snapcopy_write_termination_log(&res, NULL);
    } else {
        log_error("copy failed", "error", err.msg[0] ? err.msg : kerr_str(rc));
        snapcopy_write_termination_log(NULL, err.msg[0] ? err.msg : kerr_str(rc));
    }
    snapcopy_result_release(&res);
    ostore_free(src);
    ostore_free(dst);
    free(from.clean);
    free(to.clean);
    return rc == KERR_OK ? 0 : 1;
}
