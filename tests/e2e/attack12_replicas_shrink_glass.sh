#!/usr/bin/env bash
# A sleep on break glass, then its member range shrunk through spec.replicas 3 -> 0 -> 1, on
# kube-sim with warden-webhook, warden-controller and backup-double. Issue 30: no member PVC is
# deleted while a write acknowledged before it is missing from the final snapshot, break glass
# aside - and break glass is for one request (docs/hibernation.md, "Break glass once": "One
# value lets one request through"). docs/protection.md: "A sleep scaled down on break glass
# after the check failed has no stamps" and its claims stay (a claim's DELETE is refused while
# "n is in its member range ([0, spec.replicas); every ordinal when spec.replicas is 0 ...)").
# etcd-druid's spec.replicas rule refuses 3 -> 1 but not 3 -> 0 followed by 0 -> 1.
# (attack12_replicas_shrink does the same to an Etcd without a backup store.)
#   S1. Etcd etcd-main (backup store, 3 members, writes acknowledged), its sidecar failing:
#       hibernate=true, the final snapshot fails (phase Failed), the operator breaks glass,
#       warden-controller scales to 0 without a snapshot and removes the annotation. alice
#       (namespace edit rights, protection disabled) deletes claim 1: refused (control). She
#       patches the Etcd's spec.replicas to 0, then to 1, then deletes claims 1 and 2.
# Oracle: ground truth: member claims of ordinals 1..2 gone (kube-sim) while backup-double's
# last acknowledged write is above every revision its store holds (no snapshot holds it).
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
gone() {
    local ts
    ts=$(kc -n s1 get pvc "$1" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null) || return 0
    [ -n "$ts" ]
}
druid_etcd s1 etcd-main
for i in 0 1 2; do
    printf '%s\n' "---" "apiVersion: v1" "kind: PersistentVolumeClaim" \
        "metadata: {name: etcd-main-etcd-main-$i, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}" \
        "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}"
done | kc -n s1 create -f - >/dev/null || ctl_fail "cannot create the member claims"
druid_double_for s1 etcd-main
URL=$DRUID_DOUBLE_URL
curl -sf -X POST "$URL/admin/write?n=5" >/dev/null || ctl_fail "the double takes no writes"
curl -sf -X POST "$URL/admin/reply?code=500&count=0" >/dev/null || ctl_fail "cannot break the sidecar"
ctl_start --snapshot-retries 1
kc -n s1 annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null || ctl_fail "cannot hibernate"
ctl_wait_phase s1 etcd-main Failed 60
kc -n s1 annotate etcd etcd-main "etcd-warden.io/allow-scale-down-without-snapshot=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ) sidecar broken" >/dev/null ||
    ctl_fail "the operator cannot break glass"
ctl_wait_phase s1 etcd-main Hibernated 60
ksim_wait 15 bash -c "[ -z \"\$(kubectl --kubeconfig '$KUBECONFIG' -n s1 get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/allow-scale-down-without-snapshot}')\" ]" ||
    ctl_fail "the break-glass annotation was not removed after its scale-down"
[ "$(kc -n s1 get statefulset etcd-main -o jsonpath='{.spec.replicas}')" = 0 ] || ctl_fail "Hibernated, StatefulSet not at 0"
kc -n s1 delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null || ctl_fail "cannot delete the pods"
w=$(last_write "$URL") s=$(stored_rev "$URL")
[ "${s:-0}" -lt "${w:-0}" ] || ctl_fail "the store holds every write: nothing to lose"
echo "S1: asleep on break glass (used and removed): write $w acknowledged, the store at ${s:-nothing}: claims 0..2 hold the only copy"
WH_AS_NS=s1 wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    ctl_fail "alice cannot disable protection"
wh_caught_up # the webhook's caches
out=$(WH_AS_NS=s1 wh_as alice delete pvc etcd-main-etcd-main-1 --wait=false 2>&1)
! gone etcd-main-etcd-main-1 || ctl_fail "control: claim 1 deleted at spec.replicas 3: $out"
echo "ok: control: claim 1 is not deleted: $(tr '\n' ' ' <<<"$out" | head -c 200)"
for r in 0 1; do
    out=$(WH_AS_NS=s1 wh_as alice patch etcd etcd-main --type merge -p "{\"spec\":{\"replicas\":$r}}" 2>&1)
    echo "S1: spec.replicas -> $r: $(tr '\n' ' ' <<<"$out" | head -c 200)"
done
wh_caught_up # the webhook's caches
out=$(WH_AS_NS=s1 wh_as alice delete pvc etcd-main-etcd-main-1 etcd-main-etcd-main-2 --wait=false 2>&1)
ctl_stop
n=0
for i in 1 2; do gone etcd-main-etcd-main-$i && n=$((n + 1)); done
w=$(last_write "$URL") s=$(stored_rev "$URL")
if [ "$n" -gt 0 ] && [ "${s:-0}" -lt "${w:-0}" ]; then
    echo "HOLE: S1: $n member claim(s) of ordinals 1..2 of live Etcd s1/etcd-main deleted with write $w acknowledged and the store at ${s:-nothing}: the break glass had allowed the scale-down only, and the claims held the only copy"
    echo "FAIL: 1 hole(s): a break-glass sleep's member claims freed by shrinking spec.replicas through 0"
    exit 1
fi
echo "held: S1: $n claim(s) gone: $(tr '\n' ' ' <<<"$out" | head -c 300)"
echo "attack12_replicas_shrink_glass: ok"
