/* snapcheck - check-prefixes' reports and command line; see snapcheck.h. */
#include "controller/snapshot/snapcheck.h"

#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "common/bstore.h"
#include "common/log.h"
#include "controller/snapshot/ostore.h"
#include "controller/snapshot/providers/ptable.h"
#include "controller/snapshot/snapflag.h"

static const char *kind_of(const struct snapcheck_latest *l)
{
    return l->name.kind == SNAP_FULL ? "full" : "delta";
}

/* s with control characters, '"' and '\' as \xHH: a key cannot forge a line or a quote. */
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

/* fmt with each "%s" (its only conversion) replaced by the next argument, escaped. */
static void say(FILE *f, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    for (const char *p = fmt; *p; p++) {
        if (p[0] == '%' && p[1] == 's') {
            put_escaped(f, va_arg(ap, const char *));
            p++;
        } else {
            fputc(*p, f);
        }
    }
    va_end(ap);
}

/* The sentence on what a pair does to the shorter prefix's restore. */
static void effect_line(const struct snapcheck *c, const struct snapcheck_pair *p, FILE *f)
{
    const struct snapcheck_prefix *s = &c->v[p->shorter], *l = &c->v[p->longer];
    const char *kind = p->newer_full ? "full" : kind_of(&l->any);
    const char *key = p->newer_full ? l->full.key : l->any.key;

    switch (p->effect) {
    case SNAPCHECK_FAILS:
        say(f,
            "  restore of \"%s\" fails with NoSuchKey: it takes the newer %s snapshot %s of "
            "\"%s\" and looks for it under its own prefix\n",
            s->prefix, kind, key, l->prefix);
        break;
    case SNAPCHECK_WRONG_DATA:
        say(f,
            "  restore of \"%s\" restores the data of \"%s\": it takes the newer %s snapshot "
            "%s; its garbage collection deletes snapshots of \"%s\" as its own\n",
            s->prefix, l->prefix, kind, key, l->prefix);
        break;
    case SNAPCHECK_APART:
        say(f,
            "  restore of \"%s\" is not affected: this store's listing of it does not return "
            "the snapshots of \"%s\"; etcd-warden still counts the two as one claim\n",
            s->prefix, l->prefix);
        break;
    default:
        say(f,
            "  restore of \"%s\" still works: \"%s\" holds no snapshot after its latest full one; "
            "the next one it writes breaks it\n",
            s->prefix, l->prefix);
        break;
    }
}

static void prefix_line(const struct snapcheck_prefix *p, FILE *f)
{
    char n[32];

    snprintf(n, sizeof(n), "%ld", p->snapshots);
    say(f, "  \"%s\": %s snapshots, latest full %s, latest %s\n", p->prefix, n,
        p->full.set ? p->full.key : "none", p->any.set ? p->any.key : "none");
}

void snapcheck_print_text(const struct snapcheck *c, const char *store, FILE *f)
{
    long broken = 0;

    say(f, "check-prefixes: %s: ", store);
    fprintf(f, "%ld objects, %zu cluster prefixes with snapshots, %zu overlapping pairs\n",
            c->objects, c->n, c->npairs);
    for (size_t i = 0; i < c->npairs; i++) {
        const struct snapcheck_pair *p = &c->pairs[i];

        say(f, "overlap: \"%s\" and \"%s\": restore %s\n", c->v[p->shorter].prefix,
            c->v[p->longer].prefix, snapcheck_effect_str(p->effect));
        prefix_line(&c->v[p->shorter], f);
        prefix_line(&c->v[p->longer], f);
        effect_line(c, p, f);
        broken += p->effect == SNAPCHECK_FAILS || p->effect == SNAPCHECK_WRONG_DATA;
    }
    if (c->npairs)
        fprintf(f, "check-prefixes: %zu overlapping pairs, %ld restores broken now\n", c->npairs,
                broken);
    fflush(f);
}

static bool add_key(cJSON *o, const char *name, const struct snapcheck_latest *l)
{
    return l->set ? cJSON_AddStringToObject(o, name, l->key) != NULL
                  : cJSON_AddNullToObject(o, name) != NULL;
}

static cJSON *prefix_json(const struct snapcheck_prefix *p)
{
    cJSON *o = cJSON_CreateObject();

    if (o && cJSON_AddStringToObject(o, "prefix", p->prefix) &&
        cJSON_AddNumberToObject(o, "snapshots", (double)p->snapshots) &&
        cJSON_AddNumberToObject(o, "fullSnapshots", (double)p->fulls) &&
        add_key(o, "latestFull", &p->full) && add_key(o, "latest", &p->any))
        return o;
    cJSON_Delete(o);
    return NULL;
}

static cJSON *pair_json(const struct snapcheck *c, const struct snapcheck_pair *p)
{
    const struct snapcheck_prefix *s = &c->v[p->shorter], *l = &c->v[p->longer];
    bool broken = p->effect == SNAPCHECK_FAILS || p->effect == SNAPCHECK_WRONG_DATA;
    cJSON *o = cJSON_CreateObject();

    if (o && cJSON_AddStringToObject(o, "shorter", s->prefix) &&
        cJSON_AddStringToObject(o, "longer", l->prefix) &&
        cJSON_AddStringToObject(o, "restore", snapcheck_effect_str(p->effect)) &&
        (broken ? cJSON_AddStringToObject(o, "breaks", s->prefix)
                : cJSON_AddNullToObject(o, "breaks")) &&
        cJSON_AddBoolToObject(o, "newerFull", p->newer_full) &&
        cJSON_AddBoolToObject(o, "newer", p->newer) &&
        cJSON_AddNumberToObject(o, "shorterSnapshots", (double)s->snapshots) &&
        cJSON_AddNumberToObject(o, "longerSnapshots", (double)l->snapshots) &&
        add_key(o, "shorterLatestFull", &s->full) && add_key(o, "longerLatestFull", &l->full) &&
        add_key(o, "longerLatest", &l->any))
        return o;
    cJSON_Delete(o);
    return NULL;
}

enum kerr snapcheck_print_json(const struct snapcheck *c, const char *store, FILE *f,
                               struct kerr_info *err)
{
    cJSON *o = cJSON_CreateObject(), *pv = NULL, *ov = NULL, *item;
    char *text = NULL;
    bool ok = o && cJSON_AddStringToObject(o, "store", store) &&
              cJSON_AddNumberToObject(o, "objects", (double)c->objects) &&
              (pv = cJSON_AddArrayToObject(o, "prefixes")) != NULL &&
              (ov = cJSON_AddArrayToObject(o, "overlaps")) != NULL;

    for (size_t i = 0; ok && i < c->n; i++) {
        item = prefix_json(&c->v[i]);
        ok = item && cJSON_AddItemToArray(pv, item);
    }
    for (size_t i = 0; ok && i < c->npairs; i++) {
        item = pair_json(c, &c->pairs[i]);
        ok = item && cJSON_AddItemToArray(ov, item);
    }
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
    fputs(
        "usage: warden-snapshot check-prefixes --storage-provider P --store-container C [flags]\n"
        "\n"
        "Lists the whole container and reports every pair of cluster prefixes whose snapshots\n"
        "the backup sidecar mixes (it lists a prefix as a plain string: \"p/etcd\" lists\n"
        "\"p/etcd-2/...\") and whose restore that breaks.\n"
        "\n"
        "  --storage-provider P           S3, ABS, GCS, ECS, OCS or Local (or etcd-druid's names:\n"
        "                                 aws, azure, gcp, dell, openshift, local)\n"
        "  --store-container C            the bucket (default $STORAGE_CONTAINER)\n"
        "  --store-endpoint-override URL  the store's endpoint "
        "(spec.backup.store.endpointOverride)\n"
        "  --json                         one JSON document on stdout instead of text\n"
        "  -v, --verbose                  debug logs\n"
        "  -h, --help                     this help\n"
        "\n"
        "Exit status: 0 no pair, 1 pairs found, 2 usage error, 3 the container could not be\n"
        "listed.\n",
        f);
}

/* List the container of cfg into c and find its pairs; the exit status on failure, else 0. */
static int check(const struct ostore_config *cfg, struct snapcheck *c)
{
    struct kerr_info err = { 0 };
    struct ostore_list l = { 0 };
    struct ostore *s = NULL;
    const char *kind;
    enum kerr rc = ptable_open(cfg, &s, &err);

    kind = bstore_provider_kind(cfg->provider);
    c->local = kind && strcmp(kind, "Local") == 0;

    /* where the sidecar parses whole listed keys (snapcheck.h) */
    c->full_key = kind && (strcmp(kind, "GCS") == 0 || strcmp(kind, "OSS") == 0 ||
                           strcmp(kind, "Swift") == 0 || strcmp(kind, "ABS") == 0);
    if (rc == KERR_OK)
        rc = s->ops->list(s, "", &l, &err);
    for (size_t i = 0; rc == KERR_OK && i < l.n; i++)
        if (l.v[i].version_id && strcmp(l.v[i].version_id, "null") != 0)
            c->full_key = true; /* a versioned S3 bucket: ListObjectVersions, whole keys */
    for (size_t i = 0; rc == KERR_OK && i < l.n; i++)
        rc = snapcheck_add(c, l.v[i].key, &err);
    if (rc == KERR_OK)
        rc = snapcheck_pairs(c, &err);
    ostore_list_release(&l);
    ostore_free(s);
    if (rc != KERR_OK) {
        log_error("check-prefixes failed", "error", err.msg[0] ? err.msg : kerr_str(rc));
        return 3;
    }
    return 0;
}

int snapcheck_main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "storage-provider", required_argument, NULL, 'p' },
        { "store-container", required_argument, NULL, 'c' },
        { "store-endpoint-override", required_argument, NULL, 'e' },
        { "json", no_argument, NULL, 'j' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct ostore_config cfg = { 0 };
    struct snapcheck c = { 0 };
    struct kerr_info err = { 0 };
    char store[BSTORE_KEY_MAX];
    bool json = false;
    int o, verbose = 0, status;

    optind = 1;
    while ((o = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
        switch (o) {
        case 'p':
            cfg.provider = optarg;
            break;
        case 'c':
            cfg.container = optarg;
            break;
        case 'e':
            cfg.endpoint_override = optarg;
            break;
        case 'j':
            json = true;
            break;
        case 'v':
            verbose++;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (!cfg.container)
        cfg.container = getenv("STORAGE_CONTAINER");
    if (optind != argc)
        fprintf(stderr, "warden-snapshot check-prefixes: unexpected argument \"%s\"\n",
                argv[optind]);
    else if (!cfg.provider || !cfg.container)
        fprintf(stderr, "warden-snapshot check-prefixes: --storage-provider and --store-container "
                        "(or $STORAGE_CONTAINER) are required\n");
    if (optind != argc || !cfg.provider || !cfg.container ||
        snapflag_provider("check-prefixes", "--storage-provider", cfg.provider) != 0 ||
        bstore_key(cfg.provider, cfg.container, cfg.endpoint_override, store, sizeof(store)) !=
            KERR_OK) {
        usage(stderr);
        return 2;
    }
    log_set_level(log_level_from_verbosity(verbose));
    signal(SIGPIPE, SIG_IGN);
    status = check(&cfg, &c);
    if (status == 0 && json && snapcheck_print_json(&c, store, stdout, &err) != KERR_OK)
        status = 3;
    else if (status == 0 && !json)
        snapcheck_print_text(&c, store, stdout);
    if (status == 0 && c.npairs)
        status = 1;
    snapcheck_release(&c);
    return status;
}
