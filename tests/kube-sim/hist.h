/*
 * hist - the event history of one resource: a ring of the last N changes
 * (type, resourceVersion, namespace, object after and before), ordered by
 * resourceVersion, from which watches replay. Once the ring is full the
 * oldest event is dropped and the history "forgets" everything up to its
 * resourceVersion: a watch starting there gets 410 Expired.
 *
 * Ownership: a struct ksim_hist is embedded by the store (ksim_hist_init /
 * ksim_hist_release) and OWNS its events; objects passed to
 * ksim_hist_record are TAKEN; events returned are BORROWED until the next
 * modifying call.
 * Thread safety: none; the store's lock guards it.
 */
#ifndef KSIM_HIST_H
#define KSIM_HIST_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "common/kerr.h"
#include "tests/kube-sim/store.h"

struct ksim_hist_event {
    enum ksim_event_type type;
    uint64_t rv;
    char *ns;    /* OWNS: "" for cluster scope */
    cJSON *obj;  /* OWNS: the object after the change (DELETED: its last state) */
    cJSON *prev; /* OWNS or NULL: the object before a MODIFIED */
};

struct ksim_hist {
    struct ksim_hist_event *ring; /* OWNS, cap slots */
    size_t cap, head, count;      /* the oldest event is ring[head] */
    uint64_t dropped_rv;          /* events at or below this rv are gone */
};

/* An empty history of cap events whose knowledge starts after dropped_rv. */
enum kerr ksim_hist_init(struct ksim_hist *h, size_t cap, uint64_t dropped_rv);

/* Free every event. Safe to call twice. */
void ksim_hist_release(struct ksim_hist *h);

/*
 * Append an event (obj and prev TAKEN), dropping the oldest when full.
 * Without memory the event is lost and the history forgets up to rv, so
 * watchers relist.
 */
void ksim_hist_record(struct ksim_hist *h, enum ksim_event_type type, uint64_t rv, const char *ns,
                      cJSON *obj, cJSON *prev);

/*
 * The first event with rv > after in namespace ns (NULL or "" = any), or
 * NULL. *skipped (optional) gets the rv of the last event of another
 * namespace passed over, so a watcher's cursor can advance.
 */
const struct ksim_hist_event *ksim_hist_next(const struct ksim_hist *h, uint64_t after,
                                             const char *ns, uint64_t *skipped);

/* Forget every event; the history now starts after rv. */
void ksim_hist_clear(struct ksim_hist *h, uint64_t rv);

/* KERR_GONE with kube-apiserver's "too old resource version: RV (OLDEST)" in err. */
enum kerr ksim_hist_too_old(const struct ksim_hist *h, uint64_t rv, uint64_t now,
                            struct kerr_info *err);

#endif
