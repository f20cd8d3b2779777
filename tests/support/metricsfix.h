/*
 * metricsfix - Prometheus registries (common/metrics) for the Criterion
 * tests: a new registry, its whole exposition text, and the value of one
 * unlabelled sample in such a text.
 *
 * For tests only: failures fail the running test with a Criterion
 * assertion. Thread safety: as metrics_registry_new and metrics_render.
 */
#ifndef TESTS_SUPPORT_METRICSFIX_H
#define TESTS_SUPPORT_METRICSFIX_H

#include "common/metrics.h"

/* A new, empty registry. OWNED by the caller: metrics_registry_free. */
struct metrics_registry *metricsfix_registry(void);

/* The exposition text of reg (1 MiB at most). OWNED by the caller (free). */
char *metricsfix_render(struct metrics_registry *reg);

/* The value of the unlabelled sample name in text; asserts that there is one. */
double metricsfix_sample(const char *text, const char *name);

#endif
