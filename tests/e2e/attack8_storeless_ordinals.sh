#!/usr/bin/env bash
# A hibernated Etcd without a backup store woken on other claims, on kube-sim with
# warden-webhook and warden-controller. Issue 30: a member's volume is never deleted or
# detached, whoever asks, break glass aside. An Etcd without a backup store goes to 0 without
# a snapshot ("Without a backup store there is nothing to wait for", docs/hibernation.md): its
# member claims are the only copy of its data, and docs/protection.md never lets them go ("An
# Etcd without a backup store never qualifies: its claims are the only copy of its data"). The
# members' claims are <template>-<sts>-<ordinal>, and a StatefulSet at 0 replicas has no member
# an ordinals move could take out, so a namespace editor with protection disabled may move it
# while the Etcd sleeps: the wake's members are 3..5, on new, empty claims, and claims 0..2 are
# read by no member again. No claim is deleted; the data is detached.
#   N1. Etcd etcd-main (no backup store) hibernated by warden-controller (StatefulSet at 0).
#       alice (namespace edit rights, protection disabled) sets the StatefulSet's
#       spec.ordinals.start to 3. The Etcd is woken (etcd-warden.io/hibernate removed):
#       warden-controller scales the StatefulSet back to 3.
# Oracle: what kube-sim stores: StatefulSet etcd-main at 3 replicas whose ordinals
# [start, start + 3) take none of 0..2, while the member claims etcd-main-etcd-main-0..2, the
# only copy of the data of Etcd etcd-main (it has no spec.backup.store), are stored and the
# Etcd is live at spec.replicas 3. Fails (HOLE) while the hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"

ctl_stage
ns=n1
druid_etcd $ns etcd-main --no-store
for i in 0 1 2; do # the member claims, as the StatefulSet controller creates them
    printf '%s\n' "---" "apiVersion: v1" "kind: PersistentVolumeClaim" \
        "metadata: {name: etcd-main-etcd-main-$i, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}" \
        "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}"
done | kc -n $ns create -f - >/dev/null || ctl_fail "cannot create the member claims"
[ -z "$(kc -n $ns get etcd etcd-main -o jsonpath='{.spec.backup.store}')" ] || ctl_fail "etcd-main has a backup store"
ctl_start
kc -n $ns annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null || ctl_fail "cannot hibernate"
ctl_wait_phase $ns etcd-main Hibernated 60
[ "$(kc -n $ns get statefulset etcd-main -o jsonpath='{.spec.replicas}')" = 0 ] || ctl_fail "Hibernated, StatefulSet not at 0"
kc -n $ns delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null || ctl_fail "cannot delete the pods"
echo "N1: hibernated without a backup store: claims etcd-main-etcd-main-0..2 hold its only copy"

WH_AS_NS=$ns wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    ctl_fail "alice cannot disable protection"
wh_caught_up # the webhook's caches
out=$(WH_AS_NS=$ns wh_as alice patch statefulset etcd-main --type merge -p '{"spec":{"ordinals":{"start":3}}}' 2>&1)
echo "N1: alice's ordinals move: $(tr '\n' ' ' <<<"$out" | head -c 300)"
kc -n $ns annotate etcd etcd-main etcd-warden.io/hibernate- >/dev/null || ctl_fail "cannot wake"
ksim_wait 60 bash -c "[ \"\$(kubectl --kubeconfig '$KUBECONFIG' -n $ns get statefulset etcd-main -o jsonpath='{.spec.replicas}')\" = 3 ]" ||
    ctl_fail "the wake did not scale the StatefulSet to 3 (phase $(ctl_phase $ns etcd-main))"
ksim_wait 60 bash -c "[ -z \"\$(kubectl --kubeconfig '$KUBECONFIG' -n $ns get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/hibernation-phase}')\" ]" ||
    ctl_fail "the wake did not end (phase $(ctl_phase $ns etcd-main))"
ctl_stop

got=$(kc -n $ns get statefulset etcd-main -o json | jq -r '"\(.spec.replicas) \(.spec.ordinals.start // 0)"')
for i in 0 1 2; do
    [ -n "$(kc -n $ns get pvc etcd-main-etcd-main-$i -o jsonpath='{.metadata.name}' 2>/dev/null)" ] ||
        ctl_fail "claim etcd-main-etcd-main-$i is not stored"
done
[ "$(kc -n $ns get etcd etcd-main -o jsonpath='{.spec.replicas}/{.metadata.deletionTimestamp}')" = 3/ ] ||
    ctl_fail "Etcd etcd-main is not live at 3 replicas"
holes=0
if [ "${got%% *}" -gt 0 ] && [ "${got#* }" -ge 3 ]; then
    echo "HOLE: N1: StatefulSet $ns/etcd-main woken at ${got%% *} replicas from ordinal ${got#* }: its members start on new, empty claims etcd-main-etcd-main-${got#* }.. while etcd-main-etcd-main-0..2, the only copy of the data of Etcd etcd-main (no backup store), are read by no member"
    holes=$((holes + 1))
else echo "held: N1: StatefulSet stored as \"$got\" (replicas, start)"; fi

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a store-less Etcd woken off its members' claims"; exit 1; }
echo "attack8_storeless_ordinals: ok"
