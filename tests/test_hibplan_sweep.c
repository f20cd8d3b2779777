/*
 * Tests of controller/hibplan, the sweep: every phase and every read-back state
 * of hibernation, each checked against the invariants (never scale down without
 * a successful final snapshot of this cycle unless the break-glass annotation is
 * set, never cut or restore ports that are not there, never a task beside
 * another unfinished one of the Etcd, nothing while the Etcd is being deleted,
 * wake-up only undoes and lifts only the suspension the controller set, waits
 * always come back). test_hibplan.c holds the decision table's rows.
 */
#include <criterion/criterion.h>

#include "controller/hibernation/hibplan.h"
#include "tests/support/hibplanfix.h"

static void check_invariants(const struct hibplan_view *v, struct hibplan_step s)
{
    bool zero = v->sts_present && v->sts_spec == 0 && v->sts_status == 0;

    cr_assert(s.act >= HIBPLAN_DONE && s.act < HIBPLAN_ACT_COUNT);
    if (s.act == HIBPLAN_SCALE && s.replicas == 0)
        cr_assert(v->want && (!v->store || v->counted || v->break_glass),
                  "scale to 0 without a successful final snapshot (phase %s)",
                  hibplan_phase_name(v->phase));
    if (s.act == HIBPLAN_SCALE && s.replicas > 0)
        cr_assert(!v->want && v->phase == HIBPLAN_WAKING && v->sts_spec == 0);
    if (s.act == HIBPLAN_CUT_PORTS)
        cr_assert(v->want && v->svc == HIBPLAN_SVC_OPEN && v->suspended);
    if (s.act == HIBPLAN_SET_SUSPEND)
        cr_assert(v->want && !v->suspended);
    if (s.act == HIBPLAN_SET_CUT_AT)
        cr_assert(v->want && !v->cut_at && v->svc != HIBPLAN_SVC_OPEN);
    if (s.act == HIBPLAN_RESTORE_PORTS)
        cr_assert(!v->want && v->svc_remembered && v->svc != HIBPLAN_SVC_MISSING &&
                  v->svc != HIBPLAN_SVC_BAD);
    if (s.act == HIBPLAN_CREATE_TASK)
        cr_assert(v->want && v->store && v->cut_at && v->svc != HIBPLAN_SVC_OPEN && !v->counted &&
                  !v->other_live && s.attempt == v->attempt + 1 && v->task != HIBPLAN_TASK_LIVE &&
                  v->task != HIBPLAN_TASK_DELETING);
    if (s.act == HIBPLAN_REMOVE_SUSPEND)
        cr_assert(v->suspend_ours &&
                  ((!v->want && v->phase == HIBPLAN_WAKING) ||
                   (v->want && v->spec_signal && zero && v->phase == HIBPLAN_SCALING) ||
                   (v->want && v->spec_signal && v->phase == HIBPLAN_HIBERNATED &&
                    !(v->sts_present && v->sts_spec > 0))));
    if (s.act == HIBPLAN_VOID_CUT)
        cr_assert(
            (v->want && ((v->phase == HIBPLAN_HIBERNATED && v->sts_present && v->sts_spec > 0) ||
                         v->cut_at)) ||
            (!v->want && v->phase == HIBPLAN_NONE && v->cut_at));
    if (s.act == HIBPLAN_VERIFY)
        cr_assert(v->want && v->store && v->counted && !v->verified);
    if (s.act == HIBPLAN_REMOVE_BREAK_GLASS)
        cr_assert(v->break_glass && v->sts_present && v->sts_spec == 0);
    /* a cut that is not the controller's record never lets a scale-down through */
    if (v->want && v->cut_forged && v->phase == HIBPLAN_SNAPSHOT)
        cr_assert(s.act != HIBPLAN_SCALE &&
                  !(s.act == HIBPLAN_SET_PHASE && s.phase == HIBPLAN_SCALING &&
                    v->svc != HIBPLAN_SVC_MISSING && !v->break_glass &&
                    !(v->sts_present && v->sts_spec == 0) && v->store));
    if (s.act == HIBPLAN_REMOVE_PHASE || s.act == HIBPLAN_REMOVE_CUT_AT)
        cr_assert(!v->want && v->phase == HIBPLAN_WAKING);
    if (s.act == HIBPLAN_REMOVE_PHASE)
        cr_assert(!v->suspend_ours && !v->cut_at && !v->failing_noted);
    if (s.act == HIBPLAN_NOTE_FAILING)
        cr_assert(
            v->want && !v->failing_noted &&
            (v->task == HIBPLAN_TASK_FAILED || (v->task == HIBPLAN_TASK_LIVE && v->task_errors)) &&
            (v->phase == HIBPLAN_SNAPSHOT || v->phase == HIBPLAN_FAILED));
    if (s.act == HIBPLAN_CLEAR_FAILING)
        cr_assert(v->failing_noted);
    /* break glass: honoured once an attempt has failed, never before */
    if (s.act == HIBPLAN_SET_PHASE && s.phase == HIBPLAN_SCALING &&
        (v->phase == HIBPLAN_SNAPSHOT || v->phase == HIBPLAN_FAILED) && v->store && !v->counted &&
        !(v->sts_present && v->sts_spec == 0))
        cr_assert(v->break_glass && (v->phase == HIBPLAN_FAILED || v->task == HIBPLAN_TASK_FAILED ||
                                     (v->task == HIBPLAN_TASK_LIVE && v->task_errors)));
    /* waking up: nothing is undone while the cut stands (a snapshot of it would still count) */
    if (!v->want && v->cut_at && v->phase == HIBPLAN_WAKING)
        cr_assert(s.act == HIBPLAN_REMOVE_CUT_AT || s.act == HIBPLAN_DONE,
                  "waking up does %s before the cut is removed", hibplan_act_name(s.act));
    if (s.act == HIBPLAN_RESTORE_PORTS || (s.act == HIBPLAN_SCALE && s.replicas > 0))
        cr_assert(!v->cut_at, "%s with the cut still standing", hibplan_act_name(s.act));
    if (s.act == HIBPLAN_IMT_DELETE)
        cr_assert(v->imm_task && (!v->want || v->imm == 0));
    if (s.act == HIBPLAN_IMT_ENSURE)
        cr_assert(v->want && v->imm > 0 && !v->imm_task && !v->imm_deleting);
    if (s.act == HIBPLAN_WAIT || s.act == HIBPLAN_BAD)
        cr_assert_gt(s.wait_ms, 0);
    if (s.act == HIBPLAN_BAD)
        cr_assert(s.reason && s.note);
    if (v->deleting || (!v->want && v->phase == HIBPLAN_NONE && !v->cut_at))
        cr_assert_eq(s.act, HIBPLAN_DONE);
    if (!v->deleting && !v->want && v->phase == HIBPLAN_NONE && v->cut_at)
        cr_assert_eq(s.act, HIBPLAN_VOID_CUT); /* nobody's cut */
    if (s.act == HIBPLAN_SET_PHASE)
        cr_assert_neq(s.phase, v->phase);
    if (s.act == HIBPLAN_DELETE_TASKS)
        cr_assert((v->want && v->phase == HIBPLAN_CUTTING && v->ntasks > 0) ||
                  (!v->want && v->phase == HIBPLAN_WAKING && v->task == HIBPLAN_TASK_LIVE));
}

Test(hibplan, every_phase_and_read_back_state_keeps_the_invariants)
{
    static const enum hibplan_svc svcs[] = { HIBPLAN_SVC_MISSING, HIBPLAN_SVC_OPEN, HIBPLAN_SVC_CUT,
                                             HIBPLAN_SVC_BAD };
    static const enum hibplan_task tasks[] = { HIBPLAN_TASK_NONE, HIBPLAN_TASK_LIVE,
                                               HIBPLAN_TASK_SUCCEEDED, HIBPLAN_TASK_FAILED,
                                               HIBPLAN_TASK_DELETING };
    static const int imms[] = { -1, 0, 1 };
    static const int sts[][3] = { { 0, 0, 0 }, { 1, 3, 3 }, { 1, 0, 2 }, { 1, 0, 0 }, { 1, 3, 0 } };
    long n = 0;

    for (int m = 0; m < (1 << 16); m++)
        for (int p = 0; p < HIBPLAN_PHASE_COUNT; p++)
            for (size_t a = 0; a < 4; a++)
                for (size_t t = 0; t < 5; t++)
                    for (size_t i = 0; i < 3; i++)
                        for (size_t k = 0; k < 5; k++)
                            for (int at = 0; at < 5; at += 4) {
                                struct hibplan_view v = {
                                    .want = m & 1,
                                    .deleting = (m >> 1) & 1,
                                    .suspended = (m >> 2) & 1,
                                    .store = (m >> 3) & 1,
                                    .svc_remembered = (m >> 4) & 1,
                                    .imm_task = (m >> 5) & 1,
                                    .spec_signal = (m >> 6) & 1,
                                    .suspend_ours = (m >> 7) & 1,
                                    .cut_at = (m >> 8) & 1,
                                    .counted = (m >> 9) & 1,
                                    .other_live = (m >> 10) & 1,
                                    .break_glass = (m >> 11) & 1,
                                    .imm_deleting = (m >> 12) & 1,
                                    .task_errors = (m >> 13) & 1,
                                    .failing_noted = (m >> 14) & 1,
                                    /* shares the bit of failing_noted (a smaller sweep) */
                                    .verified = (m >> 14) & 1,
                                    .cut_forged = (m >> 15) & 1,
                                    .phase = (enum hibplan_phase)p,
                                    .spec_replicas = 3,
                                    .svc = svcs[a],
                                    .task = tasks[t],
                                    .attempt = tasks[t] == HIBPLAN_TASK_NONE ? 0 : at + 1,
                                    .ntasks = tasks[t] == HIBPLAN_TASK_NONE ||
                                                      tasks[t] == HIBPLAN_TASK_DELETING
                                                  ? 0
                                                  : 1,
                                    .ndeleting = tasks[t] == HIBPLAN_TASK_DELETING,
                                    .failed_ago_ms = at * 20000L,
                                    .imm = imms[i],
                                    .sts_present = sts[k][0],
                                    .sts_spec = sts[k][1],
                                    .sts_status = sts[k][2],
                                };
                                struct hibplan_opts o = OPTS;

                                o.verify = (m >> 13) & 1; /* shares the bit of task_errors */
                                check_invariants(&v, hibplan_decide(&v, &o));
                                {
                                    struct hibplan_step z = hibplan_decide(&v, &o);

                                    /* on a snapshot, only the StatefulSet checked, just now */
                                    if (z.act == HIBPLAN_SCALE && z.replicas == 0 && v.store &&
                                        v.counted && !v.break_glass)
                                        cr_assert(v.stamp_ok && (!o.verify || v.verified));
                                }
                                if (o.verify && v.want && v.store && v.counted &&
                                    (v.phase == HIBPLAN_SNAPSHOT || v.phase == HIBPLAN_FAILED) &&
                                    !(v.sts_present && v.sts_spec == 0)) {
                                    struct hibplan_step s = hibplan_decide(&v, &o);

                                    /* the final snapshot holds the last write, or break glass */
                                    if (s.act == HIBPLAN_SET_PHASE && s.phase == HIBPLAN_SCALING)
                                        cr_assert(v.verified || !v.store ||
                                                  (v.break_glass && v.phase == HIBPLAN_FAILED));
                                }
                                n++;
                            }
    cr_assert_eq(n, 65536L * HIBPLAN_PHASE_COUNT * 4 * 5 * 3 * 5 * 2);
}
