#!/usr/bin/env bash
# A hibernated Etcd's claims freed after its backup store moved, on kube-sim with warden-webhook,
# warden-controller and backup-double. Issue 30: the StatefulSet reaches 0 only with a final
# snapshot that holds its last write, and a member's volume goes only with that snapshot: the
# wake must come back with the data. docs/protection.md lets a live Etcd's claims go when it is
# "hibernated with a final snapshot of this sleep: a backup store, hibernation phase ScalingDown
# or Hibernated, its traffic cut, a full snapshot EtcdOpsTask Succeeded after the cut, and its
# StatefulSet at 0". "A backup store" is whatever spec.backup.store says now, which a namespace
# editor may change at any time (the Etcd CRD keeps no rule on it, and Gardener rewrites it when
# a shoot's backup moves): the final snapshot was written under the store of the cut, and the
# wake's members, started on new, empty claims, restore from the store the Etcd names then
# (etcd-backup-restore's initializer: an empty data directory is restored from the latest
# snapshot of its store, none under a new prefix: a new, empty cluster).
#   S1. Etcd etcd-main hibernated by warden-controller (cut, final snapshot into prefix
#       s1--etcd-main, scaled to 0; the StatefulSet controller deletes the pods). alice
#       (namespace edit rights) points spec.backup.store.prefix at s1--etcd-main-v2, disables
#       protection and deletes the three member claims.
#   S0. control: the same without the store change: the claims may go (the final snapshot is
#       where the Etcd will restore from).
# Oracle: what kube-sim stores and the double records: member claims gone while the Etcd's
# spec.backup.store is not the store the double's final snapshot (holding the last acknowledged
# write) was taken for. Fails (HOLE) while the hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"

ctl_stage
last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
store() { kc -n "$1" get etcd etcd-main -o jsonpath='{.spec.backup.store.container}/{.spec.backup.store.prefix}'; }
gone() { # NS PVC: deleted or being deleted
    local ts
    ts=$(kc -n "$1" get pvc "$2" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null) || return 0
    [ -n "$ts" ]
}

declare -A URL CUT_STORE
for ns in s0 s1; do
    druid_etcd $ns etcd-main
    for i in 0 1 2; do # the member claims, as the StatefulSet controller creates them
        printf '%s\n' "---" "apiVersion: v1" "kind: PersistentVolumeClaim" \
            "metadata: {name: etcd-main-etcd-main-$i, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}" \
            "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}"
    done | kc -n $ns create -f - >/dev/null || ctl_fail "cannot create the member claims of $ns"
    druid_double_for $ns etcd-main
    URL[$ns]=$DRUID_DOUBLE_URL
    curl -sf -X POST "${URL[$ns]}/admin/write?n=5" >/dev/null
    CUT_STORE[$ns]=$(store $ns)
done
ctl_start
for ns in s0 s1; do
    kc -n $ns annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null || ctl_fail "cannot hibernate $ns"
done
for ns in s0 s1; do
    ctl_wait_phase $ns etcd-main Hibernated 60
    [ "$(kc -n $ns get statefulset etcd-main -o jsonpath='{.spec.replicas}')" = 0 ] || ctl_fail "$ns: Hibernated, StatefulSet not at 0"
    kc -n $ns delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null || ctl_fail "$ns: cannot delete the pods"
    w=$(last_write "${URL[$ns]}") s=$(stored_rev "${URL[$ns]}")
    [ "${s:-0}" -ge "${w:-1}" ] || ctl_fail "$ns: hibernated with write $w acknowledged and the store at ${s:-nothing}"
    echo "$ns: hibernated, the final snapshot (revision $s, every acknowledged write) under ${CUT_STORE[$ns]}"
done

WH_AS_NS=s1 wh_as alice patch etcd etcd-main --type merge -p '{"spec":{"backup":{"store":{"prefix":"s1--etcd-main-v2"}}}}' >/dev/null ||
    ctl_fail "S1: alice cannot change the store of s1/etcd-main"
echo "S1: alice moved the store to $(store s1)"
for ns in s1 s0; do
    WH_AS_NS=$ns wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
        ctl_fail "alice cannot disable protection of $ns"
done
# the control's deletion is admitted once the webhook's caches see s0's annotation, the last
# write of the Etcds (one watch: s1's patch and annotation were seen before it)
WH_AS_NS=s0 wh_await_admitted 10 "control: the claims of hibernated s0/etcd-main were not deleted" \
    wh_as alice delete pvc etcd-main-etcd-main-0 etcd-main-etcd-main-1 etcd-main-etcd-main-2
holes=0
for ns in s0 s1; do
    out=$(WH_AS_NS=$ns wh_as alice delete pvc etcd-main-etcd-main-0 etcd-main-etcd-main-1 etcd-main-etcd-main-2 --wait=false 2>&1)
    n=0
    for i in 0 1 2; do gone $ns etcd-main-etcd-main-$i && n=$((n + 1)); done
    now=$(store $ns)
    if [ $ns = s0 ]; then
        [ "$n" = 3 ] || ctl_fail "control: the claims of hibernated s0/etcd-main were not deleted: $out"
        echo "ok: control: the claims of a hibernated Etcd go while its store is the final snapshot's"
    elif [ "$n" -gt 0 ] && [ "$now" != "${CUT_STORE[$ns]}" ]; then
        echo "HOLE: S1: $n member claim(s) of hibernated $ns/etcd-main deleted while its store is $now and its final snapshot (every acknowledged write) lies under ${CUT_STORE[$ns]}: the wake's members start empty and restore from a store without it"
        holes=$((holes + 1))
    else echo "held: S1: $n claim(s) gone, store $now: $(tr '\n' ' ' <<<"$out" | head -c 400)"; fi
done
ctl_stop

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a hibernated Etcd's claims freed away from its final snapshot"; exit 1; }
echo "attack7_store_moved: ok"
