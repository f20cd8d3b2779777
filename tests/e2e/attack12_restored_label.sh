#!/usr/bin/env bash
# An Etcd that an EtcdRestore made cannot be applied again from its own manifest, on kube-sim
# with warden-webhook registered as the chart registers it. Issue 30: "where a legitimate user
# ... is wrongly refused"; unknown etcd-warden.io keys are refused "with the list of known
# ones". docs/backups-and-restores.md ("Creating"): warden-controller creates the Etcd
# target.etcdName "with the label etcd-warden.io/restored-from=<restore>". docs/toggles.md
# ("Checked at admission"): "An etcd-warden.io/ annotation or label that is not in the tables
# above is refused"; restored-from is in none of them. docs/toggles.md also promises that an
# Etcd "created with [etcd-warden's state annotations] by anyone else (a re-applied manifest, a
# Velero restore) is created without them". The Etcd warden-controller made, saved with
# `kubectl get -o yaml` or by Velero, carries the label; creating it again is refused, and so is
# any UPDATE of a manifest that keeps it (kubectl apply of the saved object after a deletion).
#   L1. Etcd etcd-copy as warden-controller's EtcdRestore creates it (label
#       etcd-warden.io/restored-from: restore-1), saved, deleted, created again from the saved
#       manifest by the operator (an admin, as Velero restores).
#   L0. control: the same Etcd without the label is created again.
# Oracle: what kube-sim stores: the Etcd created again.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
kc create namespace l1 >/dev/null || ctl_fail "cannot create namespace l1"
etcd() { # NAME LABELS-JSON
    jq -n --arg n "$1" --argjson l "$2" '{apiVersion: "druid.gardener.cloud/v1alpha1", kind: "Etcd",
        metadata: {name: $n, namespace: "l1", labels: ({app: "etcd-statefulset", role: $n} + $l)},
        spec: {replicas: 1, labels: {app: "etcd-statefulset", role: $n},
            etcd: {clientPort: 2379, serverPort: 2380, quota: "8Gi"},
            backup: {port: 8080, fullSnapshotSchedule: "0 */24 * * *"}}}'
}
# what warden-controller's EtcdRestore creates (its identity, as the chart's service account)
etcd etcd-copy '{"etcd-warden.io/restored-from": "restore-1"}' | kc_as warden-token create -f - >/dev/null 2>&1 ||
    etcd etcd-copy '{"etcd-warden.io/restored-from": "restore-1"}' | kc create -f - >/dev/null 2>&1
etcd etcd-plain '{}' | kc create -f - >/dev/null || ctl_fail "cannot create Etcd etcd-plain"
[ "$(kc -n l1 get etcd etcd-copy -o jsonpath='{.metadata.labels.etcd-warden\.io/restored-from}')" = restore-1 ] ||
    ctl_fail "warden-controller cannot create an Etcd labelled etcd-warden.io/restored-from"
echo "L1: Etcd etcd-copy as an EtcdRestore made it (label etcd-warden.io/restored-from: restore-1)"
holes=0
for e in etcd-plain etcd-copy; do
    kc -n l1 get etcd $e -o json | jq 'del(.metadata.uid, .metadata.resourceVersion, .metadata.creationTimestamp,
        .metadata.generation, .metadata.managedFields, .metadata.annotations, .status)' >"$CTL_DIR/$e.json"
    kc -n l1 delete etcd $e --wait=false >/dev/null || ctl_fail "cannot delete $e"
    ksim_wait 10 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n l1 get etcd $e >/dev/null 2>&1" || ctl_fail "$e was not deleted"
    out=$(kc -n l1 create -f "$CTL_DIR/$e.json" 2>&1)
    if [ -n "$(kc -n l1 get etcd $e -o name 2>/dev/null)" ]; then echo "ok: $e created again from its saved manifest"
    elif [ $e = etcd-plain ]; then ctl_fail "control: etcd-plain not created again: $out"
    else
        echo "HOLE: L1: Etcd l1/$e, saved as warden-controller made it, cannot be created again from its manifest: $(tr '\n' ' ' <<<"$out" | head -c 400)"
        holes=$((holes + 1))
    fi
done
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): an Etcd warden-controller restored refused when applied again"; exit 1; }
echo "attack12_restored_label: ok"
