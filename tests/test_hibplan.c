/*
 * Tests of controller/hibplan: the decision table of hibernation. Rows
 * give the expected next action for the states of each phase; the
 * exhaustive sweep over every phase and every read-back state, checked
 * against the invariants, is test_hibplan_sweep.c.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "controller/hibernation/hibplan.h"
#include "tests/support/hibplanfix.h"

Test(hibplan, phase_names_round_trip)
{
    for (int p = HIBPLAN_CUTTING; p < HIBPLAN_UNKNOWN; p++)
        cr_assert_eq(hibplan_phase_parse(hibplan_phase_name((enum hibplan_phase)p)), p);
    cr_assert_eq(hibplan_phase_parse(NULL), HIBPLAN_NONE);
    cr_assert_eq(hibplan_phase_parse("Sleeping"), HIBPLAN_UNKNOWN);
    cr_assert_eq(hibplan_phase_parse(""), HIBPLAN_UNKNOWN);
    cr_assert_str_eq(hibplan_phase_name(HIBPLAN_SNAPSHOT), "FinalSnapshot");
}

Test(hibplan, hibernate_starts_with_cutting_traffic_from_any_other_phase)
{
    struct hibplan_view v = base();
    enum hibplan_phase from[] = { HIBPLAN_NONE, HIBPLAN_WAKING, HIBPLAN_UNKNOWN };

    for (size_t i = 0; i < sizeof(from) / sizeof(from[0]); i++) {
        v.phase = from[i];
        EXPECT_PHASE(v, HIBPLAN_CUTTING);
    }
}

Test(hibplan, cutting_traffic_suspends_cuts_cleans_then_moves_on)
{
    struct hibplan_view v = base();

    v.phase = HIBPLAN_CUTTING;
    v.cut_at = false; /* cleared when the phase was set */
    EXPECT_ACT(v, HIBPLAN_SET_SUSPEND);
    v.suspended = v.suspend_ours = true;
    EXPECT_ACT(v, HIBPLAN_CUT_PORTS);
    v.svc = HIBPLAN_SVC_CUT;
    v.svc_remembered = true;
    EXPECT_ACT(v, HIBPLAN_SET_CUT_AT); /* after the cut: what counts is taken after it */
    v.cut_at = true;
    v.ntasks = 2; /* tasks of an earlier cycle prove nothing about this one */
    v.task = HIBPLAN_TASK_SUCCEEDED;
    v.attempt = 2;
    EXPECT_ACT(v, HIBPLAN_DELETE_TASKS);
    v.ntasks = 1; /* one deleted already, one left */
    v.ndeleting = 1;
    EXPECT_ACT(v, HIBPLAN_DELETE_TASKS);
    v.ntasks = 0;
    v.ndeleting = 2;
    v.task = HIBPLAN_TASK_DELETING;
    EXPECT_ACT(v, HIBPLAN_WAIT);
    v.ndeleting = 0;
    v.task = HIBPLAN_TASK_NONE;
    v.attempt = 0;
    EXPECT_PHASE(v, HIBPLAN_SNAPSHOT);
    v.store = false; /* etcd-druid #922: no store, no snapshot */
    EXPECT_PHASE(v, HIBPLAN_SCALING);
}

Test(hibplan, bad_service_is_reported_and_nothing_changes)
{
    struct hibplan_view v = base();
    struct hibplan_step s;

    v.phase = HIBPLAN_CUTTING;
    v.suspended = true;
    v.svc = HIBPLAN_SVC_BAD;
    s = hibplan_decide(&v, &OPTS);
    cr_assert_eq(s.act, HIBPLAN_BAD);
    cr_assert_str_eq(s.reason, "ClientServicePorts");
    cr_assert_gt(s.wait_ms, 0);
    v.svc = HIBPLAN_SVC_MISSING;
    s = hibplan_decide(&v, &OPTS);
    cr_assert_eq(s.act, HIBPLAN_BAD);
    cr_assert_str_eq(s.reason, "ClientServiceMissing");
}

Test(hibplan, missing_objects_are_named_with_a_next_step)
{
    struct hibplan_view v = base();
    struct hibplan_step s;
    char note[512], tiny[8];

    v.phase = HIBPLAN_CUTTING;
    v.suspended = true;
    v.svc = HIBPLAN_SVC_MISSING;
    s = hibplan_decide(&v, &OPTS);
    hibplan_note(&s, "etcd-main", note, sizeof(note));
    cr_assert_null(strstr(note, "<etcd>"), "%s", note);
    cr_assert_not_null(strstr(note, "Service etcd-main-client does not exist"), "%s", note);
    cr_assert_not_null(strstr(note, "kubectl get service etcd-main-client"), "%s", note);
    cr_assert_not_null(strstr(note, "etcd-druid"), "%s", note);
    cr_assert_str_eq(hibplan_note(&s, "etcd-main", tiny, sizeof(tiny)), "the cli");
    s.note = "<etcd>";
    cr_assert_str_eq(hibplan_note(&s, "a-very-long-name", tiny, sizeof(tiny)), "a-very-");
}

Test(hibplan, final_snapshot_creates_waits_and_retries_with_backoff)
{
    struct hibplan_view v = base();
    struct hibplan_step s;

    v.phase = HIBPLAN_SNAPSHOT;
    v.suspended = true;
    v.svc = HIBPLAN_SVC_CUT;
    s = hibplan_decide(&v, &OPTS);
    cr_assert_eq(s.act, HIBPLAN_CREATE_TASK);
    cr_assert_eq(s.attempt, 1);
    v.task = HIBPLAN_TASK_LIVE;
    v.attempt = 1;
    v.ntasks = 1;
    s = hibplan_decide(&v, &OPTS);
    cr_assert_eq(s.act, HIBPLAN_WAIT);
    cr_assert_eq(s.wait_ms, 2000);
    v.task = HIBPLAN_TASK_FAILED;
    v.failed_ago_ms = 200;
    EXPECT_ACT(v, HIBPLAN_NOTE_FAILING); /* the first failed attempt is told at once */
    v.failing_noted = true;
    s = hibplan_decide(&v, &OPTS);
    cr_assert_eq(s.act, HIBPLAN_WAIT);
    cr_assert_eq(s.wait_ms, 800);
    v.failed_ago_ms = 1000;
    s = hibplan_decide(&v, &OPTS);
    cr_assert_eq(s.act, HIBPLAN_CREATE_TASK);
    cr_assert_eq(s.attempt, 2);
    v.attempt = 2;
    v.failed_ago_ms = 1500; /* second retry waits 2 s */
    EXPECT_ACT(v, HIBPLAN_WAIT);
    v.attempt = 3; /* --snapshot-retries attempts failed */
    EXPECT_PHASE(v, HIBPLAN_FAILED);
    v.task = HIBPLAN_TASK_SUCCEEDED;
    v.counted = true;
    EXPECT_PHASE(v, HIBPLAN_SCALING);
    v.counted = false;
    v.task = HIBPLAN_TASK_DELETING;
    EXPECT_ACT(v, HIBPLAN_WAIT);
    v.task = HIBPLAN_TASK_FAILED;
    v.svc = HIBPLAN_SVC_OPEN; /* ports came back meanwhile: the old time goes, cut again */
    EXPECT_ACT(v, HIBPLAN_VOID_CUT);
    v.cut_at = false;
    EXPECT_ACT(v, HIBPLAN_CUT_PORTS);
    v.svc = HIBPLAN_SVC_CUT;
    v.cut_at = false; /* the cut time removed meanwhile: written again */
    EXPECT_ACT(v, HIBPLAN_SET_CUT_AT);
}

Test(hibplan, final_snapshot_coexists_with_etcd_druids_pre_sync_task)
{
    struct hibplan_view v = base();
    struct hibplan_step s;

    v.phase = HIBPLAN_SNAPSHOT;
    v.suspended = true;
    v.svc = HIBPLAN_SVC_CUT;
    v.other_live = true; /* etcd-druid's pre-sync task is unfinished: ours would be rejected */
    s = hibplan_decide(&v, &OPTS);
    cr_assert_eq(s.act, HIBPLAN_WAIT);
    cr_assert_eq(s.wait_ms, 2000);
    v.task = HIBPLAN_TASK_FAILED; /* a retry waits for it as well */
    v.failing_noted = true;
    v.attempt = 1;
    v.failed_ago_ms = 100000;
    EXPECT_ACT(v, HIBPLAN_WAIT);
    v.other_live = false; /* it finished; taken before the cut, it does not count */
    s = hibplan_decide(&v, &OPTS);
    cr_assert_eq(s.act, HIBPLAN_CREATE_TASK);
    cr_assert_eq(s.attempt, 2);
    v.counted = true; /* it Succeeded after the cut: it is this cycle's snapshot */
    EXPECT_PHASE(v, HIBPLAN_SCALING);
    v.phase = HIBPLAN_SCALING;
    v.stamp_ok = true;                    /* the StatefulSet the snapshot was checked against */
    EXPECT_ACT(v, HIBPLAN_CLEAR_FAILING); /* our failed attempt's condition goes */
    v.failing_noted = false;
    s = hibplan_decide(&v, &OPTS);
    cr_assert_eq(s.act, HIBPLAN_SCALE);
    cr_assert_eq(s.replicas, 0);
    v.counted = false; /* our own Succeeded task from before the cut proves nothing */
    v.task = HIBPLAN_TASK_SUCCEEDED;
    EXPECT_PHASE(v, HIBPLAN_SNAPSHOT);
    v.phase = HIBPLAN_SNAPSHOT;
    EXPECT_ACT(v, HIBPLAN_CREATE_TASK);
}

Test(hibplan, a_statefulset_already_at_zero_hibernates_without_a_snapshot)
{
    struct hibplan_view v = base();

    v.phase = HIBPLAN_SNAPSHOT;
    v.suspended = true;
    v.svc = HIBPLAN_SVC_CUT;
    v.sts_spec = v.sts_status = 0; /* nothing runs: its last snapshot in the store is its state */
    v.imm = 1;
    EXPECT_PHASE(v, HIBPLAN_SCALING);
    v.phase = HIBPLAN_FAILED;
    v.task = HIBPLAN_TASK_FAILED;
    v.attempt = 5;
    EXPECT_PHASE(v, HIBPLAN_SCALING);
    v.phase = HIBPLAN_SCALING;
    EXPECT_ACT(v, HIBPLAN_IMT_ENSURE);
    v.imm_task = true;
    EXPECT_PHASE(v, HIBPLAN_HIBERNATED);
    v.sts_spec = 3; /* above 0 but not Ready: no proof of its state, keep trying */
    v.sts_status = 1;
    v.phase = HIBPLAN_SNAPSHOT;
    v.failing_noted = true;
    EXPECT_PHASE(v, HIBPLAN_FAILED);
}

Test(hibplan, break_glass_scales_down_as_soon_as_an_attempt_has_failed)
{
    struct hibplan_view v = base();
    struct hibplan_step s;

    v.phase = HIBPLAN_SNAPSHOT;
    v.suspended = true;
    v.svc = HIBPLAN_SVC_CUT;
    v.break_glass = true;
    EXPECT_ACT(v, HIBPLAN_CREATE_TASK); /* a snapshot is still tried first */
    v.task = HIBPLAN_TASK_LIVE;
    v.attempt = v.ntasks = 1;
    EXPECT_ACT(v, HIBPLAN_WAIT); /* no call has failed yet */
    /* a dead sidecar: the call failed, the task stays InProgress until its timeout */
    v.task_errors = true;
    EXPECT_ACT(v, HIBPLAN_NOTE_FAILING);
    v.failing_noted = true;
    EXPECT_PHASE(v, HIBPLAN_SCALING); /* not 3 x 15 minutes later */
    v.phase = HIBPLAN_SCALING;
    EXPECT_ACT(v, HIBPLAN_CLEAR_FAILING);
    v.failing_noted = false;
    s = hibplan_decide(&v, &OPTS);
    cr_assert_eq(s.act, HIBPLAN_SCALE);
    cr_assert_eq(s.replicas, 0);
    v.break_glass = false; /* removed before the scale: back to the snapshot */
    EXPECT_PHASE(v, HIBPLAN_SNAPSHOT);
    /* a Failed attempt, not yet the last one, is enough too */
    v = base();
    v.phase = HIBPLAN_SNAPSHOT;
    v.suspended = true;
    v.svc = HIBPLAN_SVC_CUT;
    v.break_glass = v.failing_noted = true;
    v.task = HIBPLAN_TASK_FAILED;
    v.attempt = 1;
    EXPECT_PHASE(v, HIBPLAN_SCALING);
    v.phase = HIBPLAN_FAILED; /* and phase Failed */
    EXPECT_PHASE(v, HIBPLAN_SCALING);
}

Test(hibplan, without_break_glass_a_failing_attempt_is_noted_once_and_waited_for)
{
    struct hibplan_view v = base();
    struct hibplan_step s;

    v.phase = HIBPLAN_SNAPSHOT;
    v.suspended = true;
    v.svc = HIBPLAN_SVC_CUT;
    v.task = HIBPLAN_TASK_LIVE;
    v.attempt = v.ntasks = 1;
    v.task_errors = true;
    EXPECT_ACT(v, HIBPLAN_NOTE_FAILING);
    v.failing_noted = true;
    s = hibplan_decide(&v, &OPTS);
    cr_assert_eq(s.act, HIBPLAN_WAIT); /* the executor retries the sidecar */
    v.task = HIBPLAN_TASK_SUCCEEDED;   /* it came back */
    v.counted = true;
    EXPECT_PHASE(v, HIBPLAN_SCALING);
    v.phase = HIBPLAN_SCALING;
    EXPECT_ACT(v, HIBPLAN_CLEAR_FAILING);
    /* woken up meanwhile: removed after the cut */
    v.want = false;
    v.phase = HIBPLAN_WAKING;
    EXPECT_ACT(v, HIBPLAN_REMOVE_CUT_AT);
    v.cut_at = false;
    EXPECT_ACT(v, HIBPLAN_CLEAR_FAILING);
    /* a new cycle does not start with the last one's condition */
    v = base();
    v.phase = HIBPLAN_CUTTING;
    v.suspended = true;
    v.svc = HIBPLAN_SVC_CUT;
    v.failing_noted = true;
    EXPECT_ACT(v, HIBPLAN_CLEAR_FAILING);
}

Test(hibplan, spec_path_hands_the_scaled_down_etcd_back_to_etcd_druid)
{
    struct hibplan_view v = base();
    struct hibplan_step s;

    v.spec_signal = true; /* spec.replicas: 0, no annotation */
    v.spec_replicas = 0;
    v.phase = HIBPLAN_SCALING;
    v.suspended = v.suspend_ours = true;
    v.svc = HIBPLAN_SVC_CUT;
    v.counted = true;
    v.stamp_ok = true;
    s = hibplan_decide(&v, &OPTS);
    cr_assert_eq(s.act, HIBPLAN_SCALE);
    v.sts_spec = 0;
    EXPECT_ACT(v, HIBPLAN_WAIT);
    v.sts_status = 0;
    v.imm = 1;
    EXPECT_ACT(v, HIBPLAN_IMT_ENSURE);
    v.imm_task = true;
    /* etcd-druid must reconcile spec.replicas: 0 itself (Gardener waits for it) */
    EXPECT_ACT(v, HIBPLAN_REMOVE_SUSPEND);
    v.suspended = v.suspend_ours = false;
    v.svc = HIBPLAN_SVC_OPEN; /* etcd-druid syncs the Service again: no pod behind it */
    EXPECT_PHASE(v, HIBPLAN_HIBERNATED);
    v.phase = HIBPLAN_HIBERNATED;
    EXPECT_ACT(v, HIBPLAN_DONE);
    v.suspended = true; /* an operator's suspension is not ours to lift */
    v.phase = HIBPLAN_SCALING;
    EXPECT_PHASE(v, HIBPLAN_HIBERNATED);
    /* the annotation path keeps etcd-druid suspended while hibernated */
    v = base();
    v.phase = HIBPLAN_SCALING;
    v.suspended = v.suspend_ours = true;
    v.svc = HIBPLAN_SVC_CUT;
    v.sts_spec = v.sts_status = 0;
    EXPECT_PHASE(v, HIBPLAN_HIBERNATED);
    v.suspended = false;
    EXPECT_ACT(v, HIBPLAN_SET_SUSPEND);
}

Test(hibplan, an_immutability_task_being_deleted_is_waited_for)
{
    struct hibplan_view v = base();
    struct hibplan_step s;

    v.phase = HIBPLAN_HIBERNATED;
    v.sts_spec = v.sts_status = 0;
    v.suspended = true;
    v.imm = 1;
    v.imm_deleting = true; /* a finalizer holds the old one: no request loop */
    s = hibplan_decide(&v, &OPTS);
    cr_assert_eq(s.act, HIBPLAN_WAIT);
    cr_assert_geq(s.wait_ms, 1000);
    v.phase = HIBPLAN_SCALING;
    v.suspended = true;
    v.svc = HIBPLAN_SVC_CUT;
    v.counted = true;
    EXPECT_ACT(v, HIBPLAN_WAIT);
    v.imm_deleting = false;
    EXPECT_ACT(v, HIBPLAN_IMT_ENSURE);
}

Test(hibplan, failed_keeps_retrying_at_most_a_minute_apart)
{
    struct hibplan_view v = base();
    struct hibplan_step s;

    v.phase = HIBPLAN_FAILED;
    v.suspended = true;
    v.svc = HIBPLAN_SVC_CUT;
    v.task = HIBPLAN_TASK_FAILED;
    v.failing_noted = true;
    v.attempt = 9;
    v.failed_ago_ms = 59999;
    s = hibplan_decide(&v, &OPTS);
    cr_assert_eq(s.act, HIBPLAN_WAIT);
    cr_assert_eq(s.wait_ms, 1);
    v.failed_ago_ms = 60000;
    s = hibplan_decide(&v, &OPTS);
    cr_assert_eq(s.act, HIBPLAN_CREATE_TASK);
    cr_assert_eq(s.attempt, 10);
    v.task = HIBPLAN_TASK_LIVE;
    EXPECT_ACT(v, HIBPLAN_WAIT);
    v.task = HIBPLAN_TASK_SUCCEEDED; /* the sidecar recovered */
    v.counted = true;
    EXPECT_PHASE(v, HIBPLAN_SCALING);
    cr_assert_eq(hibplan_backoff_ms(&OPTS, 1), 1000);
    cr_assert_eq(hibplan_backoff_ms(&OPTS, 3), 4000);
    cr_assert_eq(hibplan_backoff_ms(&OPTS, 40), 60000);
    cr_assert_eq(hibplan_backoff_ms(NULL, 1), 5000);
}

Test(hibplan, scaling_down_needs_the_snapshot_then_scales_waits_and_hibernates)
{
    struct hibplan_view v = base();
    struct hibplan_step s;

    v.phase = HIBPLAN_SCALING;
    v.suspended = true;
    v.svc = HIBPLAN_SVC_CUT;
    v.task = HIBPLAN_TASK_FAILED; /* no proof: back to FinalSnapshot */
    EXPECT_PHASE(v, HIBPLAN_SNAPSHOT);
    v.task = HIBPLAN_TASK_NONE;
    EXPECT_PHASE(v, HIBPLAN_SNAPSHOT);
    v.task = HIBPLAN_TASK_SUCCEEDED;
    v.counted = true;
    v.stamp_ok = true;
    s = hibplan_decide(&v, &OPTS);
    cr_assert_eq(s.act, HIBPLAN_SCALE);
    cr_assert_eq(s.replicas, 0);
    v.sts_spec = 0;
    EXPECT_ACT(v, HIBPLAN_WAIT);
    v.task = HIBPLAN_TASK_NONE; /* already at 0 (the task expired): no going back */
    v.counted = false;
    EXPECT_ACT(v, HIBPLAN_WAIT);
    v.sts_status = 0;
    EXPECT_PHASE(v, HIBPLAN_HIBERNATED);
    v.imm = 1;
    EXPECT_ACT(v, HIBPLAN_IMT_ENSURE);
    v.imm_task = true;
    EXPECT_PHASE(v, HIBPLAN_HIBERNATED);
    v.imm = -1; /* malformed: left alone, still hibernates */
    v.imm_task = false;
    EXPECT_PHASE(v, HIBPLAN_HIBERNATED);
    v.task = HIBPLAN_TASK_SUCCEEDED;
    v.counted = true;
    v.sts_present = false;
    s = hibplan_decide(&v, &OPTS);
    cr_assert_eq(s.act, HIBPLAN_BAD);
    cr_assert_str_eq(s.reason, "StatefulSetMissing");
}

Test(hibplan, scaling_down_without_store_needs_no_task)
{
    struct hibplan_view v = base();
    struct hibplan_step s;

    v.phase = HIBPLAN_SCALING;
    v.store = false;
    v.suspended = true;
    v.svc = HIBPLAN_SVC_CUT;
    s = hibplan_decide(&v, &OPTS);
    cr_assert_eq(s.act, HIBPLAN_SCALE);
    v.phase = HIBPLAN_SNAPSHOT; /* store removed while waiting for a snapshot */
    EXPECT_PHASE(v, HIBPLAN_SCALING);
}

Test(hibplan, hibernated_follows_the_retention_type)
{
    struct hibplan_view v = base();

    v.phase = HIBPLAN_HIBERNATED;
    v.sts_spec = v.sts_status = 0;
    v.suspended = true;
    EXPECT_ACT(v, HIBPLAN_DONE);
    v.imm = 1;
    EXPECT_ACT(v, HIBPLAN_IMT_ENSURE);
    v.imm_task = true;
    EXPECT_ACT(v, HIBPLAN_DONE);
    v.imm = 0;
    EXPECT_ACT(v, HIBPLAN_IMT_DELETE);
    v.imm = -1; /* malformed: nothing deleted */
    EXPECT_ACT(v, HIBPLAN_DONE);
}

Test(hibplan, wake_up_undoes_every_step_in_order)
{
    struct hibplan_view v = base();
    struct hibplan_step s;

    v.want = false;
    v.phase = HIBPLAN_HIBERNATED;
    v.suspended = v.suspend_ours = true;
    v.svc = HIBPLAN_SVC_CUT;
    v.svc_remembered = true;
    v.sts_spec = v.sts_status = 0;
    v.imm = 1;
    v.imm_task = true;
    EXPECT_PHASE(v, HIBPLAN_WAKING);
    v.phase = HIBPLAN_WAKING;
    /* the cut first: before the pods and the ports are back, the snapshot no longer counts */
    EXPECT_ACT(v, HIBPLAN_REMOVE_CUT_AT);
    v.cut_at = false;
    EXPECT_ACT(v, HIBPLAN_IMT_DELETE);
    v.imm_task = false;
    s = hibplan_decide(&v, &OPTS);
    cr_assert_eq(s.act, HIBPLAN_SCALE);
    cr_assert_eq(s.replicas, 3);
    v.sts_spec = 3;
    EXPECT_ACT(v, HIBPLAN_RESTORE_PORTS);
    v.svc = HIBPLAN_SVC_OPEN;
    v.svc_remembered = false;
    EXPECT_ACT(v, HIBPLAN_REMOVE_SUSPEND);
    v.suspended = v.suspend_ours = false;
    EXPECT_ACT(v, HIBPLAN_REMOVE_PHASE);
    v.phase = HIBPLAN_NONE;
    EXPECT_ACT(v, HIBPLAN_DONE);
}

Test(hibplan, wake_up_keeps_an_operators_suspension)
{
    struct hibplan_view v = base();

    v.want = false;
    v.phase = HIBPLAN_WAKING;
    v.suspended = true; /* operator-maintenance, there before the hibernation */
    v.cut_at = false;
    EXPECT_ACT(v, HIBPLAN_REMOVE_PHASE);
}

Test(hibplan, wake_up_without_a_statefulset_restores_ports_and_lifts_the_suspension)
{
    struct hibplan_view v = base();

    v.want = false;
    v.phase = HIBPLAN_WAKING;
    EXPECT_ACT(v, HIBPLAN_REMOVE_CUT_AT);
    v.cut_at = false;
    v.suspended = v.suspend_ours = true;
    v.svc = HIBPLAN_SVC_CUT;
    v.svc_remembered = true;
    v.sts_present = false; /* etcd-druid creates it at spec.replicas once not suspended */
    v.sts_spec = v.sts_status = 0;
    EXPECT_ACT(v, HIBPLAN_RESTORE_PORTS);
    v.svc = HIBPLAN_SVC_OPEN;
    v.svc_remembered = false;
    EXPECT_ACT(v, HIBPLAN_REMOVE_SUSPEND);
}

Test(hibplan, waking_up_during_the_final_snapshot_deletes_its_task)
{
    struct hibplan_view v = base();

    v.want = false;
    v.phase = HIBPLAN_WAKING;
    EXPECT_ACT(v, HIBPLAN_REMOVE_CUT_AT);
    v.cut_at = false;
    v.suspended = v.suspend_ours = true;
    v.svc = HIBPLAN_SVC_CUT;
    v.svc_remembered = true;
    v.task = HIBPLAN_TASK_LIVE; /* the snapshot would be a final one of a live cluster */
    v.attempt = v.ntasks = 1;
    EXPECT_ACT(v, HIBPLAN_DELETE_TASKS);
    v.task = HIBPLAN_TASK_DELETING;
    v.ntasks = 0;
    v.ndeleting = 1;
    EXPECT_ACT(v, HIBPLAN_RESTORE_PORTS);
}

Test(hibplan, wake_up_mid_flow_and_deleted_etcds)
{
    struct hibplan_view v = base();

    v.want = false;
    v.phase = HIBPLAN_SNAPSHOT;
    EXPECT_PHASE(v, HIBPLAN_WAKING);
    v.phase = HIBPLAN_FAILED;
    EXPECT_PHASE(v, HIBPLAN_WAKING);
    v.phase = HIBPLAN_WAKING; /* never cut (woken in CuttingTraffic): nothing to restore */
    v.cut_at = false;
    v.svc = HIBPLAN_SVC_OPEN;
    v.suspended = v.suspend_ours = true;
    EXPECT_ACT(v, HIBPLAN_REMOVE_SUSPEND);
    v.phase = HIBPLAN_NONE; /* suspend set by someone else (a restore): not ours */
    EXPECT_ACT(v, HIBPLAN_DONE);
    v = base();
    v.deleting = true;
    v.phase = HIBPLAN_CUTTING;
    EXPECT_ACT(v, HIBPLAN_DONE);
}
