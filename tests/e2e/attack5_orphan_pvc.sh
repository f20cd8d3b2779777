#!/usr/bin/env bash
# A running member's PVC deleted once its StatefulSet is gone but its pods still run, against
# the webhook registered as the chart registers it (component protection on). Issue 30: a
# member's volume is never deleted while it runs, whoever asks, break glass aside. An orphaning
# DELETE of the StatefulSet leaves the member pods running on their claims (etcd-druid does it
# itself before it re-creates a StatefulSet whose immutable fields changed; a tenant may do it
# with protection disabled); a claim is then recognised by no StatefulSet and its DELETE is
# "not supported", admitted. On a cluster the claim waits for its pod
# (kubernetes.io/pvc-protection); when etcd-druid re-creates the StatefulSet and rolls the pods
# (or the pod restarts, is evicted), the member starts on a new, empty volume.
#   O1. protection on: etcd-druid orphan-deletes StatefulSet etcd-a (its re-creation, held
#       open here: the CREATE has not come yet), then a tenant deletes PVC etcd-a-etcd-a-0 of
#       the running pod etcd-a-0.
#   O2. protection disabled: a tenant orphan-deletes StatefulSet etcd-b, then deletes the member
#       PVCs by label selector (kubectl delete pvc -l).
# Oracle: what kube-sim stores (the PVC gone or carrying a deletionTimestamp while pod <sts>-0
# is stored and the Etcd, at spec.replicas 3, has no deletionTimestamp). Fails (HOLE) while the
# hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
wh_register_guard || wh_fail "cannot register the webhooks"

for e in etcd-a etcd-b; do druid_etcd shoot $e; done # StatefulSets at 3, pods 0..2
for e in etcd-a etcd-b; do # the member PVCs, as the StatefulSet controller creates them
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
wh_caught_up # the caches see the objects

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
held() { echo "held: $*"; }
gone() { # PVC NAME deleted or being deleted
    local ts
    ts=$(kc -n shoot get pvc "$1" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null) || return 0
    [ -n "$ts" ]
}
running() { # Etcd E live at 3 replicas, its pod E-0 stored
    [ "$(kc -n shoot get etcd "$1" -o jsonpath='{.spec.replicas}/{.metadata.deletionTimestamp}')" = 3/ ] &&
        kc -n shoot get pod "$1-0" >/dev/null 2>&1
}

# ---- control: with the StatefulSet there, a tenant's delete is refused
wh_as alice delete pvc etcd-a-etcd-a-1 --wait=false >/dev/null 2>&1
if gone etcd-a-etcd-a-1; then hole "control: alice deleted PVC etcd-a-etcd-a-1 of a StatefulSet at 3"
else held "control: alice's delete of PVC etcd-a-etcd-a-1 refused while StatefulSet etcd-a runs it"; fi

# ---- O1: etcd-druid's orphaning delete, then a tenant (protection on)
kc_druid -n shoot delete statefulset etcd-a --cascade=orphan --wait=false >/dev/null 2>&1 ||
    wh_fail "O1: etcd-druid's orphaning delete of StatefulSet etcd-a refused"
ksim_wait 10 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n shoot get statefulset etcd-a >/dev/null 2>&1" ||
    wh_fail "O1: StatefulSet etcd-a is still stored"
running etcd-a || wh_fail "O1: the pods of etcd-a did not survive the orphaning delete"
wh_caught_up # the caches see it gone
out=$(wh_as alice delete pvc etcd-a-etcd-a-0 --wait=false 2>&1)
if gone etcd-a-etcd-a-0 && running etcd-a; then
    hole "O1: alice (protection on) deleted PVC etcd-a-etcd-a-0 while pod etcd-a-0 runs on it (StatefulSet orphan-deleted by etcd-druid, Etcd at 3, no snapshot, no break glass): $out"
else held "O1: alice's delete of PVC etcd-a-etcd-a-0 refused after the orphaning delete: $out"; fi

# ---- O2: a tenant, protection disabled: orphaning delete, then the PVCs by label
wh_as alice annotate etcd etcd-b druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    wh_fail "alice cannot disable protection"
wh_await_admitted 10 "O2: alice's orphaning delete of StatefulSet etcd-b refused" \
    wh_as alice delete statefulset etcd-b --cascade=orphan
wh_as alice delete statefulset etcd-b --cascade=orphan --wait=false >/dev/null 2>&1 ||
    wh_fail "O2: alice's orphaning delete of StatefulSet etcd-b refused"
ksim_wait 10 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n shoot get statefulset etcd-b >/dev/null 2>&1" ||
    wh_fail "O2: StatefulSet etcd-b is still stored"
running etcd-b || wh_fail "O2: the pods of etcd-b did not survive the orphaning delete"
sleep 1
wh_as alice delete pvc -l app.kubernetes.io/part-of=etcd-b --wait=false >/dev/null 2>&1
n=0
for i in 0 1 2; do gone etcd-b-etcd-b-$i && n=$((n + 1)); done
if [ "$n" -gt 0 ] && running etcd-b; then
    hole "O2: alice (protection disabled) deleted $n of the 3 PVCs of etcd-b's running pods by label selector after orphaning its StatefulSet (Etcd at 3, no snapshot, no break glass)"
else held "O2: the member PVCs of etcd-b's running pods kept after the orphaning delete"; fi

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a running member's volume deleted without a final snapshot"; exit 1; }
echo "attack5_orphan_pvc: ok"
