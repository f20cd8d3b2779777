/*
 * evseries - the series cache of the event recorder (common/events): packed
 * event keys, series counting of isomorphic events and the per-object spam
 * filter, after client-go's tools/events and its old
 * EventSourceObjectSpamFilter.
 *
 * An event is packed into one struct evs_item: its fields as consecutive
 * NUL-terminated strings, the regarding object's first, so two events are
 * isomorphic (same regarding object, type, reason, action and note) when
 * their bytes are equal, and about the same object when their first obj_len
 * bytes are. evs_ingest counts an item into the series of a remembered
 * isomorphic event last seen within the series window, or, when the token
 * bucket of its object allows (burst spam_burst, refilled at spam_qps; a
 * negative spam_qps disables the filter), remembers it as a new event named
 * "<regarding.name>.<unix nanoseconds in hex>". At most max events are
 * remembered; the oldest is forgotten first.
 *
 * An entry also carries the sending state of its Event (sent, tries, ...),
 * which belongs to the recorder; the cache only reads it, through
 * evs_pending, to keep entries that still have something to send.
 *
 * Ownership: a cache OWNS its entries and their items; evs_ingest TAKES the
 * item. Thread safety: none for a cache (the recorder's sender thread owns
 * it); evs_item_new and evs_field may be called from any thread.
 */
#ifndef COMMON_EVSERIES_H
#define COMMON_EVSERIES_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "common/kerr.h"

#define EVS_NAME_PART_MAX 236 /* of the regarding name: 236 + '.' + 16 hex digits = 253 */

/* The fields of an item, in packing order; the regarding object's come first. */
enum evs_field {
    EVS_F_API,    /* regarding apiVersion */
    EVS_F_KIND,   /* regarding kind */
    EVS_F_NS,     /* regarding namespace, "" for cluster-scoped objects */
    EVS_F_NAME,   /* regarding name */
    EVS_F_UID,    /* regarding uid */
    EVS_F_TYPE,   /* "Normal" or "Warning" */
    EVS_F_REASON, /* reason */
    EVS_F_ACTION, /* action */
    EVS_F_NOTE,   /* note, cut by evs_item_new */
    EVS_F_COUNT
};

/* One emitted event, packed. */
struct evs_item {
    size_t len;         /* bytes of data, NULs included */
    size_t obj_len;     /* bytes of the regarding fields */
    struct timespec at; /* wall clock of the emit */
    int64_t mono;       /* monotonic ns of the emit */
    char data[];
};

/* A remembered event and its series. */
struct evs_entry {
    struct evs_entry *next;
    struct evs_item *item; /* the first occurrence; OWNED */
    char name[EVS_NAME_PART_MAX + 18];
    struct timespec last_at; /* wall clock of the last occurrence */
    int64_t last_mono;       /* monotonic ns of the last occurrence */
    uint64_t count;          /* occurrences */
    /* The recorder's sending state; zero on a new entry. */
    uint64_t sent;      /* count the server has; 0 = not created yet */
    int tries;          /* failed tries of the pending create or patch */
    int64_t next_try;   /* monotonic ns before which no new try is made */
    int64_t last_write; /* monotonic ns of the last successful write */
    int dead;           /* create given up: forget the entry */
};

struct evs_spam;

/* The cache. Read first/next (oldest first) and n; change them only through evs_ functions. */
struct evs_cache {
    struct evs_entry *first, *last;
    size_t n;
    struct evs_spam *spam; /* per-object token buckets */
    int64_t window_ns;
    size_t max;
    double spam_qps;
    int spam_burst;
};

/* What evs_ingest did with an item. */
enum evs_outcome {
    EVS_REPEAT,  /* counted into an existing series (count and last_* updated) */
    EVS_NEW,     /* remembered as a new entry (the last of the list) */
    EVS_DROPPED, /* over the object's spam limit, or out of memory */
};

/*
 * Pack an event: fields[i] (BORROWED, copied; NULL counts as "") for each
 * enum evs_field; the note is cut to at most note_max bytes at a UTF-8
 * character boundary. Stamps the wall and monotonic clocks. On KERR_OK *out
 * OWNS the item (free()). KERR_NOMEM.
 */
enum kerr evs_item_new(const char *const fields[EVS_F_COUNT], size_t note_max,
                       struct evs_item **out);

/* Field f of it (BORROWED from it; "" when it was empty). */
const char *evs_field(const struct evs_item *it, enum evs_field f);

/*
 * An empty cache: a repeat within window_ns of the last occurrence joins the
 * series; at most max entries (0 = 4096); spam limit as described above.
 */
void evs_init(struct evs_cache *c, int64_t window_ns, size_t max, double spam_qps, int spam_burst);

/* Free every entry and spam bucket. Safe to call twice, and on a zeroed cache. */
void evs_release(struct evs_cache *c);

/*
 * Take it (TAKES, freed unless it became a new entry's item) at monotonic
 * time now. *evicted_pending is set to 1 when room was made by forgetting
 * the oldest entry while it still had something to send, else 0.
 */
enum evs_outcome evs_ingest(struct evs_cache *c, struct evs_item *it, int64_t now,
                            int *evicted_pending);

/*
 * Forget dead entries and those whose series window has passed with nothing
 * left to send, and spam buckets that are full again.
 */
void evs_gc(struct evs_cache *c, int64_t now);

/* 1 when e has something to send: not dead, and occurrences the server does not have. */
int evs_pending(const struct evs_entry *e);

#endif
