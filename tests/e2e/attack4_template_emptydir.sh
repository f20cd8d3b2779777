#!/usr/bin/env bash
# A member's data volume swapped for an emptyDir in the StatefulSet's pod template, by a tenant
# of an Etcd with component protection disabled (druid.gardener.cloud/disable-etcd-component-
# protection), the webhooks registered as the chart registers them.
#   T1. alice patches StatefulSet etcd-a: the etcd container's /var/etcd/data mount moves from
#       the claim's volume (volumeClaimTemplate etcd-a) to a new emptyDir volume. The
#       StatefulSet controller rolls every member onto the template: each starts on an empty
#       data directory, its claim (and the data on it) no longer mounted. A single-member Etcd
#       restores from its last snapshots and loses the writes since; a member of three rejoins
#       empty. The same harm as deleting a running member's PVC, which the guard refuses
#       whoever asks (docs/protection.md, "A running member's PVC is not deleted").
#   T2. control: with protection on, the same patch is refused (component protection).
# kube-sim runs no pods: the loss is the template as the API server stores it.
# Fails while the hole exists (the member-volume guard refuses the swap: docs/protection.md).
set -uo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }
command -v jq >/dev/null || { echo "FAIL: jq is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
wh_register_guard || wh_fail "cannot register the webhooks"
druid_etcd shoot etcd-a
# the etcd container mounts its claim where etcd-druid mounts it
kc_druid -n shoot patch statefulset etcd-a --type json -p '[{"op": "add",
  "path": "/spec/template/spec/containers/0/volumeMounts",
  "value": [{"name": "etcd-a", "mountPath": "/var/etcd/data"}]}]' >/dev/null ||
    wh_fail "etcd-druid cannot mount the claim in its StatefulSet"
wh_caught_up # the caches see the objects

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
held() { echo "held: $*"; }
swap='{"spec":{"template":{"spec":{"volumes":[{"name":"scratch","emptyDir":{}}],"containers":[{"name":"etcd","volumeMounts":[{"name":"scratch","mountPath":"/var/etcd/data"}]}]}}}}'
mount() { kc -n shoot get statefulset etcd-a -o json | jq -r '.spec.template.spec.containers[] | select(.name == "etcd") | .volumeMounts[]? | select(.mountPath == "/var/etcd/data") | .name'; }

# ---- T2 (control): protection on
if wh_as alice patch statefulset etcd-a --type strategic -p "$swap" >/dev/null 2>&1 && [ "$(mount)" = scratch ]; then
    hole "T2: alice swapped etcd-a's data volume for an emptyDir with component protection on"
else held "T2: the swap is refused with component protection on"; fi

# ---- T1: protection disabled by the tenant
wh_as alice annotate etcd etcd-a druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    wh_fail "alice cannot disable component protection"
sleep 1
out=$(wh_as alice patch statefulset etcd-a --type strategic -p "$swap" 2>&1)
if [ "$(mount)" = scratch ]; then
    hole "T1: alice (protection disabled) moved /var/etcd/data of StatefulSet etcd-a (3 running members) from claim volume etcd-a to emptyDir scratch: every member restarts on an empty data directory"
else
    case $out in
    *"its container etcd would no longer mount the members' claim volume etcd-a at /var/etcd/data"*)
        held "T1: the swap refused with protection disabled" ;;
    *) wh_fail "T1: the swap not made, but not refused for the data volume: $out" ;;
    esac
fi

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a running member's data volume replaced"; exit 1; }
echo "attack4_template_emptydir: ok"
