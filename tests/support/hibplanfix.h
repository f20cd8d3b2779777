/*
 * The fixture of the hibplan tests (test_hibplan, test_hibplan_sleep): the options, a
 * cluster about to hibernate, and assertions on the next step.
 */
#ifndef TESTS_SUPPORT_HIBPLANFIX_H
#define TESTS_SUPPORT_HIBPLANFIX_H

#include <criterion/criterion.h>

#include "controller/hibernation/hibplan.h"

static const struct hibplan_opts OPTS = {
    .retries = 3, .backoff_ms = 1000, .backoff_max_ms = 60000, .poll_ms = 2000
};

/* A cluster about to hibernate: store, 3 replicas, Service open, StatefulSet at 3. */
static inline struct hibplan_view base(void)
{
    struct hibplan_view v = {
        .want = true,
        .phase = HIBPLAN_NONE,
        .store = true,
        .spec_replicas = 3,
        .svc = HIBPLAN_SVC_OPEN,
        .task = HIBPLAN_TASK_NONE,
        .sts_present = true,
        .sts_spec = 3,
        .sts_status = 3,
        .cut_at = true,
    };
    return v;
}

#define EXPECT_ACT(v, a)                                                                          \
    do {                                                                                          \
        struct hibplan_step s_ = hibplan_decide(&(v), &OPTS);                                     \
        cr_assert_eq(s_.act, (a), "line %d: got %s, want %s", __LINE__, hibplan_act_name(s_.act), \
                     hibplan_act_name(a));                                                        \
    } while (0)

#define EXPECT_PHASE(v, p)                                                   \
    do {                                                                     \
        struct hibplan_step s_ = hibplan_decide(&(v), &OPTS);                \
        cr_assert_eq(s_.act, HIBPLAN_SET_PHASE, "line %d: got %s", __LINE__, \
                     hibplan_act_name(s_.act));                              \
        cr_assert_eq(s_.phase, (p), "line %d: got phase %s", __LINE__,       \
                     hibplan_phase_name(s_.phase));                          \
    } while (0)

#endif
