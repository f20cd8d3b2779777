#include "tests/kube-sim/store.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/kube-sim/hist.h"
#include "tests/kube-sim/otab.h"

struct table {
    char *skey;            /* OWNS */
    struct ksim_otab objs; /* OWNS: the objects in key order */
    struct ksim_hist hist; /* OWNS: the events watches replay */
    struct table *next;
};

struct ksim_store_watch {
    struct ksim_store *st;
    struct table *t;
    char *ns; /* OWNS or NULL */
    uint64_t cursor;
    int cut;
    struct ksim_store_watch *next;
};

struct ksim_store {
    pthread_mutex_t mu;
    pthread_cond_t cond;
    struct table *tables;
    struct ksim_store_watch *watches;
    uint64_t rv;
    uint64_t expired_rv; /* history before this rv was dropped for every table */
    size_t count, max_objects, history;
    int closing;
};

uint64_t ksim_store_obj_rv(const cJSON *obj)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *rv = cJSON_GetObjectItemCaseSensitive(md, "resourceVersion");
    char *end = NULL;
    unsigned long long v;

    if (!cJSON_IsString(rv) || !rv->valuestring[0])
        return 0;
    errno = 0;
    v = strtoull(rv->valuestring, &end, 10);
    if (errno || !end || *end)
        return 0;
    return (uint64_t)v;
}

static int set_rv(cJSON *obj, uint64_t rv)
{
    cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    char text[32];

    if (!cJSON_IsObject(md)) {
        md = cJSON_AddObjectToObject(obj, "metadata");
        if (!md)
            return -1;
    }
    snprintf(text, sizeof(text), "%" PRIu64, rv);
    cJSON_DeleteItemFromObjectCaseSensitive(md, "resourceVersion");
    return cJSON_AddStringToObject(md, "resourceVersion", text) ? 0 : -1;
}

enum kerr ksim_store_new(const struct ksim_store_opts *opts, struct ksim_store **out,
                         struct kerr_info *err)
{
    struct ksim_store *st;
    pthread_condattr_t ca;

    *out = NULL;
    st = calloc(1, sizeof(*st));
    if (!st)
        return kerr_set(err, KERR_NOMEM, NULL);
    st->history = opts && opts->history ? opts->history : 1000;
    st->max_objects = opts && opts->max_objects ? opts->max_objects : 100000;
    st->rv = 1;
    pthread_mutex_init(&st->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&st->cond, &ca);
    pthread_condattr_destroy(&ca);
    *out = st;
    return KERR_OK;
}

static void table_free(struct table *t)
{
    ksim_otab_release(&t->objs);
    ksim_hist_release(&t->hist);
    free(t->skey);
    free(t);
}

void ksim_store_shutdown(struct ksim_store *st)
{
    pthread_mutex_lock(&st->mu);
    st->closing = 1;
    pthread_cond_broadcast(&st->cond);
    pthread_mutex_unlock(&st->mu);
}

void ksim_store_free(struct ksim_store *st)
{
    struct table *t, *next;

    if (!st)
        return;
    for (t = st->tables; t; t = next) {
        next = t->next;
        table_free(t);
    }
    pthread_cond_destroy(&st->cond);
    pthread_mutex_destroy(&st->mu);
    free(st);
}

static struct table *find_table(struct ksim_store *st, const char *skey, int create)
{
    struct table *t;

    for (t = st->tables; t; t = t->next)
        if (strcmp(t->skey, skey) == 0)
            return t;
    if (!create)
        return NULL;
    t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->skey = strdup(skey);
    if (!t->skey || ksim_hist_init(&t->hist, st->history, st->expired_rv) != KERR_OK) {
        free(t->skey);
        free(t);
        return NULL;
    }
    t->next = st->tables;
    st->tables = t;
    return t;
}

/* Record a change (obj and prev TAKEN) at the current rv and wake the watchers. */
static void record(struct ksim_store *st, struct table *t, enum ksim_event_type type,
                   const char *ns, cJSON *obj, cJSON *prev)
{
    ksim_hist_record(&t->hist, type, st->rv, ns, obj, prev);
    pthread_cond_broadcast(&st->cond);
}

uint64_t ksim_store_rv(struct ksim_store *st)
{
    uint64_t rv;

    pthread_mutex_lock(&st->mu);
    rv = st->rv;
    pthread_mutex_unlock(&st->mu);
    return rv;
}

size_t ksim_store_count(struct ksim_store *st)
{
    size_t n;

    pthread_mutex_lock(&st->mu);
    n = st->count;
    pthread_mutex_unlock(&st->mu);
    return n;
}

enum kerr ksim_store_get(struct ksim_store *st, const char *skey, const char *ns, const char *name,
                         cJSON **out, struct kerr_info *err)
{
    struct table *t;
    char *key = ksim_otab_key(ns, name);
    enum kerr rc = KERR_OK;
    size_t i;
    int found = 0;

    *out = NULL;
    if (!key)
        return kerr_set(err, KERR_NOMEM, NULL);
    pthread_mutex_lock(&st->mu);
    t = find_table(st, skey, 0);
    i = t ? ksim_otab_search(&t->objs, key, &found) : 0;
    if (!found)
        rc = kerr_set(err, KERR_NOTFOUND, "%s not found", name);
    else if (!(*out = cJSON_Duplicate(t->objs.entries[i].obj, 1)))
        rc = kerr_set(err, KERR_NOMEM, NULL);
    pthread_mutex_unlock(&st->mu);
    free(key);
    return rc;
}

enum kerr ksim_store_view(struct ksim_store *st, const char *skey, const char *ns, const char *name,
                          void (*fn)(const cJSON *obj, void *arg), void *arg)
{
    struct table *t;
    char *key = ksim_otab_key(ns, name);
    size_t i;
    int found = 0;

    if (!key)
        return KERR_NOMEM;
    pthread_mutex_lock(&st->mu);
    t = find_table(st, skey, 0);
    i = t ? ksim_otab_search(&t->objs, key, &found) : 0;
    if (found)
        fn(t->objs.entries[i].obj, arg);
    pthread_mutex_unlock(&st->mu);
    free(key);
    return found ? KERR_OK : KERR_NOTFOUND;
}

static enum kerr insert_locked(struct ksim_store *st, struct table *t, char *key, const char *ns,
                               cJSON *obj, cJSON **out, struct kerr_info *err)
{
    cJSON *ev;
    size_t i;
    int found;

    i = ksim_otab_search(&t->objs, key, &found);
    if (found)
        return kerr_set(err, KERR_EXISTS, "already exists");
    if (st->count >= st->max_objects)
        return kerr_set(err, KERR_TOOBIG, "object limit of %zu reached", st->max_objects);
    if (ksim_otab_reserve(&t->objs) != KERR_OK || set_rv(obj, st->rv + 1) != 0 ||
        (out && !(*out = cJSON_Duplicate(obj, 1))))
        return kerr_set(err, KERR_NOMEM, NULL);
    ev = cJSON_Duplicate(obj, 1);
    st->rv++;
    ksim_otab_insert(&t->objs, i, key, obj, st->rv);
    st->count++;
    record(st, t, KSIM_EV_ADDED, ns, ev, NULL);
    return KERR_OK;
}

enum kerr ksim_store_create(struct ksim_store *st, const char *skey, const char *ns,
                            const char *name, cJSON *obj, cJSON **out, struct kerr_info *err)
{
    struct table *t;
    char *key = ksim_otab_key(ns, name);
    enum kerr rc;

    if (out)
        *out = NULL;
    if (!key) {
        cJSON_Delete(obj);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    pthread_mutex_lock(&st->mu);
    t = find_table(st, skey, 1);
    rc = t ? insert_locked(st, t, key, ns, obj, out, err) : kerr_set(err, KERR_NOMEM, NULL);
    pthread_mutex_unlock(&st->mu);
    if (rc != KERR_OK) {
        free(key);
        cJSON_Delete(obj);
    }
    return rc;
}

/* Find ns/name in skey and check expect_rv; *idx on success. */
static enum kerr locate_locked(struct ksim_store *st, const char *skey, const char *ns,
                               const char *name, uint64_t expect_rv, struct table **tp, size_t *idx,
                               struct kerr_info *err)
{
    char *key = ksim_otab_key(ns, name);
    struct table *t;
    int found = 0;

    if (!key)
        return kerr_set(err, KERR_NOMEM, NULL);
    t = find_table(st, skey, 0);
    *idx = t ? ksim_otab_search(&t->objs, key, &found) : 0;
    free(key);
    if (!found)
        return kerr_set(err, KERR_NOTFOUND, "%s not found", name);
    if (expect_rv && t->objs.entries[*idx].rv != expect_rv)
        return kerr_set(err, KERR_CONFLICT,
                        "the object has been modified; please apply your changes to the latest "
                        "version and try again");
    *tp = t;
    return KERR_OK;
}

enum kerr ksim_store_update(struct ksim_store *st, const char *skey, const char *ns,
                            const char *name, uint64_t expect_rv, cJSON *obj, cJSON **out,
                            struct kerr_info *err)
{
    struct table *t = NULL;
    struct ksim_otab_entry *e;
    cJSON *ev = NULL;
    size_t i;
    enum kerr rc;

    if (out)
        *out = NULL;
    pthread_mutex_lock(&st->mu);
    rc = locate_locked(st, skey, ns, name, expect_rv, &t, &i, err);
    if (rc == KERR_OK &&
        (set_rv(obj, st->rv + 1) != 0 || (out && !(*out = cJSON_Duplicate(obj, 1))) ||
         !(ev = cJSON_Duplicate(obj, 1))))
        rc = kerr_set(err, KERR_NOMEM, NULL);
    if (rc == KERR_OK) {
        e = &t->objs.entries[i];
        st->rv++;
        record(st, t, KSIM_EV_MODIFIED, ns, ev, e->obj);
        e->obj = obj;
        e->rv = st->rv;
        obj = NULL;
    }
    pthread_mutex_unlock(&st->mu);
    cJSON_Delete(obj);
    if (rc != KERR_OK && out) {
        cJSON_Delete(*out);
        *out = NULL;
    }
    return rc;
}

enum kerr ksim_store_delete(struct ksim_store *st, const char *skey, const char *ns,
                            const char *name, uint64_t expect_rv, cJSON **out,
                            struct kerr_info *err)
{
    struct table *t = NULL;
    struct ksim_otab_entry e;
    size_t i;
    enum kerr rc;

    if (out)
        *out = NULL;
    pthread_mutex_lock(&st->mu);
    rc = locate_locked(st, skey, ns, name, expect_rv, &t, &i, err);
    if (rc == KERR_OK && out && !(*out = cJSON_Duplicate(t->objs.entries[i].obj, 1)))
        rc = kerr_set(err, KERR_NOMEM, NULL);
    if (rc == KERR_OK) {
        ksim_otab_remove(&t->objs, i, &e);
        st->count--;
        st->rv++;
        set_rv(e.obj, st->rv);
        if (out)
            set_rv(*out, st->rv);
        free(e.key);
        record(st, t, KSIM_EV_DELETED, ns, e.obj, NULL);
    }
    pthread_mutex_unlock(&st->mu);
    return rc;
}

void ksim_store_page_release(struct ksim_store_page *page)
{
    cJSON_Delete(page->items);
    free(page->next_key);
    memset(page, 0, sizeof(*page));
}

enum kerr ksim_store_list(struct ksim_store *st, const char *skey, const char *ns,
                          ksim_store_match_fn match, void *arg, const char *start_after,
                          size_t limit, struct ksim_store_page *page, struct kerr_info *err)
{
    struct table *t;
    enum kerr rc = KERR_OK;

    memset(page, 0, sizeof(*page));
    page->items = cJSON_CreateArray();
    if (!page->items)
        return kerr_set(err, KERR_NOMEM, NULL);
    pthread_mutex_lock(&st->mu);
    page->rv = st->rv;
    t = find_table(st, skey, 0);
    if (t)
        rc = ksim_otab_list(&t->objs, ns, match, arg, start_after, limit, page);
    pthread_mutex_unlock(&st->mu);
    if (rc != KERR_OK) {
        ksim_store_page_release(page);
        return kerr_set(err, rc, NULL);
    }
    return KERR_OK;
}

uint64_t ksim_store_oldest_rv(struct ksim_store *st, const char *skey)
{
    struct table *t;
    uint64_t rv = 0;

    pthread_mutex_lock(&st->mu);
    t = find_table(st, skey, 0);
    if (t)
        rv = t->hist.dropped_rv;
    pthread_mutex_unlock(&st->mu);
    return rv;
}

enum kerr ksim_store_watch_open(struct ksim_store *st, const char *skey, const char *ns,
                                uint64_t from_rv, struct ksim_store_watch **out,
                                struct kerr_info *err)
{
    struct ksim_store_watch *w;
    struct table *t;
    enum kerr rc = KERR_OK;

    *out = NULL;
    w = calloc(1, sizeof(*w));
    if (!w || (ns && *ns && !(w->ns = strdup(ns)))) {
        free(w);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    w->st = st;
    pthread_mutex_lock(&st->mu);
    t = find_table(st, skey, 1);
    if (!t)
        rc = kerr_set(err, KERR_NOMEM, NULL);
    else if (from_rv < t->hist.dropped_rv)
        rc = ksim_hist_too_old(&t->hist, from_rv, st->rv, err);
    if (rc == KERR_OK) {
        w->t = t;
        w->cursor = from_rv;
        w->next = st->watches;
        st->watches = w;
    }
    pthread_mutex_unlock(&st->mu);
    if (rc != KERR_OK) {
        free(w->ns);
        free(w);
        return rc;
    }
    *out = w;
    return KERR_OK;
}

/* The first event after the cursor in the watcher's namespace, or NULL. */
static const struct ksim_hist_event *next_event_locked(struct ksim_store_watch *w)
{
    return ksim_hist_next(&w->t->hist, w->cursor, w->ns, &w->cursor);
}

static enum kerr deliver_locked(struct ksim_store_watch *w, const struct ksim_hist_event *e,
                                struct ksim_store_event *ev, struct kerr_info *err)
{
    ev->type = e->type;
    ev->rv = e->rv;
    ev->obj = cJSON_Duplicate(e->obj, 1);
    ev->prev = e->prev ? cJSON_Duplicate(e->prev, 1) : NULL;
    if (!ev->obj || (e->prev && !ev->prev)) {
        ksim_store_event_release(ev);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    w->cursor = e->rv;
    return KERR_OK;
}

enum kerr ksim_store_watch_next(struct ksim_store_watch *w, const struct timespec *deadline,
                                struct ksim_store_event *ev, struct kerr_info *err)
{
    struct ksim_store *st = w->st;
    const struct ksim_hist_event *e;
    enum kerr rc = KERR_OK;

    memset(ev, 0, sizeof(*ev));
    pthread_mutex_lock(&st->mu);
    for (;;) {
        if (st->closing || w->cut) {
            rc = kerr_set(err, KERR_CLOSED, "watch closed");
            break;
        }
        if (w->cursor < w->t->hist.dropped_rv) {
            rc = ksim_hist_too_old(&w->t->hist, w->cursor, st->rv, err);
            break;
        }
        e = next_event_locked(w);
        if (e) {
            rc = deliver_locked(w, e, ev, err);
            break;
        }
        if (!deadline) {
            pthread_cond_wait(&st->cond, &st->mu);
        } else if (pthread_cond_timedwait(&st->cond, &st->mu, deadline) == ETIMEDOUT) {
            rc = KERR_TIMEOUT;
            break;
        }
    }
    pthread_mutex_unlock(&st->mu);
    return rc;
}

uint64_t ksim_store_watch_rv(struct ksim_store_watch *w)
{
    uint64_t rv;

    pthread_mutex_lock(&w->st->mu);
    /* caught up: nothing of the watcher's is after the store's revision, so that is where it
     * is (kube-apiserver's watch cache follows etcd's progress notifications the same way) */
    if (!next_event_locked(w) && w->cursor < w->st->rv && w->cursor >= w->t->hist.dropped_rv)
        w->cursor = w->st->rv;
    rv = w->cursor;
    pthread_mutex_unlock(&w->st->mu);
    return rv;
}

void ksim_store_watch_close(struct ksim_store_watch *w)
{
    struct ksim_store_watch **pp;

    if (!w)
        return;
    pthread_mutex_lock(&w->st->mu);
    for (pp = &w->st->watches; *pp; pp = &(*pp)->next) {
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    }
    pthread_mutex_unlock(&w->st->mu);
    free(w->ns);
    free(w);
}

void ksim_store_event_release(struct ksim_store_event *ev)
{
    cJSON_Delete(ev->obj);
    cJSON_Delete(ev->prev);
    ev->obj = NULL;
    ev->prev = NULL;
}

size_t ksim_store_watch_count(struct ksim_store *st)
{
    struct ksim_store_watch *w;
    size_t n = 0;

    pthread_mutex_lock(&st->mu);
    for (w = st->watches; w; w = w->next)
        n++;
    pthread_mutex_unlock(&st->mu);
    return n;
}

void ksim_store_cut_watches(struct ksim_store *st)
{
    struct ksim_store_watch *w;

    pthread_mutex_lock(&st->mu);
    for (w = st->watches; w; w = w->next)
        w->cut = 1;
    pthread_cond_broadcast(&st->cond);
    pthread_mutex_unlock(&st->mu);
}

void ksim_store_expire_history(struct ksim_store *st)
{
    struct table *t;

    pthread_mutex_lock(&st->mu);
    /* A watcher at the current rv would survive: move everybody below the mark. */
    st->rv++;
    st->expired_rv = st->rv;
    for (t = st->tables; t; t = t->next)
        ksim_hist_clear(&t->hist, st->rv);
    pthread_cond_broadcast(&st->cond);
    pthread_mutex_unlock(&st->mu);
}

uint64_t ksim_store_wait_change(struct ksim_store *st, uint64_t since,
                                const struct timespec *deadline)
{
    uint64_t rv;

    pthread_mutex_lock(&st->mu);
    while (st->rv <= since && !st->closing) {
        if (!deadline)
            pthread_cond_wait(&st->cond, &st->mu);
        else if (pthread_cond_timedwait(&st->cond, &st->mu, deadline) == ETIMEDOUT)
            break;
    }
    rv = st->rv;
    pthread_mutex_unlock(&st->mu);
    return rv;
}

#define EACH_CHUNK 1024

void ksim_store_each(struct ksim_store *st, const char *skey,
                     void (*fn)(const char *skey, const cJSON *obj, void *arg), void *arg)
{
    struct table *t;
    char *next = NULL;
    size_t i, done;
    int found;

    pthread_mutex_lock(&st->mu);
    for (t = st->tables; t; t = t->next) {
        if (skey && strcmp(skey, t->skey) != 0)
            continue;
        for (i = 0, done = 0; i < t->objs.n; i++, done++) {
            /*
             * The lock is let go every EACH_CHUNK objects, so that a pass over 100,000
             * objects does not hold up every request; the walk goes on after the last key
             * seen (tables are never freed while the store lives).
             */
            if (done == EACH_CHUNK && (next = strdup(t->objs.entries[i].key))) {
                pthread_mutex_unlock(&st->mu);
                sched_yield();
                pthread_mutex_lock(&st->mu);
                i = ksim_otab_search(&t->objs, next, &found);
                free(next);
                next = NULL;
                done = 0;
                if (i >= t->objs.n)
                    break;
            }
            fn(t->skey, t->objs.entries[i].obj, arg);
        }
    }
    pthread_mutex_unlock(&st->mu);
}

void ksim_store_drop_table(struct ksim_store *st, const char *skey)
{
    struct table *t;

    pthread_mutex_lock(&st->mu);
    t = find_table(st, skey, 0);
    if (t) {
        st->count -= t->objs.n;
        ksim_otab_release(&t->objs);
    }
    pthread_mutex_unlock(&st->mu);
}
