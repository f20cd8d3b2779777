/*
 * claimsworld - the world of tests/test_claims_random.c: clusters (Etcds), BackupEntries,
 * EtcdBackups and the snapshots in one S3 bucket, with etcd-warden's own rules over them: the
 * webhook's (prefix_check3 over caches of the current objects), the claims a deletion, a copy
 * or a restore target is checked against (claims_find_in), and an in-memory bucket for
 * delete-snapshots (snapdel_run) that behaves as the backup sidecar sees S3. The functions
 * assert (Criterion) on what cannot fail; a world is used by one thread.
 */
#ifndef TESTS_SUPPORT_CLAIMSWORLD_H
#define TESTS_SUPPORT_CLAIMSWORLD_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "common/bstore.h"
#include "controller/core/claims.h"
#include "controller/snapshot/ostore.h"

#define CWORLD_MAXC   64 /* clusters */
#define CWORLD_MAXE   64 /* entries */
#define CWORLD_MAXB   32 /* backups */
#define CWORLD_MAXO   512
#define CWORLD_LOGMAX 8192

/* The one physical bucket every cluster of the sequence writes into. */
#define CWORLD_BUCKET "bkt"

struct cworld_cluster {
    char name[16];
    const char *provider, *endpoint, *prefix;
    char owner[128]; /* "<name>|<canonical key>|<canonical prefix>": whose snapshots */
    int live, raced;
};

struct cworld_entry {
    char name[256];
    char etcd[16];
    const char *provider, *endpoint, *prefix;
    int pending;
};

struct cworld_backup {
    char name[16], etcd[16];
    const char *provider, *endpoint, *prefix;
    char owner[32];
    int live;
};

struct cworld_object {
    char store[BSTORE_KEY_MAX];
    char key[320];
    char owner[128];
    int alive;
    int raced; /* written by a cluster admitted in a race with an overlapping one (reported) */
};

struct cworld {
    unsigned seed;
    struct cworld_cluster c[CWORLD_MAXC];
    struct cworld_entry e[CWORLD_MAXE];
    struct cworld_backup b[CWORLD_MAXB];
    struct cworld_object o[CWORLD_MAXO];
    int nc, ne, nb, no, serial;
    char log[CWORLD_LOGMAX];
    const char *violation;
};

/* An in-memory S3 bucket (one store key of w) for delete-snapshots. */
struct cworld_memstore {
    struct ostore base;
    struct cworld *w;
    const char *store;
};

/* cworld_memstore's operations: list and delete w's live objects of store. */
extern const struct ostore_ops cworld_mem_ops;

/* The next number (0 .. 0x7fff) of w's sequence, from w->seed. */
unsigned cworld_next(struct cworld *w);

/* One line of w's log: "<what> <name> \"<prefix>\" <endpoint>" (prefix, endpoint may be NULL). */
void cworld_note(struct cworld *w, const char *what, const char *name, const char *prefix,
                 const char *endpoint);

/* The claim of (provider, endpoint, prefix) in container bkt, into c (bstore_claim_release). */
void cworld_claim_of(const char *provider, const char *endpoint, const char *prefix,
                     struct bstore_claim *c);

/* "<name>|<canonical key>|<canonical prefix>" of a store into out (n bytes): whose snapshots. */
void cworld_owner_of(const char *name, const char *provider, const char *endpoint,
                     const char *prefix, char *out, size_t n);

/* 1 when the webhook admits the CREATE of c against the caches of w. */
int cworld_admitted(struct cworld *w, const struct cworld_cluster *c);

/* The claims of w other than skip's overlapping (provider, endpoint, prefix): 1 when any. */
int cworld_claimed(struct cworld *w, const char *provider, const char *endpoint, const char *prefix,
                   const struct claims_skip *skip);

/* A full snapshot of owner where the sidecar of (provider, endpoint, prefix) writes it;
 * raced: its writer was admitted in a race with an overlapping one. */
void cworld_write_snapshot(struct cworld *w, const char *provider, const char *endpoint,
                           const char *prefix, const char *owner, int raced);

#endif
