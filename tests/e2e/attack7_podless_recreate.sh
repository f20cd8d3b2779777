#!/usr/bin/env bash
# A live Etcd's StatefulSet re-created off its members' claims once their pods are gone, against
# the webhook registered as the chart registers it. Issue 30: a member's volume is never
# deleted or detached, whoever asks, break glass aside; the guard binds a tenant of an Etcd with
# component protection disabled too. The sixth attack closed a CREATE of an Etcd's StatefulSet
# (after an orphaning DELETE) whose pod template moves "its running pods" off their claims: the
# CREATE is judged against the pods of its name listed from the API server. Pods are no
# component: nothing routes their DELETE to warden-webhook, and a pod of an orphaned StatefulSet
# is re-created by nobody. Once they are gone there is nothing to judge the CREATE against
# (the sixth attack's claim rule says it: "who holds or mounts a claim right now is not what
# decides whether its data may go"), and the members the StatefulSet controller then makes start
# without the data on their claims: etcd-backup-restore finds an empty data directory and
# restores what the store held (the writes since the last snapshot lost), and the claims that
# hold them are read by nothing.
#   N1. protection disabled: alice orphan-deletes StatefulSet etcd-a (3 replicas), deletes pods
#       etcd-a-0..2, then creates StatefulSet etcd-a again (3 replicas) with an emptyDir at
#       /var/etcd/data in both containers.
#   N2. the same for etcd-b, created with its volumeClaimTemplate renamed "data" (mounted at
#       /var/etcd/data): the members take new, empty claims data-etcd-b-<n>.
#   N3. protection on: etcd-druid orphan-deletes StatefulSet etcd-c (its re-creation after an
#       immutable field changed, held open); alice deletes the pods and creates StatefulSet
#       etcd-c first, with an emptyDir at /var/etcd/data.
# Oracle: what kube-sim stores: StatefulSet etcd-X at 3 replicas whose etcd container has its
# data directory (/var/etcd/data/new.etcd) on no volume of the member claims
# etcd-X-etcd-X-<n>, while those claims (created as the StatefulSet controller creates them)
# are stored and the Etcd, at spec.replicas 3, is not being deleted and no hibernation was
# asked. Fails (HOLE) while the hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }
command -v jq >/dev/null || { echo "FAIL: jq is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
wh_register_guard || wh_fail "cannot register the webhooks"

for e in etcd-a etcd-b etcd-c etcd-d; do druid_etcd shoot $e; done # StatefulSets at 3, pods 0..2
for e in etcd-a etcd-b etcd-c etcd-d; do # the member PVCs, as the StatefulSet controller creates them
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
for e in etcd-a etcd-b etcd-d; do
    wh_as alice annotate etcd $e druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
        wh_fail "alice cannot disable protection of $e"
done
wh_caught_up # the caches see the objects

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
held() { echo "held: $*"; }
# "<replicas> <claim>": the claim (for member 0) that container etcd of StatefulSet E, as
# stored, has at /var/etcd/data/new.etcd (its deepest mount on that path), "-" for none,
# "absent" when no StatefulSet E is stored
etcd_data() {
    kc -n shoot get statefulset "$1" -o json 2>/dev/null | jq -r '
        . as $s | [.spec.volumeClaimTemplates[]?.metadata.name] as $vct |
        ([.spec.template.spec.containers[] | select(.name == "etcd") | .volumeMounts[]? |
          select(.mountPath as $p | "/var/etcd/data/new.etcd" | startswith($p)) |
          select((.subPath // "") == "")] | max_by(.mountPath | length)) as $m |
        "\($s.spec.replicas) " +
        (if $m != null and ($vct | index($m.name)) != null then "\($m.name)-\($s.metadata.name)-0" else "-" end)' ||
        echo absent
}
live() { # Etcd E live at 3 replicas, not being deleted, no hibernation asked
    [ "$(kc -n shoot get etcd "$1" -o jsonpath='{.spec.replicas}/{.metadata.deletionTimestamp}/{.metadata.annotations.etcd-warden\.io/hibernate}')" = 3// ]
}
claims_kept() { # every member claim of E stored, not being deleted
    local i
    for i in 0 1 2; do
        [ -n "$(kc -n shoot get pvc "$1-$1-$i" -o jsonpath='{.metadata.name}' 2>/dev/null)" ] || return 1
        [ -z "$(kc -n shoot get pvc "$1-$1-$i" -o jsonpath='{.metadata.deletionTimestamp}')" ] || return 1
    done
}
judge() { # CASE E WHAT OUT
    local got
    got=$(etcd_data "$2")
    claims_kept "$2" || wh_fail "$1: the member claims of $2 are not all stored"
    live "$2" || wh_fail "$1: Etcd $2 is not live at 3 replicas"
    if [ "${got%% *}" = 3 ] && [ "$got" != "3 $2-$2-0" ]; then
        hole "$1: $3: StatefulSet $2 stored at 3 replicas with etcd's data directory on \"${got#* }\" while the member claims $2-$2-0..2 hold the data of live Etcd $2 (no snapshot, no break glass)"
    else held "$1: refused (stored: \"$got\"): $(tr '\n' ' ' <<<"$4" | head -c 400)"; fi
}
orphan() { # E TOKEN CASE: orphan-delete StatefulSet E as TOKEN; OBJ: the object it was
    local obj
    obj=$(kc -n shoot get statefulset "$1" -o json | jq -c 'del(.status, .metadata.uid,
        .metadata.resourceVersion, .metadata.creationTimestamp, .metadata.generation,
        .metadata.managedFields)') || wh_fail "$3: cannot read StatefulSet $1"
    wh_await_admitted 10 "$3: the orphaning delete of StatefulSet $1 by $2 refused" \
        wh_as "$2" delete statefulset "$1" --cascade=orphan
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
emptydir='.spec.template.spec.volumes = [{"name":"scratch","emptyDir":{}}] |
    .spec.template.spec.containers |= map(.volumeMounts = [{"name":"scratch","mountPath":"/var/etcd/data"}])'
[ "$(etcd_data etcd-a)" = "3 etcd-a-etcd-a-0" ] || wh_fail "etcd-a does not keep its data on its claim: $(etcd_data etcd-a)"

# ---- control: the sixth attack's fix, the pods still running
orphan etcd-d alice control; obj=$OBJ
sleep 1
out=$(wh_as alice create -f - <<<"$(jq -c "$emptydir" <<<"$obj")" 2>&1)
[ "$(etcd_data etcd-d)" = absent ] ||
    wh_fail "control: StatefulSet etcd-d re-created with an emptyDir over its running pods' claims (the sixth attack's fix is not there): $out"
echo "ok: control: a re-creation with an emptyDir at /var/etcd/data is refused while the pods run"

# ---- N1: the pods first, then a StatefulSet with an emptyDir at /var/etcd/data
orphan etcd-a alice N1; obj=$OBJ
no_pods etcd-a N1
out=$(wh_as alice create -f - <<<"$(jq -c "$emptydir" <<<"$obj")" 2>&1)
judge N1 etcd-a "alice (protection disabled) orphan-deleted it, deleted its pods and created it again with an emptyDir at /var/etcd/data" "$out"

# ---- N2: the pods first, then a StatefulSet whose volumeClaimTemplate is renamed
orphan etcd-b alice N2; obj=$OBJ
no_pods etcd-b N2
out=$(wh_as alice create -f - <<<"$(jq -c '.spec.volumeClaimTemplates[0].metadata.name = "data" |
    .spec.template.spec.containers |= map(.volumeMounts = [{"name":"data","mountPath":"/var/etcd/data"}])' <<<"$obj")" 2>&1)
judge N2 etcd-b "alice (protection disabled) orphan-deleted it, deleted its pods and created it again with its volumeClaimTemplate renamed \"data\" (new, empty claims data-etcd-b-<n>)" "$out"

# ---- N3: protection on, etcd-druid's orphaning delete held open
orphan etcd-c druid N3; obj=$OBJ
no_pods etcd-c N3
out=$(wh_as alice create -f - <<<"$(jq -c "$emptydir" <<<"$obj")" 2>&1)
judge N3 etcd-c "alice (protection on) deleted its pods during etcd-druid's re-creation and created it first, with an emptyDir at /var/etcd/data" "$out"

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a live Etcd's StatefulSet re-created off its members' claims"; exit 1; }
echo "attack7_podless_recreate: ok"
