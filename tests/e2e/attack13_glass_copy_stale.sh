#!/usr/bin/env bash
# A reader's copy of the operator's coming scale-down uses up break glass once the StatefulSet
# moves on, on kube-sim with warden-webhook (registered as ctl_stage registers it) and
# backup-double. Issue 30: "an attacker who reaches the webhook"; the copy of a request.
# docs/protection.md ("Authenticating the API server"): a forged review by someone who can read
# the object "is recorded as that object at that resourceVersion, and the real request on it
# (the same object at the same resourceVersion) is admitted on that record"; "A decision on
# such a forged review changes little in the cluster". But the StatefulSet's resourceVersion
# moves with every status update the StatefulSet controller writes (pods turning ready,
# observedGeneration): the operator's real request then comes at another resourceVersion, is
# not "the same request", and is refused on trudy's record ("its value was used ... by
# trudy"). trudy (a namespace viewer who reaches the webhook port; the chart's default has
# no client authentication) can do this to every value the operator sets, as soon as it is
# set: break glass for that Etcd never works.
#   T1. Etcd etcd-main (3 members, writes acknowledged, its bucket lost): the operator sets
#       break glass. trudy posts a copy of a scale 3 -> 0 of the StatefulSet as stored. The
#       StatefulSet controller writes the StatefulSet's status (its resourceVersion moves).
#       alice (protection disabled, the operator's runbook) scales it to 0.
#   T0. control: the same in another namespace without trudy: alice's scale to 0 is admitted.
#   T2. after T1, scaled back to 3 and the status written again: a second scale to 0 on the
#       value is refused (alice's use committed: it is never void).
# Oracle: what kube-sim stores: the StatefulSet at 3 after alice's scale-down on the operator's
# unused value, with a break-glass use recorded for it naming trudy, whose request never
# reached the API server.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
. "$(dirname "$0")/../lib/glass.sh"
replicas() { kc -n "$1" get statefulset etcd-main -o jsonpath='{.spec.replicas}'; }
glass_stage t0 t1
wh_caught_up

# trudy reads the StatefulSet as stored and posts the scale to 0 she expects alice to make
old=$(kc -n t1 get statefulset etcd-main -o json)
jq -n --argjson old "$old" '{apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
    request: {uid: "6f1c5a52-0000-4000-8000-00000000a13a",
        kind: {group: "apps", version: "v1", kind: "StatefulSet"},
        resource: {group: "apps", version: "v1", resource: "statefulsets"},
        requestKind: {group: "apps", version: "v1", kind: "StatefulSet"},
        requestResource: {group: "apps", version: "v1", resource: "statefulsets"},
        name: "etcd-main", namespace: "t1", operation: "UPDATE",
        userInfo: {username: "trudy", groups: ["system:authenticated"]},
        object: ($old | .spec.replicas = 0), oldObject: $old, dryRun: false,
        options: {apiVersion: "meta.k8s.io/v1", kind: "UpdateOptions"}}}' >"$CTL_DIR/copy.json"
answer=$(curl -sk --max-time 10 -H 'Content-Type: application/json' --data-binary @"$CTL_DIR/copy.json" \
    "https://127.0.0.1:$WH_PORT/webhooks/etcdcomponents")
echo "trudy's copy answered: $(jq -c '.response | {allowed, status}' <<<"$answer" 2>/dev/null | head -c 200)"
[ "$(replicas t1)" = 3 ] || ctl_fail "T1: the StatefulSet moved without a request"

# the StatefulSet controller writes both StatefulSets' status (as it does whenever a pod
# turns ready or the generation is observed): their resourceVersions move
for ns in t0 t1; do
    rv0=$(kc -n $ns get statefulset etcd-main -o jsonpath='{.metadata.resourceVersion}')
    kc -n $ns patch statefulset etcd-main --subresource=status --type merge \
        -p "{\"status\":{\"collisionCount\":$((RANDOM % 50 + 1))}}" >/dev/null ||
        ctl_fail "$ns: cannot write the StatefulSet's status"
    rv1=$(kc -n $ns get statefulset etcd-main -o jsonpath='{.metadata.resourceVersion}')
    [ "$rv0" != "$rv1" ] || ctl_fail "$ns: the status write did not move the resourceVersion"
done
wh_caught_up

out0=$(WH_AS_NS=t0 wh_as alice scale statefulset etcd-main --replicas=0 2>&1)
[ "$(replicas t0)" = 0 ] || ctl_fail "control: T0: alice's scale to 0 on the operator's break glass refused: $out0"
echo "ok: control: T0: alice's scale to 0 admitted on the operator's break glass"
out1=$(WH_AS_NS=t1 wh_as alice scale statefulset etcd-main --replicas=0 2>&1)
rec=$(glass_uses trudy)
if [ "$(replicas t1)" != 0 ]; then
    echo "HOLE: T1: a viewer's copy (trudy, no request to the API server) used up the break glass of t1/etcd-main once the StatefulSet's status moved its resourceVersion (recorded: $(head -c 200 <<<"$rec")); the operator's scale-down on it is refused: $(tr '\n' ' ' <<<"$out1" | head -c 300)"
    echo "FAIL: 1 hole(s): a forged copy of a request uses up break glass unless the real request comes at the same resourceVersion"
    exit 1
fi
echo "held: T1: alice's scale to 0 admitted although trudy's copy was posted"
# T2: alice's use committed (the generation moved): it stays a use after the StatefulSet moves
# on again; the value allows no second scale-down
glass_up t1 T2
kc -n t1 patch statefulset etcd-main --subresource=status --type merge -p '{"status":{"collisionCount":77}}' >/dev/null ||
    ctl_fail "T2: cannot write the StatefulSet's status"
wh_caught_up
out2=$(WH_AS_NS=t1 wh_as alice scale statefulset etcd-main --replicas=0 2>&1)
[ "$(replicas t1)" = 3 ] || ctl_fail "T2: a second scale-down admitted on the used value: $out2"
grep -q "was used at" <<<"$out2" || ctl_fail "T2: refused for another reason: $out2"
echo "held: T2: a committed use stays a use; the second scale-down on the value is refused"
echo "attack13_glass_copy_stale: ok"
