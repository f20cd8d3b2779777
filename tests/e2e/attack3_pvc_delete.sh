#!/usr/bin/env bash
# A running member's PVC deleted, against the webhook registered as the chart registers it
# (component protection on). Issue 30: no member's volume goes without the final snapshot,
# break glass aside; the scale-down guard "binds everyone, the reconcilers and an Etcd with
# protection disabled included". A PVC DELETE is judged by component protection alone, which
# lets the reconcilers and every tenant of an Etcd with protection disabled through. On a real
# cluster the PVC waits for its pod (kubernetes.io/pvc-protection), and the next restart,
# eviction or rollout of that pod completes the deletion and starts the member on a new, empty
# volume.
#   V1. etcd-druid's identity deletes the PVC of member 1 (protection on).
#   V2. a tenant (protection disabled) deletes the PVC of member 0 by name.
#   V3. a tenant (protection disabled) deletes the member PVCs by label selector.
# Checked against what kube-sim stores (the PVC gone or carrying a deletionTimestamp). Fails
# while a hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
wh_register_guard || wh_fail "cannot register the webhooks"

for e in etcd-a etcd-b etcd-c; do druid_etcd shoot $e; done
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
wh_caught_up # the caches see the objects

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
held() { echo "held: $*"; }
gone() { # PVC NAME deleted or being deleted
    local ts
    ts=$(kc -n shoot get pvc "$1" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null) || return 0
    [ -n "$ts" ]
}
[ "$(kc -n shoot get statefulset etcd-a -o jsonpath='{.spec.replicas}')" = 3 ] || wh_fail "etcd-a is not at 3 replicas"

# ---- control: a tenant with protection on is refused
wh_as alice delete pvc etcd-a-etcd-a-0 --wait=false >/dev/null 2>&1
if gone etcd-a-etcd-a-0; then hole "control: alice deleted PVC etcd-a-etcd-a-0 with protection on"
else held "control: alice's delete of PVC etcd-a-etcd-a-0 refused (protection on)"; fi

# ---- V1: etcd-druid's identity
kc_druid -n shoot delete pvc etcd-a-etcd-a-1 --wait=false >/dev/null 2>&1
if gone etcd-a-etcd-a-1; then
    hole "V1: etcd-druid's identity deleted PVC etcd-a-etcd-a-1 of running member etcd-a-1 (StatefulSet at 3, no snapshot)"
else held "V1: etcd-druid's delete of a member PVC refused"; fi

# ---- V2: a tenant, protection disabled, by name
wh_as alice annotate etcd etcd-b druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    wh_fail "alice cannot disable protection"
wh_caught_up # the caches see it
wh_as alice delete pvc etcd-b-etcd-b-0 --wait=false >/dev/null 2>&1
if gone etcd-b-etcd-b-0; then
    hole "V2: alice deleted PVC etcd-b-etcd-b-0 of running member etcd-b-0 (protection disabled, no snapshot)"
else held "V2: alice's delete of a member PVC refused (protection disabled)"; fi

# ---- V3: a tenant, protection disabled, by label selector (a DELETE of the collection)
wh_as alice annotate etcd etcd-c druid.gardener.cloud/disable-etcd-component-protection= >/dev/null
wh_caught_up # the caches see it
wh_as alice delete pvc -l app.kubernetes.io/part-of=etcd-c --wait=false >/dev/null 2>&1
n=0
for i in 0 1 2; do gone etcd-c-etcd-c-$i && n=$((n + 1)); done
if [ "$n" -gt 0 ]; then
    hole "V3: alice deleted $n of the 3 member PVCs of etcd-c by label selector (protection disabled, no snapshot)"
else held "V3: delete of the member PVCs by label selector refused"; fi

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a running member's volume deleted without a final snapshot"; exit 1; }
echo "attack3_pvc_delete: ok"
