/* bkeover - the live Etcds overlapping an entry's prefix, by a sorted index; see bkeover.h. */
#include "controller/entries/bkeover.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/bstore.h"
#include "common/kjson.h"
#include "common/ktime.h"

struct item {
    char *prefix; /* OWNS; canonical */
    int64_t at;
    const char *uid;
};

struct bkeover {
    const char *key;    /* the store's (BORROWED from the bucket) */
    struct item *items; /* sorted by prefix */
    size_t n;
    struct item *any; /* Etcds whose prefix cannot be read: they overlap everything */
    size_t nany;
};

static const char *str_or_empty(const cJSON *obj, const char *path)
{
    const char *s = kjson_get_str(obj, path);

    return s ? s : "";
}

/* prefix made canonical into a new string (OWNED by the caller), or NULL when unreadable. */
static char *canonical(const char *prefix)
{
    size_t n = strlen(prefix) + 2;
    char *out = malloc(n);

    if (out && bstore_prefix(prefix, out, n) != KERR_OK) {
        free(out);
        out = NULL;
    }
    return out;
}

static int by_prefix(const void *a, const void *b)
{
    return strcmp(((const struct item *)a)->prefix, ((const struct item *)b)->prefix);
}

enum kerr bkeover_build(const struct bke_bucket *b, const cJSON *etcds, struct bkeover **out)
{
    size_t cap = (size_t)cJSON_GetArraySize(etcds) + 1;
    struct bkeover *ix = calloc(1, sizeof(*ix));
    const cJSON *e;
    struct timespec t;

    *out = NULL;
    if (!ix || !(ix->items = calloc(cap, sizeof(*ix->items))) ||
        !(ix->any = calloc(cap, sizeof(*ix->any)))) {
        bkeover_free(ix);
        return KERR_NOMEM;
    }
    ix->key = b->key;
    cJSON_ArrayForEach (e, etcds) {
        struct item it = { NULL, 1, str_or_empty(e, "metadata.uid") };

        /* a store that cannot be keyed holds the deletion while it lasts (bke.c's
         * hold_entries); etcd-druid refuses such a spec, so its sidecar writes where it did */
        if (bkeclaim_same_store(b, e) != 1)
            continue;
        if (ktime_parse(kjson_get_str(e, "metadata.creationTimestamp"), &t, NULL) == KERR_OK)
            it.at = (int64_t)t.tv_sec; /* else as early as can be */
        it.prefix = canonical(str_or_empty(e, "spec.backup.store.prefix"));
        if (it.prefix)
            ix->items[ix->n++] = it;
        else
            ix->any[ix->nany++] = it;
    }
    qsort(ix->items, ix->n, sizeof(*ix->items), by_prefix);
    *out = ix;
    return KERR_OK;
}

/* The first index of ix->items whose prefix is not less than p (n: none). */
static size_t lower_bound(const struct bkeover *ix, const char *p, size_t len)
{
    size_t lo = 0, hi = ix->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *q = ix->items[mid].prefix;
        int c = strncmp(q, p, len);

        if (c < 0 || (c == 0 && strlen(q) < len))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void consider(struct bkeover_hit *first, const struct item *it, const char *own)
{
    if (strcmp(it->uid, own) == 0)
        return; /* the entry's own Etcd, moved to an overlapping prefix: what it writes is its */
    if (!first->at || it->at < first->at) {
        first->at = it->at;
        first->by = it->uid;
    }
}

struct bkeover_hit bkeover_first(const struct bkeover *ix, const char *prefix, const char *own)
{
    struct bkeover_hit first = { 0, NULL };
    char *p = canonical(prefix ? prefix : "");
    size_t i, len, k;

    for (i = 0; i < ix->nany; i++)
        consider(&first, &ix->any[i], own);
    if (!p) { /* unreadable: overlaps everything */
        for (i = 0; i < ix->n; i++)
            consider(&first, &ix->items[i], own);
        return first;
    }
    len = strlen(p);
    /* ancestors: the Etcds whose prefix is one of p's leading substrings (shorter than p) */
    for (k = 0; k < len; k++)
        for (i = lower_bound(ix, p, k); i < ix->n && strlen(ix->items[i].prefix) == k &&
                                        strncmp(ix->items[i].prefix, p, k) == 0;
             i++)
            if (bstore_overlap(ix->key, ix->items[i].prefix, p))
                consider(&first, &ix->items[i], own);
    /* p itself and its descendants: one range of the sorted array */
    for (i = lower_bound(ix, p, len); i < ix->n && strncmp(ix->items[i].prefix, p, len) == 0; i++)
        if (bstore_overlap(ix->key, ix->items[i].prefix, p))
            consider(&first, &ix->items[i], own);
    free(p);
    return first;
}

void bkeover_free(struct bkeover *ix)
{
    size_t i;

    if (!ix)
        return;
    for (i = 0; ix->items && i < ix->n; i++)
        free(ix->items[i].prefix);
    for (i = 0; ix->any && i < ix->nany; i++)
        free(ix->any[i].prefix);
    free(ix->items);
    free(ix->any);
    free(ix);
}
