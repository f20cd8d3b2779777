/*
 * wqfix - work queues (common/workqueue) for the Criterion tests: a queue
 * made or the test failed.
 *
 * For tests only: a failure fails the running test with a Criterion
 * assertion. Thread safety: as wq_new.
 */
#ifndef TESTS_SUPPORT_WQFIX_H
#define TESTS_SUPPORT_WQFIX_H

#include "common/workqueue.h"

/* A new queue with options o (BORROWED; NULL: defaults). OWNED by the caller: wq_free. */
struct wq *wqfix_new(const struct wq_opts *o);

#endif
