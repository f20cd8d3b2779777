#include "tests/kube-sim/hist.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void event_clear(struct ksim_hist_event *e)
{
    free(e->ns);
    cJSON_Delete(e->obj);
    cJSON_Delete(e->prev);
    memset(e, 0, sizeof(*e));
}

enum kerr ksim_hist_init(struct ksim_hist *h, size_t cap, uint64_t dropped_rv)
{
    memset(h, 0, sizeof(*h));
    h->ring = calloc(cap ? cap : 1, sizeof(*h->ring));
    if (!h->ring)
        return KERR_NOMEM;
    h->cap = cap ? cap : 1;
    h->dropped_rv = dropped_rv;
    return KERR_OK;
}

void ksim_hist_release(struct ksim_hist *h)
{
    size_t i;

    for (i = 0; h->ring && i < h->count; i++)
        event_clear(&h->ring[(h->head + i) % h->cap]);
    free(h->ring);
    memset(h, 0, sizeof(*h));
}

void ksim_hist_record(struct ksim_hist *h, enum ksim_event_type type, uint64_t rv, const char *ns,
                      cJSON *obj, cJSON *prev)
{
    struct ksim_hist_event *e;

    if (h->count == h->cap) {
        e = &h->ring[h->head];
        h->dropped_rv = e->rv;
        event_clear(e);
        h->head = (h->head + 1) % h->cap;
        h->count--;
    }
    e = &h->ring[(h->head + h->count) % h->cap];
    e->type = type;
    e->rv = rv;
    e->ns = strdup(ns ? ns : "");
    e->obj = obj;
    e->prev = prev;
    if (!e->ns || !e->obj) {
        event_clear(e);
        h->dropped_rv = rv;
        return;
    }
    h->count++;
}

/* Index (from head) of the first event with rv > after: the ring is rv-ordered. */
static size_t first_after(const struct ksim_hist *h, uint64_t after)
{
    size_t lo = 0, hi = h->count, mid;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        if (h->ring[(h->head + mid) % h->cap].rv <= after)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const struct ksim_hist_event *ksim_hist_next(const struct ksim_hist *h, uint64_t after,
                                             const char *ns, uint64_t *skipped)
{
    const struct ksim_hist_event *e;
    size_t i;

    for (i = first_after(h, after); i < h->count; i++) {
        e = &h->ring[(h->head + i) % h->cap];
        if (ns && *ns && strcmp(ns, e->ns) != 0) {
            if (skipped)
                *skipped = e->rv;
            continue;
        }
        return e;
    }
    return NULL;
}

void ksim_hist_clear(struct ksim_hist *h, uint64_t rv)
{
    while (h->count) {
        event_clear(&h->ring[h->head]);
        h->head = (h->head + 1) % h->cap;
        h->count--;
    }
    h->dropped_rv = rv;
}

enum kerr ksim_hist_too_old(const struct ksim_hist *h, uint64_t rv, uint64_t now,
                            struct kerr_info *err)
{
    uint64_t oldest = h->count ? h->ring[h->head].rv : now;

    return kerr_set(err, KERR_GONE, "too old resource version: %" PRIu64 " (%" PRIu64 ")", rv,
                    oldest > 0 ? oldest - 1 : 0);
}
