/* snapcopy_cli - the command line of `warden-snapshot copy` (see snapcopy.h). */
#include <cJSON.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "common/bstore.h"
#include "common/ktime.h"
#include "common/log.h"
#include "controller/snapshot/providers/ptable.h"
#include "controller/snapshot/snapcopy.h"
#include "controller/snapshot/snapflag.h"

static void on_stop(int sig)
{
    (void)sig;
    snapcopy_stop();
}

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
    rc = rc ? rc : ptable_open(&sd->cfg, out, err);
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

/* 1 when provider is of the S3 family (S3, ECS, OCS: one client). */
static bool s3_family(const char *provider)
{
    const char *f = bstore_family(bstore_provider_kind(provider));

    return f && strcmp(f, "S3") == 0;
}

static void usage(FILE *f)
{
    fputs(
        "usage: warden-snapshot copy --from-storage-provider P --from-store-container C\n"
        "           --from-store-prefix X --to-storage-provider P --to-store-container C\n"
        "           --to-store-prefix X [flags]\n"
        "\n"
        "Copies snapshots from one store to another, in the backup sidecar's layout; the\n"
        "destination holds all the chosen snapshots or none of them.\n"
        "\n"
        "  --from-storage-provider P      the source's provider: S3, ABS, GCS, ECS, OCS or\n"
        "                                 Local (or aws, azure, gcp, dell, openshift, local)\n"
        "  --from-store-container C       the source's bucket\n"
        "  --from-store-prefix X          the source Etcd's spec.backup.store.prefix\n"
        "  --from-store-endpoint-override URL  the source store's endpoint\n"
        "  --from-credentials-dir DIR     the source's credentials, a Secret's files (default:\n"
        "                                 the environment, as the other commands)\n"
        "  --to-storage-provider P        the destination's provider (as above)\n"
        "  --to-store-container C         the destination's bucket\n"
        "  --to-store-prefix X            the destination's prefix\n"
        "  --to-store-endpoint-override URL    the destination store's endpoint\n"
        "  --to-credentials-dir DIR       the destination's credentials (as above)\n"
        "  --snapshot NAME                exactly that snapshot (its name, e.g.\n"
        "                                 Full-00000000-00002300-1700002000.gz)\n"
        "  --until TIME                   Unix seconds or RFC 3339: what a restore would take\n"
        "                                 from the snapshots created at or before TIME (the\n"
        "                                 latest full and the deltas after it; default: all)\n"
        "  --latest-full                  the full snapshot only, no deltas\n"
        "  --part-size BYTES              the streamed part size (5 MiB to 1 GiB, default 8 MiB)\n"
        "  --skip-hash-check              do not check full snapshots' SHA-256 as they stream\n"
        "  --require-empty-destination    refuse a destination prefix holding any snapshot\n"
        "  -v, --verbose                  debug logs\n"
        "  -h, --help                     this help\n"
        "\n"
        "--snapshot excludes --until and --latest-full. The last line on stdout is a JSON\n"
        "summary. Exit status: 0 copied, 1 failed (nothing left in the destination), 2 usage\n"
        "error.\n",
        f);
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
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":hv", opts, NULL)) != -1) {
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
            snapflag_error("copy", argv, optind, c, optopt);
            return -1;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "warden-snapshot copy: unexpected argument \"%s\"\n", argv[optind]);
        return -1;
    }
    if (!from->cfg.provider || !from->cfg.container || !from->prefix || !to->cfg.provider ||
        !to->cfg.container || !to->prefix) {
        fprintf(stderr, "warden-snapshot copy: --{from,to}-storage-provider, "
                        "--{from,to}-store-container and --{from,to}-store-prefix are required\n");
        return -1;
    }
    if (snapflag_provider("copy", "--from-storage-provider", from->cfg.provider) != 0 ||
        snapflag_provider("copy", "--to-storage-provider", to->cfg.provider) != 0) {
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
    /* S3's leading '/': v0.28.4's client cleans it away, v0.37's and later keep it
     * (common/bstore's bstore_object_prefixes). A source is read in both spellings; a
     * destination would be found by one sidecar version only: refused. */
    if (s3_family(from.cfg.provider) && from.clean[0] == '/')
        o.from_also = from.clean + strspn(from.clean, "/");
    if (s3_family(to.cfg.provider) && to.clean[0] == '/') {
        fprintf(stderr,
                "warden-snapshot: --to-store-prefix \"%s\": etcd-backup-restore v0.28.4 "
                "reads it as \"%s\", v0.37.0 and later as \"%s\"; give it without the "
                "leading '/'\n",
                to.prefix, to.clean + strspn(to.clean, "/"), to.clean);
        free(from.clean);
        free(to.clean);
        return 2;
    }
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
