/*
 * ksimfix - fixtures for the Criterion tests that talk to an in-process
 * kube-sim (tests/kube-sim/harness.h) over plain HTTPS: start it, one
 * request as the admin with the parsed answer, the status of a GET and a
 * wait for one, a raw body, fault injection, and a watch read in a thread.
 *
 * For tests only: where something fails they fail the running test with a
 * Criterion assertion instead of returning an error. Thread safety: as
 * ksim_harness_call (any thread once started); a struct ksimfix_watch is
 * started and joined by one thread.
 */
#ifndef TESTS_SUPPORT_KSIMFIX_H
#define TESTS_SUPPORT_KSIMFIX_H

#include <pthread.h>
#include <stddef.h>

#include <cJSON.h>

#include "tests/kube-sim/harness.h"

/* Start kube-sim with opts (BORROWED; NULL: no controllers). OWNED by the caller:
 * ksim_harness_stop. */
struct ksim_harness *ksimfix_start(const struct ksim_harness_opts *opts);

/*
 * One request as the user of token (NULL: the admin) with content type ct
 * (NULL: JSON when body is set). *code is the HTTP status; when warning is
 * set it receives the Warning header ("" when none). Returns the body parsed
 * as JSON, or NULL when it is not JSON; OWNED by the caller.
 */
cJSON *ksimfix_call_as(struct ksim_harness *h, const char *token, const char *method,
                       const char *path, const char *ct, const char *body, long *code,
                       char *warning, size_t wsize);

/* ksimfix_call_as as the admin, without the Warning header. */
cJSON *ksimfix_call(struct ksim_harness *h, const char *method, const char *path, const char *ct,
                    const char *body, long *code);

/* The HTTP status of GET path as the admin. */
long ksimfix_status(struct ksim_harness *h, const char *path);

/* Poll GET path until it answers want: 1, or 0 when timeout_ms passed first. */
int ksimfix_await_status(struct ksim_harness *h, const char *path, long want, long timeout_ms);

/* The body of GET path (which must answer 200; transfer timeout 20 s). OWNED by the caller (free).
 */
char *ksimfix_raw(struct ksim_harness *h, const char *path);

/* POST the fault configuration json to /kube-sim/faults; asserts 200. */
void ksimfix_faults(struct ksim_harness *h, const char *json);

/* Wait (10 s at most) until kube-sim serves at least n watches; asserts it. */
void ksimfix_await_watchers(struct ksim_harness *h, size_t n);

/* A GET (a watch, typically) read to its end in a thread of its own. */
struct ksimfix_watch {
    struct ksim_harness *h; /* BORROWED */
    char path[512];
    long timeout_ms; /* transfer timeout of the request */
    char *body;      /* OWNS: the whole answer once joined, NULL on a transport error */
    pthread_t thread;
};

/* Start GET path (BORROWED, copied) with a transfer timeout of timeout_ms in a new thread. */
void ksimfix_watch_start(struct ksimfix_watch *w, struct ksim_harness *h, const char *path,
                         long timeout_ms);

/* Wait for the thread to end; the body it read (or NULL), OWNED by the caller (free). */
char *ksimfix_watch_join(struct ksimfix_watch *w);

#endif
