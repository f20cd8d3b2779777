/* snapcheck - cluster prefixes of a container and the pairs the sidecar mixes; see snapcheck.h. */
#include "controller/snapshot/snapcheck.h"

#include <stdlib.h>
#include <string.h>

#include "common/bstore.h"

/* strcmp of prefix against the n bytes at key. */
static int cmp_n(const char *prefix, const char *key, size_t n)
{
    int r = strncmp(prefix, key, n);

    if (r != 0)
        return r;
    return prefix[n] == '\0' ? 0 : 1;
}

/* A new prefix (the n bytes at key) at index at of c->v, which stays sorted. */
static enum kerr insert_at(struct snapcheck *c, const char *key, size_t n, size_t at,
                           struct kerr_info *err)
{
    struct snapcheck_prefix p = { 0 };

    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        struct snapcheck_prefix *v = realloc(c->v, cap * sizeof(*v));

        if (!v)
            return kerr_set(err, KERR_NOMEM, NULL);
        c->v = v;
        c->cap = cap;
    }
    p.prefix = strndup(key, n);
    p.canonical = malloc(n + 2);
    if (!p.prefix || !p.canonical || bstore_prefix(p.prefix, p.canonical, n + 2) != KERR_OK) {
        free(p.prefix);
        free(p.canonical);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    memmove(&c->v[at + 1], &c->v[at], (c->n - at) * sizeof(c->v[0]));
    c->v[at] = p;
    c->n++;
    return KERR_OK;
}

/* The index of the prefix (the n bytes at key) in c->v, inserted when new. */
static enum kerr find_or_insert(struct snapcheck *c, const char *key, size_t n, size_t *at,
                                struct kerr_info *err)
{
    size_t lo = 0, hi = c->n;
    enum kerr rc;

    if (c->last < c->n && cmp_n(c->v[c->last].prefix, key, n) == 0) {
        *at = c->last;
        return KERR_OK;
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = cmp_n(c->v[mid].prefix, key, n);

        if (r == 0) {
            *at = c->last = mid;
            return KERR_OK;
        }
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    rc = insert_at(c, key, n, lo, err);
    if (rc == KERR_OK)
        *at = c->last = lo;
    return rc;
}

/* Keep sn (of key) in l when it is later in etcd-backup-restore's order. */
static enum kerr keep_latest(struct snapcheck_latest *l, const struct snap_name *sn,
                             const char *key, struct kerr_info *err)
{
    char *k;

    if (l->set && snap_cmp(sn, &l->name) <= 0)
        return KERR_OK;
    k = strdup(key);
    if (!k)
        return kerr_set(err, KERR_NOMEM, NULL);
    free(l->key);
    l->key = k;
    l->name = *sn;
    l->set = true;
    return KERR_OK;
}

enum kerr snapcheck_add(struct snapcheck *c, const char *key, struct kerr_info *err)
{
    struct snap_name sn;
    struct snapcheck_prefix *p;
    size_t at = 0;
    enum kerr rc;

    c->objects++;
    if (!key || strnlen(key, SNAPCHECK_KEY_MAX + 1) > SNAPCHECK_KEY_MAX ||
        snap_parse(key, &sn, NULL) != KERR_OK)
        return KERR_OK;
    rc = find_or_insert(c, key, sn.prefix_len ? sn.prefix_len - 1 : 0, &at, err);
    if (rc != KERR_OK)
        return rc;
    p = &c->v[at];
    p->snapshots++;
    if (sn.is_chunk)
        return KERR_OK;
    if (sn.kind == SNAP_FULL) {
        p->fulls++;
        rc = keep_latest(&p->full, &sn, key, err);
    }
    return rc == KERR_OK ? keep_latest(&p->any, &sn, key, err) : rc;
}

/* qsort order of prefix pointers: canonical prefix, then prefix. */
static int by_canonical(const void *x, const void *y)
{
    const struct snapcheck_prefix *a = *(const struct snapcheck_prefix *const *)x;
    const struct snapcheck_prefix *b = *(const struct snapcheck_prefix *const *)y;
    int r = strcmp(a->canonical, b->canonical);

    return r ? r : strcmp(a->prefix, b->prefix);
}

/* 1 when a snapshot b is after a snapshot a in etcd-backup-restore's order (a unset: any). */
static bool after(const struct snapcheck_latest *a, const struct snapcheck_latest *b)
{
    return b->set && (!a->set || snap_cmp(&b->name, &a->name) > 0);
}

/* What the sidecar of s makes of the snapshots of l (s's listing returns them). */
static struct snapcheck_pair judge(const struct snapcheck *c, size_t s, size_t l)
{
    const struct snapcheck_prefix *ps = &c->v[s], *pl = &c->v[l];
    size_t n = strlen(ps->prefix);
    struct snapcheck_pair p = { .shorter = s, .longer = l };

    p.newer_full = after(&ps->full, &pl->full);
    p.newer = after(&ps->full, &pl->any);
    if (strncmp(pl->prefix, ps->prefix, n) != 0 || (c->local && n > 0 && pl->prefix[n] != '/'))
        p.effect = SNAPCHECK_APART;
    else if (!p.newer)
        p.effect = SNAPCHECK_AT_RISK;
    else if (n == 0 || pl->prefix[n] == '/' || c->full_key)
        p.effect = SNAPCHECK_WRONG_DATA;
    else
        p.effect = SNAPCHECK_FAILS;
    return p;
}

static enum kerr add_pair(struct snapcheck *c, struct snapcheck_pair p, struct kerr_info *err)
{
    if (c->npairs == c->pcap) {
        size_t cap = c->pcap ? c->pcap * 2 : 8;
        struct snapcheck_pair *v = realloc(c->pairs, cap * sizeof(*v));

        if (!v)
            return kerr_set(err, KERR_NOMEM, NULL);
        c->pairs = v;
        c->pcap = cap;
    }
    c->pairs[c->npairs++] = p;
    return KERR_OK;
}

enum kerr snapcheck_pairs(struct snapcheck *c, struct kerr_info *err)
{
    const struct snapcheck_prefix **o = c->n ? calloc(c->n, sizeof(*o)) : NULL;
    enum kerr rc = KERR_OK;

    c->npairs = 0;
    if (c->n && !o)
        return kerr_set(err, KERR_NOMEM, NULL);
    for (size_t i = 0; i < c->n; i++)
        o[i] = &c->v[i];
    if (c->n)
        qsort(o, c->n, sizeof(*o), by_canonical);
    /* Sorted, the canonical prefixes that start with o[i]'s follow it in one run. */
    for (size_t i = 0; rc == KERR_OK && i < c->n; i++) {
        for (size_t j = i + 1; rc == KERR_OK && j < c->n; j++) {
            if (!bstore_prefix_overlap(o[i]->canonical, o[j]->canonical))
                break;
            rc = add_pair(c, judge(c, (size_t)(o[i] - c->v), (size_t)(o[j] - c->v)), err);
        }
    }
    free(o);
    return rc;
}

void snapcheck_release(struct snapcheck *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->v[i].prefix);
        free(c->v[i].canonical);
        free(c->v[i].full.key);
        free(c->v[i].any.key);
    }
    free(c->v);
    free(c->pairs);
    memset(c, 0, sizeof(*c));
}

const char *snapcheck_effect_str(enum snapcheck_effect e)
{
    switch (e) {
    case SNAPCHECK_FAILS:
        return "fails";
    case SNAPCHECK_WRONG_DATA:
        return "wrong-data";
    case SNAPCHECK_APART:
        return "apart";
    default:
        return "at-risk";
    }
}
