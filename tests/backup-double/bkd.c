/* bkd - backup-double's answers; see bkd.h. */
#include "tests/backup-double/bkd.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cJSON.h>

#include "common/buf.h"
#include "common/ktime.h"

#define REQUESTS_MAX (8u * 1024u * 1024u) /* cap of the request log */
#define REV_STEP     7                    /* revisions "written" before a snapshot not final */
#define WRITES_MAX   (8u * 1024u * 1024u) /* cap of the write log */
#define UPLOADED_MAX 4096                 /* names /admin/uploaded remembers */
#define GATE_MS      60000                /* longest a gated answer waits for its upload */

struct bkd {
    pthread_mutex_t mu;
    int64_t rev;         /* last revision handed out */
    unsigned reply_code; /* 200 = normal answers */
    long reply_left;     /* answers of reply_code still to give; 0 = until changed */
    long delay_ms;
    long upload_ms;    /* a snapshot taken is answered this long after its createdOn */
    int upload_gate;   /* a snapshot taken is answered once /admin/uploaded names it */
    cJSON *uploaded;   /* OWNS: the names /admin/uploaded gave (array) */
    int hold;          /* snapshot requests wait until /admin/release */
    long held;         /* requests waiting now */
    pthread_cond_t cv; /* signalled by /admin/release */
    cJSON *full;       /* OWNS: latest full snapshot, or NULL */
    cJSON *deltas;     /* OWNS: delta snapshots since it (array) */
    struct buf requests;
    struct buf writes; /* one JSON line per acknowledged write: {"revision","time"} */
    long writer_ms;    /* the writer on an established connection: a write every N ms; 0 off */
    int writer_stop;
    pthread_t writer;
    int writer_running;
};

static const char JSON[] = "application/json";
static const char TEXT[] = "text/plain; charset=utf-8";

enum kerr bkd_new(struct bkd **out, struct kerr_info *err)
{
    struct bkd *d = calloc(1, sizeof(*d));

    *out = NULL;
    if (!d)
        return kerr_set(err, KERR_NOMEM, "out of memory");
    d->deltas = cJSON_CreateArray();
    d->uploaded = cJSON_CreateArray();
    if (!d->deltas || !d->uploaded) {
        cJSON_Delete(d->deltas);
        cJSON_Delete(d->uploaded);
        free(d);
        return kerr_set(err, KERR_NOMEM, "out of memory");
    }
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->cv, NULL);
    d->reply_code = 200;
    d->rev = REV_STEP; /* etcd has data before the first snapshot */
    buf_init(&d->requests, REQUESTS_MAX);
    buf_init(&d->writes, WRITES_MAX);
    *out = d;
    return KERR_OK;
}

void bkd_free(struct bkd *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&d->mu);
    d->writer_stop = 1;
    pthread_mutex_unlock(&d->mu);
    if (d->writer_running)
        pthread_join(d->writer, NULL);
    buf_release(&d->writes);
    cJSON_Delete(d->full);
    cJSON_Delete(d->deltas);
    cJSON_Delete(d->uploaded);
    buf_release(&d->requests);
    pthread_cond_destroy(&d->cv);
    pthread_mutex_destroy(&d->mu);
    free(d);
}

void bkd_reply_release(struct bkd_reply *r)
{
    free(r->body);
    memset(r, 0, sizeof(*r));
}

int bkd_parse_bool(const char *s)
{
    static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True" };
    static const char *const no[] = { "0", "f", "F", "FALSE", "false", "False" };
    size_t i;

    for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcmp(s, yes[i]) == 0)
            return 1;
        if (strcmp(s, no[i]) == 0)
            return 0;
    }
    return -1;
}

static void set_text(struct bkd_reply *r, unsigned code, const char *type, const char *text)
{
    r->code = code;
    r->content_type = type;
    r->body = strdup(text);
    if (!r->body) {
        r->code = 500;
        r->content_type = TEXT;
        return;
    }
    r->len = strlen(r->body);
}

/* Set r to the JSON text of v (BORROWED), or 500. */
static void set_json(struct bkd_reply *r, const cJSON *v)
{
    char *text = cJSON_PrintUnformatted(v);

    if (!text) {
        set_text(r, 500, TEXT, "");
        return;
    }
    r->code = 200;
    r->content_type = JSON;
    r->body = text;
    r->len = strlen(text);
}

static const char *arg(const struct bkd_req *req, const char *key)
{
    size_t i;

    for (i = 0; i < req->nargs; i++) {
        if (strcmp(req->args[i].key, key) == 0)
            return req->args[i].value;
    }
    return NULL;
}

/* An integer argument in [lo, hi]; 0 or -1 (absent or not a number in range). */
static int int_arg(const struct bkd_req *req, const char *key, long lo, long hi, long *out)
{
    const char *s = arg(req, key);
    char *end = NULL;
    long v;

    if (!s || !*s)
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* A Snapshot as etcd-backup-restore marshals brtypes.Snapshot. NULL when out of memory. */
static cJSON *snapshot(int full, int final, int64_t start, int64_t last)
{
    char created[KTIME_MICROTIME_LEN + 1], name[128];
    struct timespec now;
    cJSON *s = cJSON_CreateObject();

    clock_gettime(CLOCK_REALTIME, &now);
    if (!s || ktime_microtime_format(&now, created) != KERR_OK)
        goto fail;
    snprintf(name, sizeof(name), "%s-%08lld-%08lld-%lld.gz%s", full ? "Full" : "Incr",
             (long long)start, (long long)last, (long long)now.tv_sec, final ? ".final" : "");
    if (!cJSON_AddStringToObject(s, "createdOn", created) ||
        !cJSON_AddStringToObject(s, "immutabilityExpriyTime", "0001-01-01T00:00:00Z") ||
        !cJSON_AddNullToObject(s, "versionID") ||
        !cJSON_AddStringToObject(s, "kind", full ? "Full" : "Incr") ||
        !cJSON_AddStringToObject(s, "snapDir", "") ||
        !cJSON_AddStringToObject(s, "snapName", name) ||
        !cJSON_AddStringToObject(s, "prefix", "v2") ||
        !cJSON_AddStringToObject(s, "compressionSuffix", ".gz") ||
        !cJSON_AddNumberToObject(s, "startRevision", (double)start) ||
        !cJSON_AddNumberToObject(s, "lastRevision", (double)last) ||
        !cJSON_AddBoolToObject(s, "isChunk", 0) || !cJSON_AddBoolToObject(s, "isFinal", final))
        goto fail;
    return s;
fail:
    cJSON_Delete(s);
    return NULL;
}

/* Append the request line (under d->mu). A full log drops the line. */
static void log_request(struct bkd *d, const struct bkd_req *req, unsigned code, int64_t last,
                        int skipped)
{
    char when[KTIME_MICROTIME_LEN + 1];
    cJSON *line = cJSON_CreateObject(), *q = NULL;
    char *text = NULL;
    size_t i;

    if (!line || ktime_microtime_now(when) != KERR_OK)
        goto out;
    if (!cJSON_AddStringToObject(line, "method", req->method) ||
        !cJSON_AddStringToObject(line, "path", req->path) ||
        !(q = cJSON_AddObjectToObject(line, "query")))
        goto out;
    for (i = 0; i < req->nargs; i++) {
        if (!cJSON_AddStringToObject(q, req->args[i].key, req->args[i].value))
            goto out;
    }
    if (!cJSON_AddNumberToObject(line, "code", code) ||
        !(last >= 0 ? cJSON_AddNumberToObject(line, "lastRevision", (double)last)
                    : cJSON_AddNullToObject(line, "lastRevision")) ||
        !cJSON_AddStringToObject(line, "time", when) ||
        (skipped && !cJSON_AddBoolToObject(line, "skipped", 1)))
        goto out;
    text = cJSON_PrintUnformatted(line);
    if (text && buf_appendf(&d->requests, "%s\n", text) != KERR_OK)
        buf_reset(&d->requests);
out:
    free(text);
    cJSON_Delete(line);
}

/* The injected answer for the next snapshot request, or 200 (under d->mu). */
static unsigned take_injected(struct bkd *d)
{
    unsigned code = d->reply_code;

    if (code == 200)
        return 200;
    if (d->reply_left > 0 && --d->reply_left == 0)
        d->reply_code = 200;
    return code;
}

/* One acknowledged write (under d->mu): the revision it made, logged. */
static int64_t write_one(struct bkd *d)
{
    char when[KTIME_MICROTIME_LEN + 1];

    d->rev++;
    if (ktime_microtime_now(when) != KERR_OK)
        when[0] = '\0';
    if (buf_appendf(&d->writes, "{\"revision\":%lld,\"time\":\"%s\"}\n", (long long)d->rev, when) !=
        KERR_OK)
        buf_reset(&d->writes);
    return d->rev;
}

/* The writer on an established connection: the Service's ports do not stop it. */
static void *writer_main(void *arg)
{
    struct bkd *d = arg;
    long ms;

    for (;;) {
        pthread_mutex_lock(&d->mu);
        ms = d->writer_ms;
        if (d->writer_stop || ms <= 0) {
            pthread_mutex_unlock(&d->mu);
            return NULL;
        }
        write_one(d);
        pthread_mutex_unlock(&d->mu);
        ktime_sleep_ns((int64_t)ms * KTIME_NS_PER_MS);
    }
}

/* The previous snapshot is a final full one at the current revision (under d->mu). */
static int final_unchanged(const struct bkd *d)
{
    const cJSON *f = d->full;

    return f && cJSON_GetArraySize(d->deltas) == 0 &&
           cJSON_IsTrue(cJSON_GetObjectItem(f, "isFinal")) &&
           (int64_t)cJSON_GetObjectItem(f, "lastRevision")->valuedouble == d->rev;
}

/* Record a new snapshot (under d->mu) and answer it. */
static void take_snapshot(struct bkd *d, int full, int final, struct bkd_reply *r, int64_t *last)
{
    int64_t start = 0;
    cJSON *s, *copy;

    /* etcd-backup-restore (v0.28 and later): no new final full snapshot when nothing changed */
    if (full && final && final_unchanged(d)) {
        set_json(r, d->full);
        *last = d->rev;
        return;
    }
    if (!full) {
        cJSON *prev = cJSON_GetArrayItem(d->deltas, cJSON_GetArraySize(d->deltas) - 1);
        const cJSON *base = prev ? prev : d->full;
        start = base ? (int64_t)cJSON_GetObjectItem(base, "lastRevision")->valuedouble + 1 : 1;
    }
    if (!final) /* as if etcd had seen writes since; a final snapshot follows the cut */
        d->rev += REV_STEP;
    s = snapshot(full, final, start, d->rev);
    copy = s ? cJSON_Duplicate(s, 1) : NULL;
    if (!copy) {
        cJSON_Delete(s);
        set_text(r, 500, TEXT, "");
        return;
    }
    if (full) {
        cJSON_Delete(d->full);
        d->full = copy;
        cJSON_Delete(d->deltas);
        d->deltas = cJSON_CreateArray();
    } else {
        cJSON_AddItemToArray(d->deltas, copy);
    }
    set_json(r, s);
    cJSON_Delete(s);
    *last = d->rev;
}

/* Wait (under d->mu) on d->cv for 20 ms at most. */
static void wait_tick(struct bkd *d)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 20 * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&d->cv, &d->mu, &ts);
}

/* Wait (under d->mu) while requests are held, polling cancelled every 20 ms. */
static void wait_held(struct bkd *d, int (*cancelled)(void *arg), void *carg)
{
    d->held++;
    while (d->hold && !(cancelled && cancelled(carg)))
        wait_tick(d);
    d->held--;
}

/* /admin/uploaded has named name (under d->mu). */
static int was_uploaded(const struct bkd *d, const char *name)
{
    const cJSON *n;

    cJSON_ArrayForEach (n, d->uploaded) {
        if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
            return 1;
    }
    return 0;
}

/*
 * With the upload gate on, wait (under d->mu) until /admin/uploaded names the snapshot r
 * answers, GATE_MS at most: then r becomes a 500, as the sidecar answers an upload that failed.
 */
static void wait_uploaded(struct bkd *d, struct bkd_reply *r, int (*cancelled)(void *arg),
                          void *carg)
{
    cJSON *s = r->code == 200 ? cJSON_Parse(r->body) : NULL;
    const cJSON *name = cJSON_GetObjectItem(s, "snapName");
    int64_t end = ktime_mono_ns() + (int64_t)GATE_MS * KTIME_NS_PER_MS;
    int done = 0;

    if (r->code != 200)
        return;
    while (cJSON_IsString(name) && !(done = was_uploaded(d, name->valuestring)) &&
           ktime_mono_ns() < end && !(cancelled && cancelled(carg)))
        wait_tick(d);
    cJSON_Delete(s);
    if (!done) {
        bkd_reply_release(r);
        set_text(r, 500, TEXT, "the snapshot's upload was not confirmed (/admin/uploaded)\n");
    }
}

static void serve_snapshot(struct bkd *d, const struct bkd_req *req, int full, struct bkd_reply *r,
                           int (*cancelled)(void *arg), void *carg)
{
    const char *fs = full ? arg(req, "final") : NULL;
    int final = fs ? bkd_parse_bool(fs) : 0;
    unsigned code;
    int64_t last = -1;
    long delay, upload = 0;
    int skipped = 0;

    pthread_mutex_lock(&d->mu);
    wait_held(d, cancelled, carg);
    delay = d->delay_ms;
    pthread_mutex_unlock(&d->mu);
    if (delay > 0 && cancelled)
        ktime_sleep_cancellable(delay, 20, cancelled, carg);
    else if (delay > 0)
        ktime_sleep_ns((int64_t)delay * KTIME_NS_PER_MS);
    pthread_mutex_lock(&d->mu);
    if (final < 0) {
        set_text(r, 400, TEXT, "");
    } else if ((code = take_injected(d)) != 200) {
        set_text(r, code, TEXT, "");
    } else {
        skipped = full && final > 0 && final_unchanged(d);
        take_snapshot(d, full, final > 0, r, &last);
        upload = skipped ? 0 : d->upload_ms;
        if (!skipped && d->upload_gate)
            wait_uploaded(d, r, cancelled, carg);
    }
    log_request(d, req, r->code, last, skipped);
    pthread_mutex_unlock(&d->mu);
    if (upload > 0 && cancelled) /* the upload after NewSnapshot stamped createdOn */
        ktime_sleep_cancellable(upload, 20, cancelled, carg);
    else if (upload > 0)
        ktime_sleep_ns((int64_t)upload * KTIME_NS_PER_MS);
}

/* s's createdOn in whole seconds, as the sidecar's listing parses it from the name. */
static cJSON *listed(cJSON *s)
{
    const cJSON *c = cJSON_GetObjectItem(s, "createdOn");
    char whole[KTIME_LEN + 1];
    struct timespec ts;

    if (s && cJSON_IsString(c) && ktime_parse(c->valuestring, &ts, NULL) == KERR_OK &&
        ktime_format(ts.tv_sec, whole) == KERR_OK)
        cJSON_ReplaceItemInObject(s, "createdOn", cJSON_CreateString(whole));
    return s;
}

/* listed() on each of an array's items. */
static cJSON *listed_all(cJSON *a)
{
    cJSON *s;

    cJSON_ArrayForEach (s, a)
        listed(s);
    return a;
}

static void serve_latest(struct bkd *d, struct bkd_reply *r)
{
    cJSON *o = cJSON_CreateObject();

    pthread_mutex_lock(&d->mu);
    if (o && d->full)
        cJSON_AddItemToObject(o, "fullSnapshot", listed(cJSON_Duplicate(d->full, 1)));
    else if (o)
        cJSON_AddNullToObject(o, "fullSnapshot");
    if (o && cJSON_GetArraySize(d->deltas) > 0)
        cJSON_AddItemToObject(o, "deltaSnapshots", listed_all(cJSON_Duplicate(d->deltas, 1)));
    else if (o)
        cJSON_AddNullToObject(o, "deltaSnapshots");
    pthread_mutex_unlock(&d->mu);
    if (o && cJSON_GetArraySize(o) == 2)
        set_json(r, o);
    else
        set_text(r, 500, TEXT, "");
    cJSON_Delete(o);
}

static void serve_admin(struct bkd *d, const struct bkd_req *req, struct bkd_reply *r)
{
    long code = 0, count = 0, ms = 0;

    char n[32];

    if (strcmp(req->path, "/admin/requests") == 0) {
        pthread_mutex_lock(&d->mu);
        set_text(r, 200, "application/x-ndjson", buf_str(&d->requests));
        pthread_mutex_unlock(&d->mu);
        return;
    }
    if (strcmp(req->path, "/admin/writes") == 0) {
        pthread_mutex_lock(&d->mu);
        set_text(r, 200, "application/x-ndjson", buf_str(&d->writes));
        pthread_mutex_unlock(&d->mu);
        return;
    }
    if (strcmp(req->path, "/admin/held") == 0) {
        pthread_mutex_lock(&d->mu);
        snprintf(n, sizeof(n), "%ld\n", d->held);
        pthread_mutex_unlock(&d->mu);
        set_text(r, 200, TEXT, n);
        return;
    }
    if (strcmp(req->method, "POST") != 0) {
        set_text(r, 405, TEXT, "use POST\n");
        return;
    }
    if (strcmp(req->path, "/admin/hold") == 0 || strcmp(req->path, "/admin/release") == 0) {
        pthread_mutex_lock(&d->mu);
        d->hold = strcmp(req->path, "/admin/hold") == 0;
        pthread_cond_broadcast(&d->cv);
        pthread_mutex_unlock(&d->mu);
    } else if (strcmp(req->path, "/admin/write") == 0) {
        if (arg(req, "n") && int_arg(req, "n", 1, 100000, &count) != 0) {
            set_text(r, 400, TEXT, "want n=1..100000\n");
            return;
        }
        pthread_mutex_lock(&d->mu);
        for (long i = 0; i < (count > 0 ? count : 1); i++)
            snprintf(n, sizeof(n), "%lld\n", (long long)write_one(d));
        pthread_mutex_unlock(&d->mu);
        set_text(r, 200, TEXT, n);
        return;
    } else if (strcmp(req->path, "/admin/writer") == 0) {
        if (int_arg(req, "ms", 0, 600000, &ms) != 0) {
            set_text(r, 400, TEXT, "want ms=0..600000 (0: stop)\n");
            return;
        }
        pthread_mutex_lock(&d->mu);
        d->writer_ms = ms;
        if (ms > 0 && !d->writer_running && pthread_create(&d->writer, NULL, writer_main, d) == 0)
            d->writer_running = 1;
        pthread_mutex_unlock(&d->mu);
        if (ms == 0 && d->writer_running) { /* stopped: its last write is logged on return */
            pthread_join(d->writer, NULL);
            d->writer_running = 0;
        }
    } else if (strcmp(req->path, "/admin/uploaded") == 0) {
        const char *name = arg(req, "name");
        cJSON *item;

        pthread_mutex_lock(&d->mu);
        if (name && *name && cJSON_GetArraySize(d->uploaded) >= UPLOADED_MAX)
            cJSON_DeleteItemFromArray(d->uploaded, 0);
        item = name && *name ? cJSON_CreateString(name) : NULL;
        if (item)
            cJSON_AddItemToArray(d->uploaded, item);
        pthread_cond_broadcast(&d->cv);
        pthread_mutex_unlock(&d->mu);
        if (!item) {
            set_text(r, 400, TEXT, "want name=<snapName>\n");
            return;
        }
    } else if (strcmp(req->path, "/admin/reply") == 0) {
        if (int_arg(req, "code", 100, 599, &code) != 0 ||
            (arg(req, "count") && int_arg(req, "count", 0, 1000000, &count) != 0)) {
            set_text(r, 400, TEXT, "want code=100..599 and optional count=K (K >= 0)\n");
            return;
        }
        pthread_mutex_lock(&d->mu);
        d->reply_code = (unsigned)code;
        d->reply_left = count;
        pthread_mutex_unlock(&d->mu);
    } else if (strcmp(req->path, "/admin/upload") == 0 && arg(req, "gate")) {
        int gate = bkd_parse_bool(arg(req, "gate"));

        if (gate < 0) {
            set_text(r, 400, TEXT, "want gate=true|false\n");
            return;
        }
        pthread_mutex_lock(&d->mu);
        d->upload_gate = gate;
        pthread_cond_broadcast(&d->cv);
        pthread_mutex_unlock(&d->mu);
    } else {
        if (int_arg(req, "ms", 0, 600000, &ms) != 0) {
            set_text(r, 400, TEXT, "want ms=0..600000\n");
            return;
        }
        pthread_mutex_lock(&d->mu);
        if (strcmp(req->path, "/admin/upload") == 0)
            d->upload_ms = ms;
        else
            d->delay_ms = ms;
        pthread_mutex_unlock(&d->mu);
    }
    set_text(r, 200, TEXT, "ok\n");
}

void bkd_handle(struct bkd *d, const struct bkd_req *req, struct bkd_reply *r,
                int (*cancelled)(void *arg), void *arg)
{
    const char *p = req->path;

    memset(r, 0, sizeof(*r));
    if (strcmp(p, "/snapshot/full") == 0 || strcmp(p, "/snapshot/delta") == 0)
        serve_snapshot(d, req, strcmp(p, "/snapshot/full") == 0, r, cancelled, arg);
    else if (strcmp(p, "/snapshot/latest") == 0)
        serve_latest(d, r);
    else if (strcmp(p, "/healthz") == 0)
        set_text(r, 200, JSON, "{\"health\":true}");
    else if (strncmp(p, "/admin/", 7) == 0 &&
             (strcmp(p + 7, "reply") == 0 || strcmp(p + 7, "delay") == 0 ||
              strcmp(p + 7, "upload") == 0 || strcmp(p + 7, "uploaded") == 0 ||
              strcmp(p + 7, "requests") == 0 || strcmp(p + 7, "hold") == 0 ||
              strcmp(p + 7, "release") == 0 || strcmp(p + 7, "held") == 0 ||
              strcmp(p + 7, "write") == 0 || strcmp(p + 7, "writer") == 0 ||
              strcmp(p + 7, "writes") == 0))
        serve_admin(d, req, r);
    else
        set_text(r, 404, TEXT, "404 page not found\n");
    if (!r->body)
        set_text(r, 500, TEXT, "");
}
