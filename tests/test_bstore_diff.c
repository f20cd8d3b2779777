/*
 * bstore against a model of etcd-druid and etcd-backup-restore, per sidecar version: a
 * generated corpus of provider x container x endpoint x prefix spellings, every pair decided
 * by bstore (one key, overlapping canonical prefixes) and by the model below, an independent
 * re-statement of the upstream sources (each rule cites its file and line; the model calls
 * nothing of bstore). Wherever the model says two Etcds' sidecars may read or write each
 * other's snapshots, bstore must say overlap; wherever etcd-druid refuses a provider, bstore
 * must refuse the claim. The reverse (bstore cautious where the model finds the stores
 * apart) is counted, not failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <criterion/criterion.h>

#include "common/bstore.h"

enum ver { V0284, V0412, V0430, NVER };
static const char *const VER_NAME[NVER] = { "v0.28.4", "v0.41.2", "v0.43.0" };

/* ---- the model ---- */

/*
 * etcd-druid internal/store/store.go:64-86 (HEAD, v0.35.0 to v0.37.1):
 * StorageProviderFromInfraProvider maps each case to the sidecar's kind; anything else is
 * "unsupported storage provider".
 */
static const char *m_kind(const char *p)
{
    static const char *const t[][4] = {
        { "S3", "aws", "S3", "s3" },                /* store.go:65 */
        { "ABS", "azure", "ABS", "abs" },           /* store.go:67 */
        { "GCS", "gcp", "GCS", "gcs" },             /* store.go:69 */
        { "Swift", "openstack", "Swift", "swift" }, /* store.go:71 */
        { "OSS", "alicloud", "OSS", "oss" },        /* store.go:73 */
        { "ECS", "dell", "ECS", "ecs" },            /* store.go:75 */
        { "OCS", "openshift", "OCS", "ocs" },       /* store.go:77 */
        { "S3", "stackit", "stackit", "stackit" },  /* store.go:79 */
        { "Local", "Local", "local", "local" },     /* store.go:81 */
    };

    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        for (int j = 1; j < 4; j++)
            if (strcmp(p, t[i][j]) == 0)
                return t[i][0];
    return NULL;
}

/*
 * Which client speaks to the store: ECS (ecs_s3_snapstore.go:33-55) and OCS
 * (ocs_s3_snapstore.go:173) build the generic S3 client (generic_s3_snapstore.go:46), so one
 * bucket of one endpoint is one bucket to S3, ECS and OCS alike.
 */
static const char *m_api(const char *kind)
{
    return strcmp(kind, "ECS") == 0 || strcmp(kind, "OCS") == 0 ? "S3" : kind;
}

/* Go's path.Clean (src/path/path.go), written out: rooted kept, "." and ".." resolved. */
static void m_clean(const char *in, char *out, size_t n)
{
    char *segs[128], buf[512];
    int ns = 0, rooted = in[0] == '/';
    size_t w = 0;

    snprintf(buf, sizeof(buf), "%s", in);
    for (char *save = NULL, *s = strtok_r(buf, "/", &save); s; s = strtok_r(NULL, "/", &save)) {
        if (strcmp(s, ".") == 0)
            continue;
        if (strcmp(s, "..") == 0) {
            if (ns > 0 && strcmp(segs[ns - 1], "..") != 0)
                ns--;
            else if (!rooted)
                segs[ns++] = s;
            continue;
        }
        segs[ns++] = s;
    }
    if (rooted)
        out[w++] = '/';
    for (int i = 0; i < ns; i++)
        w += (size_t)snprintf(out + w, n - w, "%s%s", i ? "/" : "", segs[i]);
    if (w == 0)
        out[w++] = '.';
    out[w] = '\0';
}

/*
 * Where the sidecar of version v writes a cluster's snapshots: path.Join(prefix, "v2", name)
 * (s3_snapstore.go:326 at v0.28.4, :440 at v0.43.0; every provider alike), as its client
 * sends it. aws-sdk-go (v0.28.4) cleans the request path, so a leading '/' goes; aws-sdk-go-v2
 * (v0.41.2, v0.43.0: s3_snapstore.go:94 awsconfig) does not. OSS may do either (counted as
 * both); ABS, GCS and Swift name objects as given. Up to two spellings into dir[0], dir[1]
 * ("" when none), each without the trailing "/v2".
 */
static void m_written(enum ver v, const char *kind, const char *prefix, char dir[2][512])
{
    char c[512];

    m_clean(prefix, c, sizeof(c));
    if (strcmp(c, ".") == 0)
        c[0] = '\0';
    if (strcmp(c, "/") == 0)
        c[0] = '\0';
    snprintf(dir[0], 512, "%s", c);
    dir[1][0] = '\0';
    if (strcmp(m_api(kind), "S3") == 0 && v == V0284)
        snprintf(dir[0], 512, "%s", c + strspn(c, "/"));
    else if (strcmp(kind, "OSS") == 0)
        snprintf(dir[1], 512, "%s", c + strspn(c, "/"));
}

/*
 * The sidecar's listing is a plain string prefix: the store prefix without its last token
 * ("<prefix>/v2" minus "v2": s3_snapstore.go:457-465 at v0.28.4, :592-632 at v0.43.0), the
 * keys it returns parsed in full (snapshot.go:44 ParseSnapshot) and taken as the cluster's;
 * its garbage collection deletes from that list. B's snapshots are keys "<dirB>/v2/<name>":
 * A lists them when A's string prefix and B's key prefix "<dirB>/" agree as far as both go.
 * Local walks the directory path.Join(container, prefix) (local_snapstore.go:73-79,
 * utils.go:78): one directory must be the other or inside it.
 */
static int m_reads(const char *lista, const char *dirb, int local)
{
    char kb[520];
    size_t la = strlen(lista), lb;

    snprintf(kb, sizeof(kb), "%s/", dirb);
    if (local) {
        lb = strlen(dirb);
        if (la == 0 || lb == 0)
            return 1;
        return (la <= lb && strncmp(dirb, lista, la) == 0 && (dirb[la] == '/' || !dirb[la])) ||
               (lb <= la && strncmp(lista, dirb, lb) == 0 && (lista[lb] == '/' || !lista[lb]));
    }
    if (*dirb == '\0')
        return 1; /* the whole container */
    lb = strlen(kb);
    return strncmp(lista, kb, la < lb ? la : lb) == 0;
}

struct spec {
    const char *provider, *container, *endpoint, *prefix;
    const char *kind; /* NULL: etcd-druid refuses it */
    char dir[NVER][2][512];
    struct bstore_claim c; /* bstore's, for the comparison */
    int keyed;
};

/*
 * Where the sidecar sends its requests is never known from the Etcd alone, nor which service
 * answers there: v0.28.4 has no --store-endpoint-override (every S3 endpoint from the Secret,
 * s3_snapstore.go:233-238 at v0.28.4); from v0.41 an S3 Secret's "endpoint" is applied after
 * the override and wins (s3_snapstore.go:93-94 then :214-216 at v0.43.0). An S3 endpoint may
 * be any S3-compatible service: Google Cloud Storage's XML API, Alibaba OSS's, Ceph's RADOS
 * Gateway (which serves the same buckets to Swift); Swift and OSS read theirs from the Secret
 * or environment only (swift_snapstore.go:262-267 authURL, oss_snapstore.go:64), ECS and OCS
 * too (ecs_s3_snapstore.go:33, ocs_s3_snapstore.go:89); ABS and GCS take a Secret's endpoint
 * when there is no override (abs_snapstore.go:110-121, gcs_snapstore.go:86-97 at v0.43.0).
 * So two object stores of one container name may always be one bucket, whatever the families
 * (S3's client on GCS's bucket through its XML API, for instance); only two ABS or two GCS
 * Etcds with different explicit overrides are two endpoints from v0.41 (the override wins
 * there, and one family speaks one API). 1 when a and b may be one store.
 */
static int m_one_store(enum ver v, const struct spec *a, const struct spec *b)
{
    int local = strcmp(a->kind, "Local") == 0;

    if (local != (strcmp(b->kind, "Local") == 0))
        return 0;
    if (local)
        return 1; /* one host directory: path.Join(home, container, prefix), utils.go:78 */
    if (strcmp(a->container, b->container) != 0)
        return 0;
    if (v != V0284 && strcmp(a->kind, b->kind) == 0 &&
        (strcmp(a->kind, "ABS") == 0 || strcmp(a->kind, "GCS") == 0) && a->endpoint &&
        *a->endpoint && b->endpoint && *b->endpoint) {
        /* both overrides win; as Go's url.Parse would compare them, roughly: case of scheme
         * and host aside. Different hosts are different endpoints. */
        return strcasecmp(a->endpoint, b->endpoint) == 0;
    }
    return 1;
}

/* The directory path.Join(container, prefix) of a Local spec into out, or the prefix. */
static void m_local_dir(const struct spec *s, const char *dir, char *out, size_t n)
{
    char j[1100];

    snprintf(j, sizeof(j), "%s/%s", s->container, dir);
    m_clean(j, out, n);
}

static int m_overlap(enum ver v, const struct spec *a, const struct spec *b)
{
    int local = strcmp(a->kind, "Local") == 0;

    if (!m_one_store(v, a, b))
        return 0;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            char da[1100], db[1100];

            if ((i && !a->dir[v][1][0]) || (j && !b->dir[v][1][0]))
                continue;
            if (local) {
                m_local_dir(a, a->dir[v][i], da, sizeof(da));
                m_local_dir(b, b->dir[v][j], db, sizeof(db));
            } else {
                snprintf(da, sizeof(da), "%s", a->dir[v][i]);
                snprintf(db, sizeof(db), "%s", b->dir[v][j]);
            }
            if (m_reads(da, db, local) || m_reads(db, da, local))
                return 1;
        }
    return 0;
}

/*
 * 1 when the cleaned prefix of a spec climbs out of its container. A Local one then writes
 * outside the host directory etcd-druid mounts at <home>/<container> (builder.go
 * getBackupVolume; the sidecar's path.Join(home, container, prefix), utils.go:78): into the
 * pod's own file system, no store at all.
 */
static int m_leaves(const struct spec *t)
{
    char c[512];

    m_clean(t->prefix, c, sizeof(c));
    return strcmp(c + strspn(c, "/"), "..") == 0 || strncmp(c + strspn(c, "/"), "../", 3) == 0;
}

/* ---- the corpus ---- */

static const char *const PROVIDERS[] = {
    "aws",  "S3",  "s3",        "stackit",   "azure", "ABS",      "abs",   "gcp",
    "GCS",  "gcs", "openstack", "Swift",     "swift", "alicloud", "OSS",   "oss",
    "dell", "ECS", "ecs",       "openshift", "OCS",   "ocs",      "Local", "local",
    "awss", "Aws", "S3 ",       "sTACKIT",   "",
};
static const char *const CONTAINERS[] = { "bkt", "other" };
static const char *const ENDPOINTS[] = {
    NULL,
    "",
    "https://s3.amazonaws.com",
    "HTTPS://S3.eu-west-1.AMAZONAWS.com:0443/",
    "https://u:p@s3.amazonaws.com.#frag",
    "http://[0:0:0:0:0:0:0:1]:9000",
    "http://[::1]:9000/%7Eu",
    "https://storage.googleapis.com/storage/v1/",
    "http://minio:9000",
};
static const char *const PREFIXES[] = {
    "p/etcd", "/p/etcd", "p/etcd/",    "./p//etcd", "/p/./etcd", "p/etcd-2",  "/p/etcd-2",   "p",
    "/",      "",        "p/etcd/sub", "q/etcd",    "p/etcdx",   "../p/etcd", "p/x/../etcd",
};

#define N_SPECS                                                                                \
    (sizeof(PROVIDERS) / sizeof(PROVIDERS[0]) * 2 * sizeof(ENDPOINTS) / sizeof(ENDPOINTS[0]) * \
     sizeof(PREFIXES) / sizeof(PREFIXES[0]))

Test(bstore_diff, never_apart_where_the_sidecar_shares)
{
    size_t n = 0, pairs = 0, refused = 0, agree_overlap = 0, cautious = 0, missed = 0;
    struct spec *s = calloc(N_SPECS, sizeof(*s));
    char first[8][256];

    cr_assert_not_null(s);
    for (size_t p = 0; p < sizeof(PROVIDERS) / sizeof(PROVIDERS[0]); p++)
        for (size_t c = 0; c < 2; c++)
            for (size_t e = 0; e < sizeof(ENDPOINTS) / sizeof(ENDPOINTS[0]); e++)
                for (size_t x = 0; x < sizeof(PREFIXES) / sizeof(PREFIXES[0]); x++) {
                    struct spec *t = &s[n++];

                    t->provider = PROVIDERS[p];
                    t->container = CONTAINERS[c];
                    t->endpoint = ENDPOINTS[e];
                    t->prefix = PREFIXES[x];
                    t->kind = m_kind(t->provider);
                    t->keyed = bstore_claim_init(&t->c, t->provider, t->container, t->endpoint,
                                                 t->prefix, NULL) == KERR_OK;
                    if (!t->kind) { /* etcd-druid runs no sidecar: bstore must refuse */
                        if (t->keyed && missed < 8)
                            snprintf(first[missed], sizeof(first[0]), "accepted %s", t->provider);
                        missed += t->keyed;
                        refused++;
                        continue;
                    }
                    for (int v = 0; v < NVER; v++)
                        m_written((enum ver)v, t->kind, t->prefix, t->dir[v]);
                    /* accepted by etcd-druid: bstore must claim it, unless the prefix leaves
                     * its container (refused on purpose: no key of the bucket is "../x") */
                    if (!t->keyed && !m_leaves(t)) {
                        if (missed < 8)
                            snprintf(first[missed], sizeof(first[0]), "no claim for %s|%s|%s|%s",
                                     t->provider, t->container, t->endpoint ? t->endpoint : "-",
                                     t->prefix);
                        missed++;
                    }
                }
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            const struct spec *a = &s[i], *b = &s[j];
            int ours;

            if (!a->kind || !b->kind)
                continue;
            /* a prefix leaving its container is refused (fails closed): nothing to compare */
            if (!a->keyed || !b->keyed)
                continue;
            ours = bstore_claims_overlap(&a->c, &b->c);
            for (int v = 0; v < NVER; v++) {
                int model = m_overlap((enum ver)v, a, b);

                pairs++;
                if (model && !ours && missed < 8)
                    snprintf(first[missed], sizeof(first[0]), "%s: %s|%s|%s|%s vs %s|%s|%s|%s",
                             VER_NAME[v], a->provider, a->container,
                             a->endpoint ? a->endpoint : "-", a->prefix, b->provider, b->container,
                             b->endpoint ? b->endpoint : "-", b->prefix);
                missed += model && !ours;
                agree_overlap += model && ours;
                cautious += !model && ours;
            }
        }
    cr_log_info("bstore_diff: %zu specs, %zu pair decisions (3 sidecar versions), %zu refused "
                "providers, %zu overlaps agreed, %zu cautious, %zu disagreements",
                n, pairs, refused, agree_overlap, cautious, missed);
    printf("bstore_diff: corpus %zu specs, %zu pair decisions over %d sidecar versions; model "
           "overlap/one store: %zu, bstore agrees on all but %zu; bstore cautious (model apart): "
           "%zu; providers etcd-druid refuses: %zu\n",
           n, pairs, NVER, agree_overlap + missed, missed, cautious, refused);
    for (size_t i = 0; i < missed && i < 8; i++)
        printf("  disagreement: %s\n", first[i]);
    cr_expect_eq(missed, 0, "bstore says apart where the sidecar shares (first: %s)",
                 missed ? first[0] : "");
    cr_expect_gt(agree_overlap, 0);
    for (size_t i = 0; i < n; i++)
        bstore_claim_release(&s[i].c);
    free(s);
}

/* ---- Local stores, hostPath included ---- */

/*
 * The node directory of a Local store: etcd-druid mounts the host path hostPath + "/" +
 * container, a string (internal/component/statefulset/builder.go:869 getBackupVolume),
 * hostPath the Secret's "hostPath" or "/etc/gardener/local-backupbuckets" without one
 * (internal/store/store.go:23, :88-105); the sidecar writes path.Join(home, container, prefix)
 * (utils.go:78 at v0.43.0; the same at v0.28.4), inside that mount. The kubelet resolves the
 * host path as the kernel does ("//" is "/"); a relative hostPath or one with ".." is no
 * directory the model can place (the API server refuses backsteps in a hostPath volume):
 * NULL into dir then. Every sidecar version alike.
 */
static int m_node_dir(const char *hostpath, const char *container, const char *prefix, char *dir,
                      size_t n)
{
    char mount[1100], j[2300], c[1100];

    snprintf(mount, sizeof(mount), "%s/%s",
             hostpath ? hostpath : "/etc/gardener/local-backupbuckets", container);
    if (mount[0] != '/' || strstr(mount, "/../") || strcmp(mount + strlen(mount) - 3, "/..") == 0)
        return 0;
    /* path.Join cleans home/container/prefix as a whole: outside the mount is no store */
    m_clean(mount, c, sizeof(c));
    snprintf(j, sizeof(j), "%s/%s", mount, prefix);
    m_clean(j, dir, n);
    return strcmp(c, "/") == 0 ||
           (strncmp(dir, c, strlen(c)) == 0 && (dir[strlen(c)] == '/' || dir[strlen(c)] == '\0'));
}

/* One directory walks the other (local_snapstore.go List: filepath.Walk of the directory). */
static int m_walks(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);

    if (la > lb)
        return m_walks(b, a);
    return strcmp(a, "/") == 0 || (strncmp(a, b, la) == 0 && (b[la] == '/' || b[la] == '\0'));
}

Test(bstore_diff, local_stores_by_their_node_directory)
{
    static const char *const HOSTPATHS[] = {
        NULL,
        "/etc/gardener/local-backupbuckets",
        "/etc/gardener/local-backupbuckets/",
        "/var/lib/lb",
        "/var/lib//lb/",
        "/var/lib/lb/bkt",
        "/var/lib/lb/bkt/shoot--a",
        "/",
        "",
        "relative/lb",
        "/var/lib/../lb",
    };
    static const char *const LCONTAINERS[] = { "bkt", "shoot--a", "lb", "local-backupbuckets" };
    static const char *const LPREFIXES[] = {
        "shoot--a/etcd",
        "etcd",
        "bkt/shoot--a/etcd",
        "",
        "/",
        "shoot--a",
        "shoot--a/etcd-2",
        "./shoot--a//etcd/",
        "../x",
        "etcd/../etcd",
        "bkt",
        "/../x",
        "../bkt/etcd",
    };
    enum { NH = sizeof(HOSTPATHS) / sizeof(HOSTPATHS[0]) };
    enum { NC = sizeof(LCONTAINERS) / sizeof(LCONTAINERS[0]) };
    enum { NP = sizeof(LPREFIXES) / sizeof(LPREFIXES[0]) };
    struct lspec {
        char dir[1100];
        int placed, keyed;
        struct bstore_claim c;
        const char *h, *k, *p;
    } *s = calloc(NH * NC * NP, sizeof(*s));
    size_t n = 0, pairs = 0, agree = 0, cautious = 0, missed = 0, refused = 0;
    char first[512] = "";

    cr_assert_not_null(s);
    for (size_t h = 0; h < NH; h++)
        for (size_t k = 0; k < NC; k++)
            for (size_t p = 0; p < NP; p++) {
                struct lspec *t = &s[n++];

                t->h = HOSTPATHS[h];
                t->k = LCONTAINERS[k];
                t->p = LPREFIXES[p];
                t->placed = m_node_dir(t->h, t->k, t->p, t->dir, sizeof(t->dir));
                t->keyed = bstore_local_claim_init(&t->c, t->h, t->k, t->p, NULL) == KERR_OK;
                refused += !t->keyed;
                /* a directory the model places must be claimed (never "no claim": fail open) */
                if (t->placed && !t->keyed && !missed++)
                    snprintf(first, sizeof(first), "no claim for %s + %s + %s", t->h ? t->h : "-",
                             t->k, t->p);
            }
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            const struct lspec *a = &s[i], *b = &s[j];
            int model, ours;

            if (!a->placed || !b->placed || !a->keyed || !b->keyed)
                continue;
            pairs++;
            model = m_walks(a->dir, b->dir);
            ours = bstore_claims_overlap(&a->c, &b->c);
            if (model && !ours && !missed++)
                snprintf(first, sizeof(first), "%s + %s + %s vs %s + %s + %s", a->h ? a->h : "-",
                         a->k, a->p, b->h ? b->h : "-", b->k, b->p);
            agree += model && ours;
            cautious += !model && ours;
        }
    printf("bstore_diff Local: corpus %zu specs (hostPath x container x prefix), %zu pair "
           "decisions; model one directory or nested: %zu, bstore agrees on all but %zu; bstore "
           "cautious: %zu; refused: %zu\n",
           n, pairs, agree + missed, missed, cautious, refused);
    cr_expect_eq(missed, 0, "bstore says apart where one directory holds both (first: %s)", first);
    cr_expect_gt(agree, 0);
    for (size_t i = 0; i < n; i++)
        bstore_claim_release(&s[i].c);
    free(s);
}
