#!/usr/bin/env bash
# A hibernated Etcd's claims freed after its backup store moved through its Secret, on kube-sim
# with warden-webhook, warden-controller and backup-double. Issue 30: a member's volume goes
# only with a final snapshot that holds its last write: the wake must come back with the data.
# The seventh attack (attack7_store_moved) closed a store moved in spec.backup.store: a
# hibernated Etcd's claims may go only while etcd-warden.io/final-snapshot-store "nam[es] the
# backup store E names now" (docs/protection.md), a stamp of "spec.backup.store's provider,
# container, prefix and endpoint" (docs/toggles.md). Where the sidecar sends its requests is
# often not in the Etcd at all (docs/backup-entries.md): an S3 endpoint is the Secret's
# `endpoint` (etcd-backup-restore v0.28.4 has no override; from v0.41 the Secret's wins over
# endpointOverride), Swift, OSS, ECS and OCS read theirs from the Secret only, an ABS container
# lives in the Secret's storageAccount. The Secret, and spec.backup.store.secretRef, are a
# namespace editor's to change; the stamp reads neither.
#   K1. Etcd etcd-main (S3, Secret etcd-backup: endpoint https://minio-a.example:9000)
#       hibernated by warden-controller (cut, final snapshot, scaled to 0). alice (namespace
#       edit rights) sets the Secret's endpoint to https://minio-b.example:9000, disables
#       protection and deletes the three member claims.
#   K2. the same, alice creating Secret etcd-backup-b (endpoint https://minio-b.example:9000)
#       and pointing spec.backup.store.secretRef at it.
#   K0. control: the same without the store change: the claims may go.
# Oracle: what kube-sim stores and the double records: member claims gone while the endpoint the
# Etcd's store resolves to (the Secret spec.backup.store.secretRef names, key endpoint) is not
# the one the final snapshot (holding every acknowledged write) was taken into: the wake's
# members, on new, empty claims, restore from a store without it. Fails (HOLE) while the hole
# exists.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"

ctl_stage
last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
endpoint() { # NS: the endpoint of the Secret the Etcd's store names
    local s
    s=$(kc -n "$1" get etcd etcd-main -o jsonpath='{.spec.backup.store.secretRef.name}')
    kc -n "$1" get secret "$s" -o jsonpath='{.data.endpoint}' | base64 -d
}
gone() { # NS PVC: deleted or being deleted
    local ts
    ts=$(kc -n "$1" get pvc "$2" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null) || return 0
    [ -n "$ts" ]
}
b64() { printf '%s' "$1" | base64 -w0; }
secret() { # NAME ENDPOINT: an S3 Secret as a Gardener BackupBucket's
    printf '%s\n' "apiVersion: v1" "kind: Secret" "metadata: {name: $1}" "type: Opaque" \
        "data: {accessKeyID: $(b64 AKIAEXAMPLE), secretAccessKey: $(b64 secret), region: $(b64 eu-west-1), endpoint: $(b64 "$2")}"
}

declare -A URL CUT_EP
for ns in k0 k1 k2; do
    druid_etcd $ns etcd-main
    secret etcd-backup https://minio-a.example:9000 | kc -n $ns create -f - >/dev/null || ctl_fail "cannot create the Secret of $ns"
    for i in 0 1 2; do # the member claims, as the StatefulSet controller creates them
        printf '%s\n' "---" "apiVersion: v1" "kind: PersistentVolumeClaim" \
            "metadata: {name: etcd-main-etcd-main-$i, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}" \
            "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}"
    done | kc -n $ns create -f - >/dev/null || ctl_fail "cannot create the member claims of $ns"
    druid_double_for $ns etcd-main
    URL[$ns]=$DRUID_DOUBLE_URL
    curl -sf -X POST "${URL[$ns]}/admin/write?n=5" >/dev/null || ctl_fail "$ns: the double takes no writes"
    CUT_EP[$ns]=$(endpoint $ns)
done
ctl_start
for ns in k0 k1 k2; do
    kc -n $ns annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null || ctl_fail "cannot hibernate $ns"
done
for ns in k0 k1 k2; do
    ctl_wait_phase $ns etcd-main Hibernated 60
    [ "$(kc -n $ns get statefulset etcd-main -o jsonpath='{.spec.replicas}')" = 0 ] || ctl_fail "$ns: Hibernated, StatefulSet not at 0"
    kc -n $ns delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null || ctl_fail "$ns: cannot delete the pods"
    w=$(last_write "${URL[$ns]}") s=$(stored_rev "${URL[$ns]}")
    [ "${s:-0}" -ge "${w:-1}" ] || ctl_fail "$ns: hibernated with write $w acknowledged and the store at ${s:-nothing}"
    echo "$ns: hibernated, the final snapshot (revision $s, every acknowledged write) at ${CUT_EP[$ns]}"
done

out=$(WH_AS_NS=k1 wh_as alice patch secret etcd-backup --type merge -p "{\"data\":{\"endpoint\":\"$(b64 https://minio-b.example:9000)\"}}" 2>&1) ||
    ctl_fail "K1: alice cannot change the Secret of k1: $out"
echo "K1: alice moved the Secret's endpoint to $(endpoint k1)"
out=$(secret etcd-backup-b https://minio-b.example:9000 | WH_AS_NS=k2 wh_as alice create -f - 2>&1) ||
    ctl_fail "K2: alice cannot create Secret etcd-backup-b: $out"
out=$(WH_AS_NS=k2 wh_as alice patch etcd etcd-main --type merge -p '{"spec":{"backup":{"store":{"secretRef":{"name":"etcd-backup-b"}}}}}' 2>&1)
echo "K2: alice pointed the store at Secret $(kc -n k2 get etcd etcd-main -o jsonpath='{.spec.backup.store.secretRef.name}') ($(endpoint k2)) $(tr '\n' ' ' <<<"$out" | head -c 200)"
for ns in k0 k1 k2; do
    WH_AS_NS=$ns wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
        ctl_fail "alice cannot disable protection of $ns"
done
wh_caught_up # the webhook's caches
holes=0
for ns in k0 k1 k2; do
    out=$(WH_AS_NS=$ns wh_as alice delete pvc etcd-main-etcd-main-0 etcd-main-etcd-main-1 etcd-main-etcd-main-2 --wait=false 2>&1)
    n=0
    for i in 0 1 2; do gone $ns etcd-main-etcd-main-$i && n=$((n + 1)); done
    now=$(endpoint $ns)
    if [ $ns = k0 ]; then
        [ "$n" = 3 ] || ctl_fail "control: the claims of hibernated k0/etcd-main were not deleted: $out"
        echo "ok: control: the claims of a hibernated Etcd go while its store is the final snapshot's"
    elif [ "$n" -gt 0 ] && [ "$now" != "${CUT_EP[$ns]}" ]; then
        echo "HOLE: ${ns^^}: $n member claim(s) of hibernated $ns/etcd-main deleted while its store's endpoint is $now and its final snapshot (every acknowledged write) lies at ${CUT_EP[$ns]}: the wake's members start empty and restore from a store without it"
        holes=$((holes + 1))
    else echo "held: ${ns^^}: $n claim(s) gone, endpoint $now: $(tr '\n' ' ' <<<"$out" | head -c 400)"; fi
done
ctl_stop

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a hibernated Etcd's claims freed after its store moved through its Secret"; exit 1; }
echo "attack8_store_secret: ok"
