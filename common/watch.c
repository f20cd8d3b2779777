#include "common/watch.h"

#include <string.h>

/* A pending buffer that grew past this is freed, not kept, once its line is done. */
#define WATCH_KEEP_ALLOC (64u * 1024u)

static const char *const type_names[] = { "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR" };

const char *watch_type_name(enum watch_type type)
{
    if ((unsigned)type >= sizeof(type_names) / sizeof(type_names[0]))
        return "UNKNOWN";
    return type_names[type];
}

enum kerr watch_type_parse(const char *name, enum watch_type *out)
{
    size_t i;

    for (i = 0; name && i < sizeof(type_names) / sizeof(type_names[0]); i++) {
        if (strcmp(name, type_names[i]) == 0) {
            *out = (enum watch_type)i;
            return KERR_OK;
        }
    }
    return KERR_PARSE;
}

void watch_init(struct watch_decoder *d, size_t line_max, watch_event_fn fn, void *ctx)
{
    memset(d, 0, sizeof(*d));
    d->line_max = line_max ? line_max : WATCH_LINE_MAX_DEFAULT;
    buf_init(&d->pending, d->line_max);
    d->fn = fn;
    d->ctx = ctx;
    d->failed = KERR_OK;
}

void watch_release(struct watch_decoder *d)
{
    buf_release(&d->pending);
}

void watch_reset(struct watch_decoder *d)
{
    buf_release(&d->pending);
    d->failed = KERR_OK;
}

size_t watch_pending(const struct watch_decoder *d)
{
    return d->pending.len;
}

void watch_event_release(struct watch_event *ev)
{
    if (!ev)
        return;
    cJSON_Delete(ev->object);
    memset(ev, 0, sizeof(*ev));
}

int watch_event_is_expired(const struct watch_event *ev)
{
    if (ev->type != WATCH_ERROR)
        return 0;
    if (ev->status_code == 410)
        return 1;
    return ev->reason && (strcmp(ev->reason, "Expired") == 0 || strcmp(ev->reason, "Gone") == 0);
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static const char *member_string(const cJSON *obj, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);

    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Fill the derived fields of ev from ev->object. */
static void describe(struct watch_event *ev)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(ev->object, "metadata");
    const cJSON *code;

    ev->resource_version = cJSON_IsObject(meta) ? member_string(meta, "resourceVersion") : NULL;
    if (ev->type != WATCH_ERROR)
        return;
    code = cJSON_GetObjectItemCaseSensitive(ev->object, "code");
    if (cJSON_IsNumber(code) && code->valuedouble >= 0 && code->valuedouble < 1000)
        ev->status_code = (int)code->valuedouble;
    ev->reason = member_string(ev->object, "reason");
    ev->message = member_string(ev->object, "message");
}

/* Split a parsed line {"type":..,"object":..} into *ev. root is consumed. */
static enum kerr split_event(cJSON *root, struct watch_event *ev, struct kerr_info *err)
{
    const char *type = NULL;
    enum kerr rc = KERR_OK;

    if (!cJSON_IsObject(root)) {
        rc = kerr_set(err, KERR_PARSE, "watch event is not a JSON object");
        goto out;
    }
    type = member_string(root, "type");
    if (!type || watch_type_parse(type, &ev->type) != KERR_OK) {
        rc = kerr_set(err, KERR_PARSE, "watch event has no known type");
        goto out;
    }
    ev->object = cJSON_DetachItemFromObjectCaseSensitive(root, "object");
    if (!cJSON_IsObject(ev->object)) {
        cJSON_Delete(ev->object);
        ev->object = NULL;
        rc = kerr_set(err, KERR_PARSE, "watch event %s has no object", type);
        goto out;
    }
    describe(ev);
out:
    cJSON_Delete(root);
    return rc;
}

enum kerr watch_decode_line(const char *line, size_t len, struct watch_event *ev,
                            struct kerr_info *err)
{
    const char *end = NULL;
    cJSON *root;
    size_t used;

    memset(ev, 0, sizeof(*ev));
    while (len && is_space(line[len - 1]))
        len--;
    while (len && is_space(*line)) {
        line++;
        len--;
    }
    if (!len)
        return KERR_NOTFOUND;
    root = cJSON_ParseWithLengthOpts(line, len, &end, 0);
    if (!root)
        return kerr_set(err, KERR_PARSE, "watch event is not valid JSON");
    used = end ? (size_t)(end - line) : 0;
    if (used < len) {
        cJSON_Delete(root);
        return kerr_set(err, KERR_PARSE, "watch event has trailing data");
    }
    return split_event(root, ev, err);
}

/* Decode one complete line and hand the event to the callback. */
static enum kerr handle_line(struct watch_decoder *d, const char *line, size_t len,
                             struct kerr_info *err)
{
    struct watch_event ev;
    enum kerr rc;

    rc = watch_decode_line(line, len, &ev, err);
    if (rc == KERR_NOTFOUND)
        return KERR_OK;
    if (rc != KERR_OK)
        return rc;
    d->events++;
    rc = d->fn ? d->fn(d->ctx, &ev) : KERR_OK;
    if (rc != KERR_OK)
        kerr_set(err, rc, "watch %s event refused: %s", watch_type_name(ev.type), kerr_str(rc));
    watch_event_release(&ev);
    return rc;
}

static void drop_pending(struct watch_decoder *d)
{
    if (d->pending.cap > WATCH_KEEP_ALLOC)
        buf_release(&d->pending);
    else
        buf_reset(&d->pending);
}

static enum kerr too_long(struct watch_decoder *d, struct kerr_info *err)
{
    return kerr_set(err, KERR_TOOBIG, "watch event line exceeds %zu bytes", d->line_max);
}

/* Complete the pending line with seg (len bytes) and decode it. */
static enum kerr finish_pending(struct watch_decoder *d, const char *seg, size_t len,
                                struct kerr_info *err)
{
    enum kerr rc;

    if (len > d->line_max - d->pending.len)
        return too_long(d, err);
    rc = buf_append(&d->pending, seg, len);
    if (rc != KERR_OK)
        return kerr_set(err, rc, "watch: cannot buffer event line");
    rc = handle_line(d, d->pending.data, d->pending.len, err);
    drop_pending(d);
    return rc;
}

static enum kerr feed_lines(struct watch_decoder *d, const char *p, const char *end,
                            struct kerr_info *err)
{
    const char *nl;
    enum kerr rc;

    while (p < end) {
        nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {
            if ((size_t)(end - p) > d->line_max - d->pending.len)
                return too_long(d, err);
            rc = buf_append(&d->pending, p, (size_t)(end - p));
            return rc == KERR_OK ? KERR_OK : kerr_set(err, rc, "watch: cannot buffer event line");
        }
        if (d->pending.len)
            rc = finish_pending(d, p, (size_t)(nl - p), err);
        else if ((size_t)(nl - p) > d->line_max)
            rc = too_long(d, err);
        else
            rc = handle_line(d, p, (size_t)(nl - p), err);
        if (rc != KERR_OK)
            return rc;
        p = nl + 1;
    }
    return KERR_OK;
}

enum kerr watch_feed(struct watch_decoder *d, const void *data, size_t n, struct kerr_info *err)
{
    enum kerr rc;

    if (d->failed != KERR_OK)
        return kerr_set(err, d->failed, "watch stream already failed: %s", kerr_str(d->failed));
    if (!n)
        return KERR_OK;
    d->bytes += n;
    rc = feed_lines(d, data, (const char *)data + n, err);
    if (rc != KERR_OK) {
        d->failed = rc;
        buf_release(&d->pending);
    }
    return rc;
}

enum kerr watch_finish(struct watch_decoder *d, struct kerr_info *err)
{
    enum kerr rc;

    if (d->failed != KERR_OK)
        return kerr_set(err, d->failed, "watch stream already failed: %s", kerr_str(d->failed));
    rc = d->pending.len ? handle_line(d, d->pending.data, d->pending.len, err) : KERR_OK;
    buf_release(&d->pending);
    if (rc != KERR_OK)
        d->failed = rc;
    return rc;
}
