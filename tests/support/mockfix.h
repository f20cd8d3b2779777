/*
 * mockfix - the fixture most tests of the API client's users share: a
 * scripted server (tests/support/mockapi) and a common/k8s client pointed at
 * it, plus a look at the JSON body of a recorded request.
 *
 * For tests only: where something fails they fail the running test with a
 * Criterion assertion instead of returning an error. Thread safety: start
 * and stop from the test's main thread; mockfix_body as mockapi_request.
 */
#ifndef TESTS_SUPPORT_MOCKFIX_H
#define TESTS_SUPPORT_MOCKFIX_H

#include <stddef.h>

#include <cJSON.h>

#include "common/k8s.h"
#include "tests/support/mockapi.h"

/*
 * Start a mockapi server (*m) and a client of it (*c) sending bearer token
 * (BORROWED, copied; NULL: no Authorization header) with options o (BORROWED;
 * NULL: defaults). Both OWNED by the caller: mockfix_stop. The client makes
 * no request on its own, so replies may be queued after this.
 */
void mockfix_start(struct mockapi **m, struct k8s_client **c, const char *token,
                   const struct k8s_client_opts *o);

/* Free the client, then the server. NULLs are fine. */
void mockfix_stop(struct mockapi *m, struct k8s_client *c);

/*
 * The body of the i-th recorded request parsed as JSON, asserting that the
 * request exists, used method and (path not NULL) went to path. OWNED by the
 * caller (cJSON_Delete).
 */
cJSON *mockfix_body(struct mockapi *m, size_t i, const char *method, const char *path);

#endif
