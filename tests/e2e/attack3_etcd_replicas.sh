#!/usr/bin/env bash
# An Etcd's spec.replicas lowered 3 -> 1 by a namespace editor, component protection on, with
# the webhooks registered as the chart registers them and the druid actor reconciling.
# Issue 30: no StatefulSet of an Etcd reaches fewer members without the final snapshot, break
# glass aside. etcd-druid's own Etcd CRD refuses this (`Replicas can either be increased or be
# downscaled to 0.`, a CEL rule on spec.replicas), but the Etcd CRD the chart installs where
# etcd-druid is not (crds.etcd) has no such rule, kube-sim evaluates none, and etcd-warden's
# Etcd webhook does not refuse it either. etcd-druid then syncs the StatefulSet 3 -> 1, which
# the guard lets through (only 0 is guarded): members 1 and 2 are deleted, member 0 has no
# quorum and need not hold the last acknowledged write.
# The same for spec.volumeClaimTemplate, which names the members' claims (R2).
# Checked against what kube-sim stores. Fails while the hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/druid.sh"
. "$(dirname "$0")/../lib/druidactor.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }
command -v jq >/dev/null || { echo "FAIL: jq is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
druid_register_webhooks
druid_etcd shoot etcd-a
wh_caught_up # the caches see the objects
druid_actor_start shoot --auto-reconcile

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
held() { echo "held: $*"; }
sts() { kc -n shoot get statefulset etcd-a -o jsonpath='{.spec.replicas}' 2>/dev/null; }
[ "$(sts)" = 3 ] || wh_fail "StatefulSet etcd-a is not at 3 replicas"

# ---- R1: the Etcd lowered to 1 member; the loss is the StatefulSet reaching 1
wh_as alice patch etcd etcd-a --type merge -p '{"spec":{"replicas":1}}' >/dev/null 2>&1
etcd_replicas=$(kc -n shoot get etcd etcd-a -o jsonpath='{.spec.replicas}')
if [ "$etcd_replicas" = 1 ]; then
    for _ in $(seq 1 75); do # etcd-druid's sync: 15 s at most
        [ "$(sts)" = 1 ] && break
        sleep 0.2
    done
fi
if [ "$(sts)" = 1 ]; then
    hole "R1: alice lowered Etcd etcd-a's spec.replicas 3 -> 1 (protection on) and etcd-druid scaled StatefulSet etcd-a 3 -> 1, no snapshot"
elif [ "$etcd_replicas" = 1 ]; then
    held "R1: Etcd lowered to 1, but etcd-druid's StatefulSet 3 -> 1 refused (StatefulSet at $(sts))"
else held "R1: Etcd spec.replicas 3 -> 1 refused"; fi

# ---- R2: the claim template set, changed or removed (etcd-druid's CRD rules: immutable); a new
# one would move every member onto new, empty claims. Refused as kube-apiserver words it.
vct() { # ETCD, a JSON merge of spec.volumeClaimTemplate, the value kept, the kubectl message
    local out
    out=$(wh_as alice patch etcd "$1" --type merge -p "{\"spec\":{\"volumeClaimTemplate\":$2}}" 2>&1)
    if [ "$(kc -n shoot get etcd "$1" -o jsonpath='{.spec.volumeClaimTemplate}')" != "$3" ]; then
        hole "R2: alice changed Etcd $1's spec.volumeClaimTemplate to $2: $out"
    elif grep -qF "$4" <<<"$out"; then
        held "R2: $1's spec.volumeClaimTemplate $2 refused: $out"
    else
        hole "R2: $1's spec.volumeClaimTemplate $2 refused without etcd-druid's words: $out"
    fi
}
set_msg='The Etcd "etcd-a" is invalid: spec: Invalid value: "object": etcd.spec.volumeClaimTemplate is an immutable field.'
vct etcd-a '"fresh"' "" "$set_msg"
kc apply -f - >/dev/null <<EOF || wh_fail "cannot create Etcd etcd-v"
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-v, namespace: shoot}
spec:
  replicas: 0
  volumeClaimTemplate: data
  labels: {app: etcd-v}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080}
EOF
vct etcd-v '"fresh"' data 'The Etcd "etcd-v" is invalid: spec.volumeClaimTemplate: Invalid value: "string": etcd.spec.VolumeClaimTemplate is an immutable field'
vct etcd-v null data 'The Etcd "etcd-v" is invalid: spec: Invalid value: "object": etcd.spec.volumeClaimTemplate is an immutable field.'

druid_actor_stop
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): an Etcd reached fewer members without a final snapshot, or its members new claims"; exit 1; }
echo "attack3_etcd_replicas: ok"
