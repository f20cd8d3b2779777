#!/usr/bin/env bash
# A restore's suspension removed while warden-controller is not running (an upgrade, a crash, a
# leader hand-over), etcd-druid reconciling before warden-controller starts again, on kube-sim
# with warden-webhook and the druid actor. The restored Etcd was hibernated by annotation
# (hibernate=true, spec.replicas 3), its StatefulSet restored at 0 replicas, Gardener's
# gardener.cloud/operation: reconcile set, its restore waiting for its status backup.
# docs/toggles.md: `druid.gardener.cloud/suspend-etcd-spec-reconcile` "set by the controller while
# hibernated or restoring, so etcd-druid does not undo its work"; docs/status-backup-and-restore.md:
# "While the restore goes on, its suspension is held: removed by anyone (`kubectl druid
# reconciliation resume` deletes it), it is set again at the next pass".
#   S1 warden-controller stopped; alice removes the suspension (as druidctl resume does); the
#      druid actor starts and reconciles the restoring Etcd.
# Oracle: the StatefulSet's replicas in kube-sim, the druid actor's log, the restoring label.
# Control: with the suspension in place the druid actor leaves the StatefulSet at 0; once
# warden-controller is back the suspension is there (kept, or set again: SuspensionReasserted).
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
ctl_start
susp() { jp "$1" etcd/etcd-main '{.metadata.annotations.druid\.gardener\.cloud/suspend-etcd-spec-reconcile}'; }
. "$(dirname "$0")/../lib/restoring.sh"
NS=p1
restoring_sleeper $NS
[ "$(susp $NS)" = true ] || ctl_fail "setup: the restoring Etcd is not suspended"
# control: suspended, the druid actor leaves the StatefulSet at 0
DRUID_ACTOR_LOG=$CTL_DIR/druid-actor-c.log druid_actor_start $NS
sleep 2
[ "$(jp $NS sts/etcd-main '{.spec.replicas}')" = 0 ] || ctl_fail "control: etcd-druid scaled a suspended StatefulSet"
druid_actor_stop
# shellcheck disable=SC2034 # read by the exit handler (druid_actor_stop)
DRUID_ACTOR_PID=""
echo "ok: control: suspended, the druid actor leaves the restoring Etcd's StatefulSet at 0"
# S1
ctl_stop
out=$(WH_AS_NS=$NS wh_as alice annotate etcd etcd-main druid.gardener.cloud/suspend-etcd-spec-reconcile- 2>&1 | tail -1)
echo "S1: warden-controller stopped; the suspension removed by alice: ${out:0:200}"
DRUID_ACTOR_LOG=$CTL_DIR/druid-actor-s1.log druid_actor_start $NS
ksim_wait 5 bash -c "[ \"\$(kubectl --kubeconfig '$KUBECONFIG' -n $NS get sts etcd-main -o jsonpath='{.spec.replicas}')\" != 0 ]"
r=$(jp $NS sts/etcd-main '{.spec.replicas}')
lbl=$(kc -n $NS get etcd etcd-main -o json | jq -r '.metadata.labels | has("etcd-warden.io/restoring")')
druid_actor_stop
# shellcheck disable=SC2034 # read by the exit handler (druid_actor_stop)
DRUID_ACTOR_PID=""
ctl_start
# the suspension is still there (the webhook refused its removal) or set again once warden-controller is back
ksim_wait 15 bash -c "[ -n \"\$(kubectl --kubeconfig '$KUBECONFIG' -n $NS get etcd etcd-main -o jsonpath='{.metadata.annotations.druid\.gardener\.cloud/suspend-etcd-spec-reconcile}')\" ]" ||
    ctl_fail "control: warden-controller back, no suspension: $(ctl_events $NS etcd-main | tail -3)"
ksim_wait 10 bash -c "[ \"\$(kubectl --kubeconfig '$KUBECONFIG' -n $NS get sts etcd-main -o jsonpath='{.spec.replicas}')\" = 0 ]"
after=$(jp $NS sts/etcd-main '{.spec.replicas}')
echo "ok: control: warden-controller back, the suspension held (suspend=$(susp $NS)); StatefulSet at $after 10 s later (events: $(ctl_events $NS etcd-main | grep -v -e RestoreAwaiting | tail -2 | tr '\n' '|' | head -c 200))"
ctl_stop
if [ "$r" != 0 ]; then
    echo "HOLE: S1: restoring Etcd $NS/etcd-main (restoring label present: $lbl, hibernate=true): its suspension removed by alice while warden-controller was stopped (the webhook let it through: ${out:0:120}); etcd-druid reconciled it before warden-controller came back: StatefulSet 0 -> $r (still $after 10 s after warden-controller came back and re-suspended it, hibernate=true notwithstanding); druid: $(grep "$NS/etcd-main" "$CTL_DIR/druid-actor-s1.log" | tail -2 | tr '\n' '|' | head -c 240)"
    exit 1
fi
echo "held: S1: the StatefulSet stayed at 0"
echo "attack19_suspension_stopped: ok"
