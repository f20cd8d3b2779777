/*
 * testclock - TEST ONLY: the wall clock warden-controller's steps go by (ctl_opts.now_ms:
 * the EtcdBackupSchedule fire times) moved by an offset read from a file, or stopped at a
 * time read from it, so that an end-to-end test moves a schedule to its next fire time at
 * once instead of waiting for it, and no fire time passes while a slow machine runs a step.
 *
 * It is on only when the environment variable TESTCLOCK_ENV names a file (no flag, not in
 * --help, never set by the chart or the images; warden-controller logs a warning at start
 * when it is on). The file holds a whole number of milliseconds added to the real clock (an
 * optional '-', 1 to 15 digits), or '@' and 1 to 15 digits: the clock stopped at that Unix
 * time in milliseconds; blanks or a line end around them. It is read on every call; a file
 * that is missing or holds anything else keeps the last setting read (offset 0 at first).
 *
 * Ownership: arguments BORROWED. Thread safety: thread-safe (the last setting is under a mutex).
 */
#ifndef CONTROLLER_TESTCLOCK_H
#define CONTROLLER_TESTCLOCK_H

#include <stddef.h>

#define TESTCLOCK_ENV "WARDEN_TEST_CLOCK_OFFSET_FILE"

/* The setting in s (n bytes, not NUL-terminated) into *ms and *stopped (1: *ms is the Unix
 * time the clock stands at; 0: the offset added to the real clock): 0, or -1 when it is not
 * one (the outputs left alone). */
int testclock_parse(const char *s, size_t n, long long *ms, int *stopped);

/* The offset file TESTCLOCK_ENV names, or NULL when the test clock is off. */
const char *testclock_file(void);

/* The real clock plus the offset, or the time the clock stands at, Unix milliseconds (a
 * ctl_opts.now_ms). */
long long testclock_now_ms(void);

#endif
