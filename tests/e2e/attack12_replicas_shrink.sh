#!/usr/bin/env bash
# A sleeping Etcd's member range shrunk through spec.replicas 3 -> 0 -> 1, on kube-sim with
# warden-webhook and warden-controller. Issue 30: no member PVC is deleted while a write
# acknowledged before it is missing from the final snapshot, break glass aside.
# docs/protection.md, "A live Etcd's claims go with the Etcd or its sleep": a claim's DELETE
# "is refused while E is live (no deletionTimestamp) and n is in its member range
# ([0, spec.replicas); every ordinal when spec.replicas is 0, as the sleeping members' count is
# not on the Etcd)" and "An Etcd without a backup store never qualifies: its claims are the
# only copy of its data". etcd-druid's rule on spec.replicas (docs/hibernation.md, Partial
# scale-downs) refuses 3 -> 1 but not 3 -> 0 (a hibernation) followed by 0 -> 1 (a growth):
# the Etcd then says 1 while its sleeping StatefulSet's members 1 and 2 keep their data on
# claims 1 and 2, which no StatefulSet ordinal, no pod and no member range covers any more.
#   R1. Etcd etcd-main (3 members, no backup store) hibernated by warden-controller
#       (etcd-warden.io/hibernate=true, StatefulSet at 0). alice (namespace edit rights,
#       protection disabled) patches the Etcd's spec.replicas to 0, then to 1 (the annotation
#       keeps it asleep), then deletes claims etcd-main-etcd-main-1 and -2.
#   R0. control: the same Etcd before the dance: alice's delete of claim 1 is refused (the
#       rule holds at spec.replicas 3), and Gardener's way of sleeping and waking an Etcd
#       (spec.replicas 3 -> 0 -> 3) is admitted.
# Oracle: what kube-sim stores: a member claim of ordinal 1 or 2 deleted while Etcd etcd-main is
# live, has no backup store (its claims are its only copy) and its StatefulSet had 3 members.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"

ctl_stage
gone() { # NS PVC: deleted or being deleted
    local ts
    ts=$(kc -n "$1" get pvc "$2" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null) || return 0
    [ -n "$ts" ]
}
replicas_to() { # NS N: alice patches the Etcd's spec.replicas
    WH_AS_NS=$1 wh_as alice patch etcd etcd-main --type merge -p "{\"spec\":{\"replicas\":$2}}" 2>&1
}
for ns in r0 r1; do
    druid_etcd $ns etcd-main --no-store
    for i in 0 1 2; do # the member claims, as the StatefulSet controller creates them
        printf '%s\n' "---" "apiVersion: v1" "kind: PersistentVolumeClaim" \
            "metadata: {name: etcd-main-etcd-main-$i, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}" \
            "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}"
    done | kc -n $ns create -f - >/dev/null || ctl_fail "cannot create the member claims of $ns"
    [ -z "$(kc -n $ns get etcd etcd-main -o jsonpath='{.spec.backup.store}')" ] || ctl_fail "$ns/etcd-main has a backup store"
done
ctl_start
kc -n r1 annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null || ctl_fail "cannot hibernate r1"
ctl_wait_phase r1 etcd-main Hibernated 60
[ "$(kc -n r1 get statefulset etcd-main -o jsonpath='{.spec.replicas}')" = 0 ] || ctl_fail "r1: Hibernated, StatefulSet not at 0"
kc -n r1 delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null || ctl_fail "r1: cannot delete the pods"
echo "R1: hibernated without a backup store: claims etcd-main-etcd-main-0..2 hold its only copy"
for ns in r0 r1; do
    WH_AS_NS=$ns wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
        ctl_fail "alice cannot disable protection of $ns"
done
wh_caught_up # the webhook's caches

# R0: the rule at spec.replicas 3, and Gardener's sleep and wake through spec.replicas
out=$(WH_AS_NS=r0 wh_as alice delete pvc etcd-main-etcd-main-1 --wait=false 2>&1)
! gone r0 etcd-main-etcd-main-1 || ctl_fail "control: claim 1 of live r0/etcd-main deleted at spec.replicas 3: $out"
echo "ok: control: claim 1 of live r0/etcd-main is not deleted at spec.replicas 3: $(tr '\n' ' ' <<<"$out" | head -c 200)"
out=$(replicas_to r0 0) || ctl_fail "control: r0 spec.replicas 3 -> 0 refused: $out"
out=$(replicas_to r0 3) || ctl_fail "control: r0 spec.replicas 0 -> 3 refused: $out"
echo "ok: control: spec.replicas 3 -> 0 -> 3 admitted"
out=$(replicas_to r0 1)
[ "$(kc -n r0 get etcd etcd-main -o jsonpath='{.spec.replicas}')" = 3 ] || ctl_fail "control: r0 spec.replicas 3 -> 1 admitted"
echo "ok: control: spec.replicas 3 -> 1 refused: $(tr '\n' ' ' <<<"$out" | head -c 200)"

# R1: 3 -> 0 -> 1 while asleep, then the claims out of the new range
out=$(replicas_to r1 0)
echo "R1: spec.replicas 3 -> 0: $(tr '\n' ' ' <<<"$out" | head -c 200)"
out=$(replicas_to r1 1)
echo "R1: spec.replicas 0 -> 1: $(tr '\n' ' ' <<<"$out" | head -c 200)"
wh_caught_up # the webhook's caches
out=$(WH_AS_NS=r1 wh_as alice delete pvc etcd-main-etcd-main-1 etcd-main-etcd-main-2 --wait=false 2>&1)
n=0
for i in 1 2; do gone r1 etcd-main-etcd-main-$i && n=$((n + 1)); done
ctl_stop

[ "$(kc -n r1 get etcd etcd-main -o jsonpath='{.metadata.deletionTimestamp}')" = "" ] || ctl_fail "r1/etcd-main is being deleted"
holes=0
if [ "$n" -gt 0 ]; then
    echo "HOLE: R1: $n member claim(s) of ordinals 1..2 of live Etcd r1/etcd-main deleted (spec.replicas now $(kc -n r1 get etcd etcd-main -o jsonpath='{.spec.replicas}'), StatefulSet of 3 members asleep at 0): without a backup store those claims were the only copy of members 1 and 2, and the 3-member cluster has lost its quorum's data"
    holes=$((holes + 1))
else echo "held: R1: the claims stay: $(tr '\n' ' ' <<<"$out" | head -c 400)"; fi

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a sleeping Etcd's member claims freed by shrinking spec.replicas through 0"; exit 1; }
echo "attack12_replicas_shrink: ok"
