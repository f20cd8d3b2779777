#!/usr/bin/env bash
# A reader's copy of the operator's coming scale-down, posted as a scale-subresource review (a
# Scale, which carries no metadata.generation), uses up break glass for good, on kube-sim with
# warden-webhook (registered as ctl_stage registers it) and backup-double. This round's item 1
# ("a scale via the scale subresource vs a spec patch").
# docs/protection.md (Authenticating the API server): "someone who can read the object can post a
# copy of the operator's coming update, which is recorded as a use. It stays one only while it
# could still commit or did: once the object has moved on without its spec changing (a status
# write moves its resourceVersion, not its generation) the copy's record is void and the
# operator's real request uses the value". docs/hibernation.md (Break glass once): the webhook
# "records the object's uid, resourceVersion and metadata.generation"; "a use recorded without a
# target (..., an update of an object without metadata.generation, ...)" keeps the value used.
# A StatefulSet has a generation; kube-apiserver's Scale of it (autoscaling/v1, what kubectl
# scale sends) carries only its name, namespace, uid, resourceVersion and creation time.
#   S1. Etcd etcd-main of s1 (3 members, writes acknowledged, bucket lost): the operator sets
#       break glass. trudy (a viewer who reaches the webhook port) reads the StatefulSet's
#       scale subresource and posts the review of a scale to 0 of it. The StatefulSet
#       controller writes the StatefulSet's status (the resourceVersion moves, the generation
#       does not). alice (protection disabled, the runbook) runs kubectl scale --replicas=0.
#   S0. control: the same in s0 without trudy: alice's scale to 0 is admitted.
# Oracle: what kube-sim stores: the StatefulSet at 3 after alice's scale-down on the operator's
# unused value, the value recorded as used by trudy, whose request never reached the API server.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
. "$(dirname "$0")/../lib/glass.sh"
glass_stage s0 s1
wh_caught_up

old=$(kc get --raw /apis/apps/v1/namespaces/s1/statefulsets/etcd-main/scale) ||
    ctl_fail "cannot read the scale subresource of s1/etcd-main"
jq -e '.kind == "Scale" and .spec.replicas == 3' <<<"$old" >/dev/null || ctl_fail "the Scale of s1/etcd-main: $old"
jq -n --argjson old "$old" '{apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
    request: {uid: "6f1c5a52-0000-4000-8000-00000000a15c",
        kind: {group: "autoscaling", version: "v1", kind: "Scale"},
        resource: {group: "apps", version: "v1", resource: "statefulsets"}, subResource: "scale",
        requestKind: {group: "autoscaling", version: "v1", kind: "Scale"},
        requestResource: {group: "apps", version: "v1", resource: "statefulsets"}, requestSubResource: "scale",
        name: "etcd-main", namespace: "s1", operation: "UPDATE",
        userInfo: {username: "trudy", groups: ["system:authenticated"]},
        object: ($old | .spec.replicas = 0), oldObject: $old, dryRun: false,
        options: {apiVersion: "meta.k8s.io/v1", kind: "UpdateOptions"}}}' >"$CTL_DIR/copy.json"
answer=$(glass_post "$CTL_DIR/copy.json" etcdcomponents)
echo "trudy's Scale copy answered: $(jq -c '.response | {allowed, status}' <<<"$answer" 2>/dev/null | head -c 300)"
[ "$(glass_replicas s1)" = 3 ] || ctl_fail "S1: the StatefulSet moved without a request"
rec=$(glass_uses trudy) || true
echo "recorded for trudy: $(head -c 300 <<<"$rec")"

for ns in s0 s1; do
    rv0=$(kc -n $ns get statefulset etcd-main -o jsonpath='{.metadata.resourceVersion}')
    kc -n $ns patch statefulset etcd-main --subresource=status --type merge \
        -p "{\"status\":{\"collisionCount\":$((RANDOM % 50 + 1))}}" >/dev/null ||
        ctl_fail "$ns: cannot write the StatefulSet's status"
    [ "$(kc -n $ns get statefulset etcd-main -o jsonpath='{.metadata.resourceVersion}')" != "$rv0" ] ||
        ctl_fail "$ns: the status write did not move the resourceVersion"
done
wh_caught_up
glass_control s0 S0
out1=$(WH_AS_NS=s1 wh_as alice scale statefulset etcd-main --replicas=0 2>&1)
if [ "$(glass_replicas s1)" != 0 ]; then
    if [ -n "$rec" ]; then
        echo "HOLE: S1: a viewer's copy posted as a Scale review (trudy, no request to the API server) used up the break glass of s1/etcd-main for good, although the StatefulSet's status then moved its resourceVersion and not its generation; the operator's scale-down on it is refused: $(tr '\n' ' ' <<<"$out1" | head -c 400)"
        echo "FAIL: 1 hole(s): a forged Scale copy of a request uses up break glass for good"
        exit 1
    fi
    ctl_fail "S1: alice's scale to 0 refused with no record of trudy's: $out1"
fi
echo "held: S1: alice's scale to 0 admitted although trudy's Scale copy was posted"
# a second scale-down on the value after a wake is refused (alice's use committed)
glass_up s1 S2
kc -n s1 patch statefulset etcd-main --subresource=status --type merge -p '{"status":{"collisionCount":77}}' >/dev/null ||
    ctl_fail "S2: cannot write the StatefulSet's status"
wh_caught_up
out2=$(WH_AS_NS=s1 wh_as alice scale statefulset etcd-main --replicas=0 2>&1)
[ "$(glass_replicas s1)" = 3 ] || ctl_fail "S2: a second scale-down admitted on the used value: $out2"
echo "held: S2: a committed use stays a use; the second scale-down on the value is refused"
echo "attack15_glass_copy_scale: ok"
