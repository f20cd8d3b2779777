/*
 * Randomized sequences against the rules that keep backups apart: Etcd creates (one by one,
 * and two at once against the same cache, as two API server requests racing), deletes and
 * re-creates, EtcdBackups, EtcdRestores and grace periods elapsing, over prefixes and
 * endpoint spellings drawn to collide. What decides is etcd-warden's own code: the webhook's
 * rule (prefix_check), the entry names (bke_entry_name), the claims a deletion, a copy or a
 * restore target is checked against (claims_find_in), and delete-snapshots (snapdel_run) on
 * an in-memory S3 bucket. The bucket behaves as the backup sidecar sees S3: it writes a
 * cluster's snapshots under the cleaned prefix and lists with the prefix as a plain string.
 *
 * After every step: each live cluster not admitted in a race sees, in its sidecar's listing,
 * exactly its own snapshots (but for those a cluster wrote while in a reported race with an
 * overlapping one: two sidecars wrote into one listing, which a person must resolve); no
 * snapshot of a live cluster or of an existing EtcdBackup was
 * ever deleted. On a failure the seed, the step and the sequence so far are printed;
 * CLAIMS_SEED=N replays one sequence. The test command runs 2,000 sequences from seed 1;
 * CLAIMS_SEQUENCES=N and CLAIMS_SEED_BASE=N|random run others.
 *
 * The world (the objects, the rules over them, the bucket) is tests/support/claimsworld;
 * test_claims.c tests claims_find_in's reasons one by one.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/bstore.h"
#include "common/kjson.h"
#include "common/store.h"
#include "controller/entries/bke.h"
#include "controller/entries/bkeclaim.h"
#include "controller/core/claims.h"
#include "controller/snapshot/ostore.h"
#include "controller/snapshot/snapdel.h"
#include "tests/support/claimsworld.h"
#include "webhook/prefix.h"
#include "webhook/review.h"

#define STEPS 40
#define NAMES 5
#define N(a)  (sizeof(a) / sizeof(a[0]))

static const char *const PREFIXES[] = { "a",   "a-2", "/a", "a/",  "a//b", "",    "/",
                                        "a/b", "ab",  "b",  "b-2", "c",    "x/c", "x/c-1" };
/* etcd-druid's spellings of S3 and its family; endpoints that may all be one service (the
 * Secret's endpoint wins over the override): the bucket below is one, whatever they say */
static const char *const PROVIDERS[] = { "aws", "S3", "s3", "stackit", "ecs", "OCS" };
static const char *const ENDPOINTS[] = { "",
                                         "",
                                         "http://h:9000",
                                         "HTTP://H:9000/",
                                         "http://h:9000/",
                                         "http://other:9000",
                                         "https://s3.amazonaws.com" };

/* What the sequences did, over all of them. */
static struct {
    long ops, admitted, refused, raced, deletions, blocked, objects_deleted, backups, restores,
        checks;
} tally;

/* ---- the operations ---- */

static struct cworld_cluster *live_named(struct cworld *w, const char *name)
{
    for (int i = 0; i < w->nc; i++)
        if (w->c[i].live && strcmp(w->c[i].name, name) == 0)
            return &w->c[i];
    return NULL;
}

static struct cworld_entry *entry_named(struct cworld *w, const char *name)
{
    for (int i = 0; i < w->ne; i++)
        if (strcmp(w->e[i].name, name) == 0)
            return &w->e[i];
    return NULL;
}

static void draw_store(struct cworld *w, const char **provider, const char **endpoint,
                       const char **prefix)
{
    *provider = PROVIDERS[cworld_next(w) % N(PROVIDERS)];
    *endpoint = ENDPOINTS[cworld_next(w) % N(ENDPOINTS)];
    *prefix = PREFIXES[cworld_next(w) % N(PREFIXES)];
}

/* The controller's part of a new cluster: its entry, named after its claim. */
static void keep_entry(struct cworld *w, struct cworld_cluster *c)
{
    struct bstore_claim cl;
    char name[KNAME_SUBDOMAIN_MAX + 1];
    struct cworld_entry *e;

    cworld_claim_of(c->provider, c->endpoint, c->prefix, &cl);
    cr_assert_eq(bke_entry_name(&cl, name), KERR_OK);
    bstore_claim_release(&cl);
    e = entry_named(w, name);
    if (e && strcmp(e->etcd, c->name) == 0) {
        e->pending = 0; /* reattached */
    } else if (e) {
        c->raced = 1; /* AlreadyExists: the claim is another's, reported */
    } else {
        cr_assert_lt(w->ne, CWORLD_MAXE);
        e = &w->e[w->ne++];
        snprintf(e->name, sizeof(e->name), "%s", name);
        snprintf(e->etcd, sizeof(e->etcd), "%s", c->name);
        e->provider = c->provider;
        e->endpoint = c->endpoint;
        e->prefix = c->prefix;
        e->pending = 0;
    }
}

static struct cworld_cluster *new_cluster(struct cworld *w, const char *name, const char *provider,
                                          const char *endpoint, const char *prefix)
{
    struct cworld_cluster *c;

    cr_assert_lt(w->nc, CWORLD_MAXC);
    c = &w->c[w->nc];
    memset(c, 0, sizeof(*c));
    snprintf(c->name, sizeof(c->name), "%s", name);
    c->provider = provider;
    c->endpoint = endpoint;
    c->prefix = prefix;
    cworld_owner_of(name, provider, endpoint, prefix, c->owner, sizeof(c->owner));
    return c;
}

/* Create Etcd name (through the webhook); the sidecar writes a full snapshot. */
static void op_create(struct cworld *w)
{
    char name[16];
    const char *pv, *ep, *px;
    struct cworld_cluster *c;

    snprintf(name, sizeof(name), "e%u", cworld_next(w) % NAMES);
    draw_store(w, &pv, &ep, &px);
    cworld_note(w, "create", name, px, ep);
    if (live_named(w, name) || w->nc >= CWORLD_MAXC - 2)
        return;
    c = new_cluster(w, name, pv, ep, px);
    if (!cworld_admitted(w, c)) {
        tally.refused++;
        return;
    }
    tally.admitted++;
    c->live = 1;
    w->nc++;
    keep_entry(w, c);
    cworld_write_snapshot(w, pv, ep, px, c->owner, c->raced);
}

/* Two CREATEs checked against the same caches, as two requests racing. */
static void op_race(struct cworld *w)
{
    char n1[16], n2[16];
    const char *pv, *ep, *px, *pv2, *ep2, *px2;
    struct cworld_cluster *a, *b;
    int ok_a, ok_b;

    snprintf(n1, sizeof(n1), "e%u", cworld_next(w) % NAMES);
    snprintf(n2, sizeof(n2), "e%u", cworld_next(w) % NAMES);
    draw_store(w, &pv, &ep, &px);
    draw_store(w, &pv2, &ep2, &px2);
    cworld_note(w, "race", n1, px, ep);
    cworld_note(w, "  with", n2, px2, ep2);
    if (strcmp(n1, n2) == 0 || live_named(w, n1) || live_named(w, n2) || w->nc >= CWORLD_MAXC - 2)
        return;
    a = new_cluster(w, n1, pv, ep, px);
    ok_a = cworld_admitted(w, a);
    w->nc++; /* b in the slot after a's; a is not live yet: both see the same caches */
    b = new_cluster(w, n2, pv2, ep2, px2);
    w->nc--;
    ok_b = cworld_admitted(w, b);
    if (ok_a) {
        a->live = 1;
        w->nc++;
    }
    if (ok_b) {
        if (!ok_a)
            w->c[w->nc] = *b;
        b = &w->c[w->nc];
        b->live = 1;
        w->nc++;
    }
    if (ok_a && ok_b) { /* both admitted: in conflict when they overlap, reported on both */
        struct bstore_claim ca, cb;

        cworld_claim_of(a->provider, a->endpoint, a->prefix, &ca);
        cworld_claim_of(b->provider, b->endpoint, b->prefix, &cb);
        a->raced = b->raced = bstore_claims_overlap(&ca, &cb);
        tally.raced += a->raced;
        bstore_claim_release(&ca);
        bstore_claim_release(&cb);
    }
    for (int i = w->nc - (ok_a + ok_b); i < w->nc; i++) {
        keep_entry(w, &w->c[i]);
        cworld_write_snapshot(w, w->c[i].provider, w->c[i].endpoint, w->c[i].prefix, w->c[i].owner,
                              w->c[i].raced);
    }
}

static void op_delete(struct cworld *w)
{
    char name[16];
    struct cworld_cluster *c;

    snprintf(name, sizeof(name), "e%u", cworld_next(w) % NAMES);
    cworld_note(w, "delete", name, NULL, NULL);
    if (!(c = live_named(w, name)))
        return;
    c->live = 0;
    for (int i = 0; i < w->ne; i++)
        if (strcmp(w->e[i].etcd, name) == 0)
            w->e[i].pending = 1;
}

/* The grace period of every pending entry ends: the controller's deletion step. */
static void op_grace(struct cworld *w)
{
    cworld_note(w, "grace", "", NULL, NULL);
    for (int i = 0; i < w->ne; i++) {
        struct cworld_entry *e = &w->e[i];
        struct claims_skip skip = { .entry = e->name };
        struct bstore_claim c;
        struct cworld_memstore m = { { .ops = &cworld_mem_ops }, w, NULL };
        struct snapdel_result res;
        int blocked;

        if (!e->pending || live_named(w, e->etcd))
            continue;
        cworld_claim_of(e->provider, e->endpoint, e->prefix, &c);
        blocked = !*c.prefix || cworld_claimed(w, e->provider, e->endpoint, e->prefix, &skip);
        m.store = CWORLD_BUCKET;
        tally.blocked += blocked;
        if (!blocked) {
            tally.deletions++;
            cr_assert_eq(snapdel_run(&m.base, "S3", e->prefix, false, &res, NULL), KERR_OK);
            tally.objects_deleted += res.deleted;
            if (res.remaining == 0 && res.failed == 0) { /* emptied: the entry goes */
                *e = w->e[--w->ne];
                i--;
            }
            snapdel_result_release(&res);
        }
        bstore_claim_release(&c);
    }
}

/* An EtcdBackup of a live cluster into a drawn destination. */
static void op_backup(struct cworld *w)
{
    char name[16];
    const char *pv, *ep, *px;
    struct cworld_cluster *src;
    struct cworld_backup *b;
    struct claims_skip skip;

    snprintf(name, sizeof(name), "e%u", cworld_next(w) % NAMES);
    draw_store(w, &pv, &ep, &px);
    cworld_note(w, "backup", name, px, ep);
    if (!(src = live_named(w, name)) || w->nb >= CWORLD_MAXB)
        return;
    b = &w->b[w->nb];
    snprintf(b->name, sizeof(b->name), "b%d", w->nb);
    skip = (struct claims_skip){ .backup_ns = "ns", .backup = b->name, .backups_of = name };
    if (cworld_claimed(w, pv, ep, px, &skip))
        return;
    snprintf(b->etcd, sizeof(b->etcd), "%s", name);
    b->provider = pv;
    b->endpoint = ep;
    b->prefix = px;
    snprintf(b->owner, sizeof(b->owner), "backup|b%d", w->nb);
    b->live = 1;
    w->nb++;
    tally.backups++;
    cworld_write_snapshot(w, pv, ep, px, b->owner, 0);
}

/* An EtcdRestore of a backup into a new Etcd (target prefix checked, then the Etcd's CREATE). */
static void op_restore(struct cworld *w)
{
    char name[16];
    const char *pv, *ep, *px;
    struct cworld_backup *b;
    struct bstore_claim from, to;
    struct claims_skip skip;
    struct cworld_cluster *c;
    int refused;

    snprintf(name, sizeof(name), "e%u", cworld_next(w) % NAMES);
    draw_store(w, &pv, &ep, &px);
    cworld_note(w, "restore into", name, px, ep);
    if (!w->nb || live_named(w, name) || w->nc >= CWORLD_MAXC - 2)
        return;
    b = &w->b[cworld_next(w) % w->nb];
    if (!b->live)
        return;
    cworld_claim_of(b->provider, b->endpoint, b->prefix, &from);
    cworld_claim_of(pv, ep, px, &to);
    skip = (struct claims_skip){ .etcd_ns = "ns", .etcd_name = name };
    refused = bstore_claims_overlap(&from, &to) || cworld_claimed(w, pv, ep, px, &skip);
    bstore_claim_release(&from);
    bstore_claim_release(&to);
    if (refused)
        return;
    c = new_cluster(w, name, pv, ep, px);
    if (!cworld_admitted(w, c))
        return;
    tally.restores++;
    cworld_write_snapshot(w, pv, ep, px, c->owner, 0); /* the copy */
    c->live = 1;
    w->nc++;
    keep_entry(w, c);
}

/* ---- the invariants ---- */

/* Every live cluster not admitted in a race lists exactly its own snapshots. */
static void check(struct cworld *w)
{
    for (int i = 0; !w->violation && i < w->nc; i++) {
        struct cworld_cluster *c = &w->c[i];
        struct bstore_claim cl;
        char op[256];
        int own = 0;

        if (!c->live || c->raced)
            continue;
        cworld_claim_of(c->provider, c->endpoint, c->prefix, &cl);
        cr_assert_eq(bstore_object_prefix("S3", c->prefix, op, sizeof(op)), KERR_OK);
        for (int j = 0; j < w->no; j++) {
            struct cworld_object *o = &w->o[j];

            if (!o->alive || strcmp(o->store, CWORLD_BUCKET) != 0 ||
                strncmp(o->key, op, strlen(op)))
                continue;
            if (strcmp(o->owner, c->owner) != 0 && !o->raced) {
                w->violation = "a live cluster's sidecar lists another's snapshot";
                cworld_note(w, "  which lists", o->key, o->owner, c->owner);
            }
            own++;
        }
        if (!own && !w->violation)
            w->violation = "a live cluster's snapshots are gone";
        bstore_claim_release(&cl);
    }
}

static void run(unsigned seed)
{
    static void (*const ops[])(struct cworld *) = { op_create, op_create, op_create,
                                                    op_race,   op_delete, op_delete,
                                                    op_grace,  op_backup, op_restore };
    struct cworld *w = calloc(1, sizeof(*w));

    cr_assert_not_null(w);
    w->seed = seed;
    for (int step = 0; step < STEPS && !w->violation; step++) {
        ops[cworld_next(w) % N(ops)](w);
        tally.ops++;
        check(w);
        tally.checks++;
    }
    cr_assert_null(w->violation, "seed %u: %s\nreplay with CLAIMS_SEED=%u; the sequence:\n%s", seed,
                   w->violation, seed, w->log);
    free(w);
}

Test(claims_random, sequences, .timeout = 300)
{
    const char *one = getenv("CLAIMS_SEED"), *many = getenv("CLAIMS_SEQUENCES");
    const char *from = getenv("CLAIMS_SEED_BASE");
    /* fixed seeds in the test command: it cannot go red by chance; CLAIMS_SEED_BASE=random
     * (the time) or a number for other sequences */
    unsigned base = !from                         ? 1u
                    : strcmp(from, "random") == 0 ? (unsigned)time(NULL)
                                                  : (unsigned)strtoul(from, NULL, 10);
    const char *lng = getenv("WARDEN_LONG_TESTS");
    unsigned n = many                           ? (unsigned)strtoul(many, NULL, 10)
                 : lng && strcmp(lng, "1") == 0 ? 50000
                                                : 2000;

    if (one) {
        run((unsigned)strtoul(one, NULL, 10));
        return;
    }
    cr_log_info("claims_random: %u sequences of %d steps from seed %u", n, STEPS, base);
    fprintf(stderr, "claims_random: %u sequences of %d steps, seeds %u..%u\n", n, STEPS, base,
            base + n - 1);
    for (unsigned i = 0; i < n; i++)
        run(base + i);
    fprintf(stderr,
            "claims_random: %ld operations, %ld invariant checks; creates admitted %ld, refused "
            "%ld, in a race %ld; deletions run %ld (%ld objects), blocked %ld; backups %ld, "
            "restores %ld\n",
            tally.ops, tally.checks, tally.admitted, tally.refused, tally.raced, tally.deletions,
            tally.objects_deleted, tally.blocked, tally.backups, tally.restores);
    cr_assert_gt(tally.deletions, 0, "the sequences ran no deletion");
    cr_assert_gt(tally.refused, 0, "the sequences refused no create");
}
