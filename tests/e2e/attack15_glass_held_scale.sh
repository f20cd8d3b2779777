#!/usr/bin/env bash
# Break glass used twice: the operator's kubectl scale to 0 (the statefulsets/scale subresource),
# admitted by warden-webhook and held by another validating webhook, is voided by a status write while held; a member claim's deletion
# then takes the value; and the held scale-down commits. On kube-sim with warden-webhook
# (registered as ctl_stage registers it, warden-controller not running: "whoever asks and
# whether warden-controller runs or not") and a second validating webhook that holds the
# StatefulSet UPDATE (any policy webhook: kube-apiserver stores an object only once every
# validating webhook has answered). This round's item 1.
# docs/hibernation.md (Break glass once): "allows one scale-down: one request that only it lets
# through (a scale-down to 0 ..., a running member's PVC deleted, ...)"; "A recorded use that
# never committed is no use: ... The same uid, another resourceVersion, no deletionTimestamp
# and, for an update, the same generation show that the recorded request never changed the
# object ... and no longer can (its resourceVersion is gone): the record is void".
# (attack15_glass_held_commit.sh: the same with a patch of the StatefulSet.)
#   H1. g1/etcd-main (3 members, writes acknowledged, no snapshot), break glass set, protection
#       disabled. alice runs kubectl scale --replicas=0: warden-webhook records the use and admits;
#       the policy webhook holds it. The StatefulSet controller writes the status (the
#       resourceVersion moves, the generation does not). alice deletes member claim
#       etcd-main-etcd-main-0 (admitted on the void record, as documented). The policy webhook
#       lets alice's patch go.
#   H0. control: g0, the same without the status write: the second deletion is refused (the recorded
#       request "may still commit"), alice's scale-down commits.
# Oracle: what kube-sim stores: H1 holds when not both the claim is gone (or deleting) and the
# StatefulSet is at 0; the API server must re-judge a patch whose object moved on (as
# kube-apiserver's GuaranteedUpdate re-runs admission on each try), and warden-webhook then
# refuses it on the second deletion's record.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
. "$(dirname "$0")/../lib/glass.sh"
glass_hold UPDATE '{apiGroups: [apps], apiVersions: [v1], operations: [UPDATE], resources: [statefulsets/scale], scope: Namespaced}' g0 g1
glass_stage g0 g1
wh_caught_up
claim=etcd-main-etcd-main-0
for ns in g0 g1; do
    printf '%s\n' "apiVersion: v1" "kind: PersistentVolumeClaim" \
        "metadata: {name: $claim, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}" \
        "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}" | kc -n $ns create -f - >/dev/null ||
        ctl_fail "$ns: cannot create the member claim"
done
wh_caught_up
claim_gone() { # NS: the claim is gone or deleting
    local ts
    ts=$(kc -n "$1" get pvc "$claim" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null) || return 0
    [ -n "$ts" ]
}

declare -A PID
for ns in g0 g1; do
    touch "$HOLD/armed-$ns"
    (WH_AS_NS=$ns wh_as alice scale statefulset etcd-main --replicas=0 >"$HOLD/alice-$ns.out" 2>&1
     echo $? >"$HOLD/alice-$ns.rc") &
    PID[$ns]=$!
    ksim_wait 20 test -e "$HOLD/held-$ns-0" || ctl_fail "$ns: alice's scale-down never reached the holding webhook: $(cat "$HOLD/alice-$ns.out")"
done
glass_uses alice >/dev/null || ctl_fail "alice's held scale-down left no break-glass record"
# H1 only: the StatefulSet controller writes the status while the patch is held
rv0=$(kc -n g1 get statefulset etcd-main -o jsonpath='{.metadata.resourceVersion}')
kc -n g1 patch statefulset etcd-main --subresource=status --type merge -p '{"status":{"collisionCount":41}}' >/dev/null ||
    ctl_fail "g1: cannot write the StatefulSet's status"
[ "$(kc -n g1 get statefulset etcd-main -o jsonpath='{.metadata.resourceVersion}')" != "$rv0" ] ||
    ctl_fail "g1: the status write did not move the resourceVersion"
wh_caught_up
declare -A BOB
for ns in g0 g1; do
    BOB[$ns]=$(WH_AS_NS=$ns wh_as alice delete pvc "$claim" --wait=false 2>&1) && BOB[$ns]="admitted: ${BOB[$ns]}"
    echo "$ns: the second deletion of $claim: $(tr '\n' ' ' <<<"${BOB[$ns]}" | head -c 300)"
done
for ns in g0 g1; do
    touch "$HOLD/release-$ns"
    rm -f "$HOLD/armed-$ns"
done
for ns in g0 g1; do
    ksim_wait 40 test -e "$HOLD/alice-$ns.rc" || ctl_fail "$ns: alice's scale never returned"
    echo "$ns: alice's scale: rc $(cat "$HOLD/alice-$ns.rc"): $(tr '\n' ' ' <<<"$(cat "$HOLD/alice-$ns.out")" | head -c 300)"
done
echo "holding webhook saw: $(cd "$HOLD" && for f in held-*; do echo -n "$f@rv$(cat "$f") "; done)"
sleep 1
claim_gone g0 && ctl_fail "control: H0: the second deletion of $claim admitted while alice's use may still commit"
[ "$(glass_replicas g0)" = 0 ] || ctl_fail "control: H0: alice's scale-down on the operator's break glass did not commit: $(cat "$HOLD/alice-g0.out")"
echo "ok: control: H0: one use: alice's scale-down committed, the second deletion refused"
if claim_gone g1 && [ "$(glass_replicas g1)" = 0 ]; then
    echo "HOLE: H1: one break-glass value let two requests through on g1/etcd-main: member claim $claim deleted by alice's second request (on alice's record voided by a status write) and the StatefulSet scaled to 0 by alice's held kubectl scale"
    echo "FAIL: 1 hole(s): a held scale-down commits after its record was voided and its value used again"
    exit 1
fi
echo "held: H1: g1: claim $(claim_gone g1 && echo gone || echo kept), replicas $(glass_replicas g1)"
echo "attack15_glass_held_scale: ok"
