/*
 * log - structured logging: one JSON object per line on stderr.
 *
 *   {"ts":"2026-11-21T07:25:31.123Z","level":"info","msg":"synced","kind":"Etcd"}
 *
 * Key/value pairs are strings, passed as a NULL-terminated list after the
 * message: log_info("synced", "kind", "Etcd"). The macros add the NULL.
 * Levels: error < warn < info < debug (-v) < trace (-vv).
 *
 * Thread safety: every function may be called from any thread; a line is
 * written with a single write(2) so lines never interleave. log_set_* are
 * meant for start-up, before threads.
 */
#ifndef COMMON_LOG_H
#define COMMON_LOG_H

#include <stdarg.h>

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG, LOG_TRACE };

/* Lines above this level are dropped. Default LOG_INFO. */
void log_set_level(enum log_level level);
enum log_level log_get_level(void);

/* Map a -v count to a level: 0 info, 1 debug, 2+ trace. */
enum log_level log_level_from_verbosity(int v);

/* Parse "error|warn|info|debug|trace"; returns 0 on success, -1 on an unknown name. */
int log_level_parse(const char *name, enum log_level *out);

/* Send lines to fd instead of stderr (tests). -1 restores stderr. */
void log_set_fd(int fd);

/* True when a line at level would be written. */
int log_enabled(enum log_level level);

/* Write msg with key/value string pairs, the list ended by NULL. A NULL value is written as null.
 */
void log_msg(enum log_level level, const char *msg, ...);
void log_msgv(enum log_level level, const char *msg, va_list kv);

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__, (const char *)0)
#define log_warn(...)  log_msg(LOG_WARN, __VA_ARGS__, (const char *)0)
#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__, (const char *)0)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__, (const char *)0)
#define log_trace(...) log_msg(LOG_TRACE, __VA_ARGS__, (const char *)0)

#endif
