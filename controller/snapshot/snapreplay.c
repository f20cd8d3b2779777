/* snapreplay - deltas replayed over a key set as the restorer does (see snapreplay.h). */
#include "controller/snapshot/snapreplay.h"

#include <stdlib.h>
#include <string.h>

struct snapreplay_op {
    unsigned char h[SNAPKEYS_HASH_LEN];
    bool put;
};

void snapreplay_init(struct snapreplay *r, struct snapkeys *keys, int64_t rev)
{
    memset(r, 0, sizeof *r);
    r->keys = keys;
    r->rev = rev;
}

void snapreplay_release(struct snapreplay *r)
{
    free(r->group);
    r->group = NULL;
    r->ng = r->gcap = 0;
}

void snapreplay_begin(struct snapreplay *r, bool first, bool all)
{
    r->first = first;
    r->skipping = first && !all;
    r->all = all;
    r->skipped = 0;
    r->start_rev = r->rev;
    r->last = 0;
    r->ng = 0;
}

static int op_cmp(const void *a, const void *b)
{
    const struct snapreplay_op *x = a, *y = b;
    int c = memcmp(x->h, y->h, SNAPKEYS_HASH_LEN);
    return c ? c : (int)x->put - (int)y->put;
}

/* The group as one transaction. */
static enum kerr commit(struct snapreplay *r, struct kerr_info *err)
{
    bool changed = false;
    enum kerr rc;

    if (r->ng > 1) {
        struct snapreplay_op *s = malloc(r->ng * sizeof *s);
        if (s == NULL)
            return kerr_set(err, KERR_NOMEM, NULL);
        memcpy(s, r->group, r->ng * sizeof *s);
        qsort(s, r->ng, sizeof *s, op_cmp);
        for (size_t i = 1; i < r->ng; i++) {
            if (memcmp(s[i - 1].h, s[i].h, SNAPKEYS_HASH_LEN) == 0 && s[i].put) {
                free(s);
                return kerr_set(err, KERR_PARSE,
                                "duplicate key given in txn request (events at revision %lld)",
                                (long long)r->last);
            }
        }
        free(s);
    }
    for (size_t i = 0; i < r->ng; i++) {
        if (r->group[i].put) {
            if ((rc = snapkeys_add(r->keys, r->group[i].h, err)) != KERR_OK)
                return rc;
            changed = true;
        } else if (snapkeys_del(r->keys, r->group[i].h)) {
            changed = true;
        }
    }
    r->rev += changed;
    r->ng = 0;
    return KERR_OK;
}

enum kerr snapreplay_event(void *ctx, const struct snapdelta_event *ev, struct kerr_info *err)
{
    struct snapreplay *r = ctx;
    enum kerr rc;

    if (r->skipping && ev->mod_revision <= r->start_rev) {
        r->skipped++;
        return KERR_OK;
    }
    r->skipping = false;
    if (r->last != 0 && ev->mod_revision > r->last && (rc = commit(r, err)) != KERR_OK)
        return rc;
    r->last = ev->mod_revision;
    if (ev->type != 0 && ev->type != 1)
        return kerr_set(err, KERR_PARSE, "event %lld: unexpected event type %d",
                        (long long)ev->index, ev->type);
    if (ev->klen == 0)
        return kerr_set(err, KERR_PARSE, "event %lld: key is not provided", (long long)ev->index);
    if (r->ng == SNAPREPLAY_GROUP_MAX)
        return kerr_set(err, KERR_TOOBIG, "more than %u events at revision %lld",
                        SNAPREPLAY_GROUP_MAX, (long long)r->last);
    if (r->ng == r->gcap) {
        size_t cap = r->gcap ? r->gcap * 2 : 64;
        struct snapreplay_op *g = realloc(r->group, cap * sizeof *g);
        if (g == NULL)
            return kerr_set(err, KERR_NOMEM, NULL);
        r->group = g;
        r->gcap = cap;
    }
    snapkeys_hash(r->keys, ev->key, ev->klen, r->group[r->ng].h);
    r->group[r->ng++].put = ev->type == 0;
    r->events++;
    return KERR_OK;
}

enum kerr snapreplay_end(struct snapreplay *r, int64_t last_rev, bool *again, struct kerr_info *err)
{
    enum kerr rc;

    *again = r->skipping && r->skipped > 0;
    if (*again)
        return KERR_OK;
    if ((rc = commit(r, err)) != KERR_OK)
        return rc;
    if (r->rev != last_rev)
        return kerr_set(err, KERR_PARSE,
                        "mismatched event revision: the restore is at revision %lld after it, "
                        "its name says %lld (%s)",
                        (long long)r->rev, (long long)last_rev,
                        r->rev > last_rev ? "revisions applied twice: an overlap"
                                          : "revisions missing: a gap or a reordering");
    return KERR_OK;
}
