/* testclock - the test-only clock offset of warden-controller; see testclock.h. */
#include "controller/core/testclock.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static atomic_llong last_offset;

static int blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int testclock_parse(const char *s, size_t n, long long *ms)
{
    size_t i = 0, digits = 0;
    long long v = 0;
    int neg = 0;

    while (i < n && blank(s[i]))
        i++;
    if (i < n && s[i] == '-') {
        neg = 1;
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
    long long off;
    FILE *f = path ? fopen(path, "re") : NULL;

    if (f) {
        n = fread(buf, 1, sizeof(buf), f);
        if (n < sizeof(buf) && testclock_parse(buf, n, &off) == 0)
            atomic_store(&last_offset, off);
        fclose(f);
    }
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + atomic_load(&last_offset);
}
