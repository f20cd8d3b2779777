/*
 * watch - decoder for the Kubernetes watch stream: newline-delimited JSON
 * events {"type": "ADDED|MODIFIED|DELETED|BOOKMARK|ERROR", "object": {...}}.
 *
 * Bytes are fed in chunks of any size; chunk boundaries need not be event
 * boundaries (one byte at a time works). Each complete line is parsed once,
 * with cJSON_ParseWithLengthOpts on that line only: a line that arrived in one
 * chunk is parsed in place, an unfinished line is kept in a capped struct buf
 * until its newline arrives, so decoding is linear in the stream size.
 * Blank lines and "\r\n" endings are tolerated.
 *
 * Errors are returned, not delivered as events: a line longer than the cap
 * (KERR_TOOBIG), a line that is not JSON, not an object, has no known "type"
 * or no "object" member (KERR_PARSE), or a callback that returns non-OK (its
 * code). Any error is sticky: the decoder refuses further input with the same
 * code until watch_reset. This matches client-go, which ends the watch on a
 * decoding error; the caller then reconnects from its last resourceVersion.
 * An in-stream "ERROR" event (a metav1 Status, such as 410 Expired) is not a
 * decoding error: it is delivered to the callback like any other event, with
 * the Status code and reason decoded for the caller.
 *
 * Ownership: struct watch_decoder is embedded by its caller (watch_init /
 * watch_release). The event handed to the callback is BORROWED for the call;
 * its object is OWNED by the decoder and freed after the callback returns,
 * unless the callback takes it by setting ev->object = NULL (then the caller
 * owns it and frees it with cJSON_Delete; the string pointers of the event
 * point into it).
 * Thread safety: none; one decoder per stream, used by one thread at a time.
 */
#ifndef COMMON_WATCH_H
#define COMMON_WATCH_H

#include <stddef.h>

#include <cJSON.h>

#include "common/buf.h"
#include "common/kerr.h"

#define WATCH_LINE_MAX_DEFAULT (16u * 1024u * 1024u) /* default cap on one event line */

enum watch_type { WATCH_ADDED, WATCH_MODIFIED, WATCH_DELETED, WATCH_BOOKMARK, WATCH_ERROR };

/* One decoded event. All pointers are BORROWED from object. */
struct watch_event {
    enum watch_type type;
    cJSON *object;                /* the object (a metav1 Status for ERROR); never NULL */
    const char *resource_version; /* object.metadata.resourceVersion, or NULL */
    int status_code;              /* ERROR: Status.code, else 0 */
    const char *reason;           /* ERROR: Status.reason, or NULL */
    const char *message;          /* ERROR: Status.message, or NULL */
};

/*
 * Called once per event, in stream order. Return KERR_OK to go on; any other
 * code stops decoding, is returned by watch_feed and makes the decoder fail.
 */
typedef enum kerr (*watch_event_fn)(void *ctx, struct watch_event *ev);

struct watch_decoder {
    struct buf pending; /* start of an unfinished line; OWNS its data */
    size_t line_max;    /* cap on one line, without its newline */
    watch_event_fn fn;  /* BORROWED */
    void *ctx;          /* BORROWED, passed to fn */
    enum kerr failed;   /* sticky error, KERR_OK while healthy */
    unsigned long events;
    unsigned long long bytes;
};

/* Set up a decoder. line_max 0 means WATCH_LINE_MAX_DEFAULT. Cannot fail. */
void watch_init(struct watch_decoder *d, size_t line_max, watch_event_fn fn, void *ctx);

/* Free the pending bytes. Safe to call twice. */
void watch_release(struct watch_decoder *d);

/* Forget pending bytes and any sticky error: ready for a new stream. */
void watch_reset(struct watch_decoder *d);

/*
 * Decode n bytes (data need not be NUL-terminated), calling the callback for
 * every line the bytes complete. Returns KERR_OK, or the error described in
 * the file comment (events before the bad line have been delivered).
 */
enum kerr watch_feed(struct watch_decoder *d, const void *data, size_t n, struct kerr_info *err);

/*
 * The stream ended. A last line without a newline is decoded as if it had
 * one; a partial event left by a dropped connection gives KERR_PARSE.
 * The pending bytes are dropped either way.
 */
enum kerr watch_finish(struct watch_decoder *d, struct kerr_info *err);

/* Bytes waiting for the rest of their line. */
size_t watch_pending(const struct watch_decoder *d);

/*
 * Decode a single line (without its newline; surrounding whitespace is
 * allowed) into *ev. On KERR_OK ev->object is OWNED by the caller (free with
 * watch_event_release); a blank line gives KERR_NOTFOUND. The building block
 * of watch_feed, public for tests and tools.
 */
enum kerr watch_decode_line(const char *line, size_t len, struct watch_event *ev,
                            struct kerr_info *err);

/* Free ev->object and clear the event. NULL is a no-op. */
void watch_event_release(struct watch_event *ev);

/* "ADDED", ...; "UNKNOWN" for a bad value. Static text. */
const char *watch_type_name(enum watch_type type);

/* Parse a type name; KERR_PARSE when unknown. */
enum kerr watch_type_parse(const char *name, enum watch_type *out);

/*
 * True for an ERROR event that means "resourceVersion too old": Status code
 * 410, or reason "Expired" or "Gone" (client-go's isExpiredError). The
 * caller must then list again instead of resuming the watch.
 */
int watch_event_is_expired(const struct watch_event *ev);

#endif
