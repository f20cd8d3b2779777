#include "tests/kube-sim/watch.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto.h"
#include "common/buf.h"
#include "common/ktime.h"
#include "common/tlsx.h"
#include "tests/kube-sim/fault.h"
#include "tests/kube-sim/obj.h"
#include "tests/kube-sim/read.h"
#include "tests/kube-sim/table.h"

#define EVENT_MAX (16u * 1024u * 1024u)

struct ksim_watch {
    struct ksim_api *api;
    const struct ksim_rtype *rt;
    struct ksim_store_watch *sw; /* OWNS */
    struct ksim_read_filter f;   /* OWNS */
    int table, first, bookmarks, done, initial_end;
    enum ksim_table_include include;
    struct timespec end, next_bm;
    cJSON *initial; /* OWNS: objects still to send as ADDED */
    struct buf out; /* encoded bytes not yet handed out */
    size_t off;
    ksim_watch_alive_fn alive;
    void *alive_arg;
};

static int truthy(const char *v)
{
    return v && (strcmp(v, "1") == 0 || strcmp(v, "true") == 0);
}

void ksim_watch_free(struct ksim_watch *w)
{
    if (!w)
        return;
    ksim_store_watch_close(w->sw);
    ksim_read_filter_release(&w->f);
    cJSON_Delete(w->initial);
    buf_release(&w->out);
    free(w);
}

void ksim_watch_set_alive(struct ksim_watch *w, ksim_watch_alive_fn fn, void *arg)
{
    w->alive = fn;
    w->alive_arg = arg;
}

static long timeout_ms(const struct ksim_req *req)
{
    const char *v = ksim_req_query(req, "timeoutSeconds");
    unsigned char r[2] = { 0, 0 };
    char hex[5];
    char *end = NULL;
    long s;

    if (v && *v) {
        errno = 0;
        s = strtol(v, &end, 10);
        if (!errno && end && !*end && s > 0)
            return s * 1000;
    }
    /* kube-apiserver: min-request-timeout (1800 s) times a random factor in [1, 2). */
    if (crypto_random_hex(2, hex, sizeof(hex), NULL) == KERR_OK)
        r[0] = (unsigned char)strtol(hex, NULL, 16) % 251;
    return (1800L + 1800L * r[0] / 251) * 1000L;
}

/* Parse ?resourceVersion=: 0 means "start with the current state". */
static int start_rv(const struct ksim_req *req, uint64_t *rv, struct ksim_apierr *e)
{
    const char *v = ksim_req_query(req, "resourceVersion");
    char *end = NULL;

    *rv = 0;
    if (!v || !*v || strcmp(v, "0") == 0)
        return 0;
    errno = 0;
    *rv = strtoull(v, &end, 10);
    if (errno || !end || *end)
        return ksim_apierr_bad_request(e,
                                       "resourceVersion: Invalid value: \"%s\": must be a "
                                       "number",
                                       v);
    return 0;
}

/* The current objects as initial ADDED events; *rv gets the list's resourceVersion. */
static int load_initial(struct ksim_watch *w, const struct ksim_target *tgt, uint64_t *rv)
{
    struct ksim_store_page page;

    if (ksim_store_list(w->api->store, tgt->rt->store_key, tgt->ns, NULL, NULL, NULL, 0, &page,
                        NULL) != KERR_OK)
        return -1;
    *rv = page.rv;
    w->initial = page.items;
    page.items = NULL;
    ksim_store_page_release(&page);
    return 0;
}

static int init_filter(struct ksim_watch *w, const struct ksim_req *req,
                       const struct ksim_target *tgt, struct ksim_apierr *e)
{
    struct kerr_info err;
    char term[600];

    if (ksim_read_filter_init(&w->f, tgt->rt, req, e) != 0)
        return e->code;
    if (!tgt->name[0])
        return 0;
    /* GET .../NAME?watch=1 watches one object, as fieldSelector=metadata.name=NAME. */
    ksim_fsel_free(w->f.fields);
    w->f.fields = NULL;
    snprintf(term, sizeof(term), "metadata.name=%s", tgt->name);
    if (ksim_fsel_parse(term, &w->f.fields, &err) != KERR_OK)
        return ksim_apierr_bad_request(e, "%s", err.msg);
    return 0;
}

static int emit_gone(struct ksim_watch *w, const char *msg);

int ksim_watch_start(struct ksim_api *api, const struct ksim_req *req,
                     const struct ksim_target *tgt, struct ksim_resp *resp, struct ksim_apierr *e)
{
    struct ksim_watch *w = calloc(1, sizeof(*w));
    struct kerr_info err;
    uint64_t rv = 0;
    int code;

    if (!w)
        return ksim_apierr_internal(e, "out of memory");
    w->api = api;
    w->rt = tgt->rt;
    w->first = 1;
    buf_init(&w->out, EVENT_MAX);
    w->table = ksim_table_wanted(req->accept);
    w->include = ksim_table_include_of(ksim_req_query(req, "includeObject"));
    w->bookmarks = truthy(ksim_req_query(req, "allowWatchBookmarks"));
    ktime_deadline_after(&w->end, ksim_fault_watch_ms(api->fault, timeout_ms(req)),
                         CLOCK_MONOTONIC);
    ktime_deadline_after(&w->next_bm, api->bookmark_ms, CLOCK_MONOTONIC);
    code = init_filter(w, req, tgt, e);
    if (!code)
        code = start_rv(req, &rv, e);
    if (!code && rv == 0) {
        if (load_initial(w, tgt, &rv) != 0)
            code = ksim_apierr_internal(e, "out of memory");
        w->initial_end = w->bookmarks && truthy(ksim_req_query(req, "sendInitialEvents"));
    }
    if (code) {
        ksim_watch_free(w);
        return code;
    }
    if (ksim_store_watch_open(api->store, tgt->rt->store_key, tgt->ns, rv, &w->sw, &err) !=
        KERR_OK) {
        if (err.code != KERR_GONE) {
            ksim_watch_free(w);
            return ksim_apierr_internal(e, "%s", err.msg);
        }
        /* An expired start: the stream carries one ERROR event, as kube-apiserver's does. */
        w->done = 1;
        if (emit_gone(w, err.msg) != 0) {
            ksim_watch_free(w);
            return ksim_apierr_internal(e, "out of memory");
        }
    }
    resp->code = 200;
    resp->content_type =
        w->table ? "application/json;as=Table;v=v1;g=meta.k8s.io" : "application/json";
    resp->watch = w;
    return 0;
}

/* Append {"type":type,"object":obj}\n; obj is TAKEN. */
static int emit(struct ksim_watch *w, const char *type, cJSON *obj)
{
    cJSON *ev = cJSON_CreateObject(), *o = obj, *items;
    char *txt = NULL;
    int rc = -1;

    if (w->table && obj && strcmp(type, "ERROR") != 0) {
        items = cJSON_CreateArray();
        if (items && !strcmp(type, "BOOKMARK")) {
            o = ksim_table_build(w->rt, items, ksim_obj_meta_str(obj, "resourceVersion"),
                                 w->include, w->first);
        } else if (items && cJSON_AddItemToArray(items, obj)) {
            obj = NULL;
            o = ksim_table_build(w->rt, items, NULL, w->include, w->first);
        } else {
            o = NULL;
        }
        w->first = 0;
        cJSON_Delete(items);
        cJSON_Delete(obj);
    }
    if (ev && o && cJSON_AddStringToObject(ev, "type", type) &&
        cJSON_AddItemToObject(ev, "object", o)) {
        o = NULL;
        txt = cJSON_PrintUnformatted(ev);
        if (txt && buf_appends(&w->out, txt) == KERR_OK && buf_appends(&w->out, "\n") == KERR_OK)
            rc = 0;
    }
    cJSON_Delete(o);
    cJSON_Delete(ev);
    free(txt);
    return rc;
}

static int emit_bookmark(struct ksim_watch *w, uint64_t rv, int initial_end)
{
    cJSON *obj = cJSON_CreateObject(), *md, *ann;
    char rvs[32];

    snprintf(rvs, sizeof(rvs), "%" PRIu64, rv);
    if (!obj || ksim_api_externalize(w->rt, obj) != 0 ||
        !(md = cJSON_AddObjectToObject(obj, "metadata")) ||
        !cJSON_AddStringToObject(md, "resourceVersion", rvs) ||
        !cJSON_AddNullToObject(md, "creationTimestamp") ||
        (initial_end && (!(ann = cJSON_AddObjectToObject(md, "annotations")) ||
                         !cJSON_AddStringToObject(ann, "k8s.io/initial-events-end", "true")))) {
        cJSON_Delete(obj);
        return -1;
    }
    return emit(w, "BOOKMARK", obj);
}

static int emit_gone(struct ksim_watch *w, const char *msg)
{
    struct ksim_apierr e;
    cJSON *st = NULL;

    ksim_apierr_set(&e, 410, "Expired", "%s", msg);
    if (ksim_apierr_to_json(&e, &st) != KERR_OK)
        return -1;
    return emit(w, "ERROR", st);
}

/* Turn a store event into what this watcher sees (selectors), TAKING its objects. */
static int emit_event(struct ksim_watch *w, struct ksim_store_event *ev)
{
    int now = ksim_read_filter_match(&w->f, ev->obj);
    int before_ = ev->prev && ksim_read_filter_match(&w->f, ev->prev);
    const char *type = NULL;
    cJSON *obj = ev->obj;
    char rvs[32];

    if (ev->type == KSIM_EV_ADDED && now)
        type = "ADDED";
    else if (ev->type == KSIM_EV_DELETED && now)
        type = "DELETED";
    else if (ev->type == KSIM_EV_MODIFIED && now)
        type = before_ ? "MODIFIED" : "ADDED";
    else if (ev->type == KSIM_EV_MODIFIED && before_) {
        type = "DELETED";
        obj = ev->prev;
        snprintf(rvs, sizeof(rvs), "%" PRIu64, ev->rv);
        ksim_obj_set_meta_str(obj, "resourceVersion", rvs);
    }
    if (obj == ev->obj)
        ev->obj = NULL;
    else
        ev->prev = NULL;
    ksim_store_event_release(ev);
    if (!type) {
        cJSON_Delete(obj);
        return 0;
    }
    ksim_api_externalize(w->rt, obj);
    return emit(w, type, obj);
}

/* Produce more bytes into w->out; -1 when the stream ends. */
static int produce(struct ksim_watch *w)
{
    struct ksim_store_event ev;
    struct kerr_info err;
    struct timespec now, dl;
    cJSON *first;
    enum kerr rc;

    if (w->initial && w->initial->child) {
        first = cJSON_DetachItemFromArray(w->initial, 0);
        if (!ksim_read_filter_match(&w->f, first)) {
            cJSON_Delete(first);
            return 0;
        }
        ksim_api_externalize(w->rt, first);
        return emit(w, "ADDED", first);
    }
    if (w->initial_end) {
        w->initial_end = 0;
        return emit_bookmark(w, ksim_store_watch_rv(w->sw), 1);
    }
    ktime_deadline_after(&dl, 1000, CLOCK_MONOTONIC);
    if (ktime_before(&w->end, &dl))
        dl = w->end;
    if (w->bookmarks && ktime_before(&w->next_bm, &dl))
        dl = w->next_bm;
    rc = ksim_store_watch_next(w->sw, &dl, &ev, &err);
    if (rc == KERR_OK)
        return emit_event(w, &ev);
    if (rc == KERR_GONE) {
        w->done = 1;
        return emit_gone(w, err.msg);
    }
    if (rc != KERR_TIMEOUT) {
        w->done = 1;
        return 0;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (!ktime_before(&now, &w->end)) {
        w->done = 1;
        return w->bookmarks ? emit_bookmark(w, ksim_store_watch_rv(w->sw), 0) : 0;
    }
    if (w->bookmarks && !ktime_before(&now, &w->next_bm)) {
        ktime_deadline_after(&w->next_bm, w->api->bookmark_ms, CLOCK_MONOTONIC);
        return emit_bookmark(w, ksim_store_watch_rv(w->sw), 0);
    }
    if (w->alive && !w->alive(w->alive_arg))
        return -1;
    return 0;
}

ssize_t ksim_watch_read(struct ksim_watch *w, char *buf, size_t max)
{
    size_t n;

    for (;;) {
        if (w->off < w->out.len) {
            n = w->out.len - w->off;
            if (n > max)
                n = max;
            memcpy(buf, w->out.data + w->off, n);
            w->off += n;
            if (w->off == w->out.len) {
                buf_reset(&w->out);
                w->off = 0;
            }
            return (ssize_t)n;
        }
        if (w->done)
            return -1;
        if (produce(w) != 0)
            return -1;
    }
}
