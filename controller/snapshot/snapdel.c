/* snapdel - delete-snapshots: every object of a prefix, as a path; see snapdel.h. */
#include "controller/snapshot/snapdel.h"

#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "common/bstore.h"
#include "common/ktime.h"
#include "common/log.h"
#include "controller/snapshot/providers/ptable.h"
#include "controller/snapshot/snapflag.h"
#include "controller/snapshot/snapname.h"

/* Is key the object prefix p (not "") itself or under it? */
static bool under(const char *p, const char *key)
{
    size_t n = strlen(p);

    return strncmp(key, p, n) == 0 && (key[n] == '\0' || key[n] == '/');
}

/*
 * Whether key, under p, is a snapshot of another prefix below p: etcd-backup-restore splits a
 * key at its last "v1/" or "v2/" (snapname), so "p/etcd-events/v2/Full-..." is the snapshot of
 * prefix "p/etcd-events", which the sidecar of p lists too but never writes (a cluster on a
 * prefix below p, from before etcd-warden judged prefixes, or one the operator released).
 * A p that is itself a snapshot's key (an EtcdBackup's copy) or holds the "v2/" splits before
 * its end: its objects are its own.
 */
static bool below(const char *p, const char *key)
{
    struct snap_name sn;

    return snap_parse(key, &sn, NULL) == KERR_OK && sn.prefix_len > strlen(p) + 1;
}

/* An upper bound of s's length as a JSON string's contents (cJSON's escapes). */
static size_t json_len(const char *s)
{
    size_t n = 0;

    for (; *s; s++)
        n += (unsigned char)*s < 0x20 ? 6 : (*s == '"' || *s == '\\') ? 2 : 1;
    return n;
}

/*
 * Count a key of another prefix the listing returned; the first ones are named, as long
 * as they fit in SNAPDEL_FOREIGN_BYTES together.
 */
static enum kerr add_foreign(struct snapdel_result *res, const char *key, struct kerr_info *err)
{
    size_t used = 0, i = 0;

    for (; i < SNAPDEL_FOREIGN_KEYS && res->foreign_keys[i]; i++)
        used += json_len(res->foreign_keys[i]);
    res->foreign++;
    if (i == SNAPDEL_FOREIGN_KEYS || used + json_len(key) > SNAPDEL_FOREIGN_BYTES)
        return KERR_OK;
    res->foreign_keys[i] = strdup(key);
    return res->foreign_keys[i] ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
}

static void clear_foreign(struct snapdel_result *res)
{
    for (size_t i = 0; i < SNAPDEL_FOREIGN_KEYS; i++) {
        free(res->foreign_keys[i]);
        res->foreign_keys[i] = NULL;
    }
    res->foreign = 0;
}

/* Delete one own object, counting it as deleted, locked or failed. */
static void delete_one(struct ostore *s, const struct ostore_obj *o, struct snapdel_result *res,
                       bool *progress, struct kerr_info *err)
{
    struct kerr_info one;
    enum kerr d;

    kerr_clear(&one);
    d = s->ops->del(s, o, &one);
    if (d == KERR_OK || d == KERR_NOTFOUND) {
        res->deleted++;
        *progress = true;
        log_debug("deleted", "key", o->key, "version", o->version_id ? o->version_id : "");
    } else if (d == KERR_FORBIDDEN) {
        res->locked++;
        if (o->immutable_until > 0 && (res->earliest == 0 || o->immutable_until < res->earliest))
            res->earliest = o->immutable_until;
        log_info("locked", "key", o->key, "error", one.msg);
    } else {
        if (res->failed++ == 0 && err)
            *err = one;
        log_warn("cannot delete", "key", o->key, "error", one.msg);
    }
}

/* Is o outside w (an object the owner cannot be shown to have written)? */
static bool outside(const struct snapdel_window *w, const struct ostore_obj *o)
{
    if (!w || w->n == 0)
        return false;
    for (size_t i = 0; i < w->n && i < SNAPDEL_SPANS_MAX; i++) {
        const struct snapdel_span *sp = &w->span[i];

        if (sp->since == 0 && sp->before == 0)
            return false;
        if (o->mtime > 0 && (sp->since == 0 || o->mtime >= sp->since) &&
            (sp->before == 0 || o->mtime <= sp->before))
            return false;
    }
    return true;
}

/*
 * 1 when o carries warden-snapshot's mark (a head), 0 when it does not (counted as kept: another
 * writer's), -1 when the head fails (its message in one).
 */
static int copy_of_ours(struct ostore *s, const struct ostore_obj *o, struct snapdel_result *res,
                        struct kerr_info *one)
{
    struct ostore_obj h = { 0 };
    enum kerr rc = s->ops->head ? s->ops->head(s, o->key, &h, one)
                                : kerr_set(one, KERR_UNSUPPORTED, "the store has no head");
    int own = rc == KERR_OK && h.own_copy;

    ostore_obj_release(&h);
    if (rc != KERR_OK) {
        log_warn("cannot tell who wrote it", "key", o->key, "error", one->msg);
        return -1;
    }
    if (!own) {
        res->kept++;
        log_debug("kept: not written by warden-snapshot", "key", o->key);
    }
    return own;
}

/*
 * One round: list p as a plain string and delete what is p's own (with del false only
 * count it in *own); *progress set when something went. Foreign keys are those of this
 * round's listing the sidecar sees too: all of them but on Local (local), whose sidecar
 * walks the directory p.
 */
static enum kerr round_once(struct ostore *s, const char *p, const struct snapdel_window *w,
                            bool local, bool dry_run, bool del, struct snapdel_result *res,
                            long *own, bool *progress, struct kerr_info *err)
{
    struct ostore_list l = { 0 };
    struct kerr_info one = { 0 };
    enum kerr rc = s->ops->list(s, p, &l, err);
    int ours;

    *progress = false;
    *own = 0;
    if (del) {
        res->locked = res->failed = 0;
        res->earliest = 0;
    }
    clear_foreign(res);
    res->kept = 0;
    for (size_t i = 0; rc == KERR_OK && i < l.n; i++) {
        const struct ostore_obj *o = &l.v[i];

        if (!under(p, o->key) || below(p, o->key)) {
            rc = local ? KERR_OK : add_foreign(res, o->key, err);
        } else if (outside(w, o)) {
            res->kept++;
            log_debug("kept: not written within the claim", "key", o->key);
        } else if (w && w->copies_only && (ours = copy_of_ours(s, o, res, &one)) != 1) {
            if (ours < 0 && !del) /* unknown: the owner's, still there */
                (*own)++;
            else if (ours < 0) { /* neither deleted nor taken for another's */
                res->failed++;
                if (err && !err->msg[0])
                    *err = one;
            }
        } else if (!del) {
            (*own)++;
        } else if (dry_run) {
            res->deleted++;
            log_info("would delete", "key", o->key, "version", o->version_id ? o->version_id : "");
        } else {
            delete_one(s, o, res, progress, err);
        }
    }
    ostore_list_release(&l);
    return rc;
}

/* Every round over the object prefix p into res (its counts; res->object_prefix untouched). */
static enum kerr run_spelling(struct ostore *s, const char *p, const struct snapdel_window *w,
                              bool local, bool dry_run, struct snapdel_result *res,
                              struct kerr_info *err)
{
    bool progress = true;
    long own = 0;
    enum kerr rc = KERR_OK;

    for (int r = 0; rc == KERR_OK && progress && r < SNAPDEL_MAX_ROUNDS; r++) {
        rc = round_once(s, p, w, local, dry_run, true, res, &own, &progress, err);
        if (dry_run)
            break;
    }
    if (rc != KERR_OK)
        return rc;
    if (dry_run) {
        res->remaining = res->deleted + res->foreign;
    } else if (progress) { /* stopped by the round limit: the sidecar's view once more */
        rc = round_once(s, p, w, local, false, false, res, &own, &progress, err);
        res->remaining = own + res->foreign;
    } else { /* the last round deleted nothing: its listing is the view after deletion */
        res->remaining = res->locked + res->failed + res->foreign;
    }
    return rc;
}

/* Add the counts and foreign keys of from (the other spelling's run) to into. */
static enum kerr merge(struct snapdel_result *into, const struct snapdel_result *from,
                       struct kerr_info *err)
{
    long foreign = into->foreign + from->foreign;
    enum kerr rc = KERR_OK;

    into->deleted += from->deleted;
    into->locked += from->locked;
    into->failed += from->failed;
    into->remaining += from->remaining;
    into->kept += from->kept;
    if (from->earliest > 0 && (into->earliest == 0 || from->earliest < into->earliest))
        into->earliest = from->earliest;
    for (size_t i = 0; rc == KERR_OK && i < SNAPDEL_FOREIGN_KEYS && from->foreign_keys[i]; i++)
        rc = add_foreign(into, from->foreign_keys[i], err);
    into->foreign = foreign;
    return rc;
}

enum kerr snapdel_run(struct ostore *s, const char *kind, const char *prefix, bool dry_run,
                      struct snapdel_result *res, struct kerr_info *err)
{
    return snapdel_run_window(s, kind, prefix, NULL, dry_run, res, err);
}

enum kerr snapdel_run_window(struct ostore *s, const char *kind, const char *prefix,
                             const struct snapdel_window *w, bool dry_run,
                             struct snapdel_result *res, struct kerr_info *err)
{
    size_t n = strlen(prefix ? prefix : "") + 2;
    bool local = kind && strcmp(kind, "Local") == 0;
    struct snapdel_result other;
    enum kerr rc;

    memset(res, 0, sizeof(*res));
    memset(&other, 0, sizeof(other));
    res->object_prefix = malloc(n);
    res->object_prefix2 = malloc(n);
    if (!res->object_prefix || !res->object_prefix2)
        return kerr_set(err, KERR_NOMEM, NULL);
    rc = bstore_object_prefixes(kind, prefix ? prefix : "", res->object_prefix, res->object_prefix2,
                                n);
    if (rc != KERR_OK)
        return kerr_set(err, rc, "--store-prefix");
    if (res->object_prefix[0] == '\0')
        return kerr_set(err, KERR_INVAL, "--store-prefix \"%s\" is the whole store",
                        prefix ? prefix : "");
    rc = run_spelling(s, res->object_prefix, w, local, dry_run, res, err);
    /* the other spelling of a sidecar version (S3's leading '/'): emptied only when both are */
    if (rc == KERR_OK && res->object_prefix2[0]) {
        rc = run_spelling(s, res->object_prefix2, w, local, dry_run, &other, err);
        if (rc == KERR_OK)
            rc = merge(res, &other, err);
    }
    snapdel_result_release(&other);
    return rc;
}

void snapdel_result_release(struct snapdel_result *res)
{
    clear_foreign(res);
    free(res->object_prefix);
    res->object_prefix = NULL;
    free(res->object_prefix2);
    res->object_prefix2 = NULL;
}

/* The summary object of res, or NULL on NOMEM. */
static cJSON *summary(const char *prefix, bool dry_run, const struct snapdel_result *res)
{
    char when[KTIME_LEN + 1] = "";
    cJSON *o = cJSON_CreateObject(), *keys = NULL;
    bool ok;

    if (res->earliest > 0 && ktime_format((time_t)res->earliest, when) != KERR_OK)
        when[0] = '\0';
    ok = o && cJSON_AddStringToObject(o, "prefix", prefix) &&
         cJSON_AddStringToObject(o, "objectPrefix", res->object_prefix ? res->object_prefix : "") &&
         (!res->object_prefix2 || !*res->object_prefix2 ||
          cJSON_AddStringToObject(o, "objectPrefix2", res->object_prefix2)) &&
         cJSON_AddNumberToObject(o, "deleted", (double)(dry_run ? 0 : res->deleted)) &&
         cJSON_AddNumberToObject(o, "locked", (double)res->locked) &&
         cJSON_AddNumberToObject(o, "failed", (double)res->failed) &&
         cJSON_AddNumberToObject(o, "remaining", (double)res->remaining) &&
         (*when ? cJSON_AddStringToObject(o, "earliestDeletable", when)
                : cJSON_AddNullToObject(o, "earliestDeletable")) &&
         cJSON_AddBoolToObject(o, "dryRun", dry_run) &&
         cJSON_AddNumberToObject(o, "foreign", (double)res->foreign) &&
         (keys = cJSON_AddArrayToObject(o, "foreignKeys")) != NULL;
    for (size_t i = 0; ok && i < SNAPDEL_FOREIGN_KEYS && res->foreign_keys[i]; i++) {
        cJSON *k = cJSON_CreateString(res->foreign_keys[i]);

        ok = k && cJSON_AddItemToArray(keys, k);
        if (!ok)
            cJSON_Delete(k);
    }
    if (ok && res->kept > 0) /* only a run with a window keeps any */
        ok = cJSON_AddNumberToObject(o, "kept", (double)res->kept) != NULL;
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

void snapdel_print(FILE *f, const char *prefix, bool dry_run, const struct snapdel_result *res)
{
    cJSON *o = summary(prefix, dry_run, res);
    char *esc = o ? cJSON_PrintUnformatted(o) : NULL;

    fprintf(f, "%s\n", esc ? esc : "{}");
    fflush(f);
    free(esc);
    cJSON_Delete(o);
}

/*
 * In a container the summary is also the termination message, whatever the exit status, so
 * that the controller reads it from the Pod's status (with FallbackToLogsOnError the kubelet
 * keeps the logs' tail only on failure). The file is $WARDEN_TERMINATION_LOG when set, else
 * /dev/termination-log where it exists (the kubelet mounts it; it is never created on a
 * host). Nothing where it cannot be opened.
 */
static void write_termination_log(const char *prefix, bool dry_run,
                                  const struct snapdel_result *res)
{
    const char *path = getenv("WARDEN_TERMINATION_LOG");
    int fd = path && *path ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
                           : open(SNAPDEL_TERMINATION_LOG, O_WRONLY | O_TRUNC | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

    if (!f) {
        if (fd >= 0)
            close(fd);
        return;
    }
    snapdel_print(f, prefix, dry_run, res);
    fclose(f);
}

/* The error line of a run that left more than locked objects; its exit status. */
static int report(const struct snapdel_result *res, bool dry_run, const struct kerr_info *err)
{
    char n[32];

    if (res->failed)
        log_error("delete-snapshots failed", "failed", res->failed > 1 ? "several" : "one", "error",
                  err->msg);
    else if (res->foreign) {
        snprintf(n, sizeof(n), "%ld", res->foreign);
        log_error(dry_run ? "delete-snapshots would fail" : "delete-snapshots failed", "error",
                  dry_run ? "the backup sidecar's listing of the prefix returns objects of other "
                            "prefixes (a plain string prefix): they are not this prefix's and "
                            "would not be deleted"
                          : "the backup sidecar's listing of the prefix returns objects of other "
                            "prefixes (a plain string prefix): they are not this prefix's and were "
                            "not deleted",
                  "objectPrefix", res->object_prefix, "foreign", n, "example",
                  res->foreign_keys[0]);
    }
    return res->failed || res->foreign ? 1 : 0;
}

static void usage(FILE *f)
{
    fputs(
        "usage: warden-snapshot delete-snapshots --storage-provider P --store-container C\n"
        "           --store-prefix X [flags]\n"
        "\n"
        "Deletes the objects of the cluster whose spec.backup.store.prefix is X, as the backup\n"
        "sidecar names them; objects the store keeps locked stay (run it again later).\n"
        "\n"
        "  --storage-provider P           a provider name etcd-druid accepts (S3, ABS, GCS, ECS,\n"
        "                                 OCS, Local, aws, s3, azure, gcp, ...)\n"
        "  --store-container C            the bucket (default $STORAGE_CONTAINER)\n"
        "  --store-prefix X               the Etcd's spec.backup.store.prefix\n"
        "  --store-endpoint-override URL  the store's endpoint "
        "(spec.backup.store.endpointOverride)\n"
        "  --written-since T              delete only objects last modified at or after T\n"
        "                                 (RFC 3339): the claim's start; older ones are kept\n"
        "  --written-before T             delete only objects last modified at or before T\n"
        "                                 (RFC 3339); newer ones are kept. Both may be\n"
        "                                 repeated in pairs: an object inside any pair goes\n"
        "  --only-copies                  delete only objects warden-snapshot wrote (its mark,\n"
        "                                 etcd-warden-copy); others are kept\n"
        "  --dry-run                      count what would be deleted, delete nothing; exits as\n"
        "                                 the run would\n"
        "  -v, --verbose                  debug logs\n"
        "  -h, --help                     this help\n"
        "\n"
        "The last line on stdout is a JSON summary. Exit status: 0 nothing but locked objects\n"
        "left, 1 any other failure (objects of other prefixes in the listing included), 2 usage\n"
        "error.\n",
        f);
}

/* --written-since (since) or --written-before T into the next span of w (*n of them so far):
 * 0, or 2 with the message printed. */
static int window_time(struct snapdel_window *w, size_t *n, bool since, const char *t)
{
    const char *flag = since ? "--written-since" : "--written-before";
    struct timespec ts;

    if (ktime_parse(t, &ts, NULL) != KERR_OK || ts.tv_sec <= 0) {
        fprintf(stderr,
                "warden-snapshot delete-snapshots: %s \"%s\" is no RFC 3339 time (e.g. "
                "2026-11-28T18:00:00Z)\n",
                flag, t);
        return 2;
    }
    if (*n >= SNAPDEL_SPANS_MAX) {
        fprintf(stderr, "warden-snapshot delete-snapshots: more than %d %s\n", SNAPDEL_SPANS_MAX,
                flag);
        return 2;
    }
    *(since ? &w->span[*n].since : &w->span[*n].before) = (int64_t)ts.tv_sec;
    (*n)++;
    return 0;
}

int snapdel_main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "storage-provider", required_argument, NULL, 'p' },
        { "store-container", required_argument, NULL, 'c' },
        { "store-prefix", required_argument, NULL, 'x' },
        { "store-endpoint-override", required_argument, NULL, 'e' },
        { "dry-run", no_argument, NULL, 'n' },
        { "written-since", required_argument, NULL, 's' },
        { "written-before", required_argument, NULL, 'b' },
        { "only-copies", no_argument, NULL, 'o' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct ostore_config cfg = { 0 };
    struct snapdel_result res = { 0 };
    struct snapdel_window win = { 0 };
    size_t ns = 0, nb = 0;
    struct kerr_info err = { 0 };
    struct ostore *s = NULL;
    const char *prefix = NULL;
    bool dry_run = false;
    int o, verbose = 0, status;

    optind = 1;
    opterr = 0;
    while ((o = getopt_long(argc, argv, ":hv", opts, NULL)) != -1) {
        switch (o) {
        case 'p':
            cfg.provider = optarg;
            break;
        case 'c':
            cfg.container = optarg;
            break;
        case 'x':
            prefix = optarg;
            break;
        case 'e':
            cfg.endpoint_override = optarg;
            break;
        case 'n':
            dry_run = true;
            break;
        case 's':
        case 'b':
            if (window_time(&win, o == 's' ? &ns : &nb, o == 's', optarg) != 0) {
                usage(stderr);
                return 2;
            }
            break;
        case 'o':
            win.copies_only = true;
            break;
        case 'v':
            verbose++;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            snapflag_error("delete-snapshots", argv, optind, o, optopt);
            usage(stderr);
            return 2;
        }
    }
    if ((ns > 1 || nb > 1) && ns != nb) {
        fprintf(stderr,
                "warden-snapshot delete-snapshots: %zu --written-since and %zu "
                "--written-before: repeated, they go in pairs\n",
                ns, nb);
        usage(stderr);
        return 2;
    }
    win.n = ns > nb ? ns : nb;
    if (!cfg.container)
        cfg.container = getenv("STORAGE_CONTAINER");
    if (optind != argc)
        fprintf(stderr, "warden-snapshot delete-snapshots: unexpected argument \"%s\"\n",
                argv[optind]);
    else if (!cfg.provider || !cfg.container || !prefix)
        fprintf(stderr, "warden-snapshot delete-snapshots: --storage-provider, --store-container "
                        "and --store-prefix are required\n");
    if (optind != argc || !cfg.provider || !cfg.container || !prefix ||
        snapflag_provider("delete-snapshots", "--storage-provider", cfg.provider) != 0) {
        usage(stderr);
        return 2;
    }
    log_set_level(log_level_from_verbosity(verbose));
    signal(SIGPIPE, SIG_IGN);
    if (ptable_open(&cfg, &s, &err) != KERR_OK) {
        log_error("delete-snapshots failed", "error", err.msg);
        return 1;
    }
    enum kerr rc = snapdel_run_window(s, bstore_provider_kind(cfg.provider), prefix, &win, dry_run,
                                      &res, &err);
    ostore_free(s);
    if (rc == KERR_INVAL) {
        fprintf(stderr, "warden-snapshot: %s\n", err.msg);
        snapdel_result_release(&res);
        return 2;
    }
    if (rc != KERR_OK) {
        log_error("delete-snapshots failed", "error", err.msg[0] ? err.msg : kerr_str(rc));
        snapdel_result_release(&res);
        return 1;
    }
    status = report(&res, dry_run, &err);
    snapdel_print(stdout, prefix, dry_run, &res);
    write_termination_log(prefix, dry_run, &res);
    snapdel_result_release(&res);
    return status;
}
