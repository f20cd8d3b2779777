#!/usr/bin/env bash
# etcd-druid updating a sleeping Etcd's StatefulSet template (never above 0 replicas), on kube-sim
# with warden-webhook, warden-controller and backup-double. Issue 30: "every event and condition
# tells the truth"; "where ... etcd-druid is wrongly refused". docs/hibernation.md: a wake is a
# fact about replicas, not generations (A wake is a fact about replicas). README: etcd-warden
# "keeps that snapshot inside the bucket's immutability period while it sleeps". On Gardener's
# spec.replicas path etcd-druid is not suspended while hibernated and reconciles the Etcd (an
# image or configuration change rolls the template: a new generation at 0 replicas, no member
# started).
#   P1. Etcd etcd-main of p1 (backup store, bucket immutability, its member claims), hibernated
#       by Gardener (spec.replicas: 0); etcd-druid then changes the StatefulSet's pod template
#       (its configuration checksum annotation) at 0 replicas, warden-controller up.
#   P2. the same again with warden-controller down during etcd-druid's change (one change: the
#       generation after the one warden-controller knew asleep); then the claims of the sleep
#       are deleted by alice (protection disabled): a slept Etcd's claims may go.
#   P3. control, in p3: warden-controller down while the StatefulSet is scaled to 3 and back to 0
#       (on break glass) by etcd-druid: on start, Warning AwakeAgain (two changes past the
#       stamp may hide a wake, and here one did).
# Oracle: what kube-sim stores: the StatefulSet never above 0 in P1/P2 (sampled every 0.1 s),
# and after etcd-druid's change a Warning AwakeAgain, a phase or store stamp changed, a checked
# stamp of another StatefulSet or not at its current generation, the immutability task gone,
# or the claims of the sleep not deletable: HOLE, exit 1.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
state() {
    kc -n "$1" get etcd etcd-main -o json | jq -c '{phase: .metadata.annotations["etcd-warden.io/hibernation-phase"],
        uid: (.metadata.annotations["etcd-warden.io/final-snapshot-checked"] // "" | split("/")[0]),
        store: .metadata.annotations["etcd-warden.io/final-snapshot-store"]}'
}
checked() { kc -n "$1" get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/final-snapshot-checked}'; }
sts_stamp() { kc -n "$1" get statefulset etcd-main -o jsonpath='{.metadata.uid}/{.metadata.generation}'; }
tasks() { kc -n "$1" get extendfullsnapshotimmutabilitytasks -o jsonpath='{.items[*].metadata.name}' 2>/dev/null; }
awake() { ctl_events "$1" etcd-main | grep -E 'AwakeAgain' | head -2; }
has_awake() { [ -n "$(awake "$1")" ]; }
gardener_sleep() {
    kc -n "$1" patch etcd etcd-main --type merge -p '{"metadata":{"annotations":{"gardener.cloud/operation":"reconcile"}},"spec":{"replicas":0}}' >/dev/null ||
        ctl_fail "Gardener cannot hibernate $1"
}
template() { # NS VALUE: etcd-druid rolls the template of the sleeping StatefulSet
    local out
    out=$(kc_druid -n "$1" patch statefulset etcd-main --type merge \
        -p "{\"spec\":{\"template\":{\"metadata\":{\"annotations\":{\"checksum/etcd-configmap\":\"$2\"}}}}}" 2>&1) ||
        ctl_fail "etcd-druid cannot update the template of its sleeping StatefulSet in $1: $out"
}
max_over() { # NS SECONDS: the most replicas the StatefulSet had, sampled every 0.1 s
    local max=0 r end=$((SECONDS + $2))
    while [ $SECONDS -lt $end ]; do
        r=$(kc -n "$1" get statefulset etcd-main -o jsonpath='{.spec.replicas}')
        [ "${r:-0}" -gt "$max" ] && max=$r
        sleep 0.1
    done
    echo "$max"
}
holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
# judge NS WHAT MAX BEFORE TB: the sleep stands after etcd-druid's change
judge() {
    local ns=$1 what=$2 max=$3 before=$4 tb=$5 after ta ev c s
    after=$(state "$ns") ta=$(tasks "$ns") ev=$(awake "$ns") c=$(checked "$ns") s=$(sts_stamp "$ns")
    echo "$what: after: $after, checked $c (StatefulSet $s); immutability tasks: ${ta:-none}; StatefulSet at most $max replicas"
    [ "$max" = 0 ] || ctl_fail "$what: the StatefulSet rose to $max: not a template-only change"
    if [ -n "$ev" ] || [ "$after" != "$before" ] || [ "$ta" != "$tb" ] || [ "$c" != "$s" ]; then
        hole "$what: etcd-druid's template change of a sleeping StatefulSet (never above 0) is read as a wake: $(tr '\n' ' ' <<<"$ev" | head -c 300) state $before -> $after, checked $c (StatefulSet $s), immutability tasks ${tb:-none} -> ${ta:-none}"
    else echo "held: $what: the sleep and its final snapshot stand"; fi
}

ns=p1
druid_etcd $ns etcd-main --bucket
for i in 0 1 2; do # the member claims, as the StatefulSet controller creates them
    printf '%s\n' "---" "apiVersion: v1" "kind: PersistentVolumeClaim" \
        "metadata: {name: etcd-main-etcd-main-$i, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}" \
        "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}"
done | kc -n $ns create -f - >/dev/null || ctl_fail "cannot create the member claims of $ns"
druid_double_for $ns etcd-main
curl -sf -X POST "$DRUID_DOUBLE_URL/admin/write?n=5" >/dev/null || ctl_fail "the double takes no writes"
druid_etcd p3 etcd-main --bucket
druid_double_for p3 etcd-main
ctl_start
gardener_sleep $ns
gardener_sleep p3
ctl_wait_phase $ns etcd-main Hibernated 60
ctl_wait_phase p3 etcd-main Hibernated 60
# the members' pods, gone at 0 as the StatefulSet controller deletes them
kc -n $ns delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null || ctl_fail "$ns: cannot delete the pods"
sleep 3

# ---- P1: warden-controller up
before=$(state $ns) tb=$(tasks $ns)
echo "P1: hibernated: $before, checked $(checked $ns); immutability tasks: ${tb:-none}"
[ -n "$tb" ] || ctl_fail "P1: no immutability task while hibernated"
template $ns 0123456789abcdef
echo "P1: etcd-druid changed the pod template at 0 replicas (generation $(kc -n $ns get statefulset etcd-main -o jsonpath='{.metadata.generation}'))"
judge $ns P1 "$(max_over $ns 20)" "$before" "$tb"

# ---- P2: warden-controller down during the change
ctl_stop
template $ns fedcba9876543210
echo "P2: warden-controller down, etcd-druid changed the pod template at 0 replicas (generation $(kc -n $ns get statefulset etcd-main -o jsonpath='{.metadata.generation}'))"
# ---- P3 (control): warden-controller down while etcd-druid wakes and scales down again
kc_druid -n p3 scale statefulset etcd-main --replicas=3 >/dev/null || ctl_fail "P3: etcd-druid cannot scale up"
ksim_wait 10 bash -c "[ \"\$(kubectl --kubeconfig '$KUBECONFIG' -n p3 get sts etcd-main -o jsonpath='{.status.replicas}')\" = 3 ]" ||
    ctl_fail "P3: the StatefulSet did not come up"
kc -n p3 annotate etcd etcd-main \
    etcd-warden.io/allow-scale-down-without-snapshot="$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ) control" >/dev/null ||
    ctl_fail "P3: cannot set break glass"
wh_caught_up
out=$(kc_druid -n p3 scale statefulset etcd-main --replicas=0 2>&1) || ctl_fail "P3: the scale-down on break glass refused: $out"
ksim_wait 10 bash -c "[ \"\$(kubectl --kubeconfig '$KUBECONFIG' -n p3 get sts etcd-main -o jsonpath='{.status.replicas}')\" = 0 ]" ||
    ctl_fail "P3: the StatefulSet did not go down"
echo "P3: warden-controller down, etcd-druid scaled StatefulSet p3/etcd-main to 3 and back to 0"
ctl_start
ksim_wait 30 has_awake p3 ||
    ctl_fail "P3 control: no Warning AwakeAgain after a wake and a scale-down while warden-controller was down: $(ctl_events p3 etcd-main | tail -5)"
echo "ok: P3 control: a wake and a scale-down while warden-controller was down is a wake (Warning AwakeAgain)"
judge $ns P2 "$(max_over $ns 10)" "$before" "$tb"
ctl_stop

# the claims of the sleep may go (a slept Etcd's)
WH_AS_NS=$ns wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    ctl_fail "alice cannot disable protection of $ns"
wh_caught_up
out=$(WH_AS_NS=$ns wh_as alice delete pvc etcd-main-etcd-main-0 etcd-main-etcd-main-1 etcd-main-etcd-main-2 --wait=false 2>&1) ||
    hole "P2: the claims of the sleep lost their protection as a slept Etcd's after etcd-druid's template changes: $(tr '\n' ' ' <<<"$out" | head -c 400)"
[ "$holes" = 0 ] && echo "held: P2: the claims of the sleep go as a slept Etcd's"

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a sleep voided by etcd-druid's template change at 0 replicas"; exit 1; }
echo "attack12_sleep_template: ok"
