#include "tests/support/linerec.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tests/support/testutil.h"

void linerec_init(struct linerec *r)
{
    memset(r, 0, sizeof(*r));
    cr_assert_eq(pthread_mutex_init(&r->mu, NULL), 0);
}

void linerec_release(struct linerec *r)
{
    pthread_mutex_destroy(&r->mu);
}

int linerec_addf(struct linerec *r, const char *fmt, ...)
{
    va_list ap;
    int rc = -1;

    pthread_mutex_lock(&r->mu);
    if (r->n < LINEREC_MAX) {
        va_start(ap, fmt);
        vsnprintf(r->line[r->n++], sizeof(r->line[0]), fmt, ap);
        va_end(ap);
        rc = 0;
    }
    pthread_mutex_unlock(&r->mu);
    return rc;
}

int linerec_has(struct linerec *r, const char *want)
{
    int i, found = 0;

    pthread_mutex_lock(&r->mu);
    for (i = 0; i < r->n && !found; i++)
        found = strcmp(r->line[i], want) == 0;
    pthread_mutex_unlock(&r->mu);
    return found;
}

int linerec_count(struct linerec *r)
{
    int n;

    pthread_mutex_lock(&r->mu);
    n = r->n;
    pthread_mutex_unlock(&r->mu);
    return n;
}

const char *linerec_at(struct linerec *r, int i, char *out, size_t size)
{
    pthread_mutex_lock(&r->mu);
    snprintf(out, size, "%s", i >= 0 && i < r->n ? r->line[i] : "");
    pthread_mutex_unlock(&r->mu);
    return out;
}

void linerec_join(struct linerec *r, int from, int to, char *out, size_t size)
{
    size_t len = 0;
    int i;

    out[0] = '\0';
    pthread_mutex_lock(&r->mu);
    for (i = from; i < to && i < r->n && len < size; i++)
        len += (size_t)snprintf(out + len, size - len, "%s%s", i > from ? "," : "", r->line[i]);
    pthread_mutex_unlock(&r->mu);
    cr_assert_lt(len, size, "lines %d to %d do not fit in %zu bytes", from, to, size);
}

void linerec_await(struct linerec *r, const char *want, long timeout_ms)
{
    TESTUTIL_AWAIT(linerec_has(r, want), timeout_ms);
    cr_assert(linerec_has(r, want), "never saw \"%s\" (%d lines)", want, linerec_count(r));
}
