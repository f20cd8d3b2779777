/*
 * linerec - a record of text lines that callbacks running on other threads
 * write (informer handlers, typically: "add a@1", "del b@2") and the test
 * reads: is a line there, how many are there, line i, a range joined, and a
 * wait with a deadline for a line to arrive.
 *
 * For tests only: the waits and joins fail the running test with a Criterion
 * assertion. Thread safety: every function locks the record; fields may be
 * read directly only once the writers have stopped.
 */
#ifndef TESTS_SUPPORT_LINEREC_H
#define TESTS_SUPPORT_LINEREC_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>

#define LINEREC_MAX 128 /* lines kept; later ones are dropped */
#define LINEREC_LEN 96  /* bytes per line with the NUL; longer lines are cut */

/* Embedded: linerec_init / linerec_release. */
struct linerec {
    pthread_mutex_t mu;
    char line[LINEREC_MAX][LINEREC_LEN];
    int n; /* lines kept */
};

/* Empty the record. */
void linerec_init(struct linerec *r);

void linerec_release(struct linerec *r);

/* Add a line (printf format): 0, or -1 when the record is full and the line was dropped. */
int linerec_addf(struct linerec *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* 1 when a line equal to want was added, else 0. */
int linerec_has(struct linerec *r, const char *want);

/* Number of lines kept. */
int linerec_count(struct linerec *r);

/* A copy of line i into out ("" past the end). Returns out. */
const char *linerec_at(struct linerec *r, int i, char *out, size_t size);

/* Lines [from, to) joined by ',' into out; asserts that they fit. */
void linerec_join(struct linerec *r, int from, int to, char *out, size_t size);

/* Wait until want was added; asserts that it came within timeout_ms. */
void linerec_await(struct linerec *r, const char *want, long timeout_ms);

#endif
