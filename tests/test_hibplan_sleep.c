/*
 * Tests of controller/hibplan, continued: a cut belongs to one sleep (issue 30). A wake-up
 * removes the cut before the ports come back; a scale-up while Hibernated or during
 * ScalingDown voids it; a cut not recorded by the controller is voided and made again; the
 * final snapshot must hold etcd's revision; break glass allows one scale-down; the suspension
 * follows the signal while hibernated; a wake does not scale up a StatefulSet whose
 * spec.ordinals.start moved.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "controller/hibernation/hibplan.h"
#include "tests/support/hibplanfix.h"

/* The report's window: the ports back (or the controller down right after) with the cut still
 * there. */
Test(hibplan_sleep, waking_up_removes_the_cut_before_the_ports_come_back)
{
    struct hibplan_view v = base();

    v.want = false;
    v.phase = HIBPLAN_WAKING;
    v.suspended = v.suspend_ours = true;
    v.svc = HIBPLAN_SVC_CUT;
    v.svc_remembered = true;
    v.sts_spec = v.sts_status = 3; /* already scaled back up (a crash after the scale) */
    v.counted = true;              /* the snapshot of the cycle would let a scale-down through */
    EXPECT_ACT(v, HIBPLAN_REMOVE_CUT_AT);
    v.cut_at = false;
    EXPECT_ACT(v, HIBPLAN_RESTORE_PORTS);
}

/* issue 30: a cut belongs to one sleep */
Test(hibplan_sleep, a_scale_up_while_hibernated_voids_the_cut)
{
    struct hibplan_view v = base();

    v.phase = HIBPLAN_HIBERNATED;
    v.suspended = v.suspend_ours = true;
    v.svc = HIBPLAN_SVC_CUT;
    v.sts_spec = v.sts_status = 0;
    EXPECT_ACT(v, HIBPLAN_DONE);
    v.sts_spec = 3; /* Gardener woke it (or etcd-druid, warden-controller down) */
    EXPECT_ACT(v, HIBPLAN_VOID_CUT);
    v.cut_at = false; /* even without a cut: the Etcd is awake again */
    EXPECT_ACT(v, HIBPLAN_VOID_CUT);
    /* still wanted: a new cycle, from the start */
    v.phase = HIBPLAN_WAKING;
    EXPECT_PHASE(v, HIBPLAN_CUTTING);
}

Test(hibplan_sleep, a_cut_not_recorded_by_the_controller_is_voided_and_made_again)
{
    struct hibplan_view v = base();

    v.want = false; /* written on an Etcd that is not hibernating */
    EXPECT_ACT(v, HIBPLAN_VOID_CUT);
    v.cut_at = false;
    EXPECT_ACT(v, HIBPLAN_DONE);
    v = base();

    v.phase = HIBPLAN_SNAPSHOT;
    v.suspended = v.suspend_ours = true;
    v.svc = HIBPLAN_SVC_CUT;
    v.task = HIBPLAN_TASK_LIVE;
    v.attempt = 1;
    v.cut_forged = true; /* a forged traffic-cut-at: what it counts is not counted */
    EXPECT_ACT(v, HIBPLAN_VOID_CUT);
    v.cut_at = false;
    v.cut_forged = false;
    EXPECT_ACT(v, HIBPLAN_SET_CUT_AT);
    v.phase = HIBPLAN_CUTTING;
    v.cut_at = true;
    v.cut_forged = true;
    EXPECT_ACT(v, HIBPLAN_VOID_CUT);
}

Test(hibplan_sleep, the_final_snapshot_must_hold_etcds_revision)
{
    struct hibplan_view v = base();
    struct hibplan_opts o = OPTS;
    struct hibplan_step s;

    o.verify = true;
    v.phase = HIBPLAN_SNAPSHOT;
    v.suspended = v.suspend_ours = true;
    v.svc = HIBPLAN_SVC_CUT;
    v.task = HIBPLAN_TASK_SUCCEEDED;
    v.attempt = 1;
    v.counted = true;
    s = hibplan_decide(&v, &o);
    cr_assert_eq(s.act, HIBPLAN_VERIFY);
    v.verified = true;
    s = hibplan_decide(&v, &o);
    cr_assert(s.act == HIBPLAN_SET_PHASE && s.phase == HIBPLAN_SCALING);
    v.verified = false;
    v.phase = HIBPLAN_FAILED; /* etcd kept moving */
    s = hibplan_decide(&v, &o);
    cr_assert_eq(s.act, HIBPLAN_VERIFY);
    v.break_glass = true;
    s = hibplan_decide(&v, &o);
    cr_assert(s.act == HIBPLAN_SET_PHASE && s.phase == HIBPLAN_SCALING);
}

/* issue 30: a scale-up during ScalingDown voids the cut as one while Hibernated does */
Test(hibplan_sleep, a_scale_up_during_scaling_down_voids_the_cut)
{
    struct hibplan_view v = base();
    struct hibplan_opts o = OPTS;
    struct hibplan_step s;

    o.verify = true;
    v.phase = HIBPLAN_SCALING;
    v.suspended = v.suspend_ours = true;
    v.svc = HIBPLAN_SVC_CUT;
    v.task = HIBPLAN_TASK_SUCCEEDED;
    v.attempt = 1;
    v.counted = true;
    v.stamp_ok = true; /* the StatefulSet as it was checked */
    s = hibplan_decide(&v, &o);
    cr_assert_eq(s.act, HIBPLAN_VERIFY); /* checked again in the call that scales */
    v.verified = true;
    s = hibplan_decide(&v, &o);
    cr_assert(s.act == HIBPLAN_SCALE && s.replicas == 0);
    v.sts_spec = 0; /* scaled down; pods going */
    s = hibplan_decide(&v, &o);
    cr_assert_eq(s.act, HIBPLAN_WAIT);
    v.stamp_ok = false; /* the scale to 0 moved the generation: nothing to guard at 0 */
    s = hibplan_decide(&v, &o);
    cr_assert_eq(s.act, HIBPLAN_WAIT);
    v.sts_spec = 3; /* scaled up before Hibernated (etcd-druid, a person) */
    s = hibplan_decide(&v, &o);
    cr_assert_eq(s.act, HIBPLAN_VOID_CUT);
    v.verified = false; /* a later call, the same: never scaled down on the old check */
    s = hibplan_decide(&v, &o);
    cr_assert_eq(s.act, HIBPLAN_VOID_CUT);
    v.sts_status = 0; /* changed before the controller's own scale-down: the same */
    s = hibplan_decide(&v, &o);
    cr_assert_eq(s.act, HIBPLAN_VOID_CUT);
    /* still wanted: a new cycle, from the start */
    v.phase = HIBPLAN_WAKING;
    v.cut_at = false;
    s = hibplan_decide(&v, &o);
    cr_assert(s.act == HIBPLAN_SET_PHASE && s.phase == HIBPLAN_CUTTING);
}

Test(hibplan_sleep, break_glass_allows_one_scale_down)
{
    struct hibplan_view v = base();

    v.phase = HIBPLAN_SCALING;
    v.suspended = v.suspend_ours = true;
    v.svc = HIBPLAN_SVC_CUT;
    v.break_glass = true;
    v.task = HIBPLAN_TASK_FAILED;
    v.attempt = 3;
    EXPECT_ACT(v, HIBPLAN_SCALE);
    v.sts_spec = v.sts_status = 0;
    EXPECT_ACT(v, HIBPLAN_REMOVE_BREAK_GLASS);
    v.break_glass = false;
    EXPECT_PHASE(v, HIBPLAN_HIBERNATED);
}

/* break glass set although the final snapshot counted: removed after this scale-down too, or the
 * next sleep's scale-down would go without the check of etcd's revision */
Test(hibplan_sleep, break_glass_unneeded_is_removed_too)
{
    struct hibplan_view v = base();

    v.phase = HIBPLAN_SCALING;
    v.suspended = v.suspend_ours = true;
    v.svc = HIBPLAN_SVC_CUT;
    v.break_glass = true;
    v.counted = v.stamp_ok = true;
    v.sts_spec = v.sts_status = 0;
    EXPECT_ACT(v, HIBPLAN_REMOVE_BREAK_GLASS);
    v.break_glass = false;
    EXPECT_PHASE(v, HIBPLAN_HIBERNATED);
}

Test(hibplan_sleep, suspension_follows_the_signal_while_hibernated)
{
    struct hibplan_view v = base();

    v.phase = HIBPLAN_HIBERNATED;
    v.svc = HIBPLAN_SVC_CUT;
    v.sts_spec = v.sts_status = 0;
    v.suspended = false; /* the annotation path: removed by `druidctl reconciliation resume` */
    v.suspend_ours = true;
    EXPECT_ACT(v, HIBPLAN_SET_SUSPEND);
    /* hibernated by annotation, then spec.replicas: 0, then the annotation removed */
    v.suspended = true;
    v.spec_signal = true;
    EXPECT_ACT(v, HIBPLAN_REMOVE_SUSPEND);
    v.suspended = v.suspend_ours = false;
    EXPECT_ACT(v, HIBPLAN_DONE);
}

/* issue 30: a StatefulSet whose spec.ordinals.start moved while asleep is not woken on it */
Test(hibplan_sleep, a_wake_does_not_scale_up_a_statefulset_whose_ordinals_moved)
{
    struct hibplan_view v = base();
    struct hibplan_step s;
    char note[512];

    v.want = false;
    v.phase = HIBPLAN_WAKING;
    v.cut_at = false;
    v.suspended = v.suspend_ours = true;
    v.svc = HIBPLAN_SVC_CUT;
    v.svc_remembered = true;
    v.sts_spec = v.sts_status = 0;
    v.spec_replicas = 3;
    v.sts_moved = true; /* members 3..5 would start on new, empty claims */
    s = hibplan_decide(&v, NULL);
    cr_assert_eq(s.act, HIBPLAN_BAD, "%s", hibplan_act_name(s.act));
    cr_assert_str_eq(s.reason, "OrdinalsMoved");
    cr_assert(s.wait_ms > 0);
    cr_expect(strstr(hibplan_note(&s, "etcd-main", note, sizeof(note)),
                     "StatefulSet etcd-main has spec.ordinals.start set"),
              "%s", note);
    v.sts_moved = false; /* set back to 0 */
    s = hibplan_decide(&v, NULL);
    cr_assert_eq(s.act, HIBPLAN_SCALE, "%s", hibplan_act_name(s.act));
    cr_assert_eq(s.replicas, 3);
}

/* issue 30: woken behind its back (warden-controller down) and scaled back to 0: the
 * StatefulSet's generation moved past the scale to 0 on the final snapshot */
Test(hibplan_sleep, a_wake_and_scale_down_while_away_voids_the_cut)
{
    struct hibplan_view v = base();

    v.phase = HIBPLAN_HIBERNATED;
    v.suspended = v.suspend_ours = true;
    v.svc = HIBPLAN_SVC_CUT;
    v.sts_spec = v.sts_status = 0;
    EXPECT_ACT(v, HIBPLAN_DONE);
    v.stamp_moved = true; /* at 0 again, two generations later */
    EXPECT_ACT(v, HIBPLAN_VOID_CUT);
    v.phase = HIBPLAN_WAKING;
    EXPECT_PHASE(v, HIBPLAN_CUTTING);
}

/* issue 30: etcd-druid rolls the template of a StatefulSet asleep at 0 (Gardener's path, not
 * suspended): one change, never above 0, is no wake; the stamp follows it */
Test(hibplan_sleep, a_template_change_at_zero_keeps_the_sleep)
{
    struct hibplan_view v = base();

    v.phase = HIBPLAN_HIBERNATED;
    v.spec_signal = true;
    v.suspended = v.suspend_ours = false;
    v.svc = HIBPLAN_SVC_CUT;
    v.sts_spec = v.sts_status = 0;
    v.imm = 1;
    v.imm_task = true;
    EXPECT_ACT(v, HIBPLAN_DONE);
    v.stamp_next = true; /* one generation past the stamp, at 0 */
    EXPECT_ACT(v, HIBPLAN_RESTAMP);
    v.stamp_next = false; /* moved: asleep as it says */
    EXPECT_ACT(v, HIBPLAN_DONE);
    /* the next change is two generations past the old stamp, one past the moved one */
    v.stamp_next = true;
    EXPECT_ACT(v, HIBPLAN_RESTAMP);
    /* not moved in time (warden-controller away for two changes): a wake may hide there */
    v.stamp_next = false;
    v.stamp_moved = true;
    EXPECT_ACT(v, HIBPLAN_VOID_CUT);
    /* one change that scaled it up is a wake, however far the stamp */
    v.stamp_moved = false;
    v.sts_spec = 3;
    EXPECT_ACT(v, HIBPLAN_VOID_CUT);
}

/* The stamp follows warden-controller's own scale to 0 before the spec path hands the
 * StatefulSet back to etcd-druid (whose template change would otherwise be two generations
 * past the checked one). */
Test(hibplan_sleep, the_stamp_follows_the_scale_to_zero_before_druid_is_released)
{
    struct hibplan_view v = base();

    v.phase = HIBPLAN_SCALING;
    v.spec_signal = true;
    v.suspended = v.suspend_ours = true;
    v.svc = HIBPLAN_SVC_CUT;
    v.counted = v.verified = true;
    v.stamp_ok = true;
    v.sts_spec = 0;
    v.sts_status = 1;
    v.stamp_ok = false;
    v.stamp_next = true;
    EXPECT_ACT(v, HIBPLAN_WAIT); /* pods still there: not yet */
    v.sts_status = 0;
    EXPECT_ACT(v, HIBPLAN_RESTAMP);
    v.stamp_next = false;
    EXPECT_ACT(v, HIBPLAN_REMOVE_SUSPEND);
}
