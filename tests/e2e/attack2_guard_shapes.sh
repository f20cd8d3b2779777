#!/usr/bin/env bash
# Request shapes that take every member of an Etcd away without spec.replicas reaching 0, and
# member PVCs named as Gardener names them, against the webhook registered as the chart
# registers it (component protection on). Issue 30: no path to zero without the final
# snapshot, break glass aside; a PVC is a member's by name `<volumeClaimTemplate>-<sts>-<n>`.
#   O1. spec.ordinals.start moved past the members (UPDATE, protection disabled): the
#       StatefulSet controller deletes pods 0..2 and starts members 3..5 on new, empty PVCs.
#   O2. the same through an orphan delete and a CREATE at 3 replicas starting at ordinal 3.
#   P1. the member PVC of a StatefulSet whose volumeClaimTemplate is named as Gardener names
#       it (main-etcd, not the Etcd's name), unlabelled: deleted.
# Checked against what kube-sim stores. Fails while a hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
wh_register_guard || wh_fail "cannot register the webhooks"

for e in etcd-f etcd-g etcd-h; do druid_etcd shoot $e; done
druid_etcd shoot etcd-i --claim-template main-etcd
wh_caught_up # the caches see the objects

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
held() { echo "held: $*"; }
field() { kc -n shoot get statefulset "$1" -o jsonpath="$2" 2>/dev/null; }

# ---- control: etcd-druid's scale to 0 (its pre-sync fallback) is refused
if kc_druid -n shoot patch statefulset etcd-f --type merge -p '{"spec":{"replicas":0}}' >/dev/null 2>&1; then
    hole "control: etcd-druid's patch of etcd-f to 0 admitted"
else held "control: etcd-druid's patch of etcd-f to 0 refused"; fi

# ---- O1: ordinals.start moved past the members
wh_as alice annotate etcd etcd-f druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    wh_fail "alice cannot disable protection"
wh_caught_up # the caches see it
if wh_as alice patch statefulset etcd-f --type merge -p '{"spec":{"ordinals":{"start":3}}}' >/dev/null 2>&1 &&
    [ "$(field etcd-f '{.spec.ordinals.start}')" = 3 ]; then
    hole "O1: alice moved StatefulSet etcd-f's ordinals.start 0 -> 3 at 3 replicas (pods etcd-f-0..2 deleted, members 3..5 on empty PVCs)"
else held "O1: ordinals.start change refused"; fi
if kc_druid -n shoot patch statefulset etcd-g --type merge -p '{"spec":{"ordinals":{"start":5}}}' >/dev/null 2>&1 &&
    [ "$(field etcd-g '{.spec.ordinals.start}')" = 5 ]; then
    hole "O1: etcd-druid's identity moved StatefulSet etcd-g's ordinals.start 0 -> 5"
else held "O1: etcd-druid's ordinals.start change refused"; fi

# ---- O2: orphan delete, then CREATE at 3 replicas from ordinal 3
wh_as alice annotate etcd etcd-h druid.gardener.cloud/disable-etcd-component-protection= >/dev/null
wh_await_admitted 10 "O2: orphan delete refused" wh_as alice delete statefulset etcd-h --cascade=orphan
wh_as alice delete statefulset etcd-h --cascade=orphan >/dev/null 2>&1 || wh_fail "O2: orphan delete refused"
wh_as alice create -f - >/dev/null 2>&1 <<EOF
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: etcd-h, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-h}}
spec:
  replicas: 3
  ordinals: {start: 3}
  serviceName: etcd-h-peer
  selector: {matchLabels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-h}}
  template:
    metadata: {labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-h}}
    spec: {containers: [{name: etcd, image: etcd-wrapper}]}
EOF
if [ "$(field etcd-h '{.spec.ordinals.start}')" = 3 ]; then
    hole "O2: StatefulSet etcd-h re-created by alice at 3 replicas from ordinal 3 (adopts and deletes pods etcd-h-0..2)"
else held "O2: CREATE from ordinal 3 refused"; fi

# ---- P1: a member PVC named after a volumeClaimTemplate that is not the Etcd's name
kc_druid -n shoot patch statefulset etcd-i --type json \
    -p '[{"op":"replace","path":"/spec/volumeClaimTemplates/0/metadata/name","value":"main-etcd"}]' >/dev/null ||
    wh_fail "cannot rename etcd-i's volumeClaimTemplate (setup, as etcd-druid would have created it)"
kc -n shoot apply -f - >/dev/null <<EOF || wh_fail "cannot create the PVC"
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: main-etcd-etcd-i-0, labels: {x: "y"}}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}
EOF
wh_caught_up # the caches see it
if wh_as alice delete pvc main-etcd-etcd-i-0 --wait=false >/dev/null 2>&1 &&
    ! kc -n shoot get pvc main-etcd-etcd-i-0 >/dev/null 2>&1; then
    hole "P1: member PVC main-etcd-etcd-i-0 (volumeClaimTemplate main-etcd, labels x=y) deleted by alice, protection on"
else held "P1: delete of PVC main-etcd-etcd-i-0 recognised by name refused"; fi

# ---- DC (tenant): DELETE of the collection (kube-apiserver admits each item as a DELETE)
kc -n shoot apply -f - >/dev/null <<EOF || wh_fail "cannot create the PVC"
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: etcd-g-etcd-g-0, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-g}}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}
EOF
wh_caught_up # the caches see it
wh_as alice delete pvc --all --wait=false >/dev/null 2>&1
wh_as alice delete --raw /api/v1/namespaces/shoot/persistentvolumeclaims >/dev/null 2>&1
if kc -n shoot get pvc etcd-g-etcd-g-0 >/dev/null 2>&1; then held "DC: PVC collection delete refused for the member PVC"
else hole "DC: member PVC etcd-g-etcd-g-0 deleted by a DELETE of the collection"; fi
wh_as alice annotate etcd etcd-g druid.gardener.cloud/disable-etcd-component-protection= >/dev/null
wh_caught_up # the caches see it
wh_as alice delete --raw /apis/apps/v1/namespaces/shoot/statefulsets >/dev/null 2>&1
if [ -n "$(field etcd-g '{.spec.replicas}')" ]; then held "DC: StatefulSet collection delete (with pods) refused for etcd-g"
else hole "DC: StatefulSet etcd-g deleted with its pods by a DELETE of the collection"; fi

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s)"; exit 1; }
echo "attack2_guard_shapes: ok"
