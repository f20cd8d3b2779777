/* testclock - the test-only clock offset of warden-controller; see testclock.h. */
#include "controller/core/testclock.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t last_lock = PTHREAD_MUTEX_INITIALIZER;
static long long last_ms; /* the last setting read: an offset, or the time it stands at */
static int last_stopped;

static int blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int testclock_parse(const char *s, size_t n, long long *ms, int *stopped)
{
    size_t i = 0, digits = 0;
    long long v = 0;
    int neg = 0, at = 0;

    while (i < n && blank(s[i]))
        i++;
    if (i < n && (s[i] == '-' || s[i] == '@')) {
        neg = s[i] == '-';
        at = s[i] == '@';
        i++;
    }
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
        if (digits == 15)
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    while (i < n && blank(s[i]))
        i++;
    if (digits == 0 || i != n)
        return -1;
    *ms = neg ? -v : v;
    *stopped = at;
    return 0;
}

const char *testclock_file(void)
{
    const char *f = getenv(TESTCLOCK_ENV);

    return f && *f ? f : NULL;
}

long long testclock_now_ms(void)
{
    const char *path = testclock_file();
    struct timespec ts;
    char buf[64];
    size_t n = 0;
    long long ms, now;
    int stopped;
    FILE *f = path ? fopen(path, "re") : NULL;

    if (f)
        n = fread(buf, 1, sizeof(buf), f);
    pthread_mutex_lock(&last_lock);
    if (f && n < sizeof(buf) && testclock_parse(buf, n, &ms, &stopped) == 0) {
        last_ms = ms;
        last_stopped = stopped;
    }
    ms = last_ms;
    stopped = last_stopped;
    pthread_mutex_unlock(&last_lock);
    if (f)
        fclose(f);
    if (stopped)
        return ms;
    clock_gettime(CLOCK_REALTIME, &ts);
    now = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    return now + ms;
}
