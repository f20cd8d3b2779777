/* hquiet - the revision check's quiet-second decision (see hquiet.h). */
#include "controller/hibernation/hquiet.h"

#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "common/kjson.h"
#include "common/ktime.h"

#define MS_PER_SEC    1000LL
#define IMF_FIXDATE_N 29 /* "Sun, 06 Nov 1994 08:49:37 GMT" */

/* The <unix> of a snapshot name <Kind>-<start>-<last>-<unix>[...]; -1 when not one. */
static int64_t name_unix(const char *name)
{
    const char *p = name;
    int64_t v = -1;
    int dash;

    if (!p || (strncmp(p, "Full-", 5) != 0 && strncmp(p, "Incr-", 5) != 0))
        return -1;
    p += 5;
    for (dash = 0; dash < 2; dash++) { /* <start>-<last>- */
        if (*p < '0' || *p > '9')
            return -1;
        while (*p >= '0' && *p <= '9')
            p++;
        if (*p++ != '-')
            return -1;
    }
    if (*p < '0' || *p > '9')
        return -1;
    for (v = 0; *p >= '0' && *p <= '9'; p++) {
        if (v > (INT64_MAX / MS_PER_SEC - 10) / 10)
            return -1; /* no time in ms holds it */
        v = v * 10 + (*p - '0');
    }
    return (*p == '\0' || *p == '.') ? v : -1;
}

int64_t hquiet_snapshot_ms(const cJSON *snap)
{
    const char *created = kjson_get_str(snap, "createdOn");
    const char *name = kjson_get_str(snap, "snapName");
    int64_t unix_s = name ? name_unix(name) : -1;
    struct timespec ts;

    if (name && unix_s < 0)
        return -1; /* a name that is not a snapshot's */
    if (!created)
        return unix_s < 0 ? -1 : (unix_s + 1) * MS_PER_SEC;
    if (ktime_parse(created, &ts, NULL) != KERR_OK || ts.tv_sec < 0 ||
        ts.tv_sec > INT64_MAX / MS_PER_SEC - 2 || (unix_s >= 0 && unix_s != (int64_t)ts.tv_sec))
        return -1;
    if (ts.tv_nsec == 0) /* a whole second, cut down: its end */
        return ((int64_t)ts.tv_sec + 1) * MS_PER_SEC;
    return (int64_t)ts.tv_sec * MS_PER_SEC + (ts.tv_nsec + 999999) / 1000000;
}

int64_t hquiet_date_ms(const char *date)
{
    time_t t;

    /* IMF-fixdate only, which RFC 9110 has every sender generate: "Sun, 06 Nov 1994 ... GMT" */
    if (!date || strlen(date) != IMF_FIXDATE_N || date[3] != ',' ||
        strcmp(date + IMF_FIXDATE_N - 4, " GMT") != 0)
        return -1;
    t = curl_getdate(date, NULL);
    if (t < 0 || (int64_t)t > INT64_MAX / MS_PER_SEC)
        return -1;
    return (int64_t)t * MS_PER_SEC;
}

/* The answer is the stored snapshot itself: same name, same revision. */
static int same_snapshot(const cJSON *a, const cJSON *b)
{
    const char *na = kjson_get_str(a, "snapName"), *nb = kjson_get_str(b, "snapName");

    return na && nb && *na && strcmp(na, nb) == 0;
}

enum hquiet_verdict hquiet_decide(const struct hquiet_in *in, long *wait_ms)
{
    int64_t start, quiet;

    *wait_ms = 0;
    if (in->answer_rev > in->stored_rev)
        return HQUIET_MOVED;
    if (!same_snapshot(in->answer, in->stored))
        return HQUIET_AGAIN; /* its Date is after an upload: not the end of the interval */
    if (in->waited)
        return HQUIET_QUIET; /* the wait covered what the sidecar's times had not */
    start = hquiet_snapshot_ms(in->answer);
    if (start < 0 || in->date_ms < 0) {
        *wait_ms = HQUIET_MS; /* a time that cannot be read: the whole second */
        return HQUIET_WAIT;
    }
    quiet = in->date_ms - start;
    if (quiet >= HQUIET_MS)
        return HQUIET_QUIET;
    *wait_ms = quiet <= 0 ? HQUIET_MS : (long)(HQUIET_MS - quiet);
    return HQUIET_WAIT;
}

const char *hquiet_verdict_name(enum hquiet_verdict v)
{
    switch (v) {
    case HQUIET_QUIET:
        return "quiet";
    case HQUIET_WAIT:
        return "wait";
    case HQUIET_AGAIN:
        return "again";
    case HQUIET_MOVED:
        return "moved";
    }
    return "?";
}
