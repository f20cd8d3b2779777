#!/usr/bin/env bash
# A StatefulSet of an Etcd taken from 3 members to 1, not 0, against the webhook registered as
# the chart registers it (component protection on). Issue 30: no StatefulSet of an Etcd reaches
# fewer members without the final snapshot, break glass aside. etcd-druid never does this (its
# Etcd CRD allows spec.replicas to grow or go to 0 only), so nobody's partial scale-down is
# legitimate; with `persistentVolumeClaimRetentionPolicy.whenScaled: Delete` the StatefulSet
# controller deletes the PVCs of members 1 and 2, and member 0 alone has no quorum and need
# not hold the last acknowledged write (a majority is members 1 and 2).
#   S1. etcd-druid's identity patches spec.replicas 3 -> 1 with whenScaled: Delete (UPDATE).
#   S2. a tenant (protection disabled) through the scale subresource, 3 -> 1.
#   S3. a tenant (protection disabled) by a JSON patch removing spec.replicas (defaults to 1).
#   S4. a tenant orphan-deletes the StatefulSet and creates it again at 1 replica with
#       whenScaled: Delete while pods 0..2 run (it adopts them and deletes 1 and 2).
#   S5. etcd-druid's identity by a strategic merge patch whose $retainKeys drops spec.replicas.
# Checked against what kube-sim stores. Fails while a hole exists.
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
field() { kc -n shoot get statefulset "$1" -o jsonpath="$2" 2>/dev/null; }

# ---- control: the same request to 0 is refused
if kc_druid -n shoot patch statefulset etcd-a --type merge -p '{"spec":{"replicas":0}}' >/dev/null 2>&1; then
    hole "control: etcd-druid's patch of etcd-a to 0 admitted"
else held "control: etcd-druid's patch of etcd-a to 0 refused"; fi

# ---- S1: etcd-druid's identity, 3 -> 1 with whenScaled: Delete
kc_druid -n shoot patch statefulset etcd-a --type merge \
    -p '{"spec":{"replicas":1,"persistentVolumeClaimRetentionPolicy":{"whenScaled":"Delete"}}}' >/dev/null 2>&1
if [ "$(field etcd-a '{.spec.replicas}')" = 1 ]; then
    hole "S1: etcd-druid's identity scaled StatefulSet etcd-a 3 -> 1 (whenScaled: $(field etcd-a '{.spec.persistentVolumeClaimRetentionPolicy.whenScaled}')): members 1 and 2 and their PVCs deleted, no snapshot"
else held "S1: etcd-druid's 3 -> 1 refused"; fi

# ---- S2: a tenant through the scale subresource
wh_as alice annotate etcd etcd-b druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    wh_fail "alice cannot disable protection"
wh_caught_up # the caches see it
wh_as alice scale statefulset etcd-b --replicas=1 >/dev/null 2>&1
if [ "$(field etcd-b '{.spec.replicas}')" = 1 ]; then
    hole "S2: alice scaled StatefulSet etcd-b 3 -> 1 through statefulsets/scale (protection disabled)"
else held "S2: scale subresource 3 -> 1 refused"; fi

# ---- S3: a tenant removes spec.replicas (the API server defaults it to 1)
wh_as alice annotate etcd etcd-c druid.gardener.cloud/disable-etcd-component-protection= >/dev/null
wh_caught_up # the caches see it
wh_as alice patch statefulset etcd-c --type json -p '[{"op":"remove","path":"/spec/replicas"}]' >/dev/null 2>&1
if [ "$(field etcd-c '{.spec.replicas}')" = 1 ]; then
    hole "S3: alice's JSON patch removing spec.replicas took StatefulSet etcd-c 3 -> 1 (protection disabled)"
else held "S3: removal of spec.replicas refused"; fi

# ---- S4: orphan delete, then CREATE at 1 replica with whenScaled: Delete
wh_as alice annotate etcd etcd-d druid.gardener.cloud/disable-etcd-component-protection= >/dev/null
wh_await_admitted 10 "S4: orphan delete refused" wh_as alice delete statefulset etcd-d --cascade=orphan
wh_as alice delete statefulset etcd-d --cascade=orphan >/dev/null 2>&1 || wh_fail "S4: orphan delete refused"
wh_as alice create -f - >/dev/null 2>&1 <<EOF
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: etcd-d, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-d}}
spec:
  replicas: 1
  persistentVolumeClaimRetentionPolicy: {whenScaled: Delete, whenDeleted: Retain}
  serviceName: etcd-d-peer
  selector: {matchLabels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-d}}
  template:
    metadata: {labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-d}}
    spec: {containers: [{name: etcd, image: etcd-wrapper}]}
EOF
if [ "$(field etcd-d '{.spec.replicas}')" = 1 ] && kc -n shoot get pod etcd-d-2 >/dev/null 2>&1; then
    hole "S4: StatefulSet etcd-d re-created by alice at 1 replica (whenScaled: Delete) while its pods etcd-d-1, etcd-d-2 run (adopted and deleted)"
else held "S4: CREATE at 1 replica over pods 0..2 refused"; fi

# ---- S5: etcd-druid's identity, strategic merge $retainKeys without replicas
kc_druid -n shoot patch statefulset etcd-e --type strategic \
    -p '{"spec":{"$retainKeys":["selector","serviceName","template","volumeClaimTemplates"]}}' >/dev/null 2>&1
if [ "$(field etcd-e '{.spec.replicas}')" = 1 ]; then
    hole "S5: etcd-druid's strategic merge patch with \$retainKeys dropping spec.replicas took StatefulSet etcd-e 3 -> 1"
else held "S5: \$retainKeys dropping spec.replicas refused"; fi

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a StatefulSet of an Etcd reached fewer members without a final snapshot"; exit 1; }
echo "attack3_partial_scale: ok"
