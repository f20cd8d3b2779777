#!/usr/bin/env bash
# Paths to zero around the scale-down guard that go through the Etcd's status or request
# shapes, against the webhook registered as the chart registers it (component protection on).
# Issue 30: no StatefulSet of an Etcd with a backup store reaches 0 replicas without the final
# snapshot, break glass aside. The guard reads two facts from the Etcd's status, which the
# state-annotation rule does not cover:
#   - a CREATE of the Etcd's StatefulSet at 0 is guarded only "when the Etcd has members
#     (status.replicas above 0)";
#   - a DELETE of the StatefulSet with its pods is allowed while "etcd-druid's Delete operation
#     is in progress" (status.lastOperation).
# Each attempt is checked against what kube-sim stores (ground truth). Fails while a hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
wh_register_guard || wh_fail "cannot register the webhooks"

for e in etcd-a etcd-b etcd-c etcd-d etcd-e; do druid_etcd shoot $e; done
wh_caught_up # the caches see the objects

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
held() { echo "held: $*"; }
sts0() { # print the StatefulSet NAME at 0 replicas, labelled as etcd-druid labels it
    cat <<EOF
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: $1, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: $1}}
spec:
  replicas: ${2:-0}
  serviceName: $1-peer
  selector: {matchLabels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: $1}}
  template:
    metadata: {labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: $1}}
    spec: {containers: [{name: etcd, image: etcd-wrapper}]}
EOF
}
replicas() { kc -n shoot get statefulset "$1" -o jsonpath='{.spec.replicas}' 2>/dev/null; }

# ---- E1 (etcd-druid's status, then the tenant): etcd-druid writes status.replicas from the
# StatefulSet's status.currentReplicas (reconcile_status.go), the pods at the current revision:
# during a rolling update whose last pod is not ready yet that is 0 with 3 pods running (2
# ready, 3 members). A tenant with protection disabled orphan-deletes and re-creates the
# StatefulSet at 0 in that window: the old pods are adopted and deleted.
wh_as alice annotate etcd etcd-a druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    wh_fail "alice cannot disable protection"
kc_druid -n shoot patch etcd etcd-a --subresource=status --type merge \
    -p '{"status":{"replicas":0,"currentReplicas":0,"readyReplicas":2}}' >/dev/null ||
    wh_fail "etcd-druid cannot write the status"
wh_await_admitted 10 "E1: orphan delete refused" wh_as alice delete statefulset etcd-a --cascade=orphan
wh_as alice delete statefulset etcd-a --cascade=orphan >/dev/null 2>&1 || wh_fail "E1: orphan delete refused"
if out=$(wh_as alice create -f - 2>&1 < <(sts0 etcd-a)) && [ "$(replicas etcd-a)" = 0 ]; then
    hole "E1: mid-rollout status (replicas 0 = currentReplicas, 3 members), alice orphan-deleted and re-created StatefulSet etcd-a at 0 with etcd-druid's labels"
else held "E1: CREATE at 0 refused mid-rollout: $out"; fi

# ---- E2 (tenant): status.lastOperation says Delete, StatefulSet deleted with its pods
wh_as alice annotate etcd etcd-b druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    wh_fail "alice cannot disable protection"
wh_caught_up # the caches see it
if wh_as alice delete statefulset etcd-b --dry-run=server >/dev/null 2>&1; then
    wh_fail "E2 control: alice's DELETE of StatefulSet etcd-b with its pods admitted without any forgery"
fi
if wh_as alice patch etcd etcd-b --subresource=status --type merge \
    -p '{"status":{"lastOperation":{"type":"Delete","state":"Processing","description":"x","runID":"r","lastUpdateTime":"2026-11-29T00:00:00Z"}}}' >/dev/null 2>&1; then
    wh_caught_up # the caches see it
    if wh_as alice delete statefulset etcd-b --wait=false >/dev/null 2>&1 && [ -z "$(replicas etcd-b)" ]; then
        hole "E2: alice set Etcd etcd-b's status.lastOperation to Delete/Processing (no deletionTimestamp) and deleted StatefulSet etcd-b with its 3 pods"
    else held "E2: DELETE with pods refused after a forged lastOperation"; fi
else held "E2: alice may not write etcds/status"; fi

# ---- E3 (etcd-druid): a stale status.replicas 0, then etcd-druid re-creates its StatefulSet at 0
kc_druid -n shoot patch etcd etcd-c --subresource=status --type merge -p '{"status":{"replicas":0}}' >/dev/null ||
    wh_fail "etcd-druid cannot write the status"
wh_await_admitted 10 "E3: orphan delete refused" kc_druid -n shoot delete statefulset etcd-c --cascade=orphan
kc_druid -n shoot delete statefulset etcd-c --cascade=orphan >/dev/null 2>&1 || wh_fail "E3: orphan delete refused"
kc_druid -n shoot create -f - >/dev/null 2>&1 < <(sts0 etcd-c)
if [ "$(replicas etcd-c)" = 0 ]; then
    hole "E3: etcd-druid (status.replicas 0) orphan-deleted and re-created StatefulSet etcd-c at 0"
else held "E3: etcd-druid's CREATE at 0 refused"; fi

# ---- E4 (tenant): request shapes for 0 (protection disabled: the guard still binds)
wh_as alice annotate etcd etcd-d druid.gardener.cloud/disable-etcd-component-protection= >/dev/null
wh_caught_up # the caches see it
for p in '{"spec":{"replicas":"0"}}' '{"spec":{"replicas":0.0}}' '{"spec":{"replicas":-0}}' '{"spec":{"replicas":0.4}}'; do
    wh_as alice patch statefulset etcd-d --type merge -p "$p" >/dev/null 2>&1
    r=$(replicas etcd-d)
    case $r in 3) held "E4: patch $p refused or not 0 (stored $r)" ;;
    *) echo "note: E4: alice's patch $p admitted, stored replicas '$r' (kube-sim stores it; a real API server refuses a non-integer before admission)"
       kc -n shoot patch statefulset etcd-d --type merge -p '{"spec":{"replicas":3}}' >/dev/null ;;
    esac
done

# ---- E5 (tenant): state annotations and unknown etcd-warden.io keys
kc_as warden-token -n shoot annotate etcd etcd-e etcd-warden.io/status-backup-exists=true >/dev/null ||
    wh_fail "warden-controller cannot write status-backup-exists"
wh_caught_up # the caches see it
for a in "etcd-warden.io/hibernation-phase=ScalingDown" "etcd-warden.io/final-snapshot-checked=x/1" \
    "etcd-warden.io/Traffic-cut-at=2000-01-01T00:00:00Z" "etcd-warden.io/status-backup-exists-"; do
    if wh_as alice annotate etcd etcd-e --overwrite "$a" >/dev/null 2>&1; then hole "E5: alice annotate $a admitted"
    else held "E5: alice annotate $a refused"; fi
done
if kc_druid -n shoot annotate etcd etcd-e --overwrite etcd-warden.io/hibernation-phase=ScalingDown >/dev/null 2>&1; then
    hole "E5: etcd-druid wrote hibernation-phase"
else held "E5: etcd-druid's hibernation-phase refused"; fi

# ---- E6 (warden-controller's identity): scale subresource to 0, and a patch outside ScalingDown
if kc_as warden-token -n shoot scale statefulset etcd-e --replicas=0 >/dev/null 2>&1 && [ "$(replicas etcd-e)" = 0 ]; then
    hole "E6: warden-controller's statefulsets/scale to 0 admitted outside ScalingDown"
else held "E6: warden-controller's scale subresource to 0 refused"; fi
if kc_as warden-token -n shoot patch statefulset etcd-e --type merge -p '{"spec":{"replicas":0}}' >/dev/null 2>&1; then
    hole "E6: warden-controller's patch to 0 admitted with no ScalingDown stamp"
else held "E6: warden-controller's patch to 0 without a stamp refused"; fi

# ---- E7 (tenant): a PVC of the StatefulSet known only by its owner (name unlike a member, no
# labels): the owner reference dropped by an UPDATE (not judged: only label changes are), then
# the PVC deleted
uid=$(kc -n shoot get statefulset etcd-e -o jsonpath='{.metadata.uid}')
kc -n shoot apply -f - >/dev/null <<EOF || wh_fail "cannot create the owned PVC"
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data-e-0
  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: etcd-e, uid: $uid}]
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}
EOF
wh_caught_up # the caches see it
if wh_as alice delete pvc data-e-0 --dry-run=server >/dev/null 2>&1; then
    echo "note: E7: a PVC owned by StatefulSet etcd-e but named unlike a member is not protected"
elif wh_as alice patch pvc data-e-0 --type json -p '[{"op":"remove","path":"/metadata/ownerReferences"}]' >/dev/null 2>&1 &&
    wh_as alice delete pvc data-e-0 --wait=false >/dev/null 2>&1 && ! kc -n shoot get pvc data-e-0 >/dev/null 2>&1; then
    hole "E7: PVC data-e-0 owned by StatefulSet etcd-e: owner reference removed, then deleted by alice"
else held "E7: owned PVC's owner-reference removal or delete refused"; fi

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s)"; exit 1; }
echo "attack2_guard_status: ok"
