#!/usr/bin/env bash
# A hibernated Etcd woken behind warden-controller's back, written to, then its claims freed on
# the previous sleep's snapshot, on kube-sim with warden-webhook, warden-controller and
# backup-double. Issue 30: a member's volume goes only with a final snapshot that holds its last
# write, break glass aside (one request); "anything while warden-controller was down" wakes an
# Etcd (docs/hibernation.md, A cut belongs to one sleep). docs/protection.md lets a live Etcd's
# claims go when it is "hibernated with a final snapshot of this sleep: ... hibernation phase
# ScalingDown or Hibernated, its traffic cut, a full snapshot EtcdOpsTask Succeeded after the
# cut, and its StatefulSet at 0 replicas, created no later than the cut" and a
# final-snapshot-store naming its store. Every one of those is still true after a wake and a
# new scale to 0 while warden-controller is down: the state annotations are the old sleep's,
# the StatefulSet is the same object (only its generation moved), and it is at 0 again.
#   W2. Etcd etcd-main hibernated by warden-controller (cut, final snapshot at revision r,
#       scaled to 0), then warden-controller is down. alice (namespace edit rights, protection
#       disabled) scales StatefulSet etcd-main to 3; its members start on their claims (the
#       pods, as the StatefulSet controller makes them) and etcd acknowledges 3 more writes
#       (revisions > r). alice sets break glass (a new value) and scales the StatefulSet to 0:
#       that is the one request it lets through, and it loses nothing (the claims hold the
#       writes). alice deletes the pods, then the three member claims: admitted, with no
#       break glass left, on the snapshot of the sleep before the wake.
#   W1. (held) the same wake and writes, then the StatefulSet deleted with its pods orphaned,
#       the pods deleted, the claims deleted: refused (its StatefulSet is not found).
#   W0. control: hibernated, not woken: the claims may go (the final snapshot holds every
#       write).
# Oracle: what kube-sim stores and the double records: a member claim of etcd-main deleted while
# the double acknowledged a write (revision) that no snapshot it stored holds. The next
# StatefulSet starts every member on a new, empty claim and restores the store's final
# snapshot, without those writes. Fails (HOLE) while the hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"

ctl_stage
last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
gone() { # NS PVC: deleted or being deleted
    local ts
    ts=$(kc -n "$1" get pvc "$2" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null) || return 0
    [ -n "$ts" ]
}

declare -A URL
for ns in w0 w1 w2; do
    druid_etcd $ns etcd-main
    for i in 0 1 2; do # the member claims, as the StatefulSet controller creates them
        printf '%s\n' "---" "apiVersion: v1" "kind: PersistentVolumeClaim" \
            "metadata: {name: etcd-main-etcd-main-$i, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}" \
            "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}"
    done | kc -n $ns create -f - >/dev/null || ctl_fail "cannot create the member claims of $ns"
    druid_double_for $ns etcd-main
    URL[$ns]=$DRUID_DOUBLE_URL
    curl -sf -X POST "${URL[$ns]}/admin/write?n=5" >/dev/null || ctl_fail "$ns: the double takes no writes"
done
ctl_start
for ns in w0 w1 w2; do
    kc -n $ns annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null || ctl_fail "cannot hibernate $ns"
done
for ns in w0 w1 w2; do
    ctl_wait_phase $ns etcd-main Hibernated 60
    [ "$(kc -n $ns get statefulset etcd-main -o jsonpath='{.spec.replicas}')" = 0 ] || ctl_fail "$ns: Hibernated, StatefulSet not at 0"
    kc -n $ns delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null || ctl_fail "$ns: cannot delete the pods"
    w=$(last_write "${URL[$ns]}") s=$(stored_rev "${URL[$ns]}")
    [ "${s:-0}" -ge "${w:-1}" ] || ctl_fail "$ns: hibernated with write $w acknowledged and the store at ${s:-nothing}"
    echo "$ns: hibernated, the final snapshot at revision $s holds every acknowledged write"
done
ctl_stop
echo "warden-controller is down"
for ns in w0 w1 w2; do
    WH_AS_NS=$ns wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
        ctl_fail "alice cannot disable protection of $ns"
done
wh_caught_up # the webhook's caches

# ---- W1: woken by alice, written to, orphaned, pods gone, claims deleted
out=$(WH_AS_NS=w1 wh_as alice scale statefulset etcd-main --replicas=3 2>&1) ||
    ctl_fail "W1: alice cannot scale StatefulSet w1/etcd-main to 3: $out"
druid_pods w1 etcd-main 3 # the StatefulSet controller's members, on their claims
curl -sf -X POST "${URL[w1]}/admin/write?n=3" >/dev/null || ctl_fail "W1: the double takes no writes"
w=$(last_write "${URL[w1]}") s=$(stored_rev "${URL[w1]}")
[ "$w" -gt "${s:-0}" ] || ctl_fail "W1: no write past the final snapshot ($w, $s)"
echo "W1: woken by alice, writes up to revision $w acknowledged, the store at $s"
WH_AS_NS=w1 wh_as alice delete statefulset etcd-main --cascade=orphan --wait=false >/dev/null 2>&1 ||
    ctl_fail "W1: the orphaning delete of StatefulSet w1/etcd-main refused"
ksim_wait 10 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n w1 get statefulset etcd-main >/dev/null 2>&1" ||
    ctl_fail "W1: StatefulSet w1/etcd-main is still stored"
WH_AS_NS=w1 wh_as alice delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null 2>&1 ||
    ctl_fail "W1: alice cannot delete the pods"
ksim_wait 10 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n w1 get pods -o name | grep -q '^pod/etcd-main-'" ||
    ctl_fail "W1: the pods of w1/etcd-main are still stored"
wh_caught_up # the webhook's caches

# ---- W2: woken by alice, written to, scaled back to 0 on break glass (one request), claims deleted
out=$(WH_AS_NS=w2 wh_as alice scale statefulset etcd-main --replicas=3 2>&1) ||
    ctl_fail "W2: alice cannot scale StatefulSet w2/etcd-main to 3: $out"
druid_pods w2 etcd-main 3
curl -sf -X POST "${URL[w2]}/admin/write?n=3" >/dev/null || ctl_fail "W2: the double takes no writes"
WH_AS_NS=w2 wh_as alice annotate etcd etcd-main \
    etcd-warden.io/allow-scale-down-without-snapshot="$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ) sidecar broken" >/dev/null ||
    ctl_fail "W2: alice cannot set break glass"
wh_caught_up # the webhook's caches
out=$(WH_AS_NS=w2 wh_as alice scale statefulset etcd-main --replicas=0 2>&1) ||
    ctl_fail "W2: the scale-down on break glass refused: $out"
WH_AS_NS=w2 wh_as alice delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null 2>&1 ||
    ctl_fail "W2: alice cannot delete the pods"
echo "W2: woken by alice, writes up to revision $(last_write "${URL[w2]}") acknowledged, scaled to 0 on break glass (its one request)"
wh_caught_up # the webhook's caches

holes=0
for ns in w0 w1 w2; do
    out=$(WH_AS_NS=$ns wh_as alice delete pvc etcd-main-etcd-main-0 etcd-main-etcd-main-1 etcd-main-etcd-main-2 --wait=false 2>&1)
    n=0
    for i in 0 1 2; do gone $ns etcd-main-etcd-main-$i && n=$((n + 1)); done
    w=$(last_write "${URL[$ns]}") s=$(stored_rev "${URL[$ns]}")
    if [ $ns = w0 ]; then
        [ "$n" = 3 ] || ctl_fail "control: the claims of hibernated w0/etcd-main were not deleted: $out"
        echo "ok: control: the claims of a hibernated Etcd go while its final snapshot holds every write"
    elif [ $ns = w1 ] && [ "$n" -gt 0 ] && [ "$w" -gt "${s:-0}" ]; then
        echo "HOLE: W1: $n member claim(s) of w1/etcd-main deleted while writes up to revision $w were acknowledged and no stored snapshot holds more than revision $s (woken by alice while warden-controller was down, StatefulSet orphan-deleted, pods deleted)"
        holes=$((holes + 1))
    elif [ "$n" -gt 0 ] && [ "$w" -gt "${s:-0}" ]; then
        echo "HOLE: W2: $n member claim(s) of w2/etcd-main deleted while writes up to revision $w were acknowledged and no stored snapshot holds more than revision $s (woken by alice while warden-controller was down, scaled back to 0 on break glass: its one request was the scale-down, the claims went on the previous sleep's snapshot)"
        holes=$((holes + 1))
    else echo "held: ${ns^^}: $n claim(s) gone: $(tr '\n' ' ' <<<"$out" | head -c 400)"; fi
done

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a woken Etcd's claims freed on the previous sleep's snapshot"; exit 1; }
echo "attack8_woken_claims: ok"
