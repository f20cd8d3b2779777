#!/usr/bin/env bash
# The hibernation signal switched during FinalSnapshot, on kube-sim with warden-webhook,
# warden-controller, the druid actor (with its task executor) and a backup-double: hibernated by
# annotation, the final snapshot held; gardenlet's reconcile merge patch (labels whole,
# operation reconcile, timestamp, spec.replicas: 0) and then the annotation removed, so the
# signal is now spec.replicas: 0, which etcd-druid acts on itself once unsuspended (its pre-sync
# snapshot, then a scale to 0). A writer on an established connection writes after etcd-druid's
# pre-sync snapshot. Ground truth: whenever the StatefulSet is seen at 0, every write
# acknowledged before must be in the store.
# docs/hibernation.md: "A cut belongs to one sleep ... a snapshot only in ScalingDown" counts;
# "When the signal switches to spec.replicas: 0 (hibernated by annotation, then spec.replicas:
# 0, then the annotation removed), the suspension warden-controller set is lifted"; the final
# snapshot holds the last write (the revision check).
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
NS=k1
last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
replicas() { jp $NS sts/etcd-main '{.spec.replicas}'; }
holes=0
check_zero() { # WHAT: at 0 with writes missing: HOLE; returns 0 when at 0
    local w s
    w=$(last_write "$U")
    [ "$(replicas)" = 0 ] || return 1
    s=$(stored_rev "$U")
    if [ "${s:-0}" -lt "${w:-0}" ]; then
        echo "HOLE: $1: StatefulSet $NS/etcd-main reached 0 with write $w acknowledged and the store holding ${s:-none}"
        holes=$((holes + 1))
    else echo "ok: $1: at 0 the store holds every write (last $w, stored ${s:-none})"; fi
    return 0
}
ctl_start
druid_etcd $NS etcd-main
druid_double_for $NS etcd-main
U=$DRUID_DOUBLE_URL
curl -sf -X POST "$U/admin/write?n=3" >/dev/null
DRUID_ACTOR_LOG=$CTL_DIR/druid-actor.log druid_actor_start $NS --executor
curl -sf -X POST "$U/admin/hold" >/dev/null
kc -n $NS annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null
ctl_wait_phase $NS etcd-main FinalSnapshot 30
ksim_wait 30 bash -c "[ \"\$(curl -sf '$U/admin/held')\" -ge 1 ]" || ctl_fail "the final snapshot was not requested"
out=$(kc -n $NS patch etcd etcd-main --type merge -p "{\"metadata\":{\"labels\":{\"app\":null,\"role\":\"main\",\"gardener.cloud/role\":\"controlplane\"},
    \"annotations\":{\"gardener.cloud/operation\":\"reconcile\",\"gardener.cloud/timestamp\":\"$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)\"}},\"spec\":{\"replicas\":0}}" 2>&1 | tail -1)
echo "gardenlet's merge patch (spec.replicas: 0) during FinalSnapshot: ${out:0:160}"
kc -n $NS annotate etcd etcd-main etcd-warden.io/hibernate- >/dev/null
sleep 3
echo "after the switch: phase $(ctl_phase $NS etcd-main), suspension '$(jp $NS etcd/etcd-main '{.metadata.annotations.druid\.gardener\.cloud/suspend-etcd-spec-reconcile}')', held $(curl -sf "$U/admin/held")"
check_zero "the switch, snapshots held" || echo "held: nothing at 0 while the snapshots are held"
curl -sf -X POST "$U/admin/release" >/dev/null
sleep 0.5
curl -sf -X POST "$U/admin/write?n=2" >/dev/null # the established connection
deadline=$((SECONDS + 60))
until check_zero "after the release and a write on an established connection"; do
    [ $SECONDS -lt $deadline ] || { echo "held: not at 0 after 60 s (phase $(ctl_phase $NS etcd-main))"; break; }
    sleep 0.2
done
echo "events: $(ctl_events $NS etcd-main | tail -4 | tr '\n' '|' | head -c 400)"
echo "druid: $(grep -v '^$' "$CTL_DIR/druid-actor.log" | tail -4 | tr '\n' '|' | head -c 400)"
ctl_stop
if [ "$holes" != 0 ]; then
    echo "FAIL: $holes hole(s): the signal switched during FinalSnapshot lost acknowledged writes"
    exit 1
fi
echo "attack18_signal_switch: ok"
