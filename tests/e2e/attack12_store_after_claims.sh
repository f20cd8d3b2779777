#!/usr/bin/env bash
# A hibernated Etcd's backup store moved after its member claims were freed, on kube-sim with
# warden-webhook, warden-controller and backup-double (issue 30: no member PVC goes while a
# write acknowledged before it is missing from the final snapshot; the wake must come back
# with the data).
# docs/protection.md: a hibernated Etcd's claims may go only while
# etcd-warden.io/final-snapshot-store "must name the backup store E names now ... an Etcd
# pointed at another store since, through its spec, its secretRef or the Secret's keys, would
# wake from that store, without the snapshot". attack7_store_moved and attack8_store_secret
# moved the store first and deleted the claims second; here the order is the other way round,
# and nothing in the docs holds the store of an Etcd that sleeps without claims:
#   M1. etcd-main hibernated by warden-controller (cut, final snapshot, scaled to 0). alice
#       (namespace edit rights) disables protection and deletes the three member claims
#       (admitted: the store is the final snapshot's), then moves spec.backup.store.prefix,
#       then wakes the Etcd.
#   M2. the same, the store moved through the Secret's endpoint.
#   M3. the same, spec.backup.store.secretRef pointed at another Secret.
#   M0. control: the same without the store move: the claims go and the Etcd wakes.
# Oracle (ground truth: what kube-sim stores and the double records): the StatefulSet back above
# 0 replicas while the claims holding its data are gone and the store the Etcd names (prefix,
# Secret endpoint) is not the one the final snapshot (every acknowledged write) was taken into:
# the members start on new, empty claims and restore from a store without that snapshot.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"

ctl_stage
last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
store_of() { # NS: the store the Etcd names now: prefix and the endpoint of its Secret
    local s p
    p=$(kc -n "$1" get etcd etcd-main -o jsonpath='{.spec.backup.store.prefix}')
    s=$(kc -n "$1" get etcd etcd-main -o jsonpath='{.spec.backup.store.secretRef.name}')
    printf '%s@%s' "$p" "$(kc -n "$1" get secret "$s" -o jsonpath='{.data.endpoint}' | base64 -d)"
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
sts_replicas() { kc -n "$1" get statefulset etcd-main -o jsonpath='{.spec.replicas}'; }

CASES="m0 m1 m2 m3"
declare -A URL CUT_STORE
for ns in $CASES; do
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
    CUT_STORE[$ns]=$(store_of $ns)
done
ctl_start
for ns in $CASES; do
    kc -n $ns annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null || ctl_fail "cannot hibernate $ns"
done
for ns in $CASES; do
    ctl_wait_phase $ns etcd-main Hibernated 60
    [ "$(sts_replicas $ns)" = 0 ] || ctl_fail "$ns: Hibernated, StatefulSet not at 0"
    kc -n $ns delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null || ctl_fail "$ns: cannot delete the pods"
    w=$(last_write "${URL[$ns]}") s=$(stored_rev "${URL[$ns]}")
    [ "${s:-0}" -ge "${w:-1}" ] || ctl_fail "$ns: hibernated with write $w acknowledged and the store at ${s:-nothing}"
    echo "$ns: hibernated, the final snapshot (revision $s, every acknowledged write) in ${CUT_STORE[$ns]}"
    WH_AS_NS=$ns wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
        ctl_fail "alice cannot disable protection of $ns"
done
wh_caught_up # the webhook's caches
for ns in $CASES; do
    out=$(WH_AS_NS=$ns wh_as alice delete pvc etcd-main-etcd-main-0 etcd-main-etcd-main-1 etcd-main-etcd-main-2 --wait=false 2>&1)
    for i in 0 1 2; do
        gone $ns etcd-main-etcd-main-$i || ctl_fail "$ns: the claims of a hibernated Etcd whose store holds its final snapshot were not deleted: $out"
    done
    echo "ok: $ns: the three member claims deleted while the store holds the final snapshot"
done

# the moves, after the claims are gone
out=$(WH_AS_NS=m1 wh_as alice patch etcd etcd-main --type merge -p '{"spec":{"backup":{"store":{"prefix":"m1--etcd-main-v2"}}}}' 2>&1)
echo "M1: alice moves spec.backup.store.prefix: $(tr '\n' ' ' <<<"$out" | head -c 300)"
out=$(WH_AS_NS=m2 wh_as alice patch secret etcd-backup --type merge -p "{\"data\":{\"endpoint\":\"$(b64 https://minio-b.example:9000)\"}}" 2>&1)
echo "M2: alice moves the Secret's endpoint: $(tr '\n' ' ' <<<"$out" | head -c 300)"
out=$(secret etcd-backup-b https://minio-b.example:9000 | WH_AS_NS=m3 wh_as alice create -f - 2>&1) ||
    ctl_fail "M3: alice cannot create Secret etcd-backup-b: $out"
out=$(WH_AS_NS=m3 wh_as alice patch etcd etcd-main --type merge -p '{"spec":{"backup":{"store":{"secretRef":{"name":"etcd-backup-b"}}}}}' 2>&1)
echo "M3: alice points spec.backup.store.secretRef at etcd-backup-b: $(tr '\n' ' ' <<<"$out" | head -c 300)"

# the wake
for ns in $CASES; do
    out=$(WH_AS_NS=$ns wh_as alice annotate etcd etcd-main etcd-warden.io/hibernate- 2>&1) ||
        echo "$ns: the wake is refused: $(tr '\n' ' ' <<<"$out" | head -c 300)"
done
deadline=$((SECONDS + 60))
declare -A UP
while [ $SECONDS -lt $deadline ]; do
    all=1
    for ns in $CASES; do
        [ -n "${UP[$ns]:-}" ] && continue
        r=$(sts_replicas $ns)
        if [ "${r:-0}" -gt 0 ]; then UP[$ns]=$r; else all=0; fi
    done
    [ $all = 1 ] && break
    sleep 0.2
done

holes=0
for ns in $CASES; do
    now=$(store_of $ns)
    if [ $ns = m0 ]; then
        [ -n "${UP[$ns]:-}" ] || ctl_fail "control: m0/etcd-main did not wake in 60 s (phase $(jp m0 etcd/etcd-main '{.metadata.annotations.etcd-warden\.io/hibernation-phase}'))"
        [ "$now" = "${CUT_STORE[$ns]}" ] || ctl_fail "control: m0's store moved: $now"
        echo "ok: control: m0 woke ($(sts_replicas m0) replicas) with its store holding the final snapshot"
    elif [ -n "${UP[$ns]:-}" ] && [ "$now" != "${CUT_STORE[$ns]}" ]; then
        echo "HOLE: ${ns^^}: StatefulSet $ns/etcd-main back at ${UP[$ns]} replicas with its member claims deleted and its store now $now, while its final snapshot (revision $(stored_rev "${URL[$ns]}"), every acknowledged write) lies in ${CUT_STORE[$ns]}: the members start on new, empty claims and restore from a store without it"
        holes=$((holes + 1))
    else
        echo "held: ${ns^^}: StatefulSet at $(sts_replicas $ns), store $now"
    fi
done
ctl_stop

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a hibernated Etcd's store moved after its claims were freed, and it woke from the new store"; exit 1; }
echo "attack12_store_after_claims: ok"
