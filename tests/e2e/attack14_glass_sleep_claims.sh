#!/usr/bin/env bash
# The member claims of an Etcd hibernated on break glass (no final snapshot), on kube-sim with
# warden-webhook, warden-controller and backup-double. Issue 30: member PVCs are not deleted
# "while a write acknowledged before it is missing from the final snapshot, unless break glass
# (used once, per request) says so". docs/hibernation.md (Break glass once): the annotation
# "allows one scale-down: one request that only it lets through"; warden-controller removes it
# after the scale-down to 0 it allowed. docs/protection.md: a live Etcd's member claim may go
# when it is "hibernated with this sleep's final snapshot". A sleep on break glass has none: its
# members' claims hold the only copy of what was written since the last snapshot.
#   B1. Etcd b1/etcd-main (3 members, writes acknowledged, its sidecar answers 500 to every
#       snapshot), hibernate=true; the attempts fail, the operator sets break glass,
#       warden-controller scales to 0 without a snapshot (the one use) and removes it. alice
#       (namespace edit rights) disables protection and deletes the member claims.
#   B0. control: b0/etcd-main, hibernated with a final snapshot: its claims go.
# Oracle: what kube-sim stores (member claims deleted) and what backup-double records (writes
# acknowledged, never a snapshot).
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
glass() { kc -n b1 get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/allow-scale-down-without-snapshot}'; }
no_glass() { [ -z "$(glass)" ]; }
gone() { # NS PVC: deleted or being deleted
    local ts
    ts=$(kc -n "$1" get pvc "$2" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null) || return 0
    [ -n "$ts" ]
}

declare -A URL
for ns in b0 b1; do
    druid_etcd $ns etcd-main
    for i in 0 1 2; do
        printf '%s\n' "---" "apiVersion: v1" "kind: PersistentVolumeClaim" \
            "metadata: {name: etcd-main-etcd-main-$i, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}" \
            "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}"
    done | kc -n $ns create -f - >/dev/null || ctl_fail "cannot create the member claims of $ns"
    druid_double_for $ns etcd-main
    URL[$ns]=$DRUID_DOUBLE_URL
    curl -sf -X POST "${URL[$ns]}/admin/write?n=5" >/dev/null || ctl_fail "$ns: the double takes no writes"
done
# b1's sidecar fails every snapshot (the double started last is b1's)
druid_double_admin 'reply?code=500&count=0' || ctl_fail "cannot make b1's double fail"
ctl_start --snapshot-retries 2
for ns in b0 b1; do
    kc -n $ns annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null || ctl_fail "cannot hibernate $ns"
done
ctl_wait_phase b1 etcd-main Failed 40
V="$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ) backups broken, hibernate anyway"
kc -n b1 annotate etcd etcd-main "etcd-warden.io/allow-scale-down-without-snapshot=$V" >/dev/null ||
    ctl_fail "the operator cannot set break glass"
for ns in b0 b1; do
    ctl_wait_phase $ns etcd-main Hibernated 40
    [ "$(kc -n $ns get statefulset etcd-main -o jsonpath='{.spec.replicas}')" = 0 ] || ctl_fail "$ns: Hibernated, StatefulSet not at 0"
    kc -n $ns delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null || ctl_fail "$ns: cannot delete the pods"
done
ksim_wait 15 no_glass || ctl_fail "B1: break glass not removed after its use: $(glass)"
w=$(last_write "${URL[b1]}") s=$(stored_rev "${URL[b1]}")
[ -n "$w" ] && [ "${s:-0}" -lt "$w" ] || ctl_fail "B1: the oracle cannot judge (last write $w, snapshot ${s:-none})"
echo "B1: hibernated on break glass (removed after its use), writes up to revision $w acknowledged, snapshot ${s:-none}"
w0=$(last_write "${URL[b0]}") s0=$(stored_rev "${URL[b0]}")
[ "${s0:-0}" -ge "${w0:-1}" ] || ctl_fail "control: b0 hibernated with write $w0 and the store at ${s0:-nothing}"
for ns in b0 b1; do
    WH_AS_NS=$ns wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
        ctl_fail "alice cannot disable protection of $ns"
done
WH_AS_NS=b0 wh_await_admitted 15 "control: the claims of hibernated b0/etcd-main were not deleted" \
    wh_as alice delete pvc etcd-main-etcd-main-0 etcd-main-etcd-main-1 etcd-main-etcd-main-2
sleep 2
holes=0
for ns in b0 b1; do
    out=$(WH_AS_NS=$ns wh_as alice delete pvc etcd-main-etcd-main-0 etcd-main-etcd-main-1 etcd-main-etcd-main-2 --wait=false 2>&1)
    n=0
    for i in 0 1 2; do gone $ns etcd-main-etcd-main-$i && n=$((n + 1)); done
    if [ $ns = b0 ]; then
        [ "$n" = 3 ] || ctl_fail "control: the claims of hibernated b0/etcd-main were not deleted: $out"
        echo "ok: control: B0: the claims of an Etcd hibernated with its final snapshot go"
    elif [ "$n" -gt 0 ]; then
        echo "HOLE: B1: $n member claim(s) of b1/etcd-main, hibernated on break glass without a snapshot (writes up to revision $w acknowledged, store ${s:-empty}), deleted by alice after the break glass was used and removed"
        holes=$((holes + 1))
    else echo "held: B1: $(tr '\n' ' ' <<<"$out" | head -c 300)"; fi
done
ctl_stop
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): the claims of a sleep without a snapshot freed"; exit 1; }
echo "attack14_glass_sleep_claims: ok"
