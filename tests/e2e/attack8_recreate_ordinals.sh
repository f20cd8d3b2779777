#!/usr/bin/env bash
# A live Etcd's StatefulSet re-created from a later ordinal once its pods are gone, against the
# webhook registered as the chart registers it. Issue 30: a member's volume is never detached,
# whoever asks, break glass aside; the guard binds a tenant of an Etcd with component protection
# disabled too. The seventh attack closed a re-creation (after an orphaning DELETE and the pods'
# deletion) whose pod template puts the members on other claims (an emptyDir at
# /var/etcd/data, the volumeClaimTemplate renamed): "each claim <template>-<name>-<n> of the
# namespace with no pod <name>-<n> is judged as a pod that mounts it as etcd-druid does"
# (docs/protection.md). The members' claims are <template>-<sts>-<ordinal>, so the same
# template with spec.ordinals.start moved past the old members does the same: the StatefulSet
# controller makes members 3..5 on new, empty claims etcd-a-etcd-a-3..5, etcd-backup-restore
# restores the store's last snapshot into them (the writes since lost), and the claims
# etcd-a-etcd-a-0..2 that hold the data are read by no member. docs/hibernation.md guards a
# CREATE "with spec.ordinals.start above 0" only "when pods of its name lie outside its
# ordinals": there are none left.
#   O1. protection disabled: alice orphan-deletes StatefulSet etcd-a (3 replicas, ordinals from
#       0), deletes pods etcd-a-0..2, then creates StatefulSet etcd-a again as it was, with
#       spec.ordinals.start 3.
#   control: etcd-c orphan-deleted by alice, its pods still running: the same CREATE is
#       refused (pods of its name lie outside its ordinals).
#   O2. protection on: etcd-druid orphan-deletes StatefulSet etcd-b (its re-creation after an
#       immutable field changed); alice deletes the pods and creates StatefulSet etcd-b first,
#       as it was, with spec.ordinals.start 3.
# Oracle: what kube-sim stores: StatefulSet etcd-X at 3 replicas whose ordinals
# [start, start + 3) take none of 0..2, while the member claims etcd-X-etcd-X-0..2 (created as
# the StatefulSet controller creates them) are stored, and the Etcd, at spec.replicas 3, is
# not being deleted and no hibernation was asked. Fails (HOLE) while the hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }
command -v jq >/dev/null || { echo "FAIL: jq is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
wh_register_guard || wh_fail "cannot register the webhooks"

for e in etcd-a etcd-b etcd-c; do druid_etcd shoot $e; done # StatefulSets at 3, pods 0..2
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
for e in etcd-a etcd-c; do
    wh_as alice annotate etcd $e druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
        wh_fail "alice cannot disable protection of $e"
done
wh_caught_up # the caches see the objects

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
held() { echo "held: $*"; }
members() { # "<replicas> <start>" of StatefulSet E as stored, "absent" when none
    kc -n shoot get statefulset "$1" -o json 2>/dev/null | jq -r '"\(.spec.replicas) \(.spec.ordinals.start // 0)"' ||
        echo absent
}
live() { # Etcd E live at 3 replicas, not being deleted, no hibernation asked
    [ "$(kc -n shoot get etcd "$1" -o jsonpath='{.spec.replicas}/{.metadata.deletionTimestamp}/{.metadata.annotations.etcd-warden\.io/hibernate}')" = 3// ]
}
claims_kept() { # every member claim 0..2 of E stored, not being deleted
    local i
    for i in 0 1 2; do
        [ -n "$(kc -n shoot get pvc "$1-$1-$i" -o jsonpath='{.metadata.name}' 2>/dev/null)" ] || return 1
        [ -z "$(kc -n shoot get pvc "$1-$1-$i" -o jsonpath='{.metadata.deletionTimestamp}')" ] || return 1
    done
}
judge() { # CASE E WHAT OUT
    local got r s
    got=$(members "$2")
    claims_kept "$2" || wh_fail "$1: the member claims of $2 are not all stored"
    live "$2" || wh_fail "$1: Etcd $2 is not live at 3 replicas"
    r=${got%% *} s=${got#* }
    if [ "$got" != absent ] && [ "$r" -gt 0 ] && [ "$s" -ge 3 ]; then
        hole "$1: $3: StatefulSet $2 stored at $r replicas from ordinal $s: its members start on new, empty claims $2-$2-$s.. while $2-$2-0..2 hold the data of live Etcd $2 (no snapshot, no break glass)"
    else held "$1: refused (stored: \"$got\"): $(tr '\n' ' ' <<<"$4" | head -c 400)"; fi
}
orphan() { # E TOKEN CASE: orphan-delete StatefulSet E as TOKEN; OBJ: the object it was
    local obj
    obj=$(kc -n shoot get statefulset "$1" -o json | jq -c 'del(.status, .metadata.uid,
        .metadata.resourceVersion, .metadata.creationTimestamp, .metadata.generation,
        .metadata.managedFields)') || wh_fail "$3: cannot read StatefulSet $1"
    wh_as "$2" delete statefulset "$1" --cascade=orphan --wait=false >/dev/null 2>&1 ||
        wh_fail "$3: the orphaning delete of StatefulSet $1 by $2 refused"
    ksim_wait 10 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n shoot get statefulset $1 >/dev/null 2>&1" ||
        wh_fail "$3: StatefulSet $1 is still stored"
    kc -n shoot get pod "$1-0" >/dev/null 2>&1 || wh_fail "$3: the pods of $1 did not survive the orphaning delete"
    OBJ=$obj
}
no_pods() { # E CASE: alice deletes pods E-0..2 and they are gone
    local i
    for i in 0 1 2; do
        wh_as alice delete pod "$1-$i" --wait=false >/dev/null 2>&1 || wh_fail "$2: alice cannot delete pod $1-$i"
    done
    ksim_wait 10 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n shoot get pods -o name | grep -q '^pod/$1-'" ||
        wh_fail "$2: the pods of $1 are still stored"
    wh_caught_up # the caches see them gone
}
[ "$(members etcd-a)" = "3 0" ] || wh_fail "etcd-a is not at 3 replicas from ordinal 0: $(members etcd-a)"

# ---- control: the pods still running, the CREATE from ordinal 3 is refused (it would delete them)
orphan etcd-c alice control; obj=$OBJ
sleep 1
out=$(wh_as alice create -f - <<<"$(jq -c '.spec.ordinals = {"start": 3}' <<<"$obj")" 2>&1)
[ "$(members etcd-c)" = absent ] ||
    wh_fail "control: StatefulSet etcd-c re-created from ordinal 3 over its running pods (the guard is not there): $out"
echo "ok: control: a re-creation from ordinal 3 is refused while the pods run"

# ---- O1: protection disabled, the pods first, then the same StatefulSet from ordinal 3
orphan etcd-a alice O1; obj=$OBJ
no_pods etcd-a O1
out=$(wh_as alice create -f - <<<"$(jq -c '.spec.ordinals = {"start": 3}' <<<"$obj")" 2>&1)
judge O1 etcd-a "alice (protection disabled) orphan-deleted it, deleted its pods and created it again from ordinal 3" "$out"

# ---- O2: protection on, etcd-druid's orphaning delete, alice's CREATE first
orphan etcd-b druid O2; obj=$OBJ
no_pods etcd-b O2
out=$(wh_as alice create -f - <<<"$(jq -c '.spec.ordinals = {"start": 3}' <<<"$obj")" 2>&1)
judge O2 etcd-b "alice (protection on) deleted its pods during etcd-druid's re-creation and created it first, from ordinal 3" "$out"

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a live Etcd's StatefulSet re-created from an ordinal past its members' claims"; exit 1; }
echo "attack8_recreate_ordinals: ok"
