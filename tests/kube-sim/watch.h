/*
 * watch - a WATCH response as kube-apiserver streams it: newline-delimited
 * {"type":...,"object":...} events over a chunked body.
 *
 * resourceVersion unset or "0" starts with synthetic ADDED events for the
 * current objects; "N" replays history after N (an ERROR event with a 410
 * Expired Status when N is older than the history); sendInitialEvents=true
 * ends the initial ADDED events with a BOOKMARK annotated
 * k8s.io/initial-events-end. With allowWatchBookmarks=true a BOOKMARK is
 * sent every bookmark interval and just before timeoutSeconds ends the
 * stream (default: a random time between 30 and 60 minutes). Label and
 * field selectors turn MODIFIED events into ADDED / DELETED when an object
 * starts or stops matching. A Table Accept header streams Table rows.
 *
 * Ownership: ksim_watch_start puts a watch the response OWNS into
 * resp->watch; ksim_watch_free releases it.
 * Thread safety: one thread reads a watch at a time (the connection's);
 * different watches are independent.
 */
#ifndef KSIM_WATCH_H
#define KSIM_WATCH_H

#include <stddef.h>
#include <sys/types.h>

#include "tests/kube-sim/api.h"

/* Liveness probe of the client connection: return 0 once the peer has gone. */
typedef int (*ksim_watch_alive_fn)(void *arg);

/*
 * Start a watch on tgt into resp (code 200, resp->watch set). 0, or the
 * HTTP code of a request error in e (bad selector, bad resourceVersion).
 */
int ksim_watch_start(struct ksim_api *api, const struct ksim_req *req,
                     const struct ksim_target *tgt, struct ksim_resp *resp, struct ksim_apierr *e);

/* Install the connection probe (checked about once a second while idle). */
void ksim_watch_set_alive(struct ksim_watch *w, ksim_watch_alive_fn fn, void *arg);

/*
 * Copy the next bytes of the stream into buf (at most max), blocking until
 * there are some. Returns the count (> 0), or -1 at the end of the stream
 * (timeout, cut by fault injection, server shutdown, client gone).
 */
ssize_t ksim_watch_read(struct ksim_watch *w, char *buf, size_t max);

/* NULL is a no-op. */
void ksim_watch_free(struct ksim_watch *w);

#endif
