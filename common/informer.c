/*
 * informer - see informer.h. One thread runs list, then watch, in a loop;
 * the list is common/pager's, the backoff common/backoff's.
 */
#include "common/informer.h"
#include "common/informer_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/backoff.h"
#include "common/kobj.h"
#include "common/ktime.h"
#include "common/log.h"
#include "common/watch.h"

#define QUICK_WATCH_MS 1000 /* a clean watch end sooner than this, without events, backs off */

/* How a watch ended, and so what comes next. */
enum step { STEP_STOP, STEP_RESUME, STEP_BACKOFF_RESUME, STEP_RELIST };

/* The state of one watch request. */
struct wctx {
    struct inf *inf;
    struct watch_decoder dec;
    int expired;              /* a 410 ERROR event arrived */
    unsigned long events;     /* events of any type */
    struct kerr_info ev_err;  /* an ERROR event that stopped the stream */
    struct kerr_info dec_err; /* the decoder's error */
};

/* 1 once inf_stop was called; arg is the struct inf (also a pager_opts.stopped). */
int inf_stopping(void *arg)
{
    struct inf *inf = arg;
    int s;

    pthread_mutex_lock(&inf->mu);
    s = inf->stopping;
    pthread_mutex_unlock(&inf->mu);
    return s;
}

/* Count one more in *counter, a field of inf->st. */
void inf_stat_inc(struct inf *inf, unsigned long *counter)
{
    pthread_mutex_lock(&inf->mu);
    (*counter)++;
    pthread_mutex_unlock(&inf->mu);
}

void inf_set_rv(struct inf *inf, const char *rv)
{
    pthread_mutex_lock(&inf->mu);
    snprintf(inf->rv, sizeof(inf->rv), "%s", rv);
    pthread_mutex_unlock(&inf->mu);
}

/* Wait until stop or ms elapsed. */
static void pause_ms(struct inf *inf, long ms)
{
    struct timespec ts;

    ktime_deadline_after(&ts, ms, CLOCK_MONOTONIC);
    pthread_mutex_lock(&inf->mu);
    while (!inf->stopping)
        if (pthread_cond_timedwait(&inf->cond, &inf->mu, &ts) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&inf->mu);
}

/* Wait out the next delay of client-go's backoff manager (until stop). */
static void backoff(struct inf *inf)
{
    long d = backoff_next(&inf->bo, ktime_mono_ms());
    char ms[24];

    pthread_mutex_lock(&inf->mu);
    inf->st.last_backoff_ms = d;
    pthread_mutex_unlock(&inf->mu);
    snprintf(ms, sizeof(ms), "%ld", d);
    log_debug("informer backing off", "informer", inf->o.name, "ms", ms);
    pause_ms(inf, d);
}

/* ---- watch ---- */

/* The projection of obj (TAKES) into *out. */
static enum kerr project(struct inf *inf, cJSON *obj, cJSON **out)
{
    enum kerr rc;

    if (!inf->o.project) {
        *out = obj;
        return KERR_OK;
    }
    rc = inf->o.project(inf->o.project_ctx, obj, out);
    cJSON_Delete(obj);
    return rc;
}

/* ADDED / MODIFIED: store obj (TAKES) and call add or update. */
static void apply_put(struct inf *inf, cJSON *obj)
{
    cJSON *proj = NULL, *old_obj = NULL, *new_obj = NULL;
    struct kerr_info err;
    int want = inf->nh > 0;
    enum kerr rc;

    rc = project(inf, obj, &proj);
    if (rc == KERR_OK)
        rc = store_put(inf->store, proj, want ? &old_obj : NULL, want ? &new_obj : NULL, &err);
    else
        kerr_set(&err, rc, "projection failed");
    if (rc != KERR_OK) {
        log_warn("informer dropped an event", "informer", inf->o.name, "error", err.msg);
        return;
    }
    if (old_obj)
        inf_call_update(inf, old_obj, new_obj);
    else if (new_obj)
        inf_call_add(inf, new_obj);
    cJSON_Delete(old_obj);
    cJSON_Delete(new_obj);
}

/*
 * The store key of an event's object (BORROWED): its namespace/name, or in a shared store
 * what the store's key function makes of its projection.
 */
static enum kerr event_key(struct inf *inf, const cJSON *obj, char *key, size_t n,
                           struct kerr_info *err)
{
    cJSON *proj = NULL, *copy;
    enum kerr rc;

    if (!inf->o.store)
        return kobj_key_of(obj, key, n, err);
    if (!(copy = cJSON_Duplicate(obj, 1)))
        return kerr_set(err, KERR_NOMEM, "informer: out of memory");
    if ((rc = project(inf, copy, &proj)) != KERR_OK)
        return kerr_set(err, rc, "projection failed");
    rc = store_key_of(inf->store, proj, key, n, err);
    cJSON_Delete(proj);
    return rc;
}

/* DELETED: remove obj (BORROWED) and call delete with what was stored (or the event's object). */
static void apply_delete(struct inf *inf, const cJSON *obj)
{
    char key[STORE_KEY_MAX];
    cJSON *old_obj = NULL, *copy;
    struct kerr_info err;

    if (event_key(inf, obj, key, sizeof(key), &err) != KERR_OK) {
        log_warn("informer dropped an event", "informer", inf->o.name, "error", err.msg);
        return;
    }
    if (store_remove(inf->store, key, inf->nh ? &old_obj : NULL, NULL) == KERR_NOTFOUND &&
        inf->nh && (copy = cJSON_Duplicate(obj, 1)))
        (void)project(inf, copy, &old_obj);
    if (old_obj)
        inf_call_delete(inf, old_obj);
    cJSON_Delete(old_obj);
}

static enum kerr on_event(void *arg, struct watch_event *ev)
{
    struct wctx *w = arg;
    struct inf *inf = w->inf;
    char rv[INF_RV_MAX];

    w->events++;
    if (ev->type == WATCH_ERROR) {
        w->expired = watch_event_is_expired(ev);
        kerr_set_api(&w->ev_err, w->expired ? KERR_GONE : KERR_API, ev->status_code,
                     ev->reason ? ev->reason : "", "watch ERROR event %d %s: %s", ev->status_code,
                     ev->reason ? ev->reason : "", ev->message ? ev->message : "");
        return w->ev_err.code;
    }
    snprintf(rv, sizeof(rv), "%s", ev->resource_version ? ev->resource_version : "");
    if (ev->type == WATCH_BOOKMARK) {
        inf_stat_inc(inf, &inf->st.bookmarks);
    } else if (ev->type == WATCH_DELETED) {
        apply_delete(inf, ev->object);
        inf_stat_inc(inf, &inf->st.events);
    } else {
        apply_put(inf, ev->object);
        ev->object = NULL;
        inf_stat_inc(inf, &inf->st.events);
    }
    if (rv[0])
        inf_set_rv(inf, rv);
    return KERR_OK;
}

static int on_data(void *arg, const char *data, size_t len)
{
    struct wctx *w = arg;

    return watch_feed(&w->dec, data, len, &w->dec_err) != KERR_OK;
}

/* timeoutSeconds: random in [min, 2 min], capped by the time left until a resync. */
static long watch_timeout(struct inf *inf)
{
    long min = inf->o.min_watch_timeout_s;
    long t = min + (long)(backoff_rand(&inf->bo) % (uint64_t)(min + 1));
    long long left;

    if (inf->o.resync_ms > 0) {
        left = (inf->next_resync_ms - ktime_mono_ms() + 999) / 1000;
        if (left < t)
            t = left > 1 ? (long)left : 1;
    }
    return t;
}

/* Classify the end of a watch (rc from k8s_watch / watch_finish). */
static enum step watch_end(struct inf *inf, struct wctx *w, enum kerr rc, struct kerr_info *err,
                           long long started)
{
    if (inf_stopping(inf))
        return STEP_STOP;
    if (w->expired || rc == KERR_GONE) {
        inf_stat_inc(inf, &inf->st.expired);
        log_info("informer watch expired, listing again", "informer", inf->o.name);
        return STEP_RELIST;
    }
    if (rc == KERR_OK)
        return !w->events && ktime_mono_ms() - started < QUICK_WATCH_MS ? STEP_BACKOFF_RESUME
                                                                        : STEP_RESUME;
    inf_stat_inc(inf, &inf->st.watch_errors);
    if (w->ev_err.code != KERR_OK)
        err = &w->ev_err;
    else if (w->dec_err.code != KERR_OK)
        err = &w->dec_err;
    log_warn("informer watch failed", "informer", inf->o.name, "error", err->msg);
    return STEP_BACKOFF_RESUME;
}

static enum step do_watch(struct inf *inf)
{
    struct k8s_watch_opts wo = { 0 };
    struct wctx w;
    struct kerr_info err;
    char rv[INF_RV_MAX];
    long long started = ktime_mono_ms();
    enum kerr rc;

    memset(&w, 0, sizeof(w));
    w.inf = inf;
    kerr_clear(&err);
    watch_init(&w.dec, inf->o.line_max, on_event, &w);
    pthread_mutex_lock(&inf->mu);
    snprintf(rv, sizeof(rv), "%s", inf->rv);
    inf->st.reconnects += inf->st.watches ? 1 : 0;
    inf->st.watches++;
    pthread_mutex_unlock(&inf->mu);
    wo.resource_version = rv;
    wo.label_selector = inf->o.label_selector;
    wo.field_selector = inf->o.field_selector;
    wo.timeout_seconds = watch_timeout(inf);
    wo.cancel = &inf->cancel;
    wo.on_data = on_data;
    wo.arg = &w;
    rc = k8s_watch(inf->client, inf->o.res, inf->o.ns, &wo, &err);
    if (rc == KERR_OK)
        rc = watch_finish(&w.dec, &w.dec_err);
    watch_release(&w.dec);
    return watch_end(inf, &w, rc, &err, started);
}

static void *run(void *arg)
{
    struct inf *inf = arg;
    int need_list = 1;
    enum step step;

    inf->next_resync_ms = ktime_mono_ms() + inf->o.resync_ms;
    while (!inf_stopping(inf)) {
        if (need_list && inf_list(inf) != KERR_OK) {
            backoff(inf);
            continue;
        }
        need_list = 0;
        if (inf->o.resync_ms > 0 && ktime_mono_ms() >= inf->next_resync_ms)
            inf_resync(inf);
        step = do_watch(inf);
        if (step == STEP_STOP)
            break;
        if (step == STEP_RELIST)
            need_list = 1;
        if (step != STEP_RESUME)
            backoff(inf);
    }
    return NULL;
}

/* ---- public ---- */

static void fill_defaults(struct inf_opts *o)
{
    if (!o->name)
        o->name = o->res->resource;
    if (!o->page_size)
        o->page_size = INF_DEFAULT_PAGE_SIZE;
    if (o->min_watch_timeout_s <= 0)
        o->min_watch_timeout_s = INF_DEFAULT_MIN_WATCH_S;
    if (o->backoff_initial_ms <= 0)
        o->backoff_initial_ms = INF_DEFAULT_BACKOFF_MS;
    if (o->backoff_max_ms <= 0)
        o->backoff_max_ms = INF_DEFAULT_BACKOFF_MAX_MS;
    if (o->backoff_reset_ms <= 0)
        o->backoff_reset_ms = INF_DEFAULT_BACKOFF_RESET_MS;
}

static int init_sync(struct inf *inf)
{
    pthread_condattr_t ca;
    int rc;

    if (pthread_mutex_init(&inf->mu, NULL) != 0)
        return -1;
    if (pthread_condattr_init(&ca) != 0) {
        pthread_mutex_destroy(&inf->mu);
        return -1;
    }
    rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (rc == 0)
        rc = pthread_cond_init(&inf->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (rc != 0)
        pthread_mutex_destroy(&inf->mu);
    return rc ? -1 : 0;
}

enum kerr inf_new(struct k8s_client *client, const struct inf_opts *opts, struct inf **out,
                  struct kerr_info *err)
{
    struct store_opts so = { 0 };
    struct inf *inf;
    enum kerr rc = KERR_OK;

    *out = NULL;
    if (!client || !opts || !opts->res || !opts->res->resource)
        return kerr_set(err, KERR_INVAL, "informer: a client and a resource are required");
    inf = calloc(1, sizeof(*inf));
    if (!inf)
        return kerr_set(err, KERR_NOMEM, "informer: out of memory");
    inf->client = client;
    inf->o = *opts;
    fill_defaults(&inf->o);
    backoff_init(&inf->bo, inf->o.backoff_initial_ms, inf->o.backoff_max_ms,
                 inf->o.backoff_reset_ms,
                 (uint64_t)ktime_mono_ms() * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)inf);
    so.compact = opts->compact;
    if (opts->store)
        inf->store = opts->store;
    else
        rc = store_new(&so, &inf->store, err);
    if (rc == KERR_OK && init_sync(inf) != 0)
        rc = kerr_set(err, KERR_INTERNAL, "informer: cannot create its lock");
    if (rc != KERR_OK) {
        if (!opts->store)
            store_free(inf->store);
        free(inf);
        return rc;
    }
    atomic_init(&inf->cancel, 0);
    atomic_init(&inf->synced, 0);
    *out = inf;
    return KERR_OK;
}

void inf_free(struct inf *inf)
{
    if (!inf)
        return;
    inf_stop(inf);
    if (!inf->o.store)
        store_free(inf->store);
    free(inf->h);
    pthread_cond_destroy(&inf->cond);
    pthread_mutex_destroy(&inf->mu);
    free(inf);
}

enum kerr inf_add_handlers(struct inf *inf, const struct inf_handlers *h, struct kerr_info *err)
{
    struct inf_handlers *nv;

    if (inf->state != INF_NEW || !h)
        return kerr_set(err, KERR_INVAL, "informer: handlers are added before start");
    nv = realloc(inf->h, (inf->nh + 1) * sizeof(*nv));
    if (!nv)
        return kerr_set(err, KERR_NOMEM, "informer: out of memory");
    inf->h = nv;
    inf->h[inf->nh++] = *h;
    return KERR_OK;
}

struct store *inf_store(struct inf *inf)
{
    return inf->store;
}

enum kerr inf_start(struct inf *inf, struct kerr_info *err)
{
    if (inf->state != INF_NEW)
        return kerr_set(err, KERR_INVAL, "informer: already started");
    if (pthread_create(&inf->thread, NULL, run, inf) != 0)
        return kerr_set(err, KERR_INTERNAL, "informer: cannot start its thread");
    inf->state = INF_RUNNING;
    return KERR_OK;
}

void inf_stop(struct inf *inf)
{
    pthread_mutex_lock(&inf->mu);
    inf->stopping = 1;
    pthread_cond_broadcast(&inf->cond);
    pthread_mutex_unlock(&inf->mu);
    atomic_store(&inf->cancel, 1);
    if (inf->state == INF_RUNNING)
        pthread_join(inf->thread, NULL);
    inf->state = INF_STOPPED;
}

int inf_has_synced(struct inf *inf)
{
    return atomic_load(&inf->synced);
}

enum kerr inf_wait_synced(struct inf *inf, long timeout_ms)
{
    struct timespec ts;
    enum kerr rc;

    ktime_deadline_after(&ts, timeout_ms, CLOCK_MONOTONIC);
    pthread_mutex_lock(&inf->mu);
    while (!inf->synced && !inf->stopping)
        if (pthread_cond_timedwait(&inf->cond, &inf->mu, &ts) == ETIMEDOUT)
            break;
    rc = inf->synced ? KERR_OK : inf->stopping ? KERR_CANCELLED : KERR_TIMEOUT;
    pthread_mutex_unlock(&inf->mu);
    return rc;
}

void inf_stats(struct inf *inf, struct inf_stats *out)
{
    pthread_mutex_lock(&inf->mu);
    *out = inf->st;
    pthread_mutex_unlock(&inf->mu);
}

void inf_last_rv(struct inf *inf, char *out, size_t n)
{
    pthread_mutex_lock(&inf->mu);
    snprintf(out, n, "%s", inf->rv);
    pthread_mutex_unlock(&inf->mu);
}

void inf_report_rv(struct inf *inf, inf_rv_fn fn, void *ctx)
{
    char rv[INF_RV_MAX];

    if (!inf)
        return;
    inf_last_rv(inf, rv, sizeof(rv));
    fn(ctx, inf->o.name, rv);
}
