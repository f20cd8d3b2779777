#!/usr/bin/env bash
# A live Etcd's member claims deleted once its pods are gone, against the webhook registered as
# the chart registers it. Issue 30: a StatefulSet of an Etcd never reaches fewer members (0
# included) without a final snapshot that holds its last write, whoever asks, break glass
# aside; a member's volume is never deleted. The fifth attack closed "a claim a member still
# mounts" after an orphaning DELETE of the StatefulSet: its PVC DELETE is refused while a pod
# of the Etcd mounts it. Pods are no component: nothing routes their DELETE to warden-webhook,
# and a pod of an orphaned StatefulSet is not re-created by anyone. So a tenant deletes the
# pods first, and the claims are then of no StatefulSet and mounted by no pod: admitted, on an
# Etcd that is neither deleted nor hibernated, with no snapshot. etcd-druid re-creates the
# StatefulSet on its next reconcile and every member starts on a new, empty claim: the
# cluster's data is what the store held before (the writes since the last snapshot lost).
#   P1. protection disabled: alice orphan-deletes StatefulSet etcd-a (3 replicas), deletes pods
#       etcd-a-0..2, then deletes PVCs etcd-a-etcd-a-0..2 one by one.
#   P2. protection disabled: alice orphan-deletes StatefulSet etcd-b, deletes its pods with
#       --wait=false (a pod being deleted, still running on a cluster for its grace period,
#       no longer counts as mounting it), then the PVCs by label selector.
#   P3. protection on: etcd-druid orphan-deletes StatefulSet etcd-c (its re-creation held open),
#       alice deletes the pods, then the PVCs (component protection is expected to refuse her).
# Oracle: what kube-sim stores: a member PVC gone (or carrying a deletionTimestamp) while the
# Etcd, at spec.replicas 3, has no deletionTimestamp and no hibernation was asked (no
# snapshot). Fails (HOLE) while the hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
wh_register_guard || wh_fail "cannot register the webhooks"

for e in etcd-a etcd-b etcd-c; do druid_etcd shoot $e; done # StatefulSets at 3, pods 0..2
for e in etcd-a etcd-b etcd-c; do # the member PVCs, as the StatefulSet controller creates them
    for i in 0 1 2; do
        cat <<EOF
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $e-$e-$i, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: $e}}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}
EOF
    done
done | kc -n shoot create -f - >/dev/null || wh_fail "cannot create the member PVCs"
for e in etcd-a etcd-b; do
    wh_as alice annotate etcd $e druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
        wh_fail "alice cannot disable protection of $e"
done
wh_caught_up # the caches see the objects

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
held() { echo "held: $*"; }
gone() { # PVC NAME deleted or being deleted
    local ts
    ts=$(kc -n shoot get pvc "$1" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null) || return 0
    [ -n "$ts" ]
}
live() { # Etcd E live at 3 replicas, not being deleted, no hibernation asked
    [ "$(kc -n shoot get etcd "$1" -o jsonpath='{.spec.replicas}/{.metadata.deletionTimestamp}/{.metadata.annotations.etcd-warden\.io/hibernate}')" = 3// ]
}
orphan() { # orphan-delete StatefulSet E as TOKEN
    wh_await_admitted 10 "$3: the orphaning delete of StatefulSet $1 by $2 refused" \
        wh_as "$2" delete statefulset "$1" --cascade=orphan
    wh_as "$2" delete statefulset "$1" --cascade=orphan --wait=false >/dev/null 2>&1 ||
        wh_fail "$3: the orphaning delete of StatefulSet $1 by $2 refused"
    ksim_wait 10 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n shoot get statefulset $1 >/dev/null 2>&1" ||
        wh_fail "$3: StatefulSet $1 is still stored"
    kc -n shoot get pod "$1-0" >/dev/null 2>&1 || wh_fail "$3: the pods of $1 did not survive the orphaning delete"
}
count_gone() {
    local n=0 i
    for i in 0 1 2; do gone "$1-$1-$i" && n=$((n + 1)); done
    echo $n
}

# ---- control: the fifth attack's fix, the pods still there
orphan etcd-a alice control
wh_caught_up # the caches see it gone
wh_as alice delete pvc etcd-a-etcd-a-0 --wait=false >/dev/null 2>&1
gone etcd-a-etcd-a-0 && wh_fail "control: PVC etcd-a-etcd-a-0 deleted while pod etcd-a-0 mounts it (the fifth attack's fix is not there)"
echo "ok: control: the claim of a pod that mounts it is kept"

# ---- P1: the pods first, then the claims one by one
for i in 0 1 2; do
    wh_as alice delete pod etcd-a-$i --wait=false >/dev/null 2>&1 || wh_fail "P1: alice cannot delete pod etcd-a-$i"
done
ksim_wait 10 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n shoot get pod etcd-a-0 >/dev/null 2>&1" ||
    echo "note: P1: pod etcd-a-0 is still stored (being deleted)"
sleep 1
out=""
for i in 0 1 2; do out+=$(wh_as alice delete pvc etcd-a-etcd-a-$i --wait=false 2>&1)$'\n'; done
n=$(count_gone etcd-a)
if [ "$n" -gt 0 ] && live etcd-a; then
    hole "P1: alice (protection disabled) deleted $n of the 3 member PVCs of live Etcd etcd-a (spec.replicas 3, no hibernation, no snapshot, no break glass) after an orphaning delete of its StatefulSet and a delete of its pods: etcd-druid re-creates the StatefulSet and every member starts on an empty claim"
else held "P1: the member PVCs of etcd-a kept: $out"; fi

# ---- P2: the pods being deleted (--wait=false), the claims by label selector
orphan etcd-b alice P2
wh_as alice delete pod -l app.kubernetes.io/part-of=etcd-b --wait=false >/dev/null 2>&1 ||
    wh_fail "P2: alice cannot delete the pods of etcd-b"
sleep 1
out=$(wh_as alice delete pvc -l app.kubernetes.io/part-of=etcd-b --wait=false 2>&1)
n=$(count_gone etcd-b)
if [ "$n" -gt 0 ] && live etcd-b; then
    hole "P2: alice (protection disabled) deleted $n of the 3 member PVCs of live Etcd etcd-b by label selector once its StatefulSet was orphan-deleted and its pods deleted (no snapshot, no break glass)"
else held "P2: the member PVCs of etcd-b kept: $out"; fi

# ---- P3: protection on, etcd-druid's orphaning delete held open
orphan etcd-c druid P3
for i in 0 1 2; do wh_as alice delete pod etcd-c-$i --wait=false >/dev/null 2>&1; done
sleep 1
out=$(wh_as alice delete pvc -l app.kubernetes.io/part-of=etcd-c --wait=false 2>&1)
n=$(count_gone etcd-c)
if [ "$n" -gt 0 ] && live etcd-c; then
    hole "P3: alice (protection on) deleted $n of the 3 member PVCs of live Etcd etcd-c during etcd-druid's re-creation of its StatefulSet, after deleting its pods (no snapshot, no break glass): $(tr '\n' ' ' <<<"$out")"
else held "P3: the member PVCs of etcd-c kept (protection on): $(head -c 300 <<<"$out")"; fi

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): the member volumes of a live Etcd deleted without a final snapshot"; exit 1; }
echo "attack6_pods_then_claims: ok"
