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
sleep 2 # the caches see the objects
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

druid_actor_stop
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): an Etcd reached fewer members without a final snapshot"; exit 1; }
echo "attack3_etcd_replicas: ok"
