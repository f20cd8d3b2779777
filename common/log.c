#include "common/log.h"

#include <cJSON.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static atomic_int cur_level = LOG_INFO;
static atomic_int out_fd = -1;

static const char *const level_names[] = { "error", "warn", "info", "debug", "trace" };

void log_set_level(enum log_level level)
{
    atomic_store(&cur_level, (int)level);
}

enum log_level log_get_level(void)
{
    return (enum log_level)atomic_load(&cur_level);
}

enum log_level log_level_from_verbosity(int v)
{
    if (v <= 0)
        return LOG_INFO;
    if (v == 1)
        return LOG_DEBUG;
    return LOG_TRACE;
}

int log_level_parse(const char *name, enum log_level *out)
{
    size_t i;

    for (i = 0; name && i < sizeof(level_names) / sizeof(level_names[0]); i++) {
        if (strcasecmp(name, level_names[i]) == 0) {
            *out = (enum log_level)i;
            return 0;
        }
    }
    return -1;
}

void log_set_fd(int fd)
{
    atomic_store(&out_fd, fd);
}

int log_enabled(enum log_level level)
{
    return (int)level <= atomic_load(&cur_level);
}

static void format_time(char *dst, size_t n)
{
    struct timespec ts;
    struct tm tm;
    size_t len;

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    /* strftime cannot print milliseconds: the date part first, then ".mmmZ". */
    len = strftime(dst, n, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(dst + len, n - len, ".%03dZ", (int)(ts.tv_nsec / 1000000L));
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

/* Fallback when cJSON cannot allocate: a fixed line that says so. */
static void write_oom(int fd)
{
    static const char line[] = "{\"level\":\"error\",\"msg\":\"log: out of memory\"}\n";
    write_all(fd, line, sizeof(line) - 1);
}

void log_msgv(enum log_level level, const char *msg, va_list kv)
{
    char ts[40];
    cJSON *o = NULL;
    char *text = NULL;
    const char *key;
    int fd = atomic_load(&out_fd);

    if (!log_enabled(level))
        return;
    if (fd < 0)
        fd = STDERR_FILENO;
    format_time(ts, sizeof(ts));
    o = cJSON_CreateObject();
    if (!o || !cJSON_AddStringToObject(o, "ts", ts) ||
        !cJSON_AddStringToObject(o, "level", level_names[level]) ||
        !cJSON_AddStringToObject(o, "msg", msg ? msg : ""))
        goto oom;
    while ((key = va_arg(kv, const char *)) != NULL) {
        const char *val = va_arg(kv, const char *);
        cJSON *item = val ? cJSON_CreateString(val) : cJSON_CreateNull();
        if (!item)
            goto oom;
        /* A repeated key keeps the last value, so the line stays valid JSON. */
        cJSON_DeleteItemFromObjectCaseSensitive(o, key);
        cJSON_AddItemToObject(o, key, item);
    }
    text = cJSON_PrintUnformatted(o);
    if (!text)
        goto oom;
    {
        size_t n = strlen(text);
        text[n] = '\n';
        write_all(fd, text, n + 1);
        text[n] = '\0';
    }
    goto out;
oom:
    write_oom(fd);
out:
    free(text);
    cJSON_Delete(o);
}

void log_msg(enum log_level level, const char *msg, ...)
{
    va_list ap;

    va_start(ap, msg);
    log_msgv(level, msg, ap);
    va_end(ap);
}
