/*
 * events - an events.k8s.io/v1 Event recorder that never blocks its caller
 * (after client-go's tools/events).
 *
 * ev_emit() copies the event into a bounded queue (1000 by default) and
 * returns at once; when the queue is full the event is dropped, counted and
 * logged. A sender thread drains the queue and talks to the API server:
 *
 *   - Isomorphic events - same regarding object, type, reason, action and
 *     note - are folded into a series (the cache is common/evseries). The
 *     first is created as an Event named "<regarding.name>.<unix
 *     nanoseconds in hex>" with eventTime (MicroTime); a repeat within the
 *     series window (6 minutes since the last occurrence) only counts, and
 *     the Event is patched (merge patch) with series {count,
 *     lastObservedTime} at most once per patch interval (5 s), count
 *     starting at 2. After the window a repeat starts a new Event.
 *   - New events (not repeats) are rate limited per regarding object by a
 *     token bucket (burst 25, one token per 5 minutes), as the old
 *     client-go EventSourceObjectSpamFilter; over the limit they are dropped
 *     and counted.
 *   - A create or patch that fails with a transport error, a timeout, 429 or
 *     5xx is retried every retry interval (10 s) up to max tries (12) per
 *     event, then dropped with a log line; other API errors (4xx) are not
 *     retried. A series patch answered 404 re-creates the Event.
 *   - ev_stop() processes what is queued and sends pending creates and
 *     series updates until the flush timeout; what is left is dropped.
 *
 * Notes longer than EV_NOTE_MAX bytes are cut at a UTF-8 character boundary.
 * The Event goes into regarding.namespace ("default" for cluster objects).
 * Give the recorder a struct k8s_client with a short request timeout: a
 * request in flight when the flush timeout passes still runs to its end.
 *
 * Thread safety: ev_emit, ev_emitf and ev_get_stats may be called from any
 * thread at any time before ev_stop(). ev_new/ev_stop/ev_free belong to
 * one owner.
 */
#ifndef COMMON_EVENTS_H
#define COMMON_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "common/kerr.h"

struct k8s_client; /* common/k8s.h */

#define EV_NOTE_MAX  1024 /* bytes of note kept */
#define EV_FIELD_MAX 128  /* reportingController, reportingInstance, reason, action */

enum ev_type { EV_NORMAL, EV_WARNING };

/* The object an event is about (an ObjectReference). Strings BORROWED; copied by ev_emit. */
struct ev_ref {
    const char *api_version; /* "druid.gardener.cloud/v1alpha1" */
    const char *kind;        /* required */
    const char *namespace;   /* NULL or "" for cluster-scoped objects */
    const char *name;        /* required */
    const char *uid;         /* optional */
};

/* Options; a 0 field takes the default. */
struct ev_opts {
    const char *reporting_controller; /* required, <= 128 bytes, e.g. "etcd-warden.io/controller" */
    const char *reporting_instance;   /* required, <= 128 bytes, e.g. the pod name */
    size_t queue_size;                /* 1000 */
    long series_window_ms;            /* 6 min: a repeat later than this starts a new Event */
    long patch_interval_ms;           /* 5 s: minimum time between two patches of one Event */
    int max_tries;                    /* 12 tries per create or patch */
    long retry_interval_ms;           /* 10 s between tries */
    int spam_burst;                   /* 25 new events per object at once */
    double spam_qps;                  /* 1/300: refill; < 0 disables the spam filter */
    size_t cache_max;                 /* 4096 events remembered for series */
    long flush_timeout_ms;            /* 5 s: how long after ev_stop() sending goes on */
};

/* Counters, read with ev_get_stats(). */
struct ev_stats {
    uint64_t emitted;        /* accepted by ev_emit */
    uint64_t dropped_full;   /* refused by ev_emit: queue full */
    uint64_t dropped_spam;   /* dropped by the per-object rate limit */
    uint64_t dropped_failed; /* creates or patches given up after errors, or left at stop */
    uint64_t created;        /* Events created */
    uint64_t series_updates; /* series patches sent */
    uint64_t repeats;        /* emits folded into an existing series */
    uint64_t send_errors;    /* failed API calls (each try counts) */
};

struct ev_recorder;

/*
 * Create a recorder that writes through client (BORROWED; must outlive the
 * recorder) and start its sender thread. On KERR_OK *out OWNS it (ev_free).
 * KERR_INVAL when reporting_controller or reporting_instance is missing or
 * too long, or an option is negative; KERR_NOMEM, KERR_INTERNAL.
 */
enum kerr ev_new(struct k8s_client *client, const struct ev_opts *opts, struct ev_recorder **out,
                 struct kerr_info *err);

/*
 * Record an event about ref. Never blocks on the network: the event is
 * queued for the sender thread. reason and action (BORROWED, copied) are
 * required, <= 128 bytes; note (BORROWED, copied, may be NULL) is cut to
 * EV_NOTE_MAX bytes. Returns KERR_OK when queued, KERR_TOOMANY when the
 * queue is full (dropped and counted), KERR_CLOSED after ev_stop, KERR_INVAL,
 * KERR_NOMEM. Callers normally ignore the result.
 */
enum kerr ev_emit(struct ev_recorder *r, const struct ev_ref *ref, enum ev_type type,
                  const char *reason, const char *action, const char *note);

/* ev_emit with a printf-formatted note. */
enum kerr ev_emitf(struct ev_recorder *r, const struct ev_ref *ref, enum ev_type type,
                   const char *reason, const char *action, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/*
 * Log the note (printf-formatted) at warn for EV_WARNING, else info, with obj's namespace and
 * name and the reason, then record it as an event about obj with ev_emit when r is not NULL
 * and obj names itself (ev_ref_from_object). For reconcilers whose every event is also a log
 * line.
 */
void ev_log_emitf(struct ev_recorder *r, const cJSON *obj, enum ev_type type, const char *reason,
                  const char *action, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/*
 * Fill *ref with apiVersion, kind, metadata.namespace, metadata.name and
 * metadata.uid of obj; the strings are BORROWED from obj. KERR_INVAL when
 * kind or name is missing.
 */
enum kerr ev_ref_from_object(const cJSON *obj, struct ev_ref *ref);

/* Copy the counters into *out. */
void ev_get_stats(struct ev_recorder *r, struct ev_stats *out);

/*
 * Refuse new events, send what is queued and pending until the flush
 * timeout, then stop the sender thread. Idempotent.
 */
void ev_stop(struct ev_recorder *r);

/* ev_stop(), then free. NULL is a no-op. */
void ev_free(struct ev_recorder *r);

#endif
