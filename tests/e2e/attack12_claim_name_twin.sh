#!/usr/bin/env bash
# An Etcd's claim read as another Etcd's: PVC etcd-main-etcd-main-0 is "<etcd-main>-<etcd-main>-0"
# and also "<etcd-main-etcd>-<main>-0", on kube-sim with warden-webhook and warden-controller.
# Issue 30: no member PVC is deleted while a write acknowledged before it is missing from the
# final snapshot, break glass aside. docs/protection.md: "A claim of Etcd E is a PVC of E's
# namespace named <template>-<E>-<n> (... any template is read ...)"; its DELETE is allowed
# when "E is being deleted (its deletionTimestamp ...)", and "An Etcd without a backup store
# never qualifies: its claims are the only copy of its data". A tenant may create Etcds in her
# namespace, so she can make the other reading true: Etcd main, being deleted (a finalizer of
# hers keeps it so).
#   T1. Etcd etcd-main (3 members, no backup store) hibernated by warden-controller (its
#       StatefulSet at 0, pods gone, claims etcd-main-etcd-main-0..2 its only copy). alice
#       (namespace edit rights, protection disabled) creates Etcd main with a finalizer of hers and deletes it
#       (deletionTimestamp set, it stays); then she deletes claims etcd-main-etcd-main-0..2.
#   T0. control: before Etcd main exists, the same DELETE is refused.
# Oracle: what kube-sim stores: a claim etcd-main-etcd-main-<n> gone while Etcd etcd-main is live
# without a backup store.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
ns=t1
druid_etcd $ns etcd-main --no-store
for i in 0 1 2; do
    printf '%s\n' "---" "apiVersion: v1" "kind: PersistentVolumeClaim" \
        "metadata: {name: etcd-main-etcd-main-$i, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}" \
        "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}"
done | kc -n $ns create -f - >/dev/null || ctl_fail "cannot create the member claims"
gone() {
    local ts
    ts=$(kc -n $ns get pvc "$1" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null) || return 0
    [ -n "$ts" ]
}
ctl_start
kc -n $ns annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null || ctl_fail "cannot hibernate"
ctl_wait_phase $ns etcd-main Hibernated 60
[ "$(kc -n $ns get statefulset etcd-main -o jsonpath='{.spec.replicas}')" = 0 ] || ctl_fail "Hibernated, StatefulSet not at 0"
kc -n $ns delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null || ctl_fail "cannot delete the pods"
echo "T1: etcd-main hibernated without a backup store: its claims are its only copy"
WH_AS_NS=$ns wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    ctl_fail "alice cannot disable protection"
wh_caught_up # the webhook's caches

out=$(WH_AS_NS=$ns wh_as alice delete pvc etcd-main-etcd-main-0 --wait=false 2>&1)
! gone etcd-main-etcd-main-0 || ctl_fail "control: claim 0 of store-less hibernated etcd-main deleted: $out"
echo "ok: control: claim etcd-main-etcd-main-0 is not deleted: $(tr '\n' ' ' <<<"$out" | head -c 200)"

out=$(WH_AS_NS=$ns wh_as alice create -f - 2>&1 <<YAML
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: main, finalizers: [example.com/alice-hold], labels: {app: etcd-statefulset, role: other}}
spec:
  replicas: 1
  labels: {app: etcd-statefulset, role: other}
  etcd: {clientPort: 2379, serverPort: 2380, quota: 8Gi}
  backup: {port: 8080, fullSnapshotSchedule: "0 */24 * * *"}
YAML
) || ctl_fail "alice cannot create Etcd main: $out"
WH_AS_NS=$ns wh_as alice delete etcd main --wait=false >/dev/null 2>&1 || ctl_fail "alice cannot delete Etcd main"
[ -n "$(kc -n $ns get etcd main -o jsonpath='{.metadata.deletionTimestamp}')" ] || ctl_fail "Etcd main is not being deleted"
echo "T1: alice's Etcd main is being deleted (her finalizer keeps it)"
wh_caught_up # the webhook's caches
out=$(WH_AS_NS=$ns wh_as alice delete pvc etcd-main-etcd-main-0 etcd-main-etcd-main-1 etcd-main-etcd-main-2 --wait=false 2>&1)
ctl_stop
n=0
for i in 0 1 2; do gone etcd-main-etcd-main-$i && n=$((n + 1)); done
[ -z "$(kc -n $ns get etcd etcd-main -o jsonpath='{.metadata.deletionTimestamp}')" ] || ctl_fail "etcd-main is being deleted"
if [ "$n" -gt 0 ]; then
    echo "HOLE: T1: $n claim(s) etcd-main-etcd-main-<n> of live store-less Etcd $ns/etcd-main deleted once alice's Etcd main is being deleted: the only copy of its data"
    echo "FAIL: 1 hole(s): an Etcd's claims freed through another Etcd their name can be read as"
    exit 1
fi
echo "held: T1: $(tr '\n' ' ' <<<"$out" | head -c 300)"
echo "attack12_claim_name_twin: ok"
