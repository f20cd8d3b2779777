/*
 * ctl_table - the capabilities a controller runs (controller/core/ctl_cap.h):
 * the enabled ones of the composition root's list, in its order, and the
 * look-ups the dispatch and the queues make in them: a key kind, the
 * function a step or a key runs (a test's stub, by name, when stubs are
 * set), a service.
 *
 * Ownership: struct ctl_table is embedded by its user (ctl_table_init, no
 * release); the capabilities and stubs are BORROWED and must outlive it.
 * Thread safety: read-only after ctl_table_init.
 */
#ifndef CONTROLLER_CTL_TABLE_H
#define CONTROLLER_CTL_TABLE_H

#include <stddef.h>

#include "common/kerr.h"
#include "controller/core/ctl_cap.h"

struct ctl_table {
    const struct ctl_capability *caps[CTL_CAPS_MAX]; /* BORROWED: the enabled ones */
    size_t n;
    const struct ctl_stub *stubs; /* BORROWED; NULL: the real functions */
};

/*
 * Fill t with the capabilities of caps (NULL-terminated, at most CTL_CAPS_MAX)
 * enabled by cfg (BORROWED), and stubs (NULL-terminated or NULL). KERR_INVAL
 * for too many.
 */
enum kerr ctl_table_init(struct ctl_table *t, const struct ctl_capability *const *caps,
                         const struct ctl_config *cfg, const struct ctl_stub *stubs,
                         struct kerr_info *err);

/* The key kind kind, or NULL. */
const struct ctl_key *ctl_table_key(const struct ctl_table *t, const char *kind);

/* The function step s runs: its stub in tests (NULL without one), else s->fn. */
ctl_etcd_step_fn ctl_table_step_fn(const struct ctl_table *t, const struct ctl_etcd_step *s);

/* The reconcile key k runs: its stub in tests (NULL without one), else k->reconcile. */
ctl_task_step_fn ctl_table_key_fn(const struct ctl_table *t, const struct ctl_key *k);

/* The service name, or NULL. */
const struct ctl_service *ctl_table_service(const struct ctl_table *t, const char *name);

#endif
