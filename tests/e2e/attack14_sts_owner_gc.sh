#!/usr/bin/env bash
# An Etcd's StatefulSet deleted with its pods by the garbage collector, for an owner planted on
# it, on kube-sim (its garbage collector) with warden-webhook and backup-double. Issue 30:
# "every path to zero is judged". docs/hibernation.md (The scale-down guard): "A DELETE of such
# a StatefulSet that takes its pods with it (spec.replicas above 0, any propagation but Orphan)
# needs the same snapshot ... unless the Etcd is itself being deleted"; docs/protection.md
# guards the owners of member claims ("the garbage collector deletes a claim when any of its
# owners goes"), and says nothing of the StatefulSet's.
#   O1. Etcd o1/etcd-main (3 members, 5 writes acknowledged, no snapshot). alice (namespace
#       edit rights) disables component protection, creates a throwaway Etcd junk and makes it
#       the StatefulSet's only owner; she deletes Etcd junk, and the garbage collector deletes
#       StatefulSet etcd-main with its pods.
#   O0. control: in o0, alice's own DELETE of the StatefulSet with its pods is refused.
# Oracle: what kube-sim stores (StatefulSet o1/etcd-main gone with its pods, Etcd etcd-main
# live and not being deleted) and what backup-double records (writes acknowledged, no snapshot).
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
for ns in o0 o1; do
    druid_etcd $ns etcd-main
    druid_double_for $ns etcd-main
    curl -sf -X POST "$DRUID_DOUBLE_URL/admin/write?n=5" >/dev/null || ctl_fail "$ns: the double takes no writes"
    WH_AS_NS=$ns wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
        ctl_fail "alice cannot disable protection of $ns"
done
wh_caught_up
out=$(WH_AS_NS=o0 wh_as alice delete statefulset etcd-main --wait=false 2>&1) &&
    ctl_fail "control: O0: alice's DELETE of the StatefulSet with its pods admitted: $out"
echo "ok: control: O0: the DELETE with pods is refused: $(tr '\n' ' ' <<<"$out" | head -c 200)"

jq -n '{apiVersion: "druid.gardener.cloud/v1alpha1", kind: "Etcd", metadata: {name: "junk", namespace: "o1"},
    spec: {replicas: 0, labels: {app: "junk"}, etcd: {clientPort: 2379, serverPort: 2380}, backup: {port: 8080}}}' |
    WH_AS_NS=o1 wh_as alice create -f - >/dev/null 2>&1 || ctl_fail "O1: alice cannot create Etcd junk"
juid=$(kc -n o1 get etcd junk -o jsonpath='{.metadata.uid}')
out=$(WH_AS_NS=o1 wh_as alice patch statefulset etcd-main --type json -p "[{\"op\":\"replace\",\"path\":\"/metadata/ownerReferences\",
    \"value\":[{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"Etcd\",\"name\":\"junk\",\"uid\":\"$juid\"}]}]" 2>&1)
if [ $? -ne 0 ]; then
    echo "held: O1: the StatefulSet's owner cannot be replaced: $(tr '\n' ' ' <<<"$out" | head -c 300)"
    echo "attack14_sts_owner_gc: ok"
    exit 0
fi
echo "O1: alice made Etcd junk the only owner of StatefulSet o1/etcd-main"
WH_AS_NS=o1 wh_as alice delete etcd junk --wait=false >/dev/null 2>&1 || ctl_fail "O1: alice cannot delete Etcd junk"
stsgone() { ksim_gone -n o1 statefulset etcd-main || [ -n "$(kc -n o1 get statefulset etcd-main -o jsonpath='{.metadata.deletionTimestamp}')" ]; }
ksim_wait 10 stsgone
pods=$(kc -n o1 get pods -o name | wc -l)
if stsgone; then
    ksim_wait 10 bash -c "[ -z \"\$(kubectl --kubeconfig '$KUBECONFIG' -n o1 get pods -o name)\" ]"
    pods=$(kc -n o1 get pods -o name | wc -l)
    echo "HOLE: O1: StatefulSet o1/etcd-main deleted by the garbage collector for the owner alice planted (Etcd junk), its members' pods left: $pods, Etcd etcd-main live ($(kc -n o1 get etcd etcd-main -o jsonpath='{.metadata.deletionTimestamp}' | sed 's/^$/not being deleted/')), 5 writes acknowledged and no snapshot"
    echo "FAIL: 1 hole(s): an Etcd's StatefulSet taken to 0 through a planted owner"
    exit 1
fi
gc=$(grep -i 'etcd-main' "$KSIM_DIR/kube-sim.log" | grep -i 'garbage\|generic-garbage\|refused' | tail -1 | head -c 300)
echo "held: O1: StatefulSet still there ($(kc -n o1 get statefulset etcd-main -o jsonpath='{.spec.replicas}') replicas, $pods pods); kube-sim: ${gc:-no garbage-collector refusal logged}"
echo "attack14_sts_owner_gc: ok"
