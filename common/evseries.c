/*
 * evseries - see evseries.h. Entries are a singly linked list, oldest first,
 * searched linearly (a recorder remembers a few thousand at most); the spam
 * buckets are a list keyed by the regarding object's packed fields.
 */
#include "common/evseries.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ktime.h"
#include "common/ratelimit.h"

#define DEFAULT_MAX 4096

struct evs_spam {
    struct evs_spam *next;
    struct rl_bucket *bucket;
    size_t len;
    char key[];
};

/* ---- items ---- */

const char *evs_field(const struct evs_item *it, enum evs_field f)
{
    const char *p = it->data;
    int i = (int)f;

    while (i-- > 0)
        p += strlen(p) + 1;
    return p;
}

/* Length of note kept: at most max bytes, not splitting a UTF-8 character. */
static size_t note_len(const char *note, size_t max)
{
    size_t n = note ? strnlen(note, max + 1) : 0;

    if (n <= max)
        return n;
    n = max;
    while (n > 0 && ((unsigned char)note[n] & 0xc0) == 0x80)
        n--;
    return n;
}

enum kerr evs_item_new(const char *const fields[EVS_F_COUNT], size_t note_max,
                       struct evs_item **out)
{
    size_t len[EVS_F_COUNT], total = 0, off = 0;
    struct evs_item *it;
    int i;

    *out = NULL;
    for (i = 0; i < EVS_F_COUNT; i++) {
        len[i] =
            i == EVS_F_NOTE ? note_len(fields[i], note_max) : (fields[i] ? strlen(fields[i]) : 0);
        total += len[i] + 1;
    }
    it = malloc(sizeof(*it) + total);
    if (!it)
        return KERR_NOMEM;
    for (i = 0; i < EVS_F_COUNT; i++) {
        if (len[i])
            memcpy(it->data + off, fields[i], len[i]);
        it->data[off + len[i]] = '\0';
        off += len[i] + 1;
        if (i == EVS_F_TYPE - 1)
            it->obj_len = off;
    }
    it->len = total;
    clock_gettime(CLOCK_REALTIME, &it->at);
    it->mono = ktime_mono_ns();
    *out = it;
    return KERR_OK;
}

/* ---- the cache ---- */

void evs_init(struct evs_cache *c, int64_t window_ns, size_t max, double spam_qps, int spam_burst)
{
    memset(c, 0, sizeof(*c));
    c->window_ns = window_ns;
    c->max = max ? max : DEFAULT_MAX;
    c->spam_qps = spam_qps;
    c->spam_burst = spam_burst;
}

int evs_pending(const struct evs_entry *e)
{
    return !e->dead && e->sent < e->count;
}

static void free_entry(struct evs_entry *e)
{
    free(e->item);
    free(e);
}

/* Forget dead entries and those whose series window has passed with nothing to send. */
static void gc_entries(struct evs_cache *c, int64_t now, int all)
{
    struct evs_entry **pp = &c->first, *e, *prev = NULL;

    while ((e = *pp)) {
        if (e->dead || all || (!evs_pending(e) && now - e->last_mono >= c->window_ns)) {
            *pp = e->next;
            c->n--;
            free_entry(e);
            continue;
        }
        prev = e;
        pp = &e->next;
    }
    c->last = prev;
}

static void gc_spam(struct evs_cache *c, int all)
{
    struct evs_spam **pp = &c->spam, *s;

    while ((s = *pp)) {
        if (all || rl_tokens(s->bucket) >= c->spam_burst) { /* full again: as new */
            *pp = s->next;
            rl_bucket_free(s->bucket);
            free(s);
            continue;
        }
        pp = &s->next;
    }
}

void evs_release(struct evs_cache *c)
{
    gc_entries(c, 0, 1);
    gc_spam(c, 1);
}

void evs_gc(struct evs_cache *c, int64_t now)
{
    gc_entries(c, now, 0);
    gc_spam(c, 0);
}

/* Take a token from the bucket of it's regarding object. */
static int spam_allow(struct evs_cache *c, const struct evs_item *it)
{
    struct evs_spam *s;

    if (c->spam_qps < 0)
        return 1;
    for (s = c->spam; s; s = s->next)
        if (s->len == it->obj_len && memcmp(s->key, it->data, s->len) == 0)
            return rl_try(s->bucket);
    s = calloc(1, sizeof(*s) + it->obj_len);
    if (!s || rl_bucket_new(c->spam_qps, c->spam_burst, NULL, &s->bucket, NULL) != KERR_OK) {
        free(s);
        return 1; /* out of memory: do not lose the event for that */
    }
    memcpy(s->key, it->data, it->obj_len);
    s->len = it->obj_len;
    s->next = c->spam;
    c->spam = s;
    return rl_try(s->bucket);
}

static struct evs_entry *find_series(struct evs_cache *c, const struct evs_item *it, int64_t now)
{
    struct evs_entry *e;

    for (e = c->first; e; e = e->next)
        if (!e->dead && now - e->last_mono < c->window_ns && e->item->len == it->len &&
            memcmp(e->item->data, it->data, it->len) == 0)
            return e;
    return NULL;
}

/* Make room for one more entry: drop the oldest when the cache is full. 1 if it was pending. */
static int make_room(struct evs_cache *c, int64_t now)
{
    struct evs_entry *e;
    int was_pending;

    if (c->n < c->max)
        return 0;
    gc_entries(c, now, 0);
    if (c->n < c->max)
        return 0;
    e = c->first;
    was_pending = evs_pending(e);
    c->first = e->next;
    if (!c->first)
        c->last = NULL;
    c->n--;
    free_entry(e);
    return was_pending;
}

enum evs_outcome evs_ingest(struct evs_cache *c, struct evs_item *it, int64_t now,
                            int *evicted_pending)
{
    struct evs_entry *e = find_series(c, it, now);
    long long ns;
    size_t part;

    *evicted_pending = 0;
    if (e) {
        e->count++;
        e->last_at = it->at;
        e->last_mono = it->mono;
        free(it);
        return EVS_REPEAT;
    }
    if (!spam_allow(c, it) || !(e = calloc(1, sizeof(*e)))) {
        free(it);
        return EVS_DROPPED;
    }
    *evicted_pending = make_room(c, now);
    ns = (long long)it->at.tv_sec * KTIME_NS_PER_SEC + it->at.tv_nsec;
    part = strnlen(evs_field(it, EVS_F_NAME), EVS_NAME_PART_MAX);
    while (part > 1 && !isalnum((unsigned char)evs_field(it, EVS_F_NAME)[part - 1]))
        part--; /* a cut name ending in '-' or '.' would not be a DNS subdomain */
    snprintf(e->name, sizeof(e->name), "%.*s.%llx", (int)part, evs_field(it, EVS_F_NAME),
             (unsigned long long)ns);
    e->item = it;
    e->count = 1;
    e->last_at = it->at;
    e->last_mono = it->mono;
    if (c->last)
        c->last->next = e;
    else
        c->first = e;
    c->last = e;
    c->n++;
    return EVS_NEW;
}
