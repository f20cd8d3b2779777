#include "common/log.h"

#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Run one logging call with output captured in a pipe; returns the text. */
static void capture(char *out, size_t n, void (*fn)(void))
{
    int fds[2];
    ssize_t r;

    cr_assert_eq(pipe(fds), 0);
    log_set_fd(fds[1]);
    fn();
    log_set_fd(-1);
    close(fds[1]);
    r = read(fds[0], out, n - 1);
    out[r > 0 ? r : 0] = '\0';
    close(fds[0]);
}

static void info_with_fields(void)
{
    log_set_level(LOG_INFO);
    log_info("cache synced", "kind", "Etcd", "quote", "a\"b\nc");
}

Test(log, writes_one_json_object_per_line)
{
    char text[4096];
    cJSON *o;

    capture(text, sizeof(text), info_with_fields);
    cr_assert_eq(text[strlen(text) - 1], '\n');
    cr_assert_null(strchr(text, '\n') + 1 == text + strlen(text) ? NULL : "two lines");
    o = cJSON_Parse(text);
    cr_assert_not_null(o);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(o, "level")->valuestring, "info");
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(o, "msg")->valuestring, "cache synced");
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(o, "kind")->valuestring, "Etcd");
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(o, "quote")->valuestring, "a\"b\nc");
    cr_assert_eq(strlen(cJSON_GetObjectItemCaseSensitive(o, "ts")->valuestring), 24);
    cJSON_Delete(o);
}

static void debug_at_info(void)
{
    log_set_level(LOG_INFO);
    log_debug("hidden");
    log_warn("shown");
}

Test(log, level_filters)
{
    char text[4096];

    capture(text, sizeof(text), debug_at_info);
    cr_assert_null(strstr(text, "hidden"));
    cr_assert_not_null(strstr(text, "\"level\":\"warn\""));
}

Test(log, verbosity_and_names)
{
    enum log_level l;

    cr_assert_eq(log_level_from_verbosity(0), LOG_INFO);
    cr_assert_eq(log_level_from_verbosity(1), LOG_DEBUG);
    cr_assert_eq(log_level_from_verbosity(5), LOG_TRACE);
    cr_assert_eq(log_level_parse("debug", &l), 0);
    cr_assert_eq(l, LOG_DEBUG);
    cr_assert_eq(log_level_parse("loud", &l), -1);
}
