/*
 * bkd - the state and the answers of backup-double, the test stand-in for
 * etcd-backup-restore's HTTP API (its server's /snapshot and /healthz routes),
 * independent of HTTP plumbing (main.c serves it with libmicrohttpd).
 *
 *   GET  /healthz                  {"health":true}
 *   *    /snapshot/full[?final=B]  200 + Snapshot JSON (kind Full, startRevision 0)
 *   *    /snapshot/delta           200 + Snapshot JSON (kind Incr, start = last + 1)
 *   GET  /snapshot/latest          {"fullSnapshot":…,"deltaSnapshots":[…]|null}
 *   POST /admin/reply?code=N&count=K   the next K snapshot requests answer N with an
 *                                      empty body (K=0: until changed; code=200 resets)
 *   POST /admin/delay?ms=N         every snapshot request waits N ms before answering
 *   POST /admin/upload?ms=N        a snapshot taken (not a skipped final one) is answered N ms
 *                                  after its createdOn, as the sidecar's upload to the store
 *                                  takes that long after NewSnapshot stamps it
 *   POST /admin/upload?gate=B      B true: a snapshot taken (not a skipped final one) is
 *                                  answered only once /admin/uploaded names it (the test's
 *                                  writer has put it in a store), 60 s at most, then 500 as
 *                                  the sidecar answers a failed upload
 *   POST /admin/uploaded?name=N    snapshot N is in the store (its gated answer goes out)
 *   POST /admin/hold               from now on snapshot requests are held (no answer)
 *   POST /admin/release            answer the held requests and hold no more
 *   GET  /admin/held               the number of requests held now ("N\n")
 *   GET  /admin/requests           one JSON line per snapshot request received:
 *                                  {"method","path","query":{…},"code","lastRevision","time"}
 *                                  (+ "skipped":true for a final request answered with the
 *                                  previous final snapshot)
 *   POST /admin/write[?n=K]        K (1) acknowledged writes to etcd: the last revision ("N\n")
 *   POST /admin/writer?ms=N        a writer on an established connection (the Service's ports
 *                                  do not stop it): a write every N ms; ms=0 stops it and
 *                                  answers once its last write is logged
 *   GET  /admin/writes             one JSON line per acknowledged write: {"revision","time"}
 *
 * As the real sidecar, the snapshot routes accept any method, an unparsable
 * final= (Go's strconv.ParseBool) is 400, unknown paths are 404.
 * Revisions are etcd's: it starts at 7 (data before the first snapshot); a
 * write (the admin routes) takes the next one, and a snapshot that is not
 * final first moves it on by 7 (as if etcd had seen writes since the last
 * one); a final snapshot comes after the traffic cut, at the revision etcd is
 * at. As etcd-backup-restore (v0.28 and later), a final full request while the
 * latest snapshot is a final full one at the current revision takes no new
 * snapshot and answers that one.
 * Times as the sidecar's: a snapshot answered by /snapshot/full or /delta carries createdOn
 * with microseconds (the sidecar's in-memory time.Time), /snapshot/latest lists it in whole
 * seconds (the sidecar parses it from the object name, Full-<start>-<last>-<unix>), and every
 * answer carries a Date header (libmicrohttpd's, as Go's net/http).
 *
 * Ownership: bkd_new returns a state the caller OWNS (bkd_free); a reply
 * OWNS its body (bkd_reply_release). Thread safety: bkd_handle may run on
 * any number of threads at once (one mutex guards the state); the delay is
 * slept outside it, and it and a hold end early once cancelled() says so.
 */
#ifndef BKD_H
#define BKD_H

#include <stddef.h>

#include "common/kerr.h"

struct bkd;

/* One query argument of a request (BORROWED strings). */
struct bkd_arg {
    const char *key;
    const char *value; /* "" for a key without value */
};

/* A request; every pointer BORROWED for the duration of bkd_handle. */
struct bkd_req {
    const char *method;
    const char *path; /* without the query */
    const struct bkd_arg *args;
    size_t nargs;
};

/* An answer. */
struct bkd_reply {
    unsigned int code;
    char *body; /* OWNS (malloc'd, NUL-terminated); NULL only when out of memory (a 500) */
    size_t len;
    const char *content_type; /* static string */
};

/* A fresh state: revision 0, normal answers, no delay, no requests. *out OWNS it. */
enum kerr bkd_new(struct bkd **out, struct kerr_info *err);

/* NULL is a no-op. */
void bkd_free(struct bkd *d);

/*
 * Answer req into r (zeroed first). cancelled (may be NULL) is polled while a
 * delay is slept; arg is passed to it. Never fails: out of memory is a 500.
 */
void bkd_handle(struct bkd *d, const struct bkd_req *req, struct bkd_reply *r,
                int (*cancelled)(void *arg), void *arg);

/* Free the body and zero r. */
void bkd_reply_release(struct bkd_reply *r);

/* Go's strconv.ParseBool: 1 (true), 0 (false) or -1 (not a boolean). */
int bkd_parse_bool(const char *s);

#endif
