/* snapdel - delete-snapshots: every object of a prefix, as a path; see snapdel.h. */
#include "controller/snapshot/snapdel.h"

#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "common/kpath.h"
#include "common/ktime.h"
#include "common/log.h"
#include "controller/snapshot/snapcli.h"

/* Is key the prefix p (cleaned, not "." or "/") itself or under it? */
static bool under(const char *p, const char *key)
{
    size_t n = strlen(p);

    return strncmp(key, p, n) == 0 && (key[n] == '\0' || key[n] == '/');
}

/* One round: delete what the listing shows under p; *progress set when something went. */
static enum kerr round_once(struct ostore *s, const char *p, bool dry_run,
                            struct snapdel_result *res, bool *progress, struct kerr_info *err)
{
    struct ostore_list l = { 0 };
    struct kerr_info one;
    enum kerr rc = s->ops->list(s, p, &l, err);

    *progress = false;
    res->locked = res->failed = 0;
    res->earliest = 0;
    for (size_t i = 0; rc == KERR_OK && i < l.n; i++) {
        const struct ostore_obj *o = &l.v[i];

        if (!under(p, o->key))
            continue;
        if (dry_run) {
            res->deleted++;
            log_info("would delete", "key", o->key, "version", o->version_id ? o->version_id : "");
            continue;
        }
        kerr_clear(&one);
        enum kerr d = s->ops->del(s, o, &one);
        if (d == KERR_OK || d == KERR_NOTFOUND) {
            res->deleted++;
            *progress = true;
            log_debug("deleted", "key", o->key, "version", o->version_id ? o->version_id : "");
        } else if (d == KERR_FORBIDDEN) {
            res->locked++;
            if (o->immutable_until > 0 &&
                (res->earliest == 0 || o->immutable_until < res->earliest))
                res->earliest = o->immutable_until;
            log_info("locked", "key", o->key, "error", one.msg);
        } else {
            if (res->failed++ == 0 && err)
                *err = one;
            log_warn("cannot delete", "key", o->key, "error", one.msg);
        }
    }
    ostore_list_release(&l);
    return rc;
}

enum kerr snapdel_run(struct ostore *s, const char *prefix, bool dry_run,
                      struct snapdel_result *res, struct kerr_info *err)
{
    size_t n = strlen(prefix ? prefix : "") + 2;
    char *p = malloc(n);
    bool progress = true;
    enum kerr rc = p ? kpath_clean(prefix, p, n) : KERR_NOMEM;

    memset(res, 0, sizeof(*res));
    if (rc == KERR_OK && (strcmp(p, ".") == 0 || strcmp(p, "/") == 0))
        rc = kerr_set(err, KERR_INVAL, "--store-prefix \"%s\" is the whole store", prefix);
    else if (rc != KERR_OK)
        rc = kerr_set(err, rc, "--store-prefix");
    for (int r = 0; rc == KERR_OK && progress && r < SNAPDEL_MAX_ROUNDS; r++) {
        rc = round_once(s, p, dry_run, res, &progress, err);
        if (dry_run)
            break;
    }
    free(p);
    return rc;
}

void snapdel_print(FILE *f, const char *prefix, bool dry_run, const struct snapdel_result *res)
{
    char when[KTIME_LEN + 1] = "";
    char *esc = NULL;
    cJSON *o = cJSON_CreateObject();

    if (res->earliest > 0 && ktime_format((time_t)res->earliest, when) != KERR_OK)
        when[0] = '\0';
    if (o && cJSON_AddStringToObject(o, "prefix", prefix) &&
        cJSON_AddNumberToObject(o, "deleted", (double)(dry_run ? 0 : res->deleted)) &&
        cJSON_AddNumberToObject(o, "locked", (double)res->locked) &&
        cJSON_AddNumberToObject(o, "failed", (double)res->failed) &&
        cJSON_AddNumberToObject(o, "remaining",
                                (double)(dry_run ? res->deleted : res->locked + res->failed)) &&
        (*when ? cJSON_AddStringToObject(o, "earliestDeletable", when)
               : cJSON_AddNullToObject(o, "earliestDeletable")) &&
        cJSON_AddBoolToObject(o, "dryRun", dry_run))
        esc = cJSON_PrintUnformatted(o);
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

static void usage(FILE *f)
{
    fprintf(f, "usage: warden-snapshot delete-snapshots --storage-provider P "
               "--store-container C --store-prefix X [--store-endpoint-override URL] "
               "[--dry-run] [-v] [-h]\n");
}

int snapdel_main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "storage-provider", required_argument, NULL, 'p' },
        { "store-container", required_argument, NULL, 'c' },
        { "store-prefix", required_argument, NULL, 'x' },
        { "store-endpoint-override", required_argument, NULL, 'e' },
        { "dry-run", no_argument, NULL, 'n' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct ostore_config cfg = { 0 };
    struct snapdel_result res;
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
        case 'v':
            verbose++;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            snapcli_flag_error("delete-snapshots", argv, optind, o, optopt);
            usage(stderr);
            return 2;
        }
    }
    if (!cfg.container)
        cfg.container = getenv("STORAGE_CONTAINER");
    if (optind != argc)
        fprintf(stderr, "warden-snapshot delete-snapshots: unexpected argument \"%s\"\n",
                argv[optind]);
    else if (!cfg.provider || !cfg.container || !prefix)
        fprintf(stderr, "warden-snapshot delete-snapshots: --storage-provider, --store-container "
                        "and --store-prefix are required\n");
    if (optind != argc || !cfg.provider || !cfg.container || !prefix) {
        usage(stderr);
        return 2;
    }
    log_set_level(log_level_from_verbosity(verbose));
    signal(SIGPIPE, SIG_IGN);
    if (ostore_open(&cfg, &s, &err) != KERR_OK) {
        log_error("delete-snapshots failed", "error", err.msg);
        return 1;
    }
    enum kerr rc = snapdel_run(s, prefix, dry_run, &res, &err);
    ostore_free(s);
    if (rc == KERR_INVAL) {
        fprintf(stderr, "warden-snapshot: %s\n", err.msg);
        return 2;
    }
    if (rc != KERR_OK) {
        log_error("delete-snapshots failed", "error", err.msg[0] ? err.msg : kerr_str(rc));
        return 1;
    }
    status = res.failed ? 1 : 0;
    if (res.failed)
        log_error("delete-snapshots failed", "failed", res.failed > 1 ? "several" : "one", "error",
                  err.msg);
    snapdel_print(stdout, prefix, dry_run, &res);
    write_termination_log(prefix, dry_run, &res);
    return status;
}
