#!/usr/bin/env bash
# The suspension a restore holds, removed by someone else mid-restore (`kubectl druid
# reconciliation resume` deletes the annotation; so can anyone who may annotate the Etcd), on
# kube-sim with warden-webhook, warden-controller and the druid actor. The restored Etcd is one
# that was hibernated by annotation (hibernate=true, spec.replicas 3), its StatefulSet restored
# at 0 replicas, gardener.cloud/operation: reconcile set (Gardener's), its restore waiting for
# its status backup.
# docs/toggles.md: `etcd-warden.io/restoring` "reconciliation paused"; `druid.gardener.cloud/
# suspend-etcd-spec-reconcile` "set by the controller while hibernated or restoring, so
# etcd-druid does not undo its work"; issue 30 (Suspension ownership): "a suspension
# etcd-warden holds is not removed by others (refused, or re-asserted with a Warning)".
# Oracle: what kube-sim stores (the suspend annotation on the restoring Etcd 10 s after, the
# StatefulSet's replicas) and the druid actor's log (a spec reconcile of a restoring Etcd).
# Control: the same removal on a hibernated Etcd (not restoring) is re-asserted
# (SuspensionReasserted) and etcd-druid does not scale it up.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
ctl_start
susp() { jp "$1" etcd/etcd-main '{.metadata.annotations.druid\.gardener\.cloud/suspend-etcd-spec-reconcile}'; }
holes=0

# ---- the restoring Etcd
. "$(dirname "$0")/../lib/restoring.sh"
NS=p1
restoring_sleeper $NS
[ "$(susp $NS)" = true ] || ctl_fail "setup: the restoring Etcd is not suspended"
DRUID_ACTOR_LOG=$CTL_DIR/druid-actor-$NS.log druid_actor_start $NS
sleep 2
[ "$(jp $NS sts/etcd-main '{.spec.replicas}')" = 0 ] || ctl_fail "setup: etcd-druid scaled a suspended StatefulSet"
out=$(WH_AS_NS=$NS wh_as alice annotate etcd etcd-main druid.gardener.cloud/suspend-etcd-spec-reconcile- 2>&1 | tail -1)
echo "the restore's suspension removed by alice (as druidctl resume does): ${out:0:200}"
deadline=$((SECONDS + 10))
while [ $SECONDS -lt $deadline ] && [ "$(susp $NS)" != true ]; do sleep 0.2; done
sleep 1
r=$(jp $NS sts/etcd-main '{.spec.replicas}')
if [ "$(susp $NS)" != true ]; then
    echo "HOLE: restoring Etcd $NS/etcd-main left unsuspended 10 s after its suspension was removed (label $(jp $NS etcd/etcd-main '{.metadata.labels.etcd-warden\.io/restoring}' >/dev/null && echo present)); etcd-druid reconciled it: StatefulSet at $r replicas although hibernate=true; druid: $(grep "$NS/etcd-main" "$CTL_DIR/druid-actor-$NS.log" | tail -2 | tr '\n' '|' | head -c 240)"
    holes=$((holes + 1))
elif [ "$r" != 0 ]; then
    echo "HOLE: restoring Etcd $NS/etcd-main re-suspended, but etcd-druid scaled its StatefulSet to $r meanwhile"
    holes=$((holes + 1))
else
    echo "held: the restore's suspension was set again: $(ctl_events $NS etcd-main | grep -i suspen | head -1)"
fi
druid_actor_stop
# shellcheck disable=SC2034 # read by the exit handler (druid_actor_stop)
DRUID_ACTOR_PID=""

# ---- control: a hibernated Etcd's suspension removed is re-asserted
druid_etcd q1 etcd-main
druid_double_for q1 etcd-main
kc -n q1 annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null
ctl_wait_phase q1 etcd-main Hibernated 60
kc -n q1 annotate etcd etcd-main gardener.cloud/operation=reconcile >/dev/null
DRUID_ACTOR_LOG=$CTL_DIR/druid-actor-q1.log druid_actor_start q1
WH_AS_NS=q1 wh_as alice annotate etcd etcd-main druid.gardener.cloud/suspend-etcd-spec-reconcile- >/dev/null 2>&1
ksim_wait 15 bash -c "kubectl --kubeconfig '$KUBECONFIG' -n q1 get events.events.k8s.io -o jsonpath='{.items[*].reason}' | grep -q SuspensionReasserted" ||
    ctl_fail "control: a hibernated Etcd's suspension removed was not re-asserted: $(ctl_events q1 etcd-main | tail -3)"
echo "ok: control: a hibernated Etcd's suspension removed is set again (SuspensionReasserted); StatefulSet at $(jp q1 sts/etcd-main '{.spec.replicas}')"
druid_actor_stop
ctl_stop
if [ "$holes" != 0 ]; then
    echo "FAIL: $holes hole(s): a restore's suspension removed by someone else is not held"
    exit 1
fi
echo "attack18_restore_suspension: ok"
