/*
 * events - see events.h.
 *
 * ev_emit packs an event into one struct ev_item (its fields as consecutive
 * NUL-terminated strings, so isomorphic events compare with one memcmp) and
 * puts it into a ring under the mutex; nothing else happens on the caller's
 * thread. The sender thread owns everything else: the list of remembered
 * events (struct ev_entry, oldest first) and the per-object spam buckets.
 */
#include "common/events.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/k8s.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/log.h"
#include "common/ratelimit.h"

#define NS_PER_MS     1000000LL
#define NAME_PART_MAX 236 /* 236 + '.' + 16 hex digits = 253 */
#define FLUSH_RETRY   (200 * NS_PER_MS)
#define NO_TIME       INT64_MAX

/* Order of the fields in ev_item.data; the regarding object's come first. */
enum { F_API, F_KIND, F_NS, F_NAME, F_UID, F_TYPE, F_REASON, F_ACTION, F_NOTE, F_COUNT };
#define OBJ_FIELDS F_TYPE

static const struct k8s_resource EVENTS = { "events.k8s.io", "v1", "events", 1 };

struct ev_item {
    size_t len;         /* bytes of data, NULs included */
    size_t obj_len;     /* bytes of the regarding fields */
    struct timespec at; /* wall clock of the emit */
    int64_t mono;       /* monotonic ns of the emit */
    char data[];
};

struct ev_entry {
    struct ev_entry *next;
    struct ev_item *item; /* the first occurrence; OWNED */
    char name[NAME_PART_MAX + 18];
    struct timespec last_at;
    int64_t last_mono;
    uint64_t count;     /* occurrences */
    uint64_t sent;      /* count the server has; 0 = not created yet */
    int tries;          /* failed tries of the pending create or patch */
    int64_t next_try;   /* monotonic ns before which no new try is made */
    int64_t last_write; /* monotonic ns of the last successful write */
    bool dead;          /* create given up: forget the entry */
};

struct ev_spam {
    struct ev_spam *next;
    struct rl_bucket *bucket;
    size_t len;
    char key[];
};

struct ev_recorder {
    struct k8s_client *client;
    char *controller, *instance;
    struct ev_opts o;
    int64_t window_ns, patch_ns, retry_ns, flush_ns;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct ev_item **ring;
    size_t head, count;
    bool stop, running;
    int64_t stop_at; /* monotonic ns of ev_stop: the flush deadline counts from it */
    pthread_t th;
    struct ev_stats st;
    /* sender thread only */
    struct ev_entry *first, *last;
    size_t nentries;
    struct ev_spam *spam;
};

static int64_t mono_now(void)
{
    return rl_now_ns();
}

static void bump(struct ev_recorder *r, uint64_t *counter)
{
    pthread_mutex_lock(&r->mu);
    (*counter)++;
    pthread_mutex_unlock(&r->mu);
}

static const char *field(const struct ev_item *it, int i)
{
    const char *p = it->data;

    while (i-- > 0)
        p += strlen(p) + 1;
    return p;
}

static bool field_ok(const char *s)
{
    return s && *s && strnlen(s, EV_FIELD_MAX + 1) <= EV_FIELD_MAX;
}

/* ---- the caller's side ---- */

/* Length of note kept: at most EV_NOTE_MAX bytes, not splitting a UTF-8 character. */
static size_t note_len(const char *note)
{
    size_t n = note ? strnlen(note, EV_NOTE_MAX + 1) : 0;

    if (n <= EV_NOTE_MAX)
        return n;
    n = EV_NOTE_MAX;
    while (n > 0 && ((unsigned char)note[n] & 0xc0) == 0x80)
        n--;
    return n;
}

static struct ev_item *make_item(const struct ev_ref *ref, enum ev_type type, const char *reason,
                                 const char *action, const char *note)
{
    const char *f[F_COUNT] = {
        ref->api_version, ref->kind, ref->namespace,
        ref->name,        ref->uid,  type == EV_WARNING ? "Warning" : "Normal",
        reason,           action,    note
    };
    size_t len[F_COUNT], total = 0, off = 0;
    struct ev_item *it;
    int i;

    for (i = 0; i < F_COUNT; i++) {
        len[i] = i == F_NOTE ? note_len(f[i]) : (f[i] ? strlen(f[i]) : 0);
        total += len[i] + 1;
    }
    it = malloc(sizeof(*it) + total);
    if (!it)
        return NULL;
    for (i = 0; i < F_COUNT; i++) {
        if (len[i])
            memcpy(it->data + off, f[i], len[i]);
        it->data[off + len[i]] = '\0';
        off += len[i] + 1;
        if (i == OBJ_FIELDS - 1)
            it->obj_len = off;
    }
    it->len = total;
    clock_gettime(CLOCK_REALTIME, &it->at);
    it->mono = mono_now();
    return it;
}

enum kerr ev_emit(struct ev_recorder *r, const struct ev_ref *ref, enum ev_type type,
                  const char *reason, const char *action, const char *note)
{
    struct ev_item *it;
    uint64_t dropped = 0;

    if (!ref || !ref->kind || !*ref->kind || !ref->name || !*ref->name || !field_ok(reason) ||
        !field_ok(action) || (type != EV_NORMAL && type != EV_WARNING))
        return KERR_INVAL;
    it = make_item(ref, type, reason, action, note);
    if (!it)
        return KERR_NOMEM;
    pthread_mutex_lock(&r->mu);
    if (r->stop) {
        pthread_mutex_unlock(&r->mu);
        free(it);
        return KERR_CLOSED;
    }
    if (r->count == r->o.queue_size) {
        dropped = ++r->st.dropped_full;
    } else {
        r->ring[(r->head + r->count++) % r->o.queue_size] = it;
        r->st.emitted++;
        pthread_cond_signal(&r->cv);
    }
    pthread_mutex_unlock(&r->mu);
    if (!dropped)
        return KERR_OK;
    if (dropped == 1 || dropped % 100 == 0)
        log_warn("event queue full, dropping events", "reason", reason, "object", ref->name, "kind",
                 ref->kind);
    free(it);
    return KERR_TOOMANY;
}

enum kerr ev_emitf(struct ev_recorder *r, const struct ev_ref *ref, enum ev_type type,
                   const char *reason, const char *action, const char *fmt, ...)
{
    char note[EV_NOTE_MAX + 2]; /* one byte more than kept, to see a split character */
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(note, sizeof(note), fmt, ap);
    va_end(ap);
    return ev_emit(r, ref, type, reason, action, note);
}

enum kerr ev_ref_from_object(const cJSON *obj, struct ev_ref *ref)
{
    memset(ref, 0, sizeof(*ref));
    ref->api_version = kjson_get_str(obj, "apiVersion");
    ref->kind = kjson_get_str(obj, "kind");
    ref->namespace = kjson_get_str(obj, "metadata.namespace");
    ref->name = kjson_get_str(obj, "metadata.name");
    ref->uid = kjson_get_str(obj, "metadata.uid");
    return ref->kind && *ref->kind && ref->name && *ref->name ? KERR_OK : KERR_INVAL;
}

void ev_get_stats(struct ev_recorder *r, struct ev_stats *out)
{
    pthread_mutex_lock(&r->mu);
    *out = r->st;
    pthread_mutex_unlock(&r->mu);
}

/* ---- the sender: API bodies ---- */

static enum kerr add_micro(cJSON *o, const char *key, const struct timespec *ts)
{
    char buf[KTIME_MICROTIME_LEN + 1];

    if (ktime_microtime_format(ts, buf) != KERR_OK || !cJSON_AddStringToObject(o, key, buf))
        return KERR_NOMEM;
    return KERR_OK;
}

static enum kerr add_series(cJSON *o, const struct ev_entry *e)
{
    cJSON *s = cJSON_AddObjectToObject(o, "series");

    if (!s || !cJSON_AddNumberToObject(s, "count", (double)e->count))
        return KERR_NOMEM;
    return add_micro(s, "lastObservedTime", &e->last_at);
}

/* Add key: value unless value is empty. */
static bool add_opt(cJSON *o, const char *key, const char *value)
{
    return !*value || cJSON_AddStringToObject(o, key, value);
}

static const char *event_namespace(const struct ev_item *it)
{
    return *field(it, F_NS) ? field(it, F_NS) : "default";
}

static cJSON *build_event(const struct ev_recorder *r, const struct ev_entry *e)
{
    const struct ev_item *it = e->item;
    cJSON *o = cJSON_CreateObject(), *md, *reg;
    bool ok;

    ok = o && cJSON_AddStringToObject(o, "apiVersion", "events.k8s.io/v1") &&
         cJSON_AddStringToObject(o, "kind", "Event") &&
         (md = cJSON_AddObjectToObject(o, "metadata")) &&
         cJSON_AddStringToObject(md, "name", e->name) &&
         cJSON_AddStringToObject(md, "namespace", event_namespace(it)) &&
         add_micro(o, "eventTime", &it->at) == KERR_OK &&
         cJSON_AddStringToObject(o, "reportingController", r->controller) &&
         cJSON_AddStringToObject(o, "reportingInstance", r->instance) &&
         cJSON_AddStringToObject(o, "action", field(it, F_ACTION)) &&
         cJSON_AddStringToObject(o, "reason", field(it, F_REASON)) &&
         cJSON_AddStringToObject(o, "type", field(it, F_TYPE)) &&
         add_opt(o, "note", field(it, F_NOTE)) && (reg = cJSON_AddObjectToObject(o, "regarding")) &&
         add_opt(reg, "apiVersion", field(it, F_API)) &&
         cJSON_AddStringToObject(reg, "kind", field(it, F_KIND)) &&
         add_opt(reg, "namespace", field(it, F_NS)) &&
         cJSON_AddStringToObject(reg, "name", field(it, F_NAME)) &&
         add_opt(reg, "uid", field(it, F_UID)) && (e->count < 2 || add_series(o, e) == KERR_OK);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Create the Event, or merge-patch its series. */
static enum kerr write_event(struct ev_recorder *r, struct ev_entry *e, struct kerr_info *err)
{
    cJSON *body = e->sent ? cJSON_CreateObject() : build_event(r, e);
    enum kerr rc;

    if (!body || (e->sent && add_series(body, e) != KERR_OK)) {
        cJSON_Delete(body);
        return kerr_set(err, KERR_NOMEM, "events: out of memory");
    }
    if (e->sent)
        rc = k8s_patch(r->client, &EVENTS, event_namespace(e->item), e->name, K8S_PATCH_MERGE, body,
                       NULL, NULL, err);
    else
        rc = k8s_create(r->client, &EVENTS, event_namespace(e->item), body, NULL, NULL, err);
    cJSON_Delete(body);
    return rc == KERR_EXISTS && !e->sent ? KERR_OK : rc;
}

static bool retriable(enum kerr rc, const struct kerr_info *err)
{
    return rc == KERR_HTTP || rc == KERR_TIMEOUT || rc == KERR_TOOMANY ||
           (rc == KERR_API && err->http_status >= 500);
}

/* ---- the sender: remembered events ---- */

static bool pending(const struct ev_entry *e)
{
    return !e->dead && e->sent < e->count;
}

/* When the pending write of e may be tried (patches also wait for the patch interval). */
static int64_t due_at(const struct ev_recorder *r, const struct ev_entry *e, bool flush)
{
    int64_t t = e->next_try;

    if (e->sent && !flush && e->last_write + r->patch_ns > t)
        t = e->last_write + r->patch_ns;
    return t;
}

static void send_one(struct ev_recorder *r, struct ev_entry *e, int64_t retry)
{
    struct kerr_info err;
    uint64_t count = e->count;
    enum kerr rc;

    kerr_clear(&err);
    rc = write_event(r, e, &err);
    if (rc == KERR_OK) {
        bump(r, e->sent ? &r->st.series_updates : &r->st.created);
        e->sent = count;
        e->tries = 0;
        e->last_write = e->next_try = mono_now();
        return;
    }
    bump(r, &r->st.send_errors);
    if (rc == KERR_NOTFOUND && e->sent) { /* the Event is gone: create it again */
        e->sent = 0;
        return;
    }
    e->next_try = mono_now() + retry;
    if (retriable(rc, &err) && ++e->tries < r->o.max_tries)
        return;
    log_warn("dropping event after failed write", "reason", field(e->item, F_REASON), "object",
             field(e->item, F_NAME), "event", e->name, "error", err.msg);
    bump(r, &r->st.dropped_failed);
    e->tries = 0;
    if (e->sent)
        e->sent = count; /* give up this update; later repeats patch again */
    else
        e->dead = true;
}

static bool stop_requested(struct ev_recorder *r)
{
    bool stop;

    pthread_mutex_lock(&r->mu);
    stop = r->stop;
    pthread_mutex_unlock(&r->mu);
    return stop;
}

/*
 * Try every write that is due; returns when the next one will be. Returns
 * early (with "now") once the deadline passes or, outside a flush, when
 * stop is requested: a hanging server must not hold the shutdown up.
 */
static int64_t send_due(struct ev_recorder *r, bool flush, int64_t deadline)
{
    int64_t next = NO_TIME, t;
    struct ev_entry *e;

    for (e = r->first; e; e = e->next) {
        if (!pending(e))
            continue;
        if (mono_now() >= deadline || (!flush && stop_requested(r)))
            return mono_now();
        if (due_at(r, e, flush) <= mono_now())
            send_one(r, e, flush ? FLUSH_RETRY : r->retry_ns);
        t = due_at(r, e, flush);
        if (pending(e) && t < next)
            next = t;
    }
    return next;
}

static void free_entry(struct ev_entry *e)
{
    free(e->item);
    free(e);
}

/* Forget dead entries and those whose series window has passed with nothing to send. */
static void gc_entries(struct ev_recorder *r, int64_t now, bool all)
{
    struct ev_entry **pp = &r->first, *e, *prev = NULL;

    while ((e = *pp)) {
        if (e->dead || all || (!pending(e) && now - e->last_mono >= r->window_ns)) {
            *pp = e->next;
            r->nentries--;
            free_entry(e);
            continue;
        }
        prev = e;
        pp = &e->next;
    }
    r->last = prev;
}

static void gc_spam(struct ev_recorder *r, bool all)
{
    struct ev_spam **pp = &r->spam, *s;

    while ((s = *pp)) {
        if (all || rl_tokens(s->bucket) >= r->o.spam_burst) { /* full again: as new */
            *pp = s->next;
            rl_bucket_free(s->bucket);
            free(s);
            continue;
        }
        pp = &s->next;
    }
}

/* Take a token from the bucket of it's regarding object. */
static bool spam_allow(struct ev_recorder *r, const struct ev_item *it)
{
    struct ev_spam *s;

    if (r->o.spam_qps < 0)
        return true;
    for (s = r->spam; s; s = s->next)
        if (s->len == it->obj_len && memcmp(s->key, it->data, s->len) == 0)
            return rl_try(s->bucket);
    s = calloc(1, sizeof(*s) + it->obj_len);
    if (!s || rl_bucket_new(r->o.spam_qps, r->o.spam_burst, NULL, &s->bucket, NULL) != KERR_OK) {
        free(s);
        return true; /* out of memory: do not lose the event for that */
    }
    memcpy(s->key, it->data, it->obj_len);
    s->len = it->obj_len;
    s->next = r->spam;
    r->spam = s;
    return rl_try(s->bucket);
}

static struct ev_entry *find_series(struct ev_recorder *r, const struct ev_item *it, int64_t now)
{
    struct ev_entry *e;

    for (e = r->first; e; e = e->next)
        if (!e->dead && now - e->last_mono < r->window_ns && e->item->len == it->len &&
            memcmp(e->item->data, it->data, it->len) == 0)
            return e;
    return NULL;
}

/* Make room for one more entry: drop the oldest when the cache is full. */
static void make_room(struct ev_recorder *r, int64_t now)
{
    struct ev_entry *e;

    if (r->nentries < r->o.cache_max)
        return;
    gc_entries(r, now, false);
    if (r->nentries < r->o.cache_max)
        return;
    e = r->first;
    if (pending(e))
        bump(r, &r->st.dropped_failed);
    r->first = e->next;
    if (!r->first)
        r->last = NULL;
    r->nentries--;
    free_entry(e);
}

/* Take one emitted event (TAKES it): count it into its series or remember a new Event. */
static void ingest(struct ev_recorder *r, struct ev_item *it, int64_t now)
{
    struct ev_entry *e = find_series(r, it, now);
    long long ns;

    if (e) {
        e->count++;
        e->last_at = it->at;
        e->last_mono = it->mono;
        bump(r, &r->st.repeats);
        free(it);
        return;
    }
    if (!spam_allow(r, it) || !(e = calloc(1, sizeof(*e)))) {
        bump(r, &r->st.dropped_spam);
        free(it);
        return;
    }
    make_room(r, now);
    ns = (long long)it->at.tv_sec * 1000000000LL + it->at.tv_nsec;
    snprintf(e->name, sizeof(e->name), "%.*s.%llx", NAME_PART_MAX, field(it, F_NAME),
             (unsigned long long)ns);
    e->item = it;
    e->count = 1;
    e->last_at = it->at;
    e->last_mono = it->mono;
    if (r->last)
        r->last->next = e;
    else
        r->first = e;
    r->last = e;
    r->nentries++;
}

/* ---- the sender thread ---- */

static struct ev_item *dequeue(struct ev_recorder *r)
{
    struct ev_item *it = NULL;

    pthread_mutex_lock(&r->mu);
    if (r->count > 0) {
        it = r->ring[r->head];
        r->head = (r->head + 1) % r->o.queue_size;
        r->count--;
    }
    pthread_mutex_unlock(&r->mu);
    return it;
}

/* Wait until something is queued, stop is set, or the monotonic time until. Lock held. */
static void wait_work(struct ev_recorder *r, int64_t until)
{
    struct timespec ts;

    while (!r->stop && r->count == 0 && mono_now() < until) {
        if (until == NO_TIME) {
            pthread_cond_wait(&r->cv, &r->mu);
            continue;
        }
        ts.tv_sec = (time_t)(until / 1000000000LL);
        ts.tv_nsec = (long)(until % 1000000000LL);
        pthread_cond_timedwait(&r->cv, &r->mu, &ts);
    }
}

/* Sleep until the monotonic time until (the sender at shutdown: nothing to wake it for). */
static void sleep_until(int64_t until)
{
    int64_t d = until - mono_now();
    struct timespec ts;

    if (d <= 0)
        return;
    ts.tv_sec = (time_t)(d / 1000000000LL);
    ts.tv_nsec = (long)(d % 1000000000LL);
    nanosleep(&ts, NULL);
}

/* Send what is pending until the flush deadline; count the rest as dropped. */
static void flush(struct ev_recorder *r)
{
    int64_t deadline, next;
    struct ev_entry *e;

    pthread_mutex_lock(&r->mu);
    deadline = r->stop_at + r->flush_ns;
    pthread_mutex_unlock(&r->mu);
    for (;;) {
        next = send_due(r, true, deadline);
        if (next == NO_TIME || mono_now() >= deadline)
            break;
        sleep_until(next < deadline ? next : deadline);
    }
    for (e = r->first; e; e = e->next) {
        if (pending(e)) {
            bump(r, &r->st.dropped_failed);
            log_warn("event not sent before shutdown", "reason", field(e->item, F_REASON), "object",
                     field(e->item, F_NAME));
        }
    }
}

static void *sender_main(void *p)
{
    struct ev_recorder *r = p;
    int64_t next = NO_TIME;
    struct ev_item *it;
    bool stopping;

    for (;;) {
        pthread_mutex_lock(&r->mu);
        wait_work(r, next);
        stopping = r->stop;
        pthread_mutex_unlock(&r->mu);
        while ((it = dequeue(r)))
            ingest(r, it, mono_now());
        if (stopping)
            break;
        next = send_due(r, false, NO_TIME);
        gc_entries(r, mono_now(), false);
        gc_spam(r, false);
    }
    flush(r);
    return NULL;
}

/* ---- lifecycle ---- */

static enum kerr apply_defaults(struct ev_recorder *r, const struct ev_opts *in,
                                struct kerr_info *err)
{
    struct ev_opts *o = &r->o;

    if (!field_ok(in->reporting_controller) || !field_ok(in->reporting_instance))
        return kerr_set(err, KERR_INVAL,
                        "events: reportingController and reportingInstance are required, at "
                        "most %d bytes",
                        EV_FIELD_MAX);
    if (in->series_window_ms < 0 || in->patch_interval_ms < 0 || in->max_tries < 0 ||
        in->retry_interval_ms < 0 || in->spam_burst < 0 || in->flush_timeout_ms < 0)
        return kerr_set(err, KERR_INVAL, "events: negative option");
    *o = *in;
    o->queue_size = in->queue_size ? in->queue_size : 1000;
    o->max_tries = in->max_tries ? in->max_tries : 12;
    o->spam_burst = in->spam_burst ? in->spam_burst : 25;
    o->spam_qps = in->spam_qps != 0 ? in->spam_qps : 1.0 / 300;
    o->cache_max = in->cache_max ? in->cache_max : 4096;
    r->window_ns = (in->series_window_ms ? in->series_window_ms : 6 * 60 * 1000L) * NS_PER_MS;
    r->patch_ns = (in->patch_interval_ms ? in->patch_interval_ms : 5000L) * NS_PER_MS;
    r->retry_ns = (in->retry_interval_ms ? in->retry_interval_ms : 10000L) * NS_PER_MS;
    r->flush_ns = (in->flush_timeout_ms ? in->flush_timeout_ms : 5000L) * NS_PER_MS;
    r->controller = strdup(in->reporting_controller);
    r->instance = strdup(in->reporting_instance);
    r->ring = calloc(o->queue_size, sizeof(*r->ring));
    if (!r->controller || !r->instance || !r->ring)
        return kerr_set(err, KERR_NOMEM, "events: out of memory");
    return KERR_OK;
}

enum kerr ev_new(struct k8s_client *client, const struct ev_opts *opts, struct ev_recorder **out,
                 struct kerr_info *err)
{
    struct ev_recorder *r;
    pthread_condattr_t ca;
    enum kerr rc;
    int e;

    *out = NULL;
    r = calloc(1, sizeof(*r));
    if (!r)
        return kerr_set(err, KERR_NOMEM, "events: out of memory");
    r->client = client;
    pthread_mutex_init(&r->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->cv, &ca);
    pthread_condattr_destroy(&ca);
    rc = apply_defaults(r, opts, err);
    if (rc == KERR_OK && (e = pthread_create(&r->th, NULL, sender_main, r)) != 0)
        rc = kerr_set(err, KERR_INTERNAL, "events: starting the sender failed (%d)", e);
    if (rc != KERR_OK) {
        ev_free(r);
        return rc;
    }
    r->running = true;
    *out = r;
    return KERR_OK;
}

void ev_stop(struct ev_recorder *r)
{
    bool join;

    pthread_mutex_lock(&r->mu);
    if (!r->stop)
        r->stop_at = mono_now();
    r->stop = true;
    join = r->running;
    r->running = false;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    if (join)
        pthread_join(r->th, NULL);
}

void ev_free(struct ev_recorder *r)
{
    if (!r)
        return;
    ev_stop(r);
    while (r->count > 0) {
        free(r->ring[r->head]);
        r->head = (r->head + 1) % r->o.queue_size;
        r->count--;
    }
    gc_entries(r, 0, true);
    gc_spam(r, true);
    free(r->ring);
    free(r->controller);
    free(r->instance);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r);
}
