#include "common/watch.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SEEN 2048

struct seen {
    int n;
    enum watch_type type[MAX_SEEN];
    char rv[MAX_SEEN][32];
    char name[MAX_SEEN][32];
    int code[MAX_SEEN];
    int fail_at; /* return KERR_CANCELLED on this event number (1-based), 0 = never */
    cJSON *taken;
};

static enum kerr collect(void *ctx, struct watch_event *ev)
{
    struct seen *s = ctx;
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(ev->object, "metadata");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");

    cr_assert_lt(s->n, MAX_SEEN);
    s->type[s->n] = ev->type;
    snprintf(s->rv[s->n], sizeof(s->rv[0]), "%s",
             ev->resource_version ? ev->resource_version : "-");
    snprintf(s->name[s->n], sizeof(s->name[0]), "%s",
             cJSON_IsString(name) ? name->valuestring : "-");
    s->code[s->n] = ev->status_code;
    s->n++;
    if (s->fail_at && s->n == s->fail_at)
        return KERR_CANCELLED;
    return KERR_OK;
}

static const char stream3[] =
    "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Etcd\",\"metadata\":{\"name\":\"a\","
    "\"resourceVersion\":\"11\"}}}\n"
    "\r\n"
    "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"b\",\"resourceVersion\":\"12\","
    "\"labels\":{\"x\":\"y\\n\"}}}}\r\n"
    "\n"
    "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"13\"}}}\n";

static void check_stream3(const struct seen *s)
{
    cr_assert_eq(s->n, 3);
    cr_assert_eq(s->type[0], WATCH_ADDED);
    cr_assert_str_eq(s->rv[0], "11");
    cr_assert_str_eq(s->name[0], "a");
    cr_assert_eq(s->type[1], WATCH_MODIFIED);
    cr_assert_str_eq(s->rv[1], "12");
    cr_assert_str_eq(s->name[1], "b");
    cr_assert_eq(s->type[2], WATCH_BOOKMARK);
    cr_assert_str_eq(s->rv[2], "13");
    cr_assert_str_eq(s->name[2], "-");
}

Test(watch, whole_stream_in_one_chunk)
{
    struct watch_decoder d;
    struct seen s = { 0 };

    watch_init(&d, 0, collect, &s);
    cr_assert_eq(watch_feed(&d, stream3, strlen(stream3), NULL), KERR_OK);
    check_stream3(&s);
    cr_assert_eq(watch_pending(&d), 0);
    cr_assert_eq(d.events, 3);
    cr_assert_eq(watch_finish(&d, NULL), KERR_OK);
    watch_release(&d);
}

Test(watch, one_byte_at_a_time)
{
    struct watch_decoder d;
    struct seen s = { 0 };
    size_t i, n = strlen(stream3);
    char *copy;

    watch_init(&d, 0, collect, &s);
    for (i = 0; i < n; i++) {
        /* A fresh one-byte allocation, so ASan sees any read past the chunk. */
        copy = malloc(1);
        cr_assert_not_null(copy);
        copy[0] = stream3[i];
        cr_assert_eq(watch_feed(&d, copy, 1, NULL), KERR_OK, "byte %zu", i);
        free(copy);
    }
    check_stream3(&s);
    watch_release(&d);
}

Test(watch, split_at_every_position)
{
    size_t i, n = strlen(stream3);

    for (i = 0; i <= n; i++) {
        struct watch_decoder d;
        struct seen s = { 0 };
        char *a = malloc(i + 1), *b = malloc(n - i + 1);

        cr_assert(a && b);
        memcpy(a, stream3, i);
        memcpy(b, stream3 + i, n - i);
        watch_init(&d, 0, collect, &s);
        cr_assert_eq(watch_feed(&d, a, i, NULL), KERR_OK, "split %zu", i);
        cr_assert_eq(watch_feed(&d, b, n - i, NULL), KERR_OK, "split %zu", i);
        check_stream3(&s);
        watch_release(&d);
        free(a);
        free(b);
    }
}

Test(watch, many_events_in_one_chunk)
{
    struct watch_decoder d;
    struct seen s = { 0 };
    struct buf b;
    int i;

    buf_init(&b, 1u << 20);
    for (i = 0; i < 1500; i++)
        cr_assert_eq(buf_appendf(&b,
                                 "{\"type\":\"%s\",\"object\":{\"metadata\":{\"name\":\"o%d\","
                                 "\"resourceVersion\":\"%d\"}}}\n",
                                 i % 3 == 2 ? "DELETED" : "ADDED", i, 100 + i),
                     KERR_OK);
    watch_init(&d, 0, collect, &s);
    cr_assert_eq(watch_feed(&d, b.data, b.len, NULL), KERR_OK);
    cr_assert_eq(s.n, 1500);
    for (i = 0; i < 1500; i++) {
        char rv[16], name[16];

        snprintf(rv, sizeof(rv), "%d", 100 + i);
        snprintf(name, sizeof(name), "o%d", i);
        cr_assert_str_eq(s.rv[i], rv);
        cr_assert_str_eq(s.name[i], name);
        cr_assert_eq(s.type[i], i % 3 == 2 ? WATCH_DELETED : WATCH_ADDED);
    }
    watch_release(&d);
    buf_release(&b);
}

Test(watch, error_event_exposes_status)
{
    static const char line[] =
        "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
        "\"metadata\":{},\"status\":\"Failure\",\"message\":\"too old resource version: 5 (90)\","
        "\"reason\":\"Expired\",\"code\":410}}";
    struct watch_event ev;

    cr_assert_eq(watch_decode_line(line, strlen(line), &ev, NULL), KERR_OK);
    cr_assert_eq(ev.type, WATCH_ERROR);
    cr_assert_eq(ev.status_code, 410);
    cr_assert_str_eq(ev.reason, "Expired");
    cr_assert_str_eq(ev.message, "too old resource version: 5 (90)");
    cr_assert_null(ev.resource_version);
    cr_assert(watch_event_is_expired(&ev));
    watch_event_release(&ev);
}

Test(watch, expired_detection)
{
    struct watch_event ev = { 0 };

    ev.type = WATCH_ERROR;
    ev.status_code = 500;
    ev.reason = "InternalError";
    cr_assert_not(watch_event_is_expired(&ev));
    ev.reason = "Gone";
    cr_assert(watch_event_is_expired(&ev));
    ev.reason = NULL;
    ev.status_code = 410;
    cr_assert(watch_event_is_expired(&ev));
    ev.type = WATCH_MODIFIED;
    cr_assert_not(watch_event_is_expired(&ev));
}

Test(watch, malformed_line_is_a_sticky_error)
{
    static const char data[] = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n"
                               "{\"type\":\"ADDED\",\"object\":{\"metadata\":\n"
                               "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"c\"}}}\n";
    static const char more[] = "{\"type\":\"ADDED\",\"object\":{}}\n";
    struct watch_decoder d;
    struct seen s = { 0 };
    struct kerr_info err;

    watch_init(&d, 0, collect, &s);
    cr_assert_eq(watch_feed(&d, data, strlen(data), &err), KERR_PARSE);
    cr_assert_eq(err.code, KERR_PARSE);
    cr_assert_eq(s.n, 1, "the event before the bad line is delivered, none after");
    cr_assert_eq(watch_feed(&d, more, strlen(more), NULL), KERR_PARSE);
    cr_assert_eq(watch_finish(&d, NULL), KERR_PARSE);
    cr_assert_eq(s.n, 1);
    watch_reset(&d);
    cr_assert_eq(watch_feed(&d, more, strlen(more), NULL), KERR_OK);
    cr_assert_eq(s.n, 2);
    watch_release(&d);
}

Test(watch, lines_that_are_not_events)
{
    static const char *const bad[] = {
        "[1,2]",
        "\"ADDED\"",
        "{\"object\":{}}",
        "{\"type\":\"RENAMED\",\"object\":{}}",
        "{\"type\":\"ADDED\"}",
        "{\"type\":\"ADDED\",\"object\":[]}",
        "{\"type\":7,\"object\":{}}",
        "{\"type\":\"ADDED\",\"object\":{}} {}",
        "{\"type\":\"ADDED\",\"object\":{}}x",
        "nul",
        "{\"type\":\"ADDED\",\"object\":{\"a\":\"unterminated}}",
    };
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct watch_event ev;
        struct kerr_info err;

        cr_assert_eq(watch_decode_line(bad[i], strlen(bad[i]), &ev, &err), KERR_PARSE, "%s",
                     bad[i]);
        cr_assert_null(ev.object);
        cr_assert_neq(err.msg[0], '\0');
    }
}

Test(watch, blank_lines_only)
{
    static const char data[] = "\n\r\n  \n\t\r\n";
    struct watch_decoder d;
    struct seen s = { 0 };
    struct watch_event ev;

    watch_init(&d, 0, collect, &s);
    cr_assert_eq(watch_feed(&d, data, strlen(data), NULL), KERR_OK);
    cr_assert_eq(s.n, 0);
    cr_assert_eq(watch_finish(&d, NULL), KERR_OK);
    cr_assert_eq(watch_decode_line(" \r", 2, &ev, NULL), KERR_NOTFOUND);
    watch_release(&d);
}

Test(watch, line_cap)
{
    char line[200];
    struct watch_decoder d;
    struct seen s = { 0 };
    struct kerr_info err;
    size_t i;
    int len;

    len = snprintf(line, sizeof(line),
                   "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"%s\"}}}\n",
                   "0123456789012345678901234567890123456789");
    cr_assert_gt(len, 64);

    /* In one chunk: the line is parsed in place, the cap still applies. */
    watch_init(&d, 64, collect, &s);
    cr_assert_eq(watch_feed(&d, line, (size_t)len, &err), KERR_TOOBIG);
    cr_assert_eq(err.code, KERR_TOOBIG);
    watch_release(&d);

    /* Byte by byte: the pending buffer hits the cap before the newline. */
    watch_init(&d, 64, collect, &s);
    for (i = 0; i < (size_t)len; i++)
        if (watch_feed(&d, line + i, 1, NULL) != KERR_OK)
            break;
    cr_assert_eq(i, 64, "refused at the first byte past the cap");
    cr_assert_eq(d.failed, KERR_TOOBIG);
    cr_assert_eq(watch_pending(&d), 0, "the partial line is dropped");
    watch_release(&d);

    /* Exactly at the cap is fine. */
    watch_init(&d, (size_t)len - 1, collect, &s);
    cr_assert_eq(watch_feed(&d, line, 10, NULL), KERR_OK);
    cr_assert_eq(watch_feed(&d, line + 10, (size_t)len - 10, NULL), KERR_OK);
    cr_assert_eq(s.n, 1);
    watch_release(&d);
}

Test(watch, finish_decodes_a_last_line_without_newline)
{
    static const char last[] = "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"z\","
                               "\"resourceVersion\":\"99\"}}}";
    struct watch_decoder d;
    struct seen s = { 0 };

    watch_init(&d, 0, collect, &s);
    cr_assert_eq(watch_feed(&d, last, strlen(last), NULL), KERR_OK);
    cr_assert_eq(s.n, 0);
    cr_assert_eq(watch_pending(&d), strlen(last));
    cr_assert_eq(watch_finish(&d, NULL), KERR_OK);
    cr_assert_eq(s.n, 1);
    cr_assert_eq(s.type[0], WATCH_DELETED);
    cr_assert_str_eq(s.rv[0], "99");

    /* A truncated event (connection dropped mid-line) is an error at the end. */
    watch_reset(&d);
    cr_assert_eq(watch_feed(&d, last, 20, NULL), KERR_OK);
    cr_assert_eq(watch_finish(&d, NULL), KERR_PARSE);
    cr_assert_eq(s.n, 1);
    watch_release(&d);
}

static enum kerr take(void *ctx, struct watch_event *ev)
{
    struct seen *s = ctx;

    s->taken = ev->object;
    ev->object = NULL;
    return KERR_OK;
}

Test(watch, callback_may_take_the_object)
{
    static const char line[] = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"t\"}}}\n";
    struct watch_decoder d;
    struct seen s = { 0 };
    const cJSON *name;

    watch_init(&d, 0, take, &s);
    cr_assert_eq(watch_feed(&d, line, strlen(line), NULL), KERR_OK);
    cr_assert_not_null(s.taken);
    name = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(s.taken, "metadata"),
                                            "name");
    cr_assert_str_eq(cJSON_GetStringValue(name), "t");
    cJSON_Delete(s.taken);
    watch_release(&d);
}

Test(watch, callback_error_stops_the_stream)
{
    struct watch_decoder d;
    struct seen s = { 0 };
    struct kerr_info err;

    s.fail_at = 2;
    watch_init(&d, 0, collect, &s);
    cr_assert_eq(watch_feed(&d, stream3, strlen(stream3), &err), KERR_CANCELLED);
    cr_assert_eq(err.code, KERR_CANCELLED);
    cr_assert_eq(s.n, 2);
    cr_assert_eq(watch_feed(&d, "\n", 1, NULL), KERR_CANCELLED);
    watch_release(&d);
}

Test(watch, type_names_round_trip)
{
    enum watch_type t;
    int i;

    for (i = WATCH_ADDED; i <= WATCH_ERROR; i++) {
        cr_assert_eq(watch_type_parse(watch_type_name((enum watch_type)i), &t), KERR_OK);
        cr_assert_eq((int)t, i);
    }
    cr_assert_str_eq(watch_type_name((enum watch_type)42), "UNKNOWN");
    cr_assert_eq(watch_type_parse("added", &t), KERR_PARSE);
}
