/*
 * snapdelta - the events of an etcd-backup-restore delta snapshot, read as
 * they stream in.
 *
 * A delta snapshot (decompressed, its SHA-256 trailer taken off by
 * snapverify.h) is a JSON array of the sidecar's events, each
 *   {"etcdEvent":{"type":T,"kv":{"key":B64,"create_revision":N,
 *    "mod_revision":N,"version":N,"value":B64,"lease":N}},"time":RFC3339}
 * as Go's encoding/json writes a clientv3.Event: type 0 (PUT) is left out,
 * 1 is DELETE; bytes are standard base64 with padding; zero values are
 * left out.
 *
 * The array is split into its elements as the bytes arrive (strings and
 * nesting followed, nothing else interpreted) and each element, at most
 * event_max bytes, is parsed with cJSON. So memory is one event whatever
 * the delta's size. What the sidecar's restore cannot unmarshal or apply
 * is refused with KERR_PARSE and a message naming the event: anything but
 * an array of objects, an element without an etcdEvent object or its kv
 * object, a type, key or mod_revision of the wrong JSON type, a key that
 * is not base64, a revision that is not an integer (or above 2^53).
 * A type other than 0 and 1 is passed on (its restore fails on it).
 *
 * Ownership: a struct snapdelta is OWNED by its creator (snapdelta_free).
 * Thread safety: one parser per thread.
 */
#ifndef CONTROLLER_SNAPSHOT_SNAPDELTA_H
#define CONTROLLER_SNAPSHOT_SNAPDELTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/kerr.h"

/* Events larger than this: etcd's --max-request-bytes is at most a few MiB in practice. */
#define SNAPDELTA_EVENT_MAX (16u * 1024u * 1024u)

struct snapdelta;

struct snapdelta_event {
    int type;                 /* 0 PUT, 1 DELETE, anything else as written */
    const unsigned char *key; /* BORROWED for the callback; decoded */
    size_t klen;
    int64_t mod_revision; /* 0 when left out */
    int64_t index;        /* the element's position in the array, from 0 */
};

/* Receives each event; a non-OK return stops snapdelta_update with it. */
typedef enum kerr (*snapdelta_fn)(void *ctx, const struct snapdelta_event *ev,
                                  struct kerr_info *err);

/* A parser at the start of a delta; events of at most event_max bytes go to fn(ctx, ...).
 * On KERR_OK *out OWNS it. */
enum kerr snapdelta_new(size_t event_max, snapdelta_fn fn, void *ctx, struct snapdelta **out,
                        struct kerr_info *err);

/* The next len bytes. */
enum kerr snapdelta_update(struct snapdelta *d, const void *data, size_t len,
                           struct kerr_info *err);

/* After the last byte: KERR_PARSE unless the array was closed. */
enum kerr snapdelta_finish(struct snapdelta *d, struct kerr_info *err);

/* Events seen so far. */
int64_t snapdelta_events(const struct snapdelta *d);

void snapdelta_free(struct snapdelta *d);

#endif
