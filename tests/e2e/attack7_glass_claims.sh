#!/usr/bin/env bash
# A break glass scale-down that also frees the member claims, on kube-sim with warden-webhook,
# warden-controller and backup-double. Issue 30: a member's volume is never deleted without a
# final snapshot that holds its last write, whoever asks, break glass aside (once, bounded).
# docs/hibernation.md: when etcd keeps moving after the final snapshot (a client on an
# established connection), the revision check fails: phase Failed, Warning FinalSnapshotBehind,
# the StatefulSet stays up; break glass "is honoured in Failed" and allows one scale-down
# without a snapshot. The claims then hold the only copy of the writes made after the snapshot.
# docs/protection.md lets a live Etcd's claims go when it is "hibernated with a final snapshot
# of this sleep": phase Hibernated, its cut, "a full snapshot EtcdOpsTask Succeeded after the
# cut", its StatefulSet at 0 created before the cut. The task of this sleep did succeed; the
# check said it does not hold the last write. So once the one request the break glass was for
# (the scale to 0) is made, the claims can be deleted by anyone with no break glass at all:
# the operator following the refusal's own advice ("hibernate it first (its claims may go once
# the final snapshot is taken)"), the garbage collector, a tenant with protection disabled.
# (The same confusion shows in the controller: the event says "hibernated: traffic cut, final
# full snapshot taken", and the annotation is not removed after its use, as it is when no task
# succeeded.)
#   B1. Etcd etcd-main (3 members, their claims etcd-main-etcd-main-0..2), a writer on an
#       established connection; hibernate=true: phase Failed (FinalSnapshotBehind). Control:
#       a claim's deletion is refused there. The bucket then breaks (the sidecar answers 500);
#       the operator sets break glass: the controller scales to 0 (Hibernated). The StatefulSet
#       controller deletes the pods; alice (protection disabled) deletes the three claims.
# Oracle: ground truth. The double records every acknowledged write and every snapshot it
# stored: member claims gone (what kube-sim stores) while a write acknowledged before the
# break glass was set (the StatefulSet still at 3) is missing from the store is the loss.
# Fails (HOLE) while the hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"

ctl_stage
last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
replicas() { kc -n b1 get statefulset etcd-main -o jsonpath='{.spec.replicas}'; }
gone() { # PVC NAME deleted or being deleted
    local ts
    ts=$(kc -n b1 get pvc "$1" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null) || return 0
    [ -n "$ts" ]
}

ctl_start --snapshot-retries 1
druid_etcd b1 etcd-main
for i in 0 1 2; do # the member claims, as the StatefulSet controller creates them
    printf '%s\n' "---" "apiVersion: v1" "kind: PersistentVolumeClaim" \
        "metadata: {name: etcd-main-etcd-main-$i, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}" \
        "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}"
done | kc -n b1 create -f - >/dev/null || ctl_fail "cannot create the member claims"
druid_double_for b1 etcd-main
D=$DRUID_DOUBLE_URL
curl -sf -X POST "$D/admin/write?n=5" >/dev/null
curl -sf -X POST "$D/admin/delay?ms=300" >/dev/null
curl -sf -X POST "$D/admin/writer?ms=20" >/dev/null # a client on an established connection
kc -n b1 annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null || ctl_fail "cannot hibernate b1/etcd-main"
ctl_wait_phase b1 etcd-main Failed 60
[ "$(replicas)" = 3 ] || ctl_fail "B1: StatefulSet at $(replicas) in phase Failed"
echo "B1: phase Failed while the writer writes: $(ctl_events b1 etcd-main | grep FinalSnapshotBehind | tail -1 | head -c 200)"

# control: the claim rule refuses a claim's deletion in phase Failed
out=$(kc -n b1 delete pvc etcd-main-etcd-main-0 --wait=false 2>&1)
! gone etcd-main-etcd-main-0 || ctl_fail "control: a claim deleted in phase Failed: $out"
echo "ok: control: a member claim's deletion is refused in phase Failed"

curl -sf -X POST "$D/admin/reply?code=500&count=0" >/dev/null # the bucket breaks: no snapshot any more
sleep 1
w=$(last_write "$D") # acknowledged while the StatefulSet is at 3, after the last snapshot stored
kc -n b1 annotate etcd etcd-main "etcd-warden.io/allow-scale-down-without-snapshot=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ) etcd keeps moving, must go down" >/dev/null ||
    ctl_fail "the operator cannot set break glass"
deadline=$((SECONDS + 60))
until [ "$(replicas)" = 0 ]; do
    [ $SECONDS -lt $deadline ] || ctl_fail "B1: not scaled to 0 on break glass: $(ctl_events b1 etcd-main | tail -5)"
    sleep 0.05
done
w0=$(last_write "$D")
curl -sf -X POST "$D/admin/writer?ms=0" >/dev/null # the members stop: the writes end
# the StatefulSet controller deletes the pods of a StatefulSet at 0
kc -n b1 delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null || ctl_fail "cannot delete the pods"
ctl_wait_phase b1 etcd-main Hibernated 60
echo "B1: at 0 on break glass (write $w0 acknowledged by then), store at $(stored_rev "$D"); events:"
ctl_events b1 etcd-main | grep -E 'Hibernated:|ScaleDown|BreakGlass' | cut -c1-220 | sed 's/^/    /'
ksim_wait 5 bash -c "[ -z \"\$(kubectl --kubeconfig '$KUBECONFIG' -n b1 get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/allow-scale-down-without-snapshot}')\" ]" ||
    echo "note: the break glass annotation is still set"
WH_AS_NS=b1 wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    ctl_fail "alice cannot disable protection"
wh_caught_up # the webhook's caches
out=$(WH_AS_NS=b1 wh_as alice delete pvc etcd-main-etcd-main-0 etcd-main-etcd-main-1 etcd-main-etcd-main-2 --wait=false 2>&1)
n=0
for i in 0 1 2; do gone etcd-main-etcd-main-$i && n=$((n + 1)); done
s=$(stored_rev "$D")
ctl_stop
if [ "$n" -gt 0 ] && [ "${s:-0}" -lt "${w:-0}" ]; then
    echo "HOLE: B1: $n member claim(s) of b1/etcd-main deleted by alice (protection disabled; $(grep -q "allowed by annotation" <<<"$out" && echo "admitted on the used break glass again" || echo "admitted without break glass")) after a break glass scale-down: write ${w:-0}, acknowledged before the break glass while the StatefulSet was at 3, is on those claims only (the store holds ${s:-nothing}; the revision check had failed)"
    echo "FAIL: 1 hole(s): member claims deleted without a final snapshot holding the last write"
    exit 1
fi
echo "held: B1: the claims kept ($n gone, store ${s:-nothing} of ${w:-0}): $(tr '\n' ' ' <<<"$out" | head -c 400)"
echo "attack7_glass_claims: ok"
