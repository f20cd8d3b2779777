#!/usr/bin/env bash
# etcd-druid updating a sleeping Etcd's StatefulSet template (never above 0 replicas), on kube-sim
# with warden-webhook, warden-controller and backup-double. Issue 30: "every event and condition
# tells the truth"; "where ... etcd-druid is wrongly refused". docs/hibernation.md: a StatefulSet
# found "back at 0 while Hibernated but past the generation its own scale to 0 left ... was woken
# and scaled down again behind its back", Warning AwakeAgain, and the new hibernation "records no
# final snapshot: its claims stay protected". README: etcd-warden "keeps that snapshot inside the
# bucket's immutability period while it sleeps". On Gardener's spec.replicas path etcd-druid is
# not suspended while hibernated and reconciles the Etcd (an image or configuration change rolls
# the template: a new generation at 0 replicas, no member started).
#   P1. Etcd etcd-main (backup store, bucket immutability), hibernated by Gardener
#       (spec.replicas: 0); etcd-druid then changes the StatefulSet's pod template (its
#       configuration checksum annotation) at 0 replicas.
# Oracle: what kube-sim stores: the StatefulSet never above 0 (sampled every 0.1 s), and after
# etcd-druid's change a Warning AwakeAgain, the final snapshot's stamps or the immutability task
# gone, or the claims of the sleep no longer deletable.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
ns=p1
druid_etcd $ns etcd-main --bucket
druid_double_for $ns etcd-main
curl -sf -X POST "$DRUID_DOUBLE_URL/admin/write?n=5" >/dev/null || ctl_fail "the double takes no writes"
ctl_start
kc -n $ns patch etcd etcd-main --type merge -p '{"metadata":{"annotations":{"gardener.cloud/operation":"reconcile"}},"spec":{"replicas":0}}' >/dev/null ||
    ctl_fail "Gardener cannot hibernate"
ctl_wait_phase $ns etcd-main Hibernated 60
sleep 3
state() {
    kc -n $ns get etcd etcd-main -o json | jq -c '{phase: .metadata.annotations["etcd-warden.io/hibernation-phase"],
        checked: .metadata.annotations["etcd-warden.io/final-snapshot-checked"],
        store: .metadata.annotations["etcd-warden.io/final-snapshot-store"]}'
}
tasks() { kc -n $ns get extendfullsnapshotimmutabilitytasks -o jsonpath='{.items[*].metadata.name}' 2>/dev/null; }
before=$(state) tb=$(tasks)
echo "P1: hibernated: $before; immutability tasks: ${tb:-none}"
out=$(kc_druid -n $ns patch statefulset etcd-main --type merge \
    -p '{"spec":{"template":{"metadata":{"annotations":{"checksum/etcd-configmap":"0123456789abcdef"}}}}}' 2>&1) ||
    ctl_fail "etcd-druid cannot update the template of its sleeping StatefulSet: $out"
echo "P1: etcd-druid changed the pod template at 0 replicas (generation $(kc -n $ns get statefulset etcd-main -o jsonpath='{.metadata.generation}'))"
max=0
end=$((SECONDS + 20))
while [ $SECONDS -lt $end ]; do
    r=$(kc -n $ns get statefulset etcd-main -o jsonpath='{.spec.replicas}')
    [ "${r:-0}" -gt "$max" ] && max=$r
    sleep 0.1
done
after=$(state) ta=$(tasks)
ev=$(ctl_events $ns etcd-main | grep -E 'AwakeAgain' | head -2)
ctl_stop
echo "P1: after 20 s: $after; immutability tasks: ${ta:-none}; StatefulSet at most $max replicas"
[ "$max" = 0 ] || { echo "held: P1: the StatefulSet rose to $max: not a template-only change"; exit 0; }
if [ -n "$ev" ] || [ "$after" != "$before" ] || [ "$ta" != "$tb" ]; then
    echo "HOLE: P1: etcd-druid's template change of a sleeping StatefulSet (never above 0) is read as a wake: $(tr '\n' ' ' <<<"$ev" | head -c 300) state $before -> $after, immutability tasks ${tb:-none} -> ${ta:-none}"
    echo "FAIL: 1 hole(s): a sleep voided by etcd-druid's template change at 0 replicas"
    exit 1
fi
echo "held: P1: the sleep and its final snapshot stand"
echo "attack12_sleep_template: ok"
