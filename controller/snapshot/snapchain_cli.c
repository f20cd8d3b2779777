/* snapchain - verify's reports and command line; see snapchain.h. */
#include "controller/snapshot/snapchain.h"

#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "common/bstore.h"
#include "common/buf.h"
#include "common/ktime.h"
#include "common/log.h"
#include "controller/snapshot/providers/ptable.h"

static const char *kind(const struct snapchain_obj *o)
{
    return o->name.kind == SNAP_FULL ? "full" : "delta";
}

static const char *status(const struct snapchain_result *r, size_t i)
{
    if (r->fault == (long)i)
        return "failed";
    return i < r->checked ? "ok" : "unchecked";
}

static void put_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch < 0x20 || ch == 0x7f || ch == '"' || ch == '\\')
            fprintf(f, "\\x%02x", ch);
        else
            fputc(ch, f);
    }
}

static const char *when(int64_t t, char out[KTIME_LEN + 1])
{
    if (ktime_format((time_t)t, out) != KERR_OK)
        snprintf(out, KTIME_LEN + 1, "%lld", (long long)t);
    return out;
}

void snapchain_print_text(const struct snapchain *c, const struct snapchain_result *r, FILE *f)
{
    char t[KTIME_LEN + 1];

    fprintf(f, "verify: prefix \"");
    put_escaped(f, c->prefix);
    fprintf(f, "\": %ld snapshots listed, chain of %zu\n", c->snapshots, c->n);
    for (size_t i = 0; i < c->n; i++) {
        const struct snapchain_obj *o = &c->v[i];
        fprintf(f, "  %-6s %-9s ", status(r, i), kind(o));
        put_escaped(f, o->key);
        fprintf(f, " revisions %lld-%lld created %s\n", (long long)o->name.start_rev,
                (long long)o->name.last_rev, when(o->name.created, t));
    }
    if (c->n && r->checked)
        fprintf(f,
                "  full snapshot database: revision %lld, %lld revisions in bucket key, page size "
                "%u, meta %d (txid %llu)\n",
                (long long)r->bolt.revision, (long long)r->bolt.entries, r->bolt.page_size,
                r->bolt.meta, (unsigned long long)r->bolt.txid);
    if (r->restored)
        fprintf(f, "  restored database: revision %lld, %lld keys\n",
                (long long)r->restored_revision, (long long)r->restored_keys);
    if (r->restorable) {
        fprintf(f,
                "verify: restorable: revision %lld, %lld keys, %zu deltas (%lld events), newest "
                "snapshot %s\n",
                (long long)r->revision, (long long)r->keys, c->n - 1, (long long)r->events,
                when(c->v[c->n - 1].name.created, t));
    } else {
        fprintf(f, "verify: NOT restorable: ");
        if (r->fault >= 0) {
            put_escaped(f, c->v[r->fault].key);
            fprintf(f, ": ");
        }
        put_escaped(f, r->reason);
        fputc('\n', f);
    }
    fflush(f);
}

static cJSON *obj_json(const struct snapchain *c, const struct snapchain_result *r, size_t i)
{
    const struct snapchain_obj *o = &c->v[i];
    char t[KTIME_LEN + 1];
    cJSON *j = cJSON_CreateObject();

    if (j && cJSON_AddStringToObject(j, "key", o->key) &&
        cJSON_AddStringToObject(j, "kind", kind(o)) &&
        cJSON_AddNumberToObject(j, "startRevision", (double)o->name.start_rev) &&
        cJSON_AddNumberToObject(j, "lastRevision", (double)o->name.last_rev) &&
        cJSON_AddStringToObject(j, "created", when(o->name.created, t)) &&
        cJSON_AddStringToObject(j, "compression",
                                o->name.compression[0] ? o->name.compression + 1 : "none") &&
        cJSON_AddStringToObject(j, "status", status(r, i)))
        return j;
    cJSON_Delete(j);
    return NULL;
}

enum kerr snapchain_print_json(const struct snapchain *c, const struct snapchain_result *r, FILE *f,
                               struct kerr_info *err)
{
    char t[KTIME_LEN + 1];
    cJSON *o = cJSON_CreateObject(), *a = NULL, *item;
    char *text = NULL;
    bool ok = o && cJSON_AddStringToObject(o, "prefix", c->prefix) &&
              cJSON_AddBoolToObject(o, "restorable", r->restorable) &&
              cJSON_AddNumberToObject(o, "snapshots", (double)c->snapshots) &&
              (a = cJSON_AddArrayToObject(o, "chain")) != NULL;

    for (size_t i = 0; ok && i < c->n; i++) {
        item = obj_json(c, r, i);
        ok = item && cJSON_AddItemToArray(a, item);
    }
    if (ok && r->restorable)
        ok = cJSON_AddNumberToObject(o, "revision", (double)r->revision) &&
             cJSON_AddNumberToObject(o, "keys", (double)r->keys) &&
             cJSON_AddNumberToObject(o, "events", (double)r->events) &&
             cJSON_AddStringToObject(o, "newestSnapshot", c->v[c->n - 1].key) &&
             cJSON_AddStringToObject(o, "newestSnapshotTime", when(c->v[c->n - 1].name.created, t));
    if (ok && c->n && r->checked)
        ok = cJSON_AddNumberToObject(o, "fullRevision", (double)r->bolt.revision) &&
             cJSON_AddStringToObject(o, "fullSha256", r->full_sha256);
    if (ok && r->restored)
        ok = cJSON_AddNumberToObject(o, "restoredRevision", (double)r->restored_revision) &&
             cJSON_AddNumberToObject(o, "restoredKeys", (double)r->restored_keys);
    if (ok && !r->restorable)
        ok = (r->fault >= 0 ? cJSON_AddStringToObject(o, "failedObject", c->v[r->fault].key)
                            : cJSON_AddNullToObject(o, "failedObject")) &&
             cJSON_AddStringToObject(o, "reason", r->reason);
    text = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!text)
        return kerr_set(err, KERR_NOMEM, "cannot build the report");
    fprintf(f, "%s\n", text);
    fflush(f);
    free(text);
    return KERR_OK;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: warden-snapshot verify --storage-provider P --store-container C "
            "--store-prefix X [--at TIME] [--json] [--max-keys N] [--tmp-dir DIR] "
            "[--store-endpoint-override URL] [--restored-db PATH] [-v]\n"
            "Checks, without etcd, the chain a restore of the prefix would use (the latest full "
            "snapshot and the deltas after it; with --at, of the snapshots created by TIME, Unix "
            "seconds or RFC 3339): every object readable, decompressed and its SHA-256 right, the "
            "full snapshot's database, the deltas' events and revisions, and the revision and "
            "key count the restore ends at. --restored-db: the database `etcdbrctl restore` "
            "left (member/snap/db) must hold that revision and key count.\n"
            "A one-line JSON summary goes to $WARDEN_TERMINATION_LOG, else to "
            "/dev/termination-log where it exists (a container's termination message).\n"
            "Exit status: 0 restorable, 1 not restorable (which object and why), 2 usage error, "
            "3 the check could not run (store not listed, temporary file).\n");
}

struct args {
    struct ostore_config cfg;
    const char *prefix;
    int64_t at;
    bool json;
    const char *restored_db;
    struct snapchain_opts o;
    int verbose;
};

static bool parse_at(const char *s, int64_t *out)
{
    struct timespec ts;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (*s && end && *end == '\0' && v >= 0) {
        *out = v;
        return true;
    }
    if (ktime_parse(s, &ts, NULL) != KERR_OK)
        return false;
    *out = (int64_t)ts.tv_sec;
    return true;
}

static int parse(int argc, char **argv, struct args *a)
{
    static const struct option opts[] = {
        { "storage-provider", required_argument, NULL, 'p' },
        { "store-container", required_argument, NULL, 'c' },
        { "store-prefix", required_argument, NULL, 'x' },
        { "store-endpoint-override", required_argument, NULL, 'e' },
        { "at", required_argument, NULL, 'a' },
        { "max-keys", required_argument, NULL, 'k' },
        { "tmp-dir", required_argument, NULL, 't' },
        { "json", no_argument, NULL, 'j' },
        { "restored-db", required_argument, NULL, 'r' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    char *end = NULL;
    int o;

    optind = 1;
    while ((o = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
        switch (o) {
        case 'p':
            a->cfg.provider = optarg;
            break;
        case 'c':
            a->cfg.container = optarg;
            break;
        case 'x':
            a->prefix = optarg;
            break;
        case 'e':
            a->cfg.endpoint_override = optarg;
            break;
        case 'j':
            a->json = true;
            break;
        case 'r':
            a->restored_db = optarg;
            break;
        case 'v':
            a->verbose++;
            break;
        case 't':
            a->o.tmp_dir = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case 'a':
            if (!parse_at(optarg, &a->at)) {
                fprintf(stderr, "verify: --at %s: not Unix seconds or RFC 3339\n", optarg);
                return 2;
            }
            break;
        case 'k':
            a->o.max_keys = (size_t)strtoull(optarg, &end, 10);
            if (!*optarg || *end || a->o.max_keys == 0) {
                fprintf(stderr, "verify: --max-keys %s: not a positive number\n", optarg);
                return 2;
            }
            break;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (!a->cfg.container)
        a->cfg.container = getenv("STORAGE_CONTAINER");
    if (optind != argc || !a->cfg.provider || !a->cfg.container || !a->prefix) {
        fprintf(stderr, "verify: --storage-provider, --store-container and --store-prefix are "
                        "required, and nothing else\n");
        usage(stderr);
        return 2;
    }
    return -1;
}

/* List the prefix as the sidecar does, select and verify; the exit status. */
static int run(const struct args *a)
{
    struct kerr_info err = { 0 };
    struct ostore_list l = { 0 };
    struct ostore *s = NULL;
    struct snapchain c = { 0 };
    struct snapchain_result r;
    struct snapchain_opts o = a->o;
    struct ostore *fetchers[SNAPCHAIN_FETCHERS] = { 0 };
    const char *kind = bstore_provider_kind(a->cfg.provider);
    bool local = kind && strcmp(kind, "Local") == 0;
    char *prefix = NULL, *listp = NULL;
    enum kerr rc = snap_clean_prefix(a->prefix, &prefix, &err);
    int status = 3;

    if (rc == KERR_OK)
        listp = local && *prefix ? buf_dupf(4096, "%s/", prefix) : strdup(prefix);
    if (rc == KERR_OK && listp == NULL)
        rc = kerr_set(&err, KERR_NOMEM, NULL);
    if (rc == KERR_OK)
        rc = ptable_open(&a->cfg, &s, &err);
    if (rc == KERR_OK)
        rc = s->ops->list(s, listp, &l, &err);
    if (rc == KERR_OK)
        rc = snapchain_select(&l, prefix, a->at, local, &c, &err);
    for (size_t i = 0; rc == KERR_OK && c.n > 0 && i < SNAPCHAIN_FETCHERS; i++)
        rc = ptable_open(&a->cfg, &fetchers[i], &err);
    if (rc == KERR_OK && c.n > 0) {
        o.fetchers = fetchers;
        o.nfetchers = SNAPCHAIN_FETCHERS;
    }
    if (rc == KERR_OK)
        rc = snapchain_verify(s, &c, &o, &r, &err);
    if (rc == KERR_OK && a->restored_db)
        rc = snapchain_compare_restored(a->restored_db, a->o.max_keys, &r, &err);
    if (rc == KERR_OK)
        snapchain_write_termination_log(&c, &r, NULL);
    else
        snapchain_write_termination_log(NULL, NULL, err.msg[0] ? err.msg : kerr_str(rc));
    if (rc == KERR_OK && a->json)
        rc = snapchain_print_json(&c, &r, stdout, &err);
    else if (rc == KERR_OK)
        snapchain_print_text(&c, &r, stdout);
    if (rc == KERR_OK)
        status = r.restorable ? 0 : 1;
    else
        log_error("verify failed", "error", err.msg[0] ? err.msg : kerr_str(rc));
    snapchain_release(&c);
    ostore_list_release(&l);
    ostore_free(s);
    for (size_t i = 0; i < SNAPCHAIN_FETCHERS; i++)
        ostore_free(fetchers[i]);
    free(prefix);
    free(listp);
    return status;
}

int snapchain_main(int argc, char **argv)
{
    struct args a = { .at = INT64_MAX };
    int st = parse(argc, argv, &a);

    if (st >= 0)
        return st;
    log_set_level(log_level_from_verbosity(a.verbose));
    signal(SIGPIPE, SIG_IGN);
    return run(&a);
}
