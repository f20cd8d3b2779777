#!/usr/bin/env bash
# Paths to zero around the scale-down guard, as a tenant with ordinary namespace rights (alice),
# against the webhook registered as the chart registers it (component protection on:
# etcdcomponents with the managed-by objectSelector; members (StatefulSet CREATE/UPDATE/DELETE,
# PVC UPDATE/DELETE) without it; stsscale; the Etcd webhook on etcds and etcds/scale). Issue 30 asks that no StatefulSet of
# an Etcd reaches 0 replicas by any path (orphan delete + re-create, PVC relabel/delete,
# etcds/scale) without the final snapshot, break glass aside; and that "a PVC is recognised by
# name and ownership as well as labels", "StatefulSet CREATE of an Etcd's StatefulSet",
# "PVC UPDATE (decided on the old object)", "etcds/scale" are covered.
# Each attempt is checked against what kube-sim stores (ground truth), not etcd-warden's words.
# The script fails while any of the holes below exists:
#   A. protection disabled (self-service), orphan delete, then CREATE of StatefulSet
#      shoot/etcd-main at 0 replicas without the managed-by label (its selector and template
#      still match the old pods, which it adopts and deletes): never sent to the webhook.
#   B. PVC of a member relabelled (managed-by removed; PVC UPDATE not registered), then deleted
#      (the DELETE no longer matches the objectSelector): both admitted.
#   C. a restoring Etcd's replicas changed through etcds/scale (kubectl scale etcd), although
#      the same change by patch is refused.
set -uo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
# The chart's registration (componentProtection on), pointed at this webhook.
wh_register_guard || wh_fail "cannot register the webhooks"

druid_etcd shoot etcd-main
druid_etcd shoot etcd-pvc
druid_etcd shoot etcd-r
sel='{app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-pvc}'
# The member PVC as the StatefulSet controller creates it (the selector's labels).
kc -n shoot apply -f - >/dev/null <<EOF || wh_fail "cannot create the PVC"
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: etcd-pvc-etcd-pvc-0, labels: $sel}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}
EOF
wh_caught_up # the caches see the objects

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
held() { echo "held: $*"; }

# ---- baseline: the guard and component protection as documented
if wh_as alice patch statefulset etcd-main --type merge -p '{"spec":{"replicas":0}}' >/dev/null 2>&1; then
    hole "alice's patch of the StatefulSet to 0 admitted"
else held "alice's patch of StatefulSet etcd-main to 0 refused"; fi
if wh_as alice annotate etcd etcd-main --overwrite etcd-warden.io/traffic-cut-at=2000-01-01T00:00:00Z >/dev/null 2>&1; then
    hole "alice forged traffic-cut-at"
else held "alice's forged traffic-cut-at refused"; fi
if wh_as alice delete pvc etcd-pvc-etcd-pvc-0 --dry-run=server >/dev/null 2>&1; then
    hole "alice's delete of a managed PVC admitted (protection on)"
else held "alice's delete of the labelled member PVC refused"; fi

# ---- A: orphan delete, then re-create without the managed-by label at 0 replicas
wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    wh_fail "alice cannot disable protection (self-service)"
wh_caught_up # the caches see it
if out=$(wh_as alice delete statefulset etcd-main --cascade=orphan 2>&1); then
    echo "step: orphan delete of etcd-main admitted (documented: the pods stay)"
    # control: the same CREATE with etcd-druid's labels is refused by the guard
    if wh_as alice create -f - >/dev/null 2>&1 <<EOF; then
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: etcd-main, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}
spec:
  replicas: 0
  serviceName: etcd-main-peer
  selector: {matchLabels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}
  template:
    metadata: {labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}
    spec: {containers: [{name: etcd, image: etcd-wrapper}]}
EOF
        hole "A0: labelled CREATE of etcd-main at 0 admitted"
        kc -n shoot delete statefulset etcd-main --cascade=orphan >/dev/null
    else held "A0: CREATE of etcd-main at 0 with etcd-druid's labels refused"; fi
    wh_as alice create -f - >/dev/null 2>&1 <<EOF
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: etcd-main, labels: {app: etcd-statefulset}}
spec:
  replicas: 0
  serviceName: etcd-main-peer
  podManagementPolicy: Parallel
  selector: {matchLabels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}
  template:
    metadata: {labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}
    spec: {containers: [{name: etcd, image: etcd-wrapper}]}
EOF
    r=$(kc -n shoot get statefulset etcd-main -o jsonpath='{.spec.replicas}' 2>/dev/null)
    if [ "$r" = 0 ]; then
        hole "A: StatefulSet shoot/etcd-main (selector of Etcd etcd-main's pods, Etcd status.replicas 3, backup store, no snapshot) created at 0 replicas without the managed-by label"
    else held "A: unlabelled CREATE at 0 refused (stored replicas: '${r}')"; fi
else
    held "A: orphan delete refused: $out"
fi

# ---- B: PVC relabel, then delete (protection on for etcd-pvc)
if wh_as alice label pvc etcd-pvc-etcd-pvc-0 app.kubernetes.io/managed-by- >/dev/null 2>&1; then
    if wh_as alice delete pvc etcd-pvc-etcd-pvc-0 --wait=false >/dev/null 2>&1 &&
        ! kc -n shoot get pvc etcd-pvc-etcd-pvc-0 >/dev/null 2>&1; then
        hole "B: member PVC etcd-pvc-etcd-pvc-0 relabelled and then deleted by alice, protection on"
    else held "B: relabelled PVC's delete refused"; fi
else held "B: PVC relabel refused"; fi

# ---- B2: a member PVC that carries none of the StatefulSet's labels (relabelled before the
# webhook saw PVC UPDATEs, or re-created by hand) is recognised by its name
# <volumeClaimTemplate>-<StatefulSet>-<ordinal>: its delete is refused with protection on
kc -n shoot apply -f - >/dev/null <<EOF || wh_fail "cannot create the second PVC"
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: etcd-pvc-etcd-pvc-1, labels: {x: "y"}}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}
EOF
wh_caught_up # the caches see it
if wh_as alice delete pvc etcd-pvc-etcd-pvc-1 --wait=false >/dev/null 2>&1 &&
    ! kc -n shoot get pvc etcd-pvc-etcd-pvc-1 >/dev/null 2>&1; then
    hole "B2: member PVC etcd-pvc-etcd-pvc-1 (labels x=y) deleted by alice, protection on"
else held "B2: delete of member PVC etcd-pvc-etcd-pvc-1 recognised by name refused"; fi
if wh_as alice label pvc etcd-pvc-etcd-pvc-1 z=w >/dev/null 2>&1; then
    held "B2: an unrelated label change of a member PVC is allowed"
else hole "B2: alice's label z=w on a member PVC refused (only managed-by/part-of are judged)"; fi

# ---- C: a restoring Etcd's replicas through etcds/scale
kc_as warden-token -n shoot label etcd etcd-r etcd-warden.io/restoring= >/dev/null || wh_fail "cannot mark etcd-r restoring"
wh_caught_up # the caches see it
if wh_as alice patch etcd etcd-r --type merge -p '{"spec":{"replicas":1}}' >/dev/null 2>&1; then
    hole "C: spec patch of a restoring Etcd admitted"
else held "C: spec.replicas patch of restoring etcd-r refused"; fi
if out=$(wh_as alice scale etcd etcd-r --replicas=1 2>&1); then
    r=$(kc -n shoot get etcd etcd-r -o jsonpath='{.spec.replicas}')
    if [ "$r" = 1 ]; then hole "C: restoring Etcd etcd-r scaled 3 -> 1 through etcds/scale ($out)"
    else held "C: scale answered but replicas stay $r"; fi
else held "C: etcds/scale refused: $out"; fi

# ---- D (noted, documented: "without a backup store ... the scale-down is allowed"): the
# tenant drops the store from a live Etcd, then the StatefulSet goes to 0 with no snapshot
druid_etcd shoot etcd-d
if wh_as alice patch etcd etcd-d --type json -p '[{"op":"remove","path":"/spec/backup/store"}]' >/dev/null 2>&1; then
    wh_caught_up # the caches see it
    if wh_as druid patch statefulset etcd-d --type merge -p '{"spec":{"replicas":0}}' >/dev/null 2>&1; then
        echo "note: D: store removed from live Etcd etcd-d by alice, then etcd-druid's scale 3 -> 0 admitted without a snapshot (documented)"
    else held "D: scale to 0 after the store was removed refused"; fi
else held "D: removing the backup store of a live Etcd refused"; fi

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s)"; exit 1; }
echo "attack_guard_paths: ok"
