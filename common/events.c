/*
 * events - see events.h.
 *
 * ev_emit packs an event into one struct evs_item (common/evseries: its
 * fields as consecutive NUL-terminated strings, so isomorphic events compare
 * with one memcmp) and puts it into a ring under the mutex; nothing else
 * happens on the caller's thread. The sender thread owns everything else:
 * the series cache (remembered events, oldest first, and the per-object spam
 * buckets) and the API calls that create and patch the Events.
 */
#include "common/events.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/evseries.h"
#include "common/k8s.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/log.h"

#define FLUSH_RETRY (200 * KTIME_NS_PER_MS)
#define NO_TIME     INT64_MAX

static const struct k8s_resource EVENTS = { "events.k8s.io", "v1", "events", 1 };

struct ev_recorder {
    struct k8s_client *client;
    char *controller, *instance;
    struct ev_opts o;
    int64_t patch_ns, retry_ns, flush_ns;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct evs_item **ring;
    size_t head, count;
    bool stop, running;
    int64_t stop_at; /* monotonic ns of ev_stop: the flush deadline counts from it */
    pthread_t th;
    struct ev_stats st;
    struct evs_cache cache; /* sender thread only */
};

static void bump(struct ev_recorder *r, uint64_t *counter)
{
    pthread_mutex_lock(&r->mu);
    (*counter)++;
    pthread_mutex_unlock(&r->mu);
}

static bool field_ok(const char *s)
{
    return s && *s && strnlen(s, EV_FIELD_MAX + 1) <= EV_FIELD_MAX;
}

/* ---- the caller's side ---- */

/* Pack the event for the series cache (common/evseries). KERR_NOMEM. */
static enum kerr pack(const struct ev_ref *ref, enum ev_type type, const char *reason,
                      const char *action, const char *note, struct evs_item **out)
{
    const char *f[EVS_F_COUNT] = {
        ref->api_version, ref->kind, ref->namespace,
        ref->name,        ref->uid,  type == EV_WARNING ? "Warning" : "Normal",
        reason,           action,    note
    };

    return evs_item_new(f, EV_NOTE_MAX, out);
}

enum kerr ev_emit(struct ev_recorder *r, const struct ev_ref *ref, enum ev_type type,
                  const char *reason, const char *action, const char *note)
{
    struct evs_item *it;
    uint64_t dropped = 0;

    if (!ref || !ref->kind || !*ref->kind || !ref->name || !*ref->name || !field_ok(reason) ||
        !field_ok(action) || (type != EV_NORMAL && type != EV_WARNING))
        return KERR_INVAL;
    if (pack(ref, type, reason, action, note, &it) != KERR_OK)
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

void ev_log_emitf(struct ev_recorder *r, const cJSON *obj, enum ev_type type, const char *reason,
                  const char *action, const char *fmt, ...)
{
    const char *ns = kjson_get_str(obj, "metadata.namespace");
    const char *name = kjson_get_str(obj, "metadata.name");
    char note[EV_NOTE_MAX + 2]; /* as ev_emitf */
    struct ev_ref ref;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(note, sizeof(note), fmt, ap);
    va_end(ap);
    log_msg(type == EV_WARNING ? LOG_WARN : LOG_INFO, note, "namespace", ns ? ns : "", "name",
            name ? name : "", "reason", reason, (char *)NULL);
    if (r && ev_ref_from_object(obj, &ref) == KERR_OK)
        (void)ev_emit(r, &ref, type, reason, action, note);
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

static enum kerr add_series(cJSON *o, const struct evs_entry *e)
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

static const char *event_namespace(const struct evs_item *it)
{
    return *evs_field(it, EVS_F_NS) ? evs_field(it, EVS_F_NS) : "default";
}

static cJSON *build_event(const struct ev_recorder *r, const struct evs_entry *e)
{
    const struct evs_item *it = e->item;
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
         cJSON_AddStringToObject(o, "action", evs_field(it, EVS_F_ACTION)) &&
         cJSON_AddStringToObject(o, "reason", evs_field(it, EVS_F_REASON)) &&
         cJSON_AddStringToObject(o, "type", evs_field(it, EVS_F_TYPE)) &&
         add_opt(o, "note", evs_field(it, EVS_F_NOTE)) &&
         (reg = cJSON_AddObjectToObject(o, "regarding")) &&
         add_opt(reg, "apiVersion", evs_field(it, EVS_F_API)) &&
         cJSON_AddStringToObject(reg, "kind", evs_field(it, EVS_F_KIND)) &&
         add_opt(reg, "namespace", evs_field(it, EVS_F_NS)) &&
         cJSON_AddStringToObject(reg, "name", evs_field(it, EVS_F_NAME)) &&
         add_opt(reg, "uid", evs_field(it, EVS_F_UID)) &&
         (e->count < 2 || add_series(o, e) == KERR_OK);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Create the Event, or merge-patch its series. */
static enum kerr write_event(struct ev_recorder *r, struct evs_entry *e, struct kerr_info *err)
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

/* When the pending write of e may be tried (patches also wait for the patch interval). */
static int64_t due_at(const struct ev_recorder *r, const struct evs_entry *e, bool flush)
{
    int64_t t = e->next_try;

    if (e->sent && !flush && e->last_write + r->patch_ns > t)
        t = e->last_write + r->patch_ns;
    return t;
}

static void send_one(struct ev_recorder *r, struct evs_entry *e, int64_t retry)
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
        e->last_write = e->next_try = ktime_mono_ns();
        return;
    }
    bump(r, &r->st.send_errors);
    if (rc == KERR_NOTFOUND && e->sent) { /* the Event is gone: create it again */
        e->sent = 0;
        return;
    }
    e->next_try = ktime_mono_ns() + retry;
    if (retriable(rc, &err) && ++e->tries < r->o.max_tries)
        return;
    log_warn("dropping event after failed write", "reason", evs_field(e->item, EVS_F_REASON),
             "object", evs_field(e->item, EVS_F_NAME), "event", e->name, "error", err.msg);
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
    struct evs_entry *e;

    for (e = r->cache.first; e; e = e->next) {
        if (!evs_pending(e))
            continue;
        if (ktime_mono_ns() >= deadline || (!flush && stop_requested(r)))
            return ktime_mono_ns();
        if (due_at(r, e, flush) <= ktime_mono_ns())
            send_one(r, e, flush ? FLUSH_RETRY : r->retry_ns);
        t = due_at(r, e, flush);
        if (evs_pending(e) && t < next)
            next = t;
    }
    return next;
}

/* Take one emitted event (TAKES it): count it into its series or remember a new Event. */
static void ingest(struct ev_recorder *r, struct evs_item *it, int64_t now)
{
    int evicted_pending;
    enum evs_outcome out = evs_ingest(&r->cache, it, now, &evicted_pending);

    if (out == EVS_REPEAT)
        bump(r, &r->st.repeats);
    else if (out == EVS_DROPPED)
        bump(r, &r->st.dropped_spam);
    if (evicted_pending)
        bump(r, &r->st.dropped_failed);
}

/* ---- the sender thread ---- */

static struct evs_item *dequeue(struct ev_recorder *r)
{
    struct evs_item *it = NULL;

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

    while (!r->stop && r->count == 0 && ktime_mono_ns() < until) {
        if (until == NO_TIME) {
            pthread_cond_wait(&r->cv, &r->mu);
            continue;
        }
        ts = ktime_ts_of_ns(until);
        pthread_cond_timedwait(&r->cv, &r->mu, &ts);
    }
}

/* Send what is pending until the flush deadline; count the rest as dropped. */
static void flush(struct ev_recorder *r)
{
    int64_t deadline, next;
    struct evs_entry *e;

    pthread_mutex_lock(&r->mu);
    deadline = r->stop_at + r->flush_ns;
    pthread_mutex_unlock(&r->mu);
    for (;;) {
        next = send_due(r, true, deadline);
        if (next == NO_TIME || ktime_mono_ns() >= deadline)
            break;
        /* the sender at shutdown: nothing to wake it for */
        ktime_sleep_ns((next < deadline ? next : deadline) - ktime_mono_ns());
    }
    for (e = r->cache.first; e; e = e->next) {
        if (evs_pending(e)) {
            bump(r, &r->st.dropped_failed);
            log_warn("event not sent before shutdown", "reason", evs_field(e->item, EVS_F_REASON),
                     "object", evs_field(e->item, EVS_F_NAME));
        }
    }
}

static void *sender_main(void *p)
{
    struct ev_recorder *r = p;
    int64_t next = NO_TIME;
    struct evs_item *it;
    bool stopping;

    for (;;) {
        pthread_mutex_lock(&r->mu);
        wait_work(r, next);
        stopping = r->stop;
        pthread_mutex_unlock(&r->mu);
        while ((it = dequeue(r)))
            ingest(r, it, ktime_mono_ns());
        if (stopping)
            break;
        next = send_due(r, false, NO_TIME);
        evs_gc(&r->cache, ktime_mono_ns());
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
    r->patch_ns = (in->patch_interval_ms ? in->patch_interval_ms : 5000L) * KTIME_NS_PER_MS;
    r->retry_ns = (in->retry_interval_ms ? in->retry_interval_ms : 10000L) * KTIME_NS_PER_MS;
    r->flush_ns = (in->flush_timeout_ms ? in->flush_timeout_ms : 5000L) * KTIME_NS_PER_MS;
    evs_init(&r->cache,
             (in->series_window_ms ? in->series_window_ms : 6 * 60 * 1000L) * KTIME_NS_PER_MS,
             o->cache_max, o->spam_qps, o->spam_burst);
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
        r->stop_at = ktime_mono_ns();
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
    evs_release(&r->cache);
    free(r->ring);
    free(r->controller);
    free(r->instance);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r);
}
