/* snapcli - warden-snapshot's command line (see snapcli.h). */
#include "controller/snapshot/snapcli.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "common/ktime.h"
#include "common/log.h"
#include "controller/snapshot/providers/ptable.h"
#include "controller/snapshot/snapcopy.h"
#include "controller/snapshot/snapdel.h"
#include "controller/snapshot/snapext.h"
#include "controller/snapshot/snapflag.h"

struct cli {
    const char *cmd;
    struct ostore_config store;
    const char *prefix;
    char *clean_prefix; /* OWNS: prefix as etcd-backup-restore cleans it */
    const char *gc_from;
    const char *copy_mode;
    const char *mode;
    int64_t retention_days;
    bool lock_retention; /* --lock-retention: ABS in place, the policy becomes Locked */
    bool dry_run;
    bool verify_hash;        /* list: read every full snapshot; extend: a no-op (the default) */
    bool skip_hash;          /* --skip-hash-check: no verification at all */
    const char *extend_only; /* the first flag given that only extend takes (no "--"), or NULL */
    int verbose;
};

enum {
    OPT_PROVIDER = 256,
    OPT_CONTAINER,
    OPT_ENDPOINT,
    OPT_PREFIX,
    OPT_GC,
    OPT_MODE,
    OPT_DRY,
    OPT_PART,
    OPT_THRESHOLD,
    OPT_EXTMODE,
    OPT_RETENTION,
    OPT_VERIFY,
    OPT_SKIP_HASH,
    OPT_LOCK
};

static void usage(FILE *f)
{
    fputs("usage: warden-snapshot COMMAND [flags]\n"
          "\n"
          "  warden-snapshot extend-snapshot-immutability [flags]\n"
          "      keep the latest full snapshot inside the bucket's immutability period (a fresh\n"
          "      copy, or its retention extended in place) and delete the earlier copies\n"
          "  warden-snapshot list [flags]\n"
          "      list the snapshots under a prefix\n"
          "  warden-snapshot delete-snapshots [flags]\n"
          "      delete a cluster's objects under a prefix, as the backup sidecar names them\n"
          "  warden-snapshot copy [flags]\n"
          "      copy snapshots from one store to another\n"
          "  warden-snapshot check-prefixes [flags]\n"
          "      report every pair of prefixes in a container that the backup sidecar mixes up\n"
          "  warden-snapshot verify [flags]\n"
          "      check, without etcd, that the chain a restore of a prefix would use restores\n"
          "\n"
          "warden-snapshot COMMAND --help shows the flags of a command.\n",
          f);
}

/* The flags extend-snapshot-immutability and list share. */
static const char STORE_FLAGS[] =
    "  --storage-provider P           S3, ABS, GCS, ECS, OCS or Local (or etcd-druid's names:\n"
    "                                 aws, azure, gcp, dell, openshift, local)\n"
    "  --store-container C            the bucket (default $STORAGE_CONTAINER)\n"
    "  --store-prefix X               the Etcd's spec.backup.store.prefix\n"
    "  --store-endpoint-override URL  the store's endpoint (spec.backup.store.endpointOverride)\n";

static void usage_extend(FILE *f)
{
    fprintf(
        f,
        "usage: warden-snapshot extend-snapshot-immutability --storage-provider P\n"
        "           --store-container C --store-prefix X --gc-from-timestamp T [flags]\n"
        "\n"
        "%s"
        "  --gc-from-timestamp T          Unix seconds or RFC 3339: the earlier copies made at\n"
        "                                 or after T are deleted\n"
        "  --mode M                       copy (default), extend-in-place or auto\n"
        "  --retention-days N             extend-in-place: retain for N days (1 to 36500)\n"
        "  --lock-retention               extend-in-place on ABS: lock the policy\n"
        "  --copy-mode M                  server (default) or stream\n"
        "  --skip-hash-check              do not check the snapshot's SHA-256 first\n"
        "  --verify-hash                  check it (the default; for list's sake)\n"
        "  --dry-run                      log what would be done, change nothing; exits as\n"
        "                                 the run would\n"
        "  --part-size BYTES              streamed copies: the part size (1024 to 1 GiB,\n"
        "                                 default 8 MiB)\n"
        "  --copy-part-threshold BYTES    server copies above it go part by part (default\n"
        "                                 5 GiB)\n"
        "  -v, --verbose                  debug logs\n"
        "  -h, --help                     this help\n"
        "\n"
        "Exit status: 0 done, 1 failed (a JSON error line says why), 2 usage error.\n",
        STORE_FLAGS);
}

static void usage_list(FILE *f)
{
    fprintf(f,
            "usage: warden-snapshot list --storage-provider P --store-container C\n"
            "           --store-prefix X [flags]\n"
            "\n"
            "%s"
            "  --verify-hash                  read every full snapshot and check its SHA-256\n"
            "  --skip-hash-check              do not report the digests recorded on copies\n"
            "  -v, --verbose                  debug logs\n"
            "  -h, --help                     this help\n"
            "\n"
            "One line per snapshot on stdout; none under the prefix: nothing on stdout and a\n"
            "line saying so on stderr.\n"
            "Exit status: 0 listed (none included), 1 failed, 2 usage error.\n",
            STORE_FLAGS);
}

static void usage_cmd(const char *cmd, FILE *f)
{
    if (strcmp(cmd, "list") == 0)
        usage_list(f);
    else
        usage_extend(f);
}

/* Decimal digits only into *out. */
static int parse_i64(const char *s, int64_t *out)
{
    char *end = NULL;
    if (s == NULL || *s < '0' || *s > '9') {
        return -1;
    }
    long long v = strtoll(s, &end, 10);
    if (*end != '\0' || v < 0) {
        return -1;
    }
    *out = v;
    return 0;
}

/* Report an invalid flag value; returns -1. */
static int bad_value(const char *cmd, const char *flag, const char *value, const char *want)
{
    fprintf(stderr, "warden-snapshot %s: %s must be %s, not \"%s\"\n", cmd, flag, want, value);
    return -1;
}

/* 0 to run, 1 for --help, -1 on a usage error (said on stderr). */
static int parse_flags(int argc, char **argv, struct cli *c)
{
    static const struct option opts[] = {
        { "storage-provider", required_argument, NULL, OPT_PROVIDER },
        { "store-container", required_argument, NULL, OPT_CONTAINER },
        { "store-prefix", required_argument, NULL, OPT_PREFIX },
        { "store-endpoint-override", required_argument, NULL, OPT_ENDPOINT },
        { "gc-from-timestamp", required_argument, NULL, OPT_GC },
        { "copy-mode", required_argument, NULL, OPT_MODE },
        { "mode", required_argument, NULL, OPT_EXTMODE },
        { "retention-days", required_argument, NULL, OPT_RETENTION },
        { "lock-retention", no_argument, NULL, OPT_LOCK },
        { "dry-run", no_argument, NULL, OPT_DRY },
        { "part-size", required_argument, NULL, OPT_PART },
        { "copy-part-threshold", required_argument, NULL, OPT_THRESHOLD },
        { "verify-hash", no_argument, NULL, OPT_VERIFY },
        { "skip-hash-check", no_argument, NULL, OPT_SKIP_HASH },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int64_t v = 0;
    int o;
    optind = 1;
    opterr = 0;
    while ((o = getopt_long(argc, argv, ":hv", opts, NULL)) != -1) {
        if (!c->extend_only && o != OPT_PROVIDER && o != OPT_CONTAINER && o != OPT_PREFIX &&
            o != OPT_ENDPOINT && o != OPT_VERIFY && o != OPT_SKIP_HASH && o != 'v' && o != 'h' &&
            o != '?' && o != ':') {
            for (const struct option *f = opts; f->name && !c->extend_only; f++) {
                c->extend_only = f->val == o ? f->name : NULL;
            }
        }
        switch (o) {
        case OPT_PROVIDER:
            c->store.provider = optarg;
            break;
        case OPT_CONTAINER:
            c->store.container = optarg;
            break;
        case OPT_PREFIX:
            c->prefix = optarg;
            break;
        case OPT_ENDPOINT:
            c->store.endpoint_override = optarg;
            break;
        case OPT_GC:
            c->gc_from = optarg;
            break;
        case OPT_MODE:
            c->copy_mode = optarg;
            break;
        case OPT_EXTMODE:
            c->mode = optarg;
            break;
        case OPT_RETENTION:
            if (parse_i64(optarg, &c->retention_days) != 0 || c->retention_days < 1 ||
                c->retention_days > 36500) {
                return bad_value(c->cmd, "--retention-days", optarg,
                                 "a number of days, 1 to 36500");
            }
            break;
        case OPT_DRY:
            c->dry_run = true;
            break;
        case OPT_LOCK:
            c->lock_retention = true;
            break;
        case OPT_VERIFY:
            c->verify_hash = true;
            break;
        case OPT_SKIP_HASH:
            c->skip_hash = true;
            break;
        case OPT_PART:
            if (parse_i64(optarg, &v) != 0 || v < 1024 || v > (int64_t)1 << 30) {
                return bad_value(c->cmd, "--part-size", optarg, "1024 to 1073741824 bytes");
            }
            c->store.part_size = (size_t)v;
            break;
        case OPT_THRESHOLD:
            if (parse_i64(optarg, &v) != 0 || v < 1) {
                return bad_value(c->cmd, "--copy-part-threshold", optarg,
                                 "a positive number of bytes");
            }
            c->store.copy_part_threshold = v;
            break;
        case 'v':
            c->verbose++;
            break;
        case 'h':
            return 1;
        default:
            snapflag_error(c->cmd, argv, optind, o, optopt);
            return -1;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "warden-snapshot %s: unexpected argument \"%s\"\n", c->cmd, argv[optind]);
        return -1;
    }
    return 0;
}

static int fail(const char *what, const struct kerr_info *err)
{
    log_error(what, "error", err->msg[0] ? err->msg : kerr_str(err->code));
    return 1;
}

static int64_t now_seconds(void)
{
    const char *fake = getenv("WARDEN_SNAPSHOT_NOW");
    int64_t v = 0;
    if (fake && parse_i64(fake, &v) == 0) {
        return v;
    }
    return (int64_t)time(NULL);
}

/* The process's peak resident set (getrusage), in KiB, as text. */
static const char *peak_rss(char *out, size_t n)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) {
        return "unknown";
    }
    snprintf(out, n, "%ld", ru.ru_maxrss);
    return out;
}

static int parse_gc_from(const char *s, int64_t *out)
{
    struct timespec ts;
    if (parse_i64(s, out) == 0) {
        return 0;
    }
    if (s && ktime_parse(s, &ts, NULL) == KERR_OK) {
        *out = (int64_t)ts.tv_sec;
        return 0;
    }
    return -1;
}

static int run_extend(struct cli *c, struct ostore *s, int64_t gc)
{
    struct snapext_opts o = {
        .prefix = c->clean_prefix, .gc_from = gc, .dry_run = c->dry_run, .verify = !c->skip_hash
    };
    struct snapext_result res;
    struct kerr_info err = { 0 };
    char n[32];
    char im[32];
    char rss[32];
    o.now = now_seconds();
    o.server_copy = c->copy_mode == NULL || strcmp(c->copy_mode, "server") == 0;
    o.mode = c->mode == NULL || strcmp(c->mode, "copy") == 0 ? SNAPEXT_COPY
             : strcmp(c->mode, "auto") == 0                  ? SNAPEXT_AUTO
                                                             : SNAPEXT_IN_PLACE;
    o.retention = c->retention_days * 86400;
    s->extend_lock = c->lock_retention;
    if (snapext_extend(s, &o, &res, &err) != KERR_OK) {
        snapext_write_termination_log(NULL, err.msg[0] ? err.msg : kerr_str(err.code));
        return fail("extend-snapshot-immutability failed", &err);
    }
    if (!c->dry_run) {
        snapext_write_termination_log(&res, NULL);
    }
    if (res.in_place) {
        char until[KTIME_LEN + 1] = "unknown";
        if (res.until > 0) {
            ktime_format((time_t)res.until, until);
        }
        log_info(c->dry_run ? "dry run done" : "snapshot immutability extended in place", "key",
                 res.source, "retainUntil", until, "peakRssKiB", peak_rss(rss, sizeof rss));
        return 0;
    }
    snprintf(n, sizeof n, "%d", res.deleted);
    snprintf(im, sizeof im, "%d", res.immutable);
    log_info(c->dry_run ? "dry run done" : "snapshot immutability extended", "source", res.source,
             "copy", res.copy, "mode", res.server ? "server" : "stream", "deleted", n,
             "stillImmutable", im, "peakRssKiB", peak_rss(rss, sizeof rss));
    return 0;
}

static int run(struct cli *c, int64_t gc)
{
    struct ostore *s = NULL;
    struct kerr_info err = { 0 };
    struct snapext_set set = { 0 };
    int status = 0;
    const char *what =
        strcmp(c->cmd, "list") == 0 ? "list failed" : "extend-snapshot-immutability failed";
    if (ptable_open(&c->store, &s, &err) != KERR_OK) {
        return fail(what, &err);
    }
    if (strcmp(c->cmd, "list") == 0) {
        if (snapext_collect(s, c->clean_prefix, &set, &err) != KERR_OK ||
            (c->verify_hash && snapext_verify_all(s, &set, &err) != KERR_OK) ||
            (!c->verify_hash && !c->skip_hash && snapext_mark_recorded(s, &set, &err) != KERR_OK) ||
            snapext_print(&set, stdout, &err) != KERR_OK) {
            status = fail(what, &err);
        } else if (set.n == 0) {
            fprintf(stderr,
                    "warden-snapshot list: no snapshots under prefix \"%s\" in container \"%s\" "
                    "(%s)\n",
                    c->clean_prefix, c->store.container, c->store.provider);
        }
        snapext_set_release(&set);
    } else {
        status = run_extend(c, s, gc);
    }
    ostore_free(s);
    return status;
}

/* The flags together; a usage error said on stderr. */
static int check_args(struct cli *c, int64_t *gc)
{
    const char *cmd = c->cmd;
    if (c->store.container == NULL) {
        c->store.container = getenv("STORAGE_CONTAINER");
    }
    if (c->store.provider == NULL || c->store.container == NULL || c->prefix == NULL) {
        fprintf(stderr,
                "warden-snapshot %s: --storage-provider, --store-container (or "
                "$STORAGE_CONTAINER) and --store-prefix are required\n",
                cmd);
        return -1;
    }
    if (snapflag_provider(cmd, "--storage-provider", c->store.provider) != 0) {
        return -1;
    }
    if (snap_clean_prefix(c->prefix, &c->clean_prefix, NULL) != KERR_OK) {
        fprintf(stderr, "warden-snapshot %s: out of memory\n", cmd);
        return -1;
    }
    if (c->verify_hash && c->skip_hash) {
        fprintf(stderr,
                "warden-snapshot %s: --verify-hash and --skip-hash-check exclude each other\n",
                cmd);
        return -1;
    }
    if (strcmp(cmd, "list") == 0 && c->extend_only) {
        fprintf(stderr,
                "warden-snapshot list: --%s is a flag of extend-snapshot-immutability; list "
                "changes nothing\n",
                c->extend_only);
        return -1;
    }
    if (strcmp(cmd, "list") == 0) {
        return 0;
    }
    if (c->gc_from == NULL) {
        fprintf(stderr, "warden-snapshot %s: --gc-from-timestamp is required\n", cmd);
        return -1;
    }
    if (parse_gc_from(c->gc_from, gc) != 0) {
        return bad_value(cmd, "--gc-from-timestamp", c->gc_from, "Unix seconds or RFC 3339");
    }
    if (c->copy_mode && strcmp(c->copy_mode, "server") != 0 &&
        strcmp(c->copy_mode, "stream") != 0) {
        return bad_value(cmd, "--copy-mode", c->copy_mode, "server or stream");
    }
    if (c->mode && strcmp(c->mode, "copy") != 0 && strcmp(c->mode, "extend-in-place") != 0 &&
        strcmp(c->mode, "auto") != 0) {
        return bad_value(cmd, "--mode", c->mode, "copy, extend-in-place or auto");
    }
    if ((c->retention_days > 0 || c->lock_retention) &&
        (c->mode == NULL || strcmp(c->mode, "copy") == 0)) {
        fprintf(stderr,
                "warden-snapshot %s: --retention-days and --lock-retention extend a retention in "
                "place: they need --mode extend-in-place or auto (the mode is copy)\n",
                cmd);
        return -1;
    }
    return 0;
}

static int is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0 || strcmp(arg, "help") == 0;
}

int snapcli_main(int argc, char **argv)
{
    struct cli c = { 0 };
    int64_t gc = 0;
    int p;
    if (argc >= 2 && strcmp(argv[1], "delete-snapshots") == 0) {
        return snapdel_main(argc - 1, argv + 1);
    }
    if (argc >= 2 && strcmp(argv[1], "copy") == 0) {
        return snapcopy_main(argc - 1, argv + 1);
    }
    if (argc >= 2 && is_help(argv[1])) {
        usage(stdout);
        return 0;
    }
    if (argc < 2) {
        fprintf(stderr, "warden-snapshot: a command is required\n");
        usage(stderr);
        return 2;
    }
    if (argv[1][0] == '-') {
        fprintf(stderr, "warden-snapshot: a command comes before the flags, not \"%s\"\n", argv[1]);
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "extend-snapshot-immutability") != 0 && strcmp(argv[1], "list") != 0) {
        fprintf(stderr, "warden-snapshot: unknown command \"%s\"\n", argv[1]);
        usage(stderr);
        return 2;
    }
    c.cmd = argv[1];
    p = parse_flags(argc - 1, argv + 1, &c);
    if (p > 0) {
        usage_cmd(c.cmd, stdout);
        return 0;
    }
    if (p != 0 || check_args(&c, &gc) != 0) {
        free(c.clean_prefix);
        usage_cmd(c.cmd, stderr);
        return 2;
    }
    log_set_level(log_level_from_verbosity(c.verbose));
    /* A file size limit must fail the write (EFBIG), not kill the process. */
    signal(SIGXFSZ, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    int status = run(&c, gc);
    free(c.clean_prefix);
    return status;
}
