/*
 * procmetrics - the process metrics of client_golang's process collector,
 * read from /proc/self when the registry renders:
 * process_cpu_seconds_total, process_resident_memory_bytes,
 * process_virtual_memory_bytes, process_open_fds, process_max_fds and
 * process_start_time_seconds (read once, at registration).
 *
 * Thread safety: procmetrics_register may be called from any thread; the
 * values are refreshed by a render hook on the thread calling
 * metrics_render (see common/metrics.h).
 */
#ifndef COMMON_PROCMETRICS_H
#define COMMON_PROCMETRICS_H

#include "common/kerr.h"
#include "common/metrics.h"

/*
 * Register the six metrics in r (BORROWED) and a render hook that refreshes
 * them; its state belongs to r and is freed by metrics_registry_free.
 * Errors as metrics_register (KERR_EXISTS when already registered) and
 * metrics_on_render_owned.
 */
enum kerr procmetrics_register(struct metrics_registry *r, struct kerr_info *err);

#endif
